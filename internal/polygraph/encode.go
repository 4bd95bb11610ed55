package polygraph

import (
	"context"
	"errors"
	"slices"

	"isovet/internal/deps"
	"isovet/internal/graph"
	"isovet/internal/sat"
	"isovet/internal/sat/acyclic"
)

// Encoding is the remaining hyper-polygraph as a SAT problem over the acyclicity theory:
// one variable per undecided WW pair (true: A before B), one per candidate of each undecided
// read, one per transaction of unknown outcome (true: it committed). Known edges are fixed
// edges of the theory; every other edge is justified by the conjunction of the literals it
// needs (composite edges; conjunctions of more than two literals get an auxiliary variable
// defined as their AND in both directions, so no edge can be left out while its reasons
// hold).
type Encoding struct {
	P *Polygraph
	S *sat.Solver
	T *acyclic.Theory

	WWVar []sat.Var   // per WW constraint, 0 if fixed
	WRVar [][]sat.Var // per WR constraint, per alive candidate; nil if fixed
	CVar  []sat.Var   // per transaction, 0 unless of unknown outcome
	// Sel are selector literals (only with Selectors): Sel[i] for WW i, Sel[len(WW)+j] for WR j.
	Sel []sat.Lit

	and map[[2]sat.Lit]sat.Lit
	// tn maps graph nodes to theory nodes: positions in a topological order of the known
	// graph, so every fixed edge agrees with the theory's initial order and costs no search.
	tn   []int32
	pend []pending
}

// EncodeOptions configure [Polygraph.Encode].
type EncodeOptions struct {
	// Selectors adds one selector per undecided constraint: with its selector false a
	// constraint imposes nothing. Used to extract a minimal unsatisfiable set of choices.
	Selectors bool
	Solver    sat.Options
	Theory    acyclic.Options
	// Comp, if not nil, restricts the encoding to the constraints of transactions whose
	// component (see [Polygraph.Components]) is Only.
	Comp []int32
	Only int32
}

// Encode builds the solver problem for the undecided constraints.
func (p *Polygraph) Encode(ctx context.Context, o EncodeOptions) (*Encoding, error) {
	d := p.D
	s := sat.New(o.Solver)
	en := &Encoding{P: p, S: s, and: make(map[[2]sat.Lit]sat.Lit)}
	en.CVar = make([]sat.Var, d.N)
	in := func(u int32) bool { return o.Comp == nil || p.nodeComp(o.Comp, u) == o.Only }
	for t := range d.N {
		if d.Status[t] == deps.Maybe && in(int32(t)) {
			en.CVar[t] = s.NewVar()
		}
	}
	guard := func(dst []sat.Lit, t int32) []sat.Lit {
		if t >= 0 && t < int32(d.N) && en.CVar[t] != 0 {
			dst = append(dst, en.CVar[t].Pos())
		}
		return dst
	}
	var lits []sat.Lit
	for _, e := range d.Guarded {
		if !in(e.From) && !in(e.To) {
			continue
		}
		lits = guard(guard(guard(lits[:0], e.Guards[0]), e.Guards[1]), e.Guards[2])
		if err := en.just(lits, e.From, e.To); err != nil {
			return nil, err
		}
	}
	// WR variables first, indexed by (writer, key) for the WW derivations.
	en.WRVar = make([][]sat.Var, len(p.WR))
	type cand struct{ wi, j int32 }
	byWK := make(map[wk][]cand)
	for wi := range p.WR {
		rc := &p.WR[wi]
		if rc.Fixed || !in(d.Reads[rc.Read].Txn) {
			continue
		}
		r := &d.Reads[rc.Read]
		en.WRVar[wi] = make([]sat.Var, len(rc.Cands))
		for j, w := range rc.Cands {
			en.WRVar[wi][j] = s.NewVar()
			byWK[wk{w, r.Key}] = append(byWK[wk{w, r.Key}], cand{int32(wi), int32(j)})
		}
	}
	if o.Selectors {
		en.Sel = make([]sat.Lit, len(p.WW)+len(p.WR))
		for i := range en.Sel {
			en.Sel[i] = s.NewVar().Pos()
		}
	}
	// WW pairs. A pair's uncertain readers can be many: poll ctx by clauses made.
	work := 0
	tick := func(n int) error {
		if work += n; work >= 1024 {
			if work = 0; ctx.Err() != nil {
				return context.Cause(ctx)
			}
		}
		return nil
	}
	en.WWVar = make([]sat.Var, len(p.WW))
	var buf []deps.Edge
	for ci := range p.WW {
		if err := tick(1); err != nil {
			return nil, err
		}
		c := &p.WW[ci]
		if c.Fixed != 0 || !in(c.A) {
			continue
		}
		v := s.NewVar()
		en.WWVar[ci] = v
		base := guard(guard(nil, c.A), c.B)
		if o.Selectors {
			base = append(base, en.Sel[ci])
		}
		for _, side := range [2]struct {
			a, b int32
			m    sat.Lit
		}{{c.A, c.B, v.Pos()}, {c.B, c.A, v.Neg()}} {
			ls := append(slices.Clone(base), side.m)
			buf = p.orientEdgesX(c, side.a, side.b, buf[:0], true)
			for _, e := range buf {
				if err := en.just(ls, e.From, e.To); err != nil {
					return nil, err
				}
			}
			// Uncertain readers of a's version of a shared key anti-depend on b.
			for i, k := range c.Keys {
				from, to := c.sideEnds(side.a, i)
				if err := tick(len(byWK[wk{from, k}])); err != nil {
					return nil, err
				}
				for _, cd := range byWK[wk{from, k}] {
					rd := d.Reads[p.WR[cd.wi].Read].Txn
					if rd == to {
						continue
					}
					l2 := append(slices.Clone(ls), en.WRVar[cd.wi][cd.j].Pos())
					if err := en.just(l2, rd, to); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	if err := en.twoWidth(ctx, byWK2(byWK, func(c cand) (int32, int32) { return c.wi, c.j })); err != nil {
		return nil, err
	}
	// WR constraints.
	for wi := range p.WR {
		rc := &p.WR[wi]
		if rc.Fixed || en.WRVar[wi] == nil {
			continue
		}
		if err := tick(1 + len(rc.Cands)); err != nil {
			return nil, err
		}
		r := &d.Reads[rc.Read]
		var cl []sat.Lit
		if en.CVar[r.Txn] != 0 {
			cl = append(cl, en.CVar[r.Txn].Neg())
		}
		if o.Selectors {
			cl = append(cl, en.Sel[len(p.WW)+wi].Not())
		}
		for j, w := range rc.Cands {
			x := en.WRVar[wi][j]
			cl = append(cl, x.Pos())
			if w < int32(d.N) && en.CVar[w] != 0 {
				if err := s.AddClause(x.Neg(), en.CVar[w].Pos()); err != nil {
					return nil, err
				}
			}
			if en.CVar[r.Txn] != 0 {
				if err := s.AddClause(x.Neg(), en.CVar[r.Txn].Pos()); err != nil {
					return nil, err
				}
			}
			for _, e := range p.readEdgesX(rc.Read, w, true) {
				ls := guard(guard(guard([]sat.Lit{x.Pos()}, e.Guards[0]), e.Guards[1]), e.Guards[2])
				if err := en.just(ls, e.From, e.To); err != nil {
					return nil, err
				}
			}
		}
		if err := s.AddClause(cl...); err != nil {
			return nil, err
		}
		// At most one source (equisatisfiable with at least one, since acyclicity is
		// anti-monotone in the edges; it keeps spurious edges out of the search).
		if vs := en.WRVar[wi]; len(vs) <= 8 {
			for i := range vs {
				for j := i + 1; j < len(vs); j++ {
					if err := s.AddClause(vs[i].Neg(), vs[j].Neg()); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	if err := en.attach(ctx, o.Theory); err != nil {
		return nil, err
	}
	return en, nil
}

// wrRef names candidate j of WR constraint wi.
type wrRef struct{ wi, j int32 }

func byWK2[C any](m map[wk][]C, f func(C) (int32, int32)) map[wk][]wrRef {
	out := make(map[wk][]wrRef, len(m))
	for k, cs := range m {
		for _, c := range cs {
			wi, j := f(c)
			out[k] = append(out[k], wrRef{wi, j})
		}
	}
	return out
}

// twoWidth adds VeriStrong's 2-width RW clauses (§6.1, Alg. 2 RWCYCLE with the erratum's
// reader ≠ overwriter): if read R may read k from A (variable x) and A's block may precede
// B's on k (literal w), the derived anti-dependency R→B closes a cycle with known edges when
// B already reaches R; then ¬x ∨ ¬w. Each clause is implied by acyclicity, so adding it
// changes no answer; it lets unit propagation see what the theory would learn by conflict.
func (en *Encoding) twoWidth(ctx context.Context, byWK map[wk][]wrRef) error {
	p, d := en.P, en.P.D
	type cl struct {
		x, w sat.Lit
	}
	var qs []graph.Query
	var cls []cl
	for ci := range p.WW {
		if ci&1023 == 0 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		c := &p.WW[ci]
		if en.WWVar[ci] == 0 {
			continue
		}
		for _, side := range [2]struct {
			a int32
			m sat.Lit
		}{{c.A, en.WWVar[ci].Pos()}, {c.B, en.WWVar[ci].Neg()}} {
			for i, k := range c.Keys {
				from, to := c.sideEnds(side.a, i)
				for _, r := range byWK[wk{from, k}] {
					rd := d.Reads[p.WR[r.wi].Read].Txn
					if rd == to || en.WRVar[r.wi] == nil {
						continue
					}
					qs = append(qs, graph.Query{From: to, To: rd})
					cls = append(cls, cl{en.WRVar[r.wi][r.j].Pos(), side.m})
				}
			}
		}
	}
	if len(qs) == 0 {
		return nil
	}
	order, ok := graph.Topo(p.G)
	if !ok {
		return errors.New("polygraph: encoding a cyclic known graph (prune first)")
	}
	ans, err := graph.ReachBatch(ctx, p.G, order, graph.Positions(order), qs)
	if err != nil {
		return err
	}
	for i, yes := range ans {
		if yes {
			if err := en.S.AddClause(cls[i].x.Not(), cls[i].w.Not()); err != nil {
				return err
			}
		}
	}
	return nil
}

type pending struct {
	lits []sat.Lit
	u, v int32
}

// attach creates the theory and gives it the justified edges collected by just, plus the
// known graph: reduced to reachability among the nodes those edges touch (transitively
// reduced, [graph.ReduceAmong]) when there are not too many, else whole. Theory nodes are
// numbered in a topological order of the known graph, so fixed edges cost no reordering.
func (en *Encoding) attach(ctx context.Context, o acyclic.Options) error {
	p := en.P
	order, ok := graph.Topo(p.G)
	if !ok {
		return errors.New("polygraph: encoding a cyclic known graph (prune first)")
	}
	pos := graph.Positions(order)
	var terms []int32
	for _, j := range en.pend {
		terms = append(terms, j.u, j.v)
	}
	red, ok, err := graph.ReduceAmong(ctx, p.G, order, pos, terms)
	if err != nil {
		return err
	}
	en.tn = make([]int32, p.G.N())
	n := 0
	if ok {
		for i := range en.tn {
			en.tn[i] = -1
		}
		slices.SortFunc(terms, func(a, b int32) int { return int(pos[a]) - int(pos[b]) })
		terms = slices.Compact(terms)
		for i, t := range terms {
			en.tn[t] = int32(i)
		}
		n = len(terms)
	} else {
		copy(en.tn, pos)
		n = p.G.N()
	}
	en.T = acyclic.New(en.S, n, o)
	if ok {
		for _, e := range red {
			if err := en.T.AddFixed(int(en.tn[e[0]]), int(en.tn[e[1]])); err != nil {
				return err
			}
		}
	} else {
		for u := range p.G.N() {
			for _, v := range p.G.Out(int32(u)) {
				if err := en.T.AddFixed(int(en.tn[u]), int(en.tn[v])); err != nil {
					return err
				}
			}
		}
	}
	for _, j := range en.pend {
		if err := en.addJust(j.lits, j.u, j.v); err != nil {
			return err
		}
	}
	en.pend = nil
	return nil
}

// just makes the conjunction of lits justify u→v.
func (en *Encoding) just(lits []sat.Lit, u, v int32) error {
	if u == v {
		return nil
	}
	ls := slices.Clone(lits)
	slices.Sort(ls)
	ls = slices.Compact(ls)
	for i := 1; i < len(ls); i++ {
		if ls[i] == ls[i-1].Not() {
			return nil // never holds
		}
	}
	for len(ls) > 2 {
		a := en.conj(ls[len(ls)-2], ls[len(ls)-1])
		ls = append(ls[:len(ls)-2], a)
	}
	en.pend = append(en.pend, pending{ls, u, v})
	return nil
}

// addJust gives a collected justification to the theory.
func (en *Encoding) addJust(ls []sat.Lit, u, v int32) error {
	tu, tv := int(en.tn[u]), int(en.tn[v])
	switch len(ls) {
	case 0:
		return en.T.AddFixed(tu, tv)
	case 1:
		return en.T.AddEdge(ls[0], tu, tv)
	default:
		return en.T.AddComposite(ls[0], ls[1], tu, tv)
	}
}

// conj returns a literal equivalent to a ∧ b.
func (en *Encoding) conj(a, b sat.Lit) sat.Lit {
	if a > b {
		a, b = b, a
	}
	if m, ok := en.and[[2]sat.Lit{a, b}]; ok {
		return m
	}
	m := en.S.NewVar().Pos()
	en.S.AddClause(m.Not(), a)
	en.S.AddClause(m.Not(), b)
	en.S.AddClause(m, a.Not(), b.Not())
	en.and[[2]sat.Lit{a, b}] = m
	return m
}

// Solve solves the encoding under the given assumptions.
func (en *Encoding) Solve(ctx context.Context, assumptions ...sat.Lit) (sat.Status, error) {
	return en.S.Solve(ctx, assumptions...)
}

// MinimalCore returns a minimal set of constraints (indexes into Sel: WW i as i, WR j as
// len(WW)+j) that is unsatisfiable with the known edges, shrinking the solver's failed
// assumptions by deletion. The encoding must have selectors. It stops shrinking (returning
// a core that is unsatisfiable but maybe not minimal) after budget solver calls.
func (en *Encoding) MinimalCore(ctx context.Context, budget int) ([]int, error) {
	idx := make(map[sat.Lit]int, len(en.Sel))
	var all []sat.Lit
	for i, m := range en.Sel {
		if i < len(en.P.WW) && en.WWVar[i] == 0 {
			continue
		}
		if i >= len(en.P.WW) && en.WRVar[i-len(en.P.WW)] == nil {
			continue
		}
		idx[m] = i
		all = append(all, m)
	}
	st, err := en.Solve(ctx, all...)
	if err != nil || st != sat.Unsat {
		return nil, err
	}
	core := en.S.Failed()
	for i := 0; i < len(core) && budget > 0; {
		try := slices.Delete(slices.Clone(core), i, i+1)
		budget--
		st, err := en.Solve(ctx, try...)
		if err != nil {
			return nil, err
		}
		if st == sat.Unsat {
			f := en.S.Failed()
			// Keep the order stable: filter try by f.
			in := make(map[sat.Lit]bool, len(f))
			for _, m := range f {
				in[m] = true
			}
			core = slices.DeleteFunc(try, func(m sat.Lit) bool { return !in[m] })
			continue
		}
		i++
	}
	out := make([]int, len(core))
	for i, m := range core {
		out[i] = idx[m]
	}
	slices.Sort(out)
	return out, nil
}
