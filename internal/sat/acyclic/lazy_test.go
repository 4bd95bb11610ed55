package acyclic

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/isovet/isovet/internal/sat"
)

// lazySolve decides p without the theory: it solves the clauses alone,
// and while the model's graph has a cycle, blocks that cycle with a clause
// and solves again. It is slow but independent of the theory's code.
func (p problem) lazySolve(t *testing.T) bool {
	s := sat.New(sat.Options{})
	for range p.vars {
		s.NewVar()
	}
	for _, c := range p.clauses {
		ls := make([]sat.Lit, len(c))
		for i, x := range c {
			ls[i] = sat.LitOf(x)
		}
		s.AddClause(ls...)
	}
	for iter := 0; ; iter++ {
		if iter > 100_000 {
			t.Fatal("lazy oracle does not converge")
		}
		st, err := s.Solve(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st == sat.Unsat {
			return false
		}
		a := func(x int) bool { return x == 0 || s.Value(sat.LitOf(x)) }
		// Edges of the model, each with the first justification that holds.
		adj := make([][]edgeSpec, p.nodes)
		for _, e := range p.edges {
			if a(e.a) && a(e.b) {
				adj[e.u] = append(adj[e.u], e)
			}
		}
		cycle := findCycle(p.nodes, adj)
		if cycle == nil {
			return true
		}
		var block []sat.Lit
		for _, e := range cycle {
			if e.a != 0 {
				block = append(block, sat.LitOf(-e.a))
			}
			if e.b != 0 {
				block = append(block, sat.LitOf(-e.b))
			}
		}
		if err := s.AddClause(block...); err != nil {
			t.Fatal(err)
		}
	}
}

// findCycle returns the edges of some cycle, or nil.
func findCycle(n int, adj [][]edgeSpec) []edgeSpec {
	state := make([]int8, n) // 0 new, 1 on stack, 2 done
	var stack []edgeSpec
	var found []edgeSpec
	var dfs func(u int) bool
	dfs = func(u int) bool {
		state[u] = 1
		for _, e := range adj[u] {
			switch state[e.v] {
			case 1:
				// The cycle is the stack suffix from e.v, plus e.
				i := len(stack)
				for i > 0 && stack[i-1].u != e.v {
					i--
				}
				if e.u == e.v {
					i = len(stack)
				} else {
					i--
				}
				found = append(append([]edgeSpec{}, stack[i:]...), e)
				return true
			case 0:
				stack = append(stack, e)
				if dfs(e.v) {
					return true
				}
				stack = stack[:len(stack)-1]
			}
		}
		state[u] = 2
		return false
	}
	for u := range n {
		if state[u] == 0 && dfs(u) {
			return found
		}
	}
	return nil
}

// TestLazyOracle compares the theory with the lazy oracle on problems too
// large for enumeration (up to 24 nodes and 60 variables).
func TestLazyOracle(t *testing.T) {
	count := 2000
	if testing.Short() {
		count = 200
	}
	var answers [3]int
	for i := range count {
		r := rand.New(rand.NewPCG(13, uint64(i)))
		p := problem{nodes: 4 + r.IntN(21), vars: 10 + r.IntN(51)}
		lit := func() int {
			x := 1 + r.IntN(p.vars)
			if r.IntN(2) == 0 {
				x = -x
			}
			return x
		}
		for range r.IntN(p.vars) {
			p.clauses = append(p.clauses, []int{lit(), lit(), lit()})
		}
		for range p.vars + r.IntN(3*p.vars) {
			e := edgeSpec{u: r.IntN(p.nodes), v: r.IntN(p.nodes)}
			if e.u == e.v {
				e.v = (e.u + 1) % p.nodes
			}
			switch x := r.IntN(20); {
			case x == 0:
			case x < 5:
				e.a, e.b = lit(), lit()
				if abs(e.a) == abs(e.b) {
					e.b = 0
				}
			default:
				e.a = lit()
			}
			p.edges = append(p.edges, e)
		}
		want := p.lazySolve(t)
		s, g := p.build(Options{Propagate: i%2 == 1})
		st, err := s.Solve(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		answers[st]++
		if (st == sat.Sat) != want || st == sat.Unknown {
			t.Fatalf("instance %d: Solve = %v, lazy oracle says SAT=%v\n%v", i, st, want, p)
		}
		if st == sat.Sat {
			a := modelBits64(s, p.vars)
			if !p.satisfies64(a) || len(g.Order()) != p.nodes {
				t.Fatalf("instance %d: model is not a solution\n%v", i, p)
			}
		}
	}
	t.Logf("answers (unknown, sat, unsat) %v", answers)
	if answers[1] < count/10 || answers[2] < count/10 {
		t.Errorf("answers %v: want both SAT and UNSAT often", answers)
	}
}

func modelBits64(s *sat.Solver, vars int) []bool {
	m := make([]bool, vars+1)
	for v := 1; v <= vars; v++ {
		m[v] = s.Value(sat.Var(v).Pos())
	}
	return m
}

// satisfies64 is satisfies for more than 32 variables.
func (p problem) satisfies64(m []bool) bool {
	h := func(x int) bool { return x == 0 || m[abs(x)] == (x > 0) }
	for _, c := range p.clauses {
		ok := false
		for _, x := range c {
			ok = ok || h(x)
		}
		if !ok {
			return false
		}
	}
	adj := make([][]edgeSpec, p.nodes)
	for _, e := range p.edges {
		if h(e.a) && h(e.b) {
			adj[e.u] = append(adj[e.u], e)
		}
	}
	return findCycle(p.nodes, adj) == nil
}
