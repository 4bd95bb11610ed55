package graph

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
)

func randomDAG(r *rand.Rand, n, m int) *Digraph {
	g := New(n)
	perm := r.Perm(n)
	for range m {
		a, b := r.IntN(n), r.IntN(n)
		if a == b {
			continue
		}
		if a > b {
			a, b = b, a
		}
		g.AddEdge(int32(perm[a]), int32(perm[b]))
	}
	return g
}

func naiveReach(g *Digraph, s, t int32) bool {
	return ShortestPath(g, s, t, nil) != nil
}

func TestReachBatch(t *testing.T) {
	defer func(w int32) { localWindow = w }(localWindow)
	r := rand.New(rand.NewPCG(1, 2))
	for it := range 400 {
		localWindow = int32(it % 7 * 3)
		n := 1 + r.IntN(80)
		g := randomDAG(r, n, r.IntN(3*n))
		order, ok := Topo(g)
		if !ok {
			t.Fatalf("iteration %d: DAG reported cyclic", it)
		}
		pos := Positions(order)
		var qs []Query
		for range 200 {
			qs = append(qs, Query{int32(r.IntN(n)), int32(r.IntN(n))})
		}
		ans, err := ReachBatch(context.Background(), g, order, pos, qs)
		if err != nil {
			t.Fatal(err)
		}
		for i, q := range qs {
			if want := naiveReach(g, q.From, q.To); ans[i] != want {
				t.Fatalf("iteration %d: reach(%d,%d) = %v, want %v", it, q.From, q.To, ans[i], want)
			}
		}
	}
}

func TestSCCAndCycles(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for it := range 300 {
		n := 1 + r.IntN(30)
		g := New(n)
		for range r.IntN(2 * n) {
			g.AddEdge(int32(r.IntN(n)), int32(r.IntN(n)))
		}
		comp, nc := SCC(g)
		// Same component iff mutually reachable.
		for u := range n {
			for v := range n {
				same := comp[u] == comp[v]
				mutual := naiveReach(g, int32(u), int32(v)) && naiveReach(g, int32(v), int32(u))
				if same != mutual {
					t.Fatalf("iteration %d: comp(%d)==comp(%d) is %v, mutual reach %v", it, u, v, same, mutual)
				}
			}
		}
		_ = nc
		_, acyclic := Topo(g)
		cyc := FindCycle(g)
		if acyclic != (cyc == nil) {
			t.Fatalf("iteration %d: Topo acyclic=%v, FindCycle=%v", it, acyclic, cyc)
		}
		for i, u := range cyc {
			v := cyc[(i+1)%len(cyc)]
			found := false
			for _, w := range g.Out(u) {
				if w == v {
					found = true
				}
			}
			if !found {
				t.Fatalf("iteration %d: cycle %v lacks edge %d→%d", it, cyc, u, v)
			}
		}
	}
}

func TestCycleThrough(t *testing.T) {
	g := New(4)
	g.AddEdge(0, 1)
	g.AddEdge(1, 2)
	g.AddEdge(2, 3)
	if c := CycleThrough(g, 3, 0); len(c) != 4 || c[0] != 3 || c[1] != 0 {
		t.Fatalf("CycleThrough(3,0) = %v", c)
	}
	if c := CycleThrough(g, 0, 3); c != nil {
		t.Fatalf("CycleThrough(0,3) = %v, want nil", c)
	}
}

func TestReduceAmong(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for it := range 200 {
		n := 2 + r.IntN(60)
		g := randomDAG(r, n, r.IntN(3*n))
		order, _ := Topo(g)
		pos := Positions(order)
		var terms []int32
		for u := range n {
			if r.IntN(3) == 0 {
				terms = append(terms, int32(u))
			}
		}
		if it%10 == 0 && len(terms) > 0 {
			// Terminals may repeat (encoders pass both ends of every edge): the bound is
			// on distinct terminals.
			for len(terms) <= MaxReduceTerminals {
				terms = append(terms, terms[r.IntN(len(terms))])
			}
		}
		es, ok, err := ReduceAmong(context.Background(), g, order, pos, terms)
		if err != nil || !ok {
			t.Fatal(err, ok)
		}
		h := New(n)
		for _, e := range es {
			h.AddEdge(e[0], e[1])
		}
		distinct := slices.Compact(slices.Sorted(slices.Values(terms)))
		for _, a := range distinct {
			for _, b := range distinct {
				if naiveReach(g, a, b) != naiveReach(h, a, b) {
					t.Fatalf("iteration %d: reach(%d,%d) differs after reduction", it, a, b)
				}
			}
		}
	}
}
