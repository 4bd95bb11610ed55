package polygraph

import (
	"context"
	"slices"

	"github.com/isovet/isovet/internal/graph"
	"github.com/isovet/isovet/internal/sat"
	"github.com/isovet/isovet/internal/sat/acyclic"
)

// The stages below are the same for every polygraph encoding over the acyclicity theory,
// whatever its graph: serializability's known graph here, snapshot isolation's split graph
// in internal/check/si. An encoding collects justified edges, each held by a conjunction of
// literals folded to at most two ([Ands.Fold]), then attaches them with its known graph to
// one theory ([Attach]); a failed solve is shrunk to a minimal set of selectors
// ([MinimalCore]).

// Justified is an edge U→V of an encoding's graph that holds when the conjunction of A and
// B holds; B (or both) may be sat.LitNull, for an edge held by one literal (or none).
type Justified struct {
	U, V int32
	A, B sat.Lit
}

// Ands defines conjunctions of two literals by auxiliary variables, one per pair.
type Ands struct {
	s   *sat.Solver
	and map[[2]sat.Lit]sat.Lit
}

// NewAnds returns the conjunctions of s's literals.
func NewAnds(s *sat.Solver) *Ands {
	return &Ands{s: s, and: make(map[[2]sat.Lit]sat.Lit)}
}

// Fold reduces the conjunction lits to at most two literals a ≤ b (sat.LitNull where fewer
// are left), defining an auxiliary variable for the AND of the last two until two are left;
// ok is false when the conjunction never holds (it holds a literal and its negation). lits
// is not modified.
func (c *Ands) Fold(lits []sat.Lit) (a, b sat.Lit, ok bool) {
	ls := slices.Clone(lits)
	slices.Sort(ls)
	ls = slices.Compact(ls)
	for i := 1; i < len(ls); i++ {
		if ls[i] == ls[i-1].Not() {
			return sat.LitNull, sat.LitNull, false
		}
	}
	// An auxiliary variable is newer than the literals it joins, so it sorts last: the
	// folded literals stay sorted.
	for len(ls) > 2 {
		m := c.conj(ls[len(ls)-2], ls[len(ls)-1])
		ls = append(ls[:len(ls)-2], m)
	}
	ls = append(ls, sat.LitNull, sat.LitNull)
	return ls[0], ls[1], true
}

// conj returns a literal equivalent to a ∧ b: a variable defined as their AND in both
// directions, so no edge it justifies can be absent while a and b hold.
func (c *Ands) conj(a, b sat.Lit) sat.Lit {
	if a > b {
		a, b = b, a
	}
	if m, ok := c.and[[2]sat.Lit{a, b}]; ok {
		return m
	}
	m := c.s.NewVar().Pos()
	c.s.AddClause(m.Not(), a)
	c.s.AddClause(m.Not(), b)
	c.s.AddClause(m, a.Not(), b.Not())
	c.and[[2]sat.Lit{a, b}] = m
	return m
}

// Attach creates the acyclicity theory of s for the known acyclic graph g (order is a
// topological order of it) plus the justified edges js. The known graph goes in reduced to
// reachability among the nodes the justified edges touch ([graph.ReduceAmong]) when there are
// not too many, else whole; theory nodes are numbered in the topological order, so the fixed
// edges agree with the theory's initial order and cost no search.
func Attach(ctx context.Context, s *sat.Solver, g *graph.Digraph, order []int32, js []Justified, o acyclic.Options) (*acyclic.Theory, error) {
	pos := graph.Positions(order)
	terms := make([]int32, 0, 2*len(js))
	for _, j := range js {
		terms = append(terms, j.U, j.V)
	}
	red, reduced, err := graph.ReduceAmong(ctx, g, order, pos, terms)
	if err != nil {
		return nil, err
	}
	if !reduced {
		t := acyclic.New(s, g.N(), o)
		if err := addFixedGraph(t, pos, g); err != nil {
			return nil, err
		}
		return t, addJustified(t, pos, js)
	}
	tn, n := terminalNodes(pos, terms)
	t := acyclic.New(s, n, o)
	for _, e := range red {
		if err := t.AddFixed(int(tn[e[0]]), int(tn[e[1]])); err != nil {
			return nil, err
		}
	}
	return t, addJustified(t, tn, js)
}

// terminalNodes numbers the distinct terminals in topological order (pos): their theory
// nodes, -1 for every other node, and how many there are. It sorts terms.
func terminalNodes(pos, terms []int32) (tn []int32, n int) {
	tn = make([]int32, len(pos))
	for i := range tn {
		tn[i] = -1
	}
	slices.SortFunc(terms, func(a, b int32) int { return int(pos[a]) - int(pos[b]) })
	terms = slices.Compact(terms)
	for i, t := range terms {
		tn[t] = int32(i)
	}
	return tn, len(terms)
}

// addFixedGraph gives the theory every edge of g, on theory nodes tn.
func addFixedGraph(t *acyclic.Theory, tn []int32, g *graph.Digraph) error {
	for u := range g.N() {
		for _, v := range g.Out(int32(u)) {
			if err := t.AddFixed(int(tn[u]), int(tn[v])); err != nil {
				return err
			}
		}
	}
	return nil
}

// addJustified gives the theory the justified edges, on theory nodes tn: a fixed edge, an
// edge of one literal, or a composite edge of two.
func addJustified(t *acyclic.Theory, tn []int32, js []Justified) error {
	for _, j := range js {
		u, v := int(tn[j.U]), int(tn[j.V])
		var err error
		switch {
		case j.A == sat.LitNull:
			err = t.AddFixed(u, v)
		case j.B == sat.LitNull:
			err = t.AddEdge(j.A, u, v)
		default:
			err = t.AddComposite(j.A, j.B, u, v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// MinimalCore returns a minimal set of the selectors sel (their indexes, sorted) that is
// unsatisfiable together: the solver's failed assumptions when every selector i with open(i)
// is assumed, shrunk by deletion. It stops shrinking (returning a set that is unsatisfiable
// but maybe not minimal) after budget solver calls, and returns nil unless the first solve
// is unsatisfiable.
func MinimalCore(ctx context.Context, s *sat.Solver, sel []sat.Lit, open func(i int) bool, budget int) ([]int, error) {
	idx := make(map[sat.Lit]int, len(sel))
	var all []sat.Lit
	for i, m := range sel {
		if open(i) {
			idx[m] = i
			all = append(all, m)
		}
	}
	st, err := s.Solve(ctx, all...)
	if err != nil || st != sat.Unsat {
		return nil, err
	}
	core, err := shrinkCore(ctx, s, s.Failed(), budget)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(core))
	for i, m := range core {
		out[i] = idx[m]
	}
	slices.Sort(out)
	return out, nil
}

// shrinkCore drops the assumptions of an unsatisfiable core one at a time, keeping each
// drop that leaves it unsatisfiable (and then only the new failed assumptions, in core's
// order), within budget solver calls.
func shrinkCore(ctx context.Context, s *sat.Solver, core []sat.Lit, budget int) ([]sat.Lit, error) {
	for i := 0; i < len(core) && budget > 0; {
		try := slices.Delete(slices.Clone(core), i, i+1)
		budget--
		st, err := s.Solve(ctx, try...)
		if err != nil {
			return nil, err
		}
		if st != sat.Unsat {
			i++
			continue
		}
		in := make(map[sat.Lit]bool)
		for _, m := range s.Failed() {
			in[m] = true
		}
		core = slices.DeleteFunc(try, func(m sat.Lit) bool { return !in[m] })
	}
	return core, nil
}

// Poll polls a context every 1024 units of work, for loops whose steps vary in size (a
// pair's uncertain readers can be many).
type Poll struct {
	Ctx  context.Context
	work int // units since ctx was last polled
}

// Tick counts n units of work and returns context.Cause(ctx) if ctx is done at a poll.
func (p *Poll) Tick(n int) error {
	if p.work += n; p.work >= 1024 {
		if p.work = 0; p.Ctx.Err() != nil {
			return context.Cause(p.Ctx)
		}
	}
	return nil
}

// Guard appends to dst the literal saying transaction t committed, if its outcome is
// unknown: cvar holds each transaction's commit variable, 0 where the outcome is known (t
// may be a node that is no transaction, or -1).
func Guard(dst []sat.Lit, cvar []sat.Var, t int32) []sat.Lit {
	if t >= 0 && t < int32(len(cvar)) && cvar[t] != 0 {
		dst = append(dst, cvar[t].Pos())
	}
	return dst
}

// Guards appends the literals of an edge's three guards (see [Guard]).
func Guards(dst []sat.Lit, cvar []sat.Var, g [3]int32) []sat.Lit {
	return Guard(Guard(Guard(dst, cvar, g[0]), cvar, g[1]), cvar, g[2])
}

// ReadCandidate says candidate x of a read by reader, from writer w, is chosen only if
// both committed (cvar as for [Guard]).
func ReadCandidate(s *sat.Solver, cvar []sat.Var, x sat.Var, w, reader int32) error {
	if w < int32(len(cvar)) && cvar[w] != 0 {
		if err := s.AddClause(x.Neg(), cvar[w].Pos()); err != nil {
			return err
		}
	}
	if cvar[reader] != 0 {
		return s.AddClause(x.Neg(), cvar[reader].Pos())
	}
	return nil
}

// ReadOne says a read by reader reads from one of its candidates xs if reader committed
// (cvar as for [Guard]) and its selector sel holds (sat.LitNull: no selector).
func ReadOne(s *sat.Solver, cvar []sat.Var, reader int32, sel sat.Lit, xs []sat.Var) error {
	cl := make([]sat.Lit, 0, len(xs)+2)
	if cvar[reader] != 0 {
		cl = append(cl, cvar[reader].Neg())
	}
	if sel != sat.LitNull {
		cl = append(cl, sel.Not())
	}
	for _, x := range xs {
		cl = append(cl, x.Pos())
	}
	return s.AddClause(cl...)
}
