package graph

import (
	"math/rand/v2"
	"testing"
)

// bruteReach is reachability over explicit edges plus u → v when end[u] < begin[v].
func bruteReach(begin, end []int64, edges [][2]int32) ([][]bool, bool) {
	n := len(begin)
	adj := make([][]int32, n)
	for _, e := range edges {
		adj[e[0]] = append(adj[e[0]], e[1])
	}
	r := make([][]bool, n)
	for u := range n {
		r[u] = make([]bool, n)
		stack := []int32{int32(u)}
		r[u][u] = true
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			next := append([]int32(nil), adj[x]...)
			for v := range n {
				if end[x] < begin[v] {
					next = append(next, int32(v))
				}
			}
			for _, v := range next {
				if int(v) == u {
					return nil, false
				}
				if !r[u][v] {
					r[u][v] = true
					stack = append(stack, v)
				}
			}
		}
	}
	return r, true
}

func TestTimeClosureBrute(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cyclic, added, refused := 0, 0, 0
	for iter := range 3000 {
		n := 1 + rng.IntN(14)
		begin, end := make([]int64, n), make([]int64, n)
		span := int64(1 + rng.IntN(3*n))
		for i := range n {
			begin[i] = rng.Int64N(span)
			end[i] = begin[i] + rng.Int64N(1+span/2)
		}
		var edges [][2]int32
		for range rng.IntN(2 * n) {
			u, v := int32(rng.IntN(n)), int32(rng.IntN(n))
			if u != v {
				edges = append(edges, [2]int32{u, v})
			}
		}
		want, wok := bruteReach(begin, end, edges)
		c, err := NewTimeClosure(begin, end, edges, 1<<20)
		ok := err == nil
		if ok != wok {
			t.Fatalf("iter %d: acyclic %v, want %v (begin %v end %v edges %v)", iter, ok, wok, begin, end, edges)
		}
		if !ok {
			cyclic++
			continue
		}
		check := func(what string) {
			for u := range n {
				for v := range n {
					if got := c.Reach(int32(u), int32(v)); got != want[u][v] {
						t.Fatalf("iter %d %s: reach(%d,%d) = %v, want %v (begin %v end %v edges %v)", iter, what, u, v, got, want[u][v], begin, end, edges)
					}
				}
			}
			pos := make([]int, n)
			for i, u := range c.Order() {
				pos[u] = i
			}
			for u := range n {
				for v := range n {
					if u != v && want[u][v] && pos[u] > pos[v] {
						t.Fatalf("iter %d %s: order puts %d after %d", iter, what, u, v)
					}
				}
			}
		}
		check("built")
		for range rng.IntN(2 * n) {
			u, v := int32(rng.IntN(n)), int32(rng.IntN(n))
			if u == v {
				continue
			}
			next, nok := bruteReach(begin, end, append(edges, [2]int32{u, v}))
			if got := c.AddEdge(u, v); got != nok {
				t.Fatalf("iter %d: AddEdge(%d,%d) = %v, want %v", iter, u, v, got, nok)
			}
			if nok {
				edges = append(edges, [2]int32{u, v})
				want = next
				added++
			} else {
				refused++
			}
			check("added")
		}
	}
	if cyclic == 0 || added == 0 || refused == 0 {
		t.Fatalf("generator too narrow: %d cyclic, %d added, %d refused", cyclic, added, refused)
	}
	t.Logf("%d cyclic graphs, %d edges added, %d refused", cyclic, added, refused)
}

// TestTimeClosureWide checks windows wider than one word.
func TestTimeClosureWide(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := range 12 {
		n := 150 + rng.IntN(100)
		begin, end := make([]int64, n), make([]int64, n)
		for i := range n {
			begin[i] = rng.Int64N(int64(n))
			end[i] = begin[i] + rng.Int64N(int64(n/2))
		}
		var edges [][2]int32
		for range n / 3 {
			u, v := int32(rng.IntN(n)), int32(rng.IntN(n))
			if u != v && begin[u] < begin[v] {
				edges = append(edges, [2]int32{u, v})
			}
		}
		want, wok := bruteReach(begin, end, edges)
		c, err := NewTimeClosure(begin, end, edges, 1<<20)
		ok := err == nil
		if ok != wok {
			t.Fatalf("iter %d: acyclic %v, want %v", iter, ok, wok)
		}
		if err != nil {
			continue
		}
		for range 8 {
			u, v := int32(rng.IntN(n)), int32(rng.IntN(n))
			if u != v && !want[v][u] {
				if !c.AddEdge(u, v) {
					t.Fatalf("iter %d: AddEdge(%d,%d) refused", iter, u, v)
				}
				edges = append(edges, [2]int32{u, v})
				want, _ = bruteReach(begin, end, edges)
			}
		}
		for u := range n {
			for v := range n {
				if got := c.Reach(int32(u), int32(v)); got != want[u][v] {
					t.Fatalf("iter %d: reach(%d,%d) = %v, want %v", iter, u, v, got, want[u][v])
				}
			}
		}
	}
}

// TestTimeClosureTooLarge: one interval spanning the history widens every later window; the
// closure refuses to exceed its bound instead of growing quadratically.
func TestTimeClosureTooLarge(t *testing.T) {
	n := 5000
	begin, end := make([]int64, n), make([]int64, n)
	for i := range n {
		begin[i], end[i] = int64(2*i), int64(2*i+1)
	}
	if _, err := NewTimeClosure(begin, end, nil, n); err != nil {
		t.Fatalf("short intervals: %v", err)
	}
	end[0] = int64(2 * n)
	if _, err := NewTimeClosure(begin, end, nil, 4*n); err != ErrTooLarge {
		t.Fatalf("one long interval: err = %v, want ErrTooLarge", err)
	}
	if _, err := NewTimeClosure(begin, end, nil, n*n); err != nil {
		t.Fatalf("one long interval, no bound: %v", err)
	}
	if _, err := NewTimeClosure([]int64{3}, []int64{2}, nil, 10); err != ErrCycle {
		t.Fatalf("end before begin: err = %v, want ErrCycle", err)
	}
}
