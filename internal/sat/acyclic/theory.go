package acyclic

import (
	"errors"
	"fmt"
	"slices"

	"github.com/isovet/isovet/internal/invariant"
	"github.com/isovet/isovet/internal/sat"
)

// ErrNode is returned for a node outside [0, n).
var ErrNode = errors.New("acyclic: node out of range")

// Options configure a [Theory]. The zero value is usable.
type Options struct {
	// Propagate turns on theory propagation: when an edge u→v enters the
	// graph, edge literals whose edge would close a cycle through u→v are
	// set false. The search for them is bounded by PropagateLimit nodes on
	// each side of the new edge.
	Propagate bool
	// PropagateLimit bounds the nodes visited per side by propagation
	// (default 16).
	PropagateLimit int

	_ struct{}
}

// Stats are counters of a [Theory].
type Stats struct {
	Edges          int   // distinct edges (u,v) known to the theory
	Justifications int   // literal, composite and fixed justifications
	Inserts        int64 // edges that entered the graph
	Reorders       int64 // inserts that needed a search (order violated)
	Visited        int64 // nodes visited by order-maintenance searches
	Conflicts      int64
	ConflictLits   int64 // total length of conflict clauses
	Propagations   int64
	Reasons        int64

	_ struct{}
}

// justification: edge e is present while lits a and b are true (b is
// LitNull for a plain edge literal; both are LitNull for a fixed edge).
type just struct {
	e    int32
	a, b sat.Lit
}

// entry of the theory's trail: an activated justification (j >= 0), a
// literal that became true (j == -1, m set) or a propagated literal
// (j == -2, m set).
type entry struct {
	j     int32
	m     sat.Lit
	level int32
}

// Theory is the graph-acyclicity theory: it keeps the graph of edges whose
// justifications hold under the solver's partial assignment acyclic. Create
// it with [New]; it implements [sat.Theory]. It is not safe for concurrent
// use.
type Theory struct {
	s    *sat.Solver
	opts Options
	n    int

	// Edges (u,v), present or not, and their active justifications.
	edgeID map[uint64]int32
	from   []int32
	to     []int32
	cnt    []int32    // by edge: number of active justifications
	first  []jstamp   // by edge: the first active justification
	more   [][]jstamp // by edge: further active ones, in activation order
	outPos []int32    // by edge: index in out[from], or -1 when absent
	inPos  []int32

	justs   []just
	lit1    []int32       // by Lit: first justification mentioning the literal, or -1
	litMore [][]int32     // by Lit: further justifications (most literals have one)
	on      []bool        // by Lit: reported true and not yet backtracked
	cand    [][]candidate // by node: literal justifications of edges leaving it

	// Present edges and the topological order.
	out, in [][]int32 // by node: present edge ids
	ord     []int32   // by node: position in the order
	at      []int32   // by position: node

	trail []entry
	clock int64 // activation stamp counter

	// Until the first call from the solver, edges are only linked; settle
	// then computes the order in linear time (Kahn) instead of edge by edge.
	settled bool
	broken  []sat.Lit // non-nil: a cycle of level-0 edges, as a clause

	// Search scratch.
	mark    []uint32
	markGen uint32
	parent  []int32 // by node: edge used to reach it (BFS)
	queue   []int32
	fwd     []int32
	bwd     []int32
	pos     []int32
	conf    []sat.Lit

	// Propagation.
	props []sat.Lit
	prop  []propagation // by Lit: why the theory propagated it (j = -1: it did not)
	bmark []uint32

	stats Stats
}

// candidate is a single-literal justification j of an edge to node to.
type candidate struct{ j, to int32 }

// jstamp is an active justification and its activation stamp.
type jstamp struct {
	j     int32
	stamp int64
}

type propagation struct {
	j     int32
	limit int64 // justifications activated before this stamp may be used
}

// New creates the theory over nodes 0..n-1 and attaches it to s.
func New(s *sat.Solver, n int, opts Options) *Theory {
	if opts.PropagateLimit <= 0 {
		opts.PropagateLimit = 16
	}
	g := &Theory{
		s:      s,
		opts:   opts,
		edgeID: make(map[uint64]int32),
	}
	g.AddNodes(n)
	s.AttachTheory(g)
	return g
}

// AddNodes adds k nodes and returns the first new node.
func (g *Theory) AddNodes(k int) int {
	first := g.n
	for i := range k {
		u := int32(first + i)
		g.out = append(g.out, nil)
		g.in = append(g.in, nil)
		g.cand = append(g.cand, nil)
		g.ord = append(g.ord, u)
		g.at = append(g.at, u)
		g.mark = append(g.mark, 0)
		g.bmark = append(g.bmark, 0)
		g.parent = append(g.parent, -1)
	}
	g.n += k
	return first
}

// NumNodes returns the number of nodes.
func (g *Theory) NumNodes() int { return g.n }

// Edge creates a fresh variable whose positive literal puts u→v into the
// graph, and returns that literal.
func (g *Theory) Edge(u, v int) (sat.Lit, error) {
	if err := g.check(u, v); err != nil {
		return sat.LitNull, err
	}
	m := g.s.NewVar().Pos()
	return m, g.AddEdge(m, u, v)
}

// AddEdge makes literal m justify edge u→v: while m is true, u→v is in
// the graph. A literal may justify several edges and an edge may be
// justified by several literals; it stays in the graph while any of its
// justifications holds.
func (g *Theory) AddEdge(m sat.Lit, u, v int) error {
	return g.addJust(m, sat.LitNull, u, v)
}

// AddComposite makes the conjunction a ∧ b justify edge u→v (for example a
// derived edge WW;RW). a and b must be different variables.
func (g *Theory) AddComposite(a, b sat.Lit, u, v int) error {
	if a.Var() == b.Var() {
		return fmt.Errorf("acyclic: composite edge %d→%d: literals %v and %v share a variable", u, v, a, b)
	}
	return g.addJust(a, b, u, v)
}

// AddFixed puts u→v into the graph permanently (a known edge). If fixed
// edges, with edges justified by facts, form a cycle, the solver's formula
// becomes unsatisfiable.
func (g *Theory) AddFixed(u, v int) error {
	return g.addJust(sat.LitNull, sat.LitNull, u, v)
}

func (g *Theory) check(u, v int) error {
	if u < 0 || u >= g.n || v < 0 || v >= g.n {
		return fmt.Errorf("adding edge %d→%d: %w (n=%d)", u, v, ErrNode, g.n)
	}
	return nil
}

func (g *Theory) addJust(a, b sat.Lit, u, v int) error {
	if err := g.checkJust(a, b, u, v); err != nil {
		return err
	}
	e := g.edge(u, v)
	j := int32(len(g.justs))
	g.justs = append(g.justs, just{e: e, a: a, b: b})
	for _, m := range []sat.Lit{a, b} {
		if m != sat.LitNull {
			g.indexLit(m, j)
		}
	}
	if a != sat.LitNull && b == sat.LitNull {
		g.cand[u] = append(g.cand[u], candidate{j, int32(v)})
	}
	// Activate now if the justification already holds at level 0.
	if (a == sat.LitNull || g.on[a]) && (b == sat.LitNull || g.on[b]) {
		if c, ok := g.activate(j, 0); !ok {
			return g.s.AddClause(c...)
		}
	}
	return nil
}

// checkJust reports a justification of u→v that names a missing node or
// variable, or comes during search.
func (g *Theory) checkJust(a, b sat.Lit, u, v int) error {
	if err := g.check(u, v); err != nil {
		return err
	}
	for _, m := range []sat.Lit{a, b} {
		if m != sat.LitNull && (m.Var() == 0 || int(m.Var()) > g.s.NumVars()) {
			return fmt.Errorf("adding edge %d→%d: %w: %v", u, v, sat.ErrBadLit, m)
		}
	}
	if g.s.DecisionLevel() != 0 {
		return fmt.Errorf("acyclic: adding edge %d→%d during search", u, v)
	}
	return nil
}

// edge returns the id of the edge u→v, adding it (inactive) if it is new.
func (g *Theory) edge(u, v int) int32 {
	key := uint64(u)<<32 | uint64(v)
	if e, ok := g.edgeID[key]; ok {
		return e
	}
	e := int32(len(g.from))
	g.edgeID[key] = e
	g.from = append(g.from, int32(u))
	g.to = append(g.to, int32(v))
	g.cnt = append(g.cnt, 0)
	g.first = append(g.first, jstamp{})
	g.more = append(g.more, nil)
	g.outPos = append(g.outPos, -1)
	g.inPos = append(g.inPos, -1)
	return e
}

// indexLit records that justification j mentions m, growing the per-literal
// arrays to m's variable.
func (g *Theory) indexLit(m sat.Lit, j int32) {
	for int(m|1) >= len(g.lit1) { // both literals of m's variable
		g.lit1 = append(g.lit1, -1)
		g.litMore = append(g.litMore, nil)
		g.on = append(g.on, false)
		g.prop = append(g.prop, propagation{j: -1})
	}
	if g.lit1[m] < 0 {
		g.lit1[m] = j
	} else {
		g.litMore[m] = append(g.litMore[m], j)
	}
}

// Assign implements [sat.Theory].
func (g *Theory) Assign(m sat.Lit, level int) []sat.Lit {
	if !g.settled {
		g.settle()
	}
	if g.broken != nil {
		return g.broken
	}
	first, more := g.justsOf(m)
	if first < 0 {
		return nil
	}
	mark := len(g.trail)
	g.on[m] = true
	g.trail = append(g.trail, entry{j: -1, m: m, level: int32(level)})
	for i := -1; i < len(more); i++ {
		j := first
		if i >= 0 {
			j = more[i]
		}
		jj := &g.justs[j]
		other := jj.a
		if other == m {
			other = jj.b
		}
		if other != sat.LitNull && !g.on[other] {
			continue
		}
		if c, ok := g.activate(j, int32(level)); !ok {
			g.undo(mark)
			return c
		}
	}
	return nil
}

// justsOf returns the justifications mentioning m: first (-1 if none) and
// the rest.
func (g *Theory) justsOf(m sat.Lit) (int32, []int32) {
	if int(m) >= len(g.lit1) {
		return -1, nil
	}
	return g.lit1[m], g.litMore[m]
}

// activate makes justification j hold. If its edge is new and closes a
// cycle, nothing changes and it returns the conflict clause and false.
func (g *Theory) activate(j int32, level int32) ([]sat.Lit, bool) {
	e := g.justs[j].e
	if g.cnt[e] == 0 {
		if !g.settled {
			g.link(e)
		} else if c, ok := g.insert(e, j); !ok {
			return c, false
		}
	}
	g.clock++
	if g.cnt[e] == 0 {
		g.first[e] = jstamp{j, g.clock}
	} else {
		g.more[e] = append(g.more[e], jstamp{j, g.clock})
	}
	g.cnt[e]++
	g.trail = append(g.trail, entry{j: j, level: level})
	return nil, true
}

// undo pops the trail down to size mark.
func (g *Theory) undo(mark int) {
	for i := len(g.trail) - 1; i >= mark; i-- {
		t := g.trail[i]
		switch t.j {
		case -1:
			g.on[t.m] = false
			continue
		case -2:
			g.prop[t.m].j = -1
			continue
		}
		e := g.justs[t.j].e
		g.cnt[e]--
		if g.cnt[e] > 0 {
			g.more[e] = g.more[e][:len(g.more[e])-1]
		} else {
			g.remove(e)
		}
	}
	g.trail = g.trail[:mark]
}

// Backtrack implements [sat.Theory].
func (g *Theory) Backtrack(level int) {
	i := len(g.trail)
	for i > 0 && int(g.trail[i-1].level) > level {
		i--
	}
	g.undo(i)
	g.props = g.props[:0]
}

// Propagate implements [sat.Theory].
func (g *Theory) Propagate(dst []sat.Lit) []sat.Lit {
	if !g.settled {
		g.settle()
	}
	dst = append(dst, g.props...)
	g.props = g.props[:0]
	return dst
}

// Check implements [sat.Theory]: every cycle is reported by Assign, so a
// complete assignment without conflict is acyclic.
func (g *Theory) Check() []sat.Lit {
	if !g.settled {
		g.settle()
	}
	if invariant.Enabled && g.broken == nil {
		for e := range g.from {
			if g.cnt[e] > 0 {
				u, v := g.from[e], g.to[e]
				invariant.Assertf(g.ord[u] < g.ord[v], "present edge %d→%d violates the order", u, v)
			}
		}
		for i, u := range g.at {
			invariant.Assertf(g.ord[u] == int32(i), "order arrays disagree at %d", i)
		}
	}
	return g.broken
}

// Phase implements [sat.Theory] (VeriStrong §6.2): a variable is first
// decided so that the edges it adds agree with the current topological
// order.
func (g *Theory) Phase(v sat.Var) sat.Lit {
	if !g.settled {
		g.settle()
	}
	hasP, okP := g.agrees(v.Pos())
	hasN, okN := g.agrees(v.Neg())
	switch {
	case hasP && okP:
		return v.Pos()
	case hasN && okN:
		return v.Neg()
	case hasP:
		return v.Neg()
	case hasN:
		return v.Pos()
	}
	return sat.LitNull
}

// agrees reports whether m justifies some edge (has) and whether every edge
// it justifies agrees with the current topological order (ok).
func (g *Theory) agrees(m sat.Lit) (has, ok bool) {
	first, more := g.justsOf(m)
	if first < 0 {
		return false, false
	}
	for i := -1; i < len(more); i++ {
		j := first
		if i >= 0 {
			j = more[i]
		}
		e := g.justs[j].e
		if g.ord[g.from[e]] > g.ord[g.to[e]] {
			return true, false
		}
	}
	return true, true
}

// Stats returns the theory's counters.
func (g *Theory) Stats() Stats {
	st := g.stats
	st.Edges = len(g.from)
	st.Justifications = len(g.justs)
	return st
}

// Order returns a topological order of the graph of the solver's last model
// (fixed edges and edges whose justifications hold in the model), for
// example a serial order of transactions. Call it after Solve returned Sat.
func (g *Theory) Order() []int {
	adj, indeg := g.modelGraph()
	order := make([]int, 0, g.n)
	var q []int32
	for u := range g.n {
		if indeg[u] == 0 {
			q = append(q, int32(u))
		}
	}
	for len(q) > 0 {
		u := q[0]
		q = q[1:]
		order = append(order, int(u))
		for _, v := range adj[u] {
			indeg[v]--
			if indeg[v] == 0 {
				q = append(q, v)
			}
		}
	}
	return order
}

// modelGraph returns the edges of the last model's graph (each once, in the
// order of their first justification that holds) and in-degrees.
func (g *Theory) modelGraph() (adj [][]int32, indeg []int32) {
	indeg = make([]int32, g.n)
	adj = make([][]int32, g.n)
	holds := func(m sat.Lit) bool { return m == sat.LitNull || g.s.Value(m) }
	seen := make(map[int32]bool)
	for _, jj := range g.justs {
		if holds(jj.a) && holds(jj.b) && !seen[jj.e] {
			seen[jj.e] = true
			u, v := g.from[jj.e], g.to[jj.e]
			adj[u] = append(adj[u], v)
			indeg[v]++
		}
	}
	return adj, indeg
}

// explain appends the negation of a justification of edge e active before
// stamp limit (preferring fixed and single-literal ones) to g.conf.
func (g *Theory) explain(e int32, limit int64) {
	best := int32(-1)
	bestN := 3
	for i := int32(0); i < g.cnt[e]; i++ {
		js := g.first[e]
		if i > 0 {
			js = g.more[e][i-1]
		}
		if js.stamp >= limit {
			break
		}
		j := js.j
		n := 0
		if g.justs[j].a != sat.LitNull {
			n++
		}
		if g.justs[j].b != sat.LitNull {
			n++
		}
		if n < bestN {
			best, bestN = j, n
			if n == 0 {
				break
			}
		}
	}
	if best < 0 {
		panic("acyclic: explaining an edge with no justification")
	}
	jj := g.justs[best]
	if jj.a != sat.LitNull {
		g.conf = append(g.conf, jj.a.Not())
	}
	if jj.b != sat.LitNull {
		g.conf = append(g.conf, jj.b.Not())
	}
}

// dedupe sorts and deduplicates g.conf.
func (g *Theory) dedupe() []sat.Lit {
	slices.Sort(g.conf)
	g.conf = slices.Compact(g.conf)
	return g.conf
}
