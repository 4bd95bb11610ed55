package acyclic

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/isovet/isovet/internal/sat"
)

// problem is a small acyclicity problem: clauses over vars plus edges
// justified by literals, pairs of literals, or nothing (fixed).
type problem struct {
	nodes, vars int
	clauses     [][]int
	edges       []edgeSpec
}

type edgeSpec struct {
	a, b int // DIMACS literals; 0 = none
	u, v int
}

func (p problem) String() string {
	return fmt.Sprintf("nodes=%d vars=%d clauses=%v edges=%v", p.nodes, p.vars, p.clauses, p.edges)
}

func randomProblem(r *rand.Rand) problem {
	p := problem{nodes: 1 + r.IntN(6), vars: 1 + r.IntN(10)}
	if r.IntN(8) == 0 {
		p.nodes, p.vars = 6+r.IntN(3), 10+r.IntN(5)
	}
	lit := func() int {
		x := 1 + r.IntN(p.vars)
		if r.IntN(3) == 0 {
			x = -x
		}
		return x
	}
	for range r.IntN(2 * p.vars) {
		c := make([]int, 1+r.IntN(3))
		for i := range c {
			c[i] = lit()
		}
		p.clauses = append(p.clauses, c)
	}
	for range r.IntN(3 * p.vars) {
		e := edgeSpec{u: r.IntN(p.nodes), v: r.IntN(p.nodes)}
		if e.u == e.v && r.IntN(4) != 0 {
			e.v = (e.u + 1) % p.nodes
		}
		switch x := r.IntN(10); {
		case x == 0:
		case x < 3:
			e.a, e.b = lit(), lit()
			if abs(e.a) == abs(e.b) {
				e.b = 0
			}
		default:
			e.a = lit()
		}
		if e.a == 0 && e.u == e.v {
			continue // a fixed self-loop makes everything UNSAT; rare is enough
		}
		p.edges = append(p.edges, e)
	}
	return p
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// holds reports whether DIMACS literal x is true under assignment bits a.
func holds(x int, a uint32) bool {
	if x == 0 {
		return true
	}
	val := a>>(abs(x)-1)&1 == 1
	return val == (x > 0)
}

// acyclicUnder reports whether the graph of edges holding under a is
// acyclic, using Kahn's algorithm.
func (p problem) acyclicUnder(a uint32) bool {
	indeg := make([]int, p.nodes)
	adj := make([][]int, p.nodes)
	for _, e := range p.edges {
		if holds(e.a, a) && holds(e.b, a) {
			adj[e.u] = append(adj[e.u], e.v)
			indeg[e.v]++
		}
	}
	var q []int
	for u := range p.nodes {
		if indeg[u] == 0 {
			q = append(q, u)
		}
	}
	done := 0
	for len(q) > 0 {
		u := q[0]
		q = q[1:]
		done++
		for _, v := range adj[u] {
			if indeg[v]--; indeg[v] == 0 {
				q = append(q, v)
			}
		}
	}
	return done == p.nodes
}

func (p problem) satisfies(a uint32, assume []int) bool {
	for _, c := range p.clauses {
		ok := false
		for _, x := range c {
			ok = ok || holds(x, a)
		}
		if !ok {
			return false
		}
	}
	for _, x := range assume {
		if !holds(x, a) {
			return false
		}
	}
	return p.acyclicUnder(a)
}

func (p problem) brute(assume []int) bool {
	for a := uint32(0); a < 1<<p.vars; a++ {
		if p.satisfies(a, assume) {
			return true
		}
	}
	return false
}

func (p problem) build(opts Options) (*sat.Solver, *Theory) {
	return p.buildWith(opts, sat.Options{})
}

func (p problem) buildWith(opts Options, so sat.Options) (*sat.Solver, *Theory) {
	s := sat.New(so)
	for range p.vars {
		s.NewVar()
	}
	g := New(s, p.nodes, opts)
	for _, c := range p.clauses {
		ls := make([]sat.Lit, len(c))
		for i, x := range c {
			ls[i] = sat.LitOf(x)
		}
		if err := s.AddClause(ls...); err != nil {
			panic(err)
		}
	}
	for _, e := range p.edges {
		var err error
		switch {
		case e.a == 0:
			err = g.AddFixed(e.u, e.v)
		case e.b == 0:
			err = g.AddEdge(sat.LitOf(e.a), e.u, e.v)
		default:
			err = g.AddComposite(sat.LitOf(e.a), sat.LitOf(e.b), e.u, e.v)
		}
		if err != nil {
			panic(err)
		}
	}
	return s, g
}

func modelBits(s *sat.Solver, vars int) uint32 {
	var a uint32
	for v := 1; v <= vars; v++ {
		if s.Value(sat.Var(v).Pos()) {
			a |= 1 << (v - 1)
		}
	}
	return a
}

// TestBrute compares solving with the theory against enumeration on random
// small graphs with edge literals, composite and fixed edges, and clauses,
// with and without theory propagation, with assumptions.
func TestBrute(t *testing.T) {
	count := 30_000
	if testing.Short() {
		count = 3_000
	}
	var total Stats
	var answers [3]int
	var chrono int64
	defer func() {
		if chrono == 0 {
			t.Errorf("no instance backtracked chronologically")
		}
		t.Logf("answers (unknown, sat, unsat) %v; theory conflicts %d, propagations %d, reasons %d",
			answers, total.Conflicts, total.Propagations, total.Reasons)
		if !testing.Short() && (total.Propagations == 0 || total.Reasons == 0 || answers[1] == 0 || answers[2] == 0) {
			t.Errorf("the random problems do not exercise propagation, reasons, or both answers")
		}
	}()
	for i := range count {
		r := rand.New(rand.NewPCG(7, uint64(i)))
		p := randomProblem(r)
		opts := Options{Propagate: i%2 == 1, PropagateLimit: 1 + r.IntN(8)}
		// Every third instance backtracks chronologically on every backjump of two
		// levels or more (the theory then sees literals reported again).
		so := sat.Options{}
		if i%3 == 0 {
			so.ChronoLimit = 1
		}
		s, g := p.buildWith(opts, so)
		for round := range 3 {
			var assume []int
			if round > 0 {
				for range r.IntN(3) {
					x := 1 + r.IntN(p.vars)
					if r.IntN(2) == 0 {
						x = -x
					}
					assume = append(assume, x)
				}
			}
			ls := make([]sat.Lit, len(assume))
			for k, x := range assume {
				ls[k] = sat.LitOf(x)
			}
			st, err := s.Solve(context.Background(), ls...)
			if err != nil {
				t.Fatal(err)
			}
			want := p.brute(assume)
			answers[st]++
			switch {
			case st == sat.Sat && !want:
				t.Fatalf("instance %d round %d: SAT, brute force says UNSAT\n%v assume=%v", i, round, p, assume)
			case st == sat.Unsat && want:
				t.Fatalf("instance %d round %d: UNSAT, brute force says SAT\n%v assume=%v", i, round, p, assume)
			case st == sat.Sat:
				a := modelBits(s, p.vars)
				if !p.satisfies(a, assume) {
					t.Fatalf("instance %d round %d: model %b is not a solution\n%v assume=%v", i, round, a, p, assume)
				}
				if ord := g.Order(); len(ord) != p.nodes {
					t.Fatalf("instance %d: Order() = %v, want all %d nodes", i, ord, p.nodes)
				}
			case st == sat.Unsat:
				var core []int
				for _, m := range s.Failed() {
					core = append(core, m.Dimacs())
				}
				if p.brute(core) {
					t.Fatalf("instance %d round %d: Failed() = %v is not a core\n%v assume=%v", i, round, core, p, assume)
				}
			}
		}
		st := g.Stats()
		total.Conflicts += st.Conflicts
		total.Propagations += st.Propagations
		total.Reasons += st.Reasons
		chrono += s.Stats().ChronoBacktracks
	}
}
