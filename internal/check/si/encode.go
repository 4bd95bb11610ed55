package si

import (
	"context"
	"errors"
	"slices"

	"isovet/internal/deps"
	"isovet/internal/graph"
	"isovet/internal/report"
	"isovet/internal/sat"
	"isovet/internal/sat/acyclic"
)

// encoding is the pruned model as a SAT problem over the acyclicity theory of the induced
// graph: one variable per undecided WW pair (true: a before b), one per candidate of each
// undecided read, one per transaction of unknown outcome (true: it committed). Every raw
// edge is justified by a conjunction of literals; every induced edge by its raw edge's
// conjunction, or by the union of a dep edge's and a following rw edge's. Conjunctions of
// more than two literals get an auxiliary variable defined as their AND in both directions,
// so no induced edge can be absent while its reasons hold.
type encoding struct {
	m     *model
	s     *sat.Solver
	t     *acyclic.Theory
	cvar  []sat.Var
	wwVar []sat.Var   // per WW choice, 0 if fixed
	wrVar [][]sat.Var // per WR choice, per candidate; nil if fixed
	// sel are selector literals (with selectors only): sel[i] for WW i, sel[len(ww)+j] for
	// WR j. With its selector false a choice imposes nothing.
	sel []sat.Lit
	and map[[2]sat.Lit]sat.Lit
}

// jedge is a raw edge with the literals that justify it.
type jedge struct {
	u, v int32
	lits []sat.Lit
}

type jkey struct {
	u, v int32
	a, b sat.Lit
}

// encode builds the solver problem for the undecided choices.
func (m *model) encode(ctx context.Context, selectors bool, to acyclic.Options) (*encoding, error) {
	d := m.d
	s := sat.New(sat.Options{})
	en := &encoding{m: m, s: s, and: make(map[[2]sat.Lit]sat.Lit)}
	en.cvar = make([]sat.Var, d.N)
	for t := range d.N {
		if d.Status[t] == deps.Maybe {
			en.cvar[t] = s.NewVar()
		}
	}
	guard := func(dst []sat.Lit, t int32) []sat.Lit {
		if t >= 0 && t < int32(d.N) && en.cvar[t] != 0 {
			dst = append(dst, en.cvar[t].Pos())
		}
		return dst
	}
	// Every justified raw edge is one split-graph edge with its justification (see
	// model.go, "The split graph"); emit is defined below and collects them.
	var just []jkey
	seen := make(map[jkey]bool)
	var emitErr error
	emit := func(x, y int32, ls []sat.Lit) error {
		ls = slices.Clone(ls)
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
			slices.Sort(ls)
		}
		k := jkey{x, y, sat.LitNull, sat.LitNull}
		switch len(ls) {
		case 0:
			return errors.New("si: a justified edge without literals")
		case 1:
			k.a = ls[0]
		case 2:
			k.a, k.b = ls[0], ls[1]
		}
		if !seen[k] {
			seen[k] = true
			just = append(just, k)
		}
		return nil
	}
	add := func(e deps.Edge, lits []sat.Lit) {
		if e.From == e.To || emitErr != nil {
			return
		}
		x, y := m.split(e)
		emitErr = emit(x, y, lits)
	}
	var lits []sat.Lit
	for _, e := range m.guarded {
		lits = guard(guard(guard(lits[:0], e.Guards[0]), e.Guards[1]), e.Guards[2])
		add(e, lits)
	}
	en.wrVar = make([][]sat.Var, len(m.wr))
	type cand struct{ wi, j int32 }
	byWK := make(map[wk][]cand)
	for wi := range m.wr {
		rc := &m.wr[wi]
		if rc.fixed {
			continue
		}
		r := &d.Reads[rc.ri]
		en.wrVar[wi] = make([]sat.Var, len(rc.cands))
		for j, w := range rc.cands {
			en.wrVar[wi][j] = s.NewVar()
			byWK[wk{w, r.Key}] = append(byWK[wk{w, r.Key}], cand{int32(wi), int32(j)})
		}
	}
	if selectors {
		en.sel = make([]sat.Lit, len(m.ww)+len(m.wr))
		for i := range en.sel {
			en.sel[i] = s.NewVar().Pos()
		}
	}
	en.wwVar = make([]sat.Var, len(m.ww))
	var buf []deps.Edge
	// A pair's uncertain readers can be many: poll ctx by clauses made.
	work := 0
	tick := func(n int) error {
		if work += n; work >= 1024 {
			if work = 0; ctx.Err() != nil {
				return context.Cause(ctx)
			}
		}
		return nil
	}
	for ci := range m.ww {
		if err := tick(1); err != nil {
			return nil, err
		}
		c := &m.ww[ci]
		if c.fixed != 0 {
			continue
		}
		v := s.NewVar()
		en.wwVar[ci] = v
		base := guard(guard(nil, c.a), c.b)
		if selectors {
			base = append(base, en.sel[ci])
		}
		for _, side := range [2]struct {
			a, b int32
			l    sat.Lit
		}{{c.a, c.b, v.Pos()}, {c.b, c.a, v.Neg()}} {
			ls := append(slices.Clone(base), side.l)
			buf = m.wwEdges(c, side.a, side.b, buf[:0])
			for _, e := range buf {
				add(e, ls)
			}
			for _, k := range c.keys {
				if err := tick(len(byWK[wk{side.a, k}])); err != nil {
					return nil, err
				}
				for _, cd := range byWK[wk{side.a, k}] {
					ri := m.wr[cd.wi].ri
					rd := d.Reads[ri].Txn
					if rd == side.b {
						continue
					}
					wa, _ := d.WriteOf(side.a, k)
					wb, _ := d.WriteOf(side.b, k)
					e := deps.Edge{From: rd, To: side.b, Rel: report.RW, Key: k, Value: wa.Value, Value2: wb.Value, Via: side.a, Guards: [3]int32{-1, -1, -1}}
					add(e, append(slices.Clone(ls), en.wrVar[cd.wi][cd.j].Pos()))
				}
			}
		}
	}
	for wi := range m.wr {
		rc := &m.wr[wi]
		if rc.fixed {
			continue
		}
		if err := tick(1 + len(rc.cands)); err != nil {
			return nil, err
		}
		r := &d.Reads[rc.ri]
		var cl []sat.Lit
		if en.cvar[r.Txn] != 0 {
			cl = append(cl, en.cvar[r.Txn].Neg())
		}
		if selectors {
			cl = append(cl, en.sel[len(m.ww)+wi].Not())
		}
		for j, w := range rc.cands {
			x := en.wrVar[wi][j]
			cl = append(cl, x.Pos())
			if w < int32(d.N) && en.cvar[w] != 0 {
				if err := s.AddClause(x.Neg(), en.cvar[w].Pos()); err != nil {
					return nil, err
				}
			}
			if en.cvar[r.Txn] != 0 {
				if err := s.AddClause(x.Neg(), en.cvar[r.Txn].Pos()); err != nil {
					return nil, err
				}
			}
			for _, e := range m.readEdges(rc.ri, w) {
				add(e, guard(guard(guard([]sat.Lit{x.Pos()}, e.Guards[0]), e.Guards[1]), e.Guards[2]))
			}
		}
		if err := s.AddClause(cl...); err != nil {
			return nil, err
		}
	}
	if emitErr != nil {
		return nil, emitErr
	}
	if err := en.attach(ctx, just, to); err != nil {
		return nil, err
	}
	return en, nil
}

// attach creates the theory: the known split graph, reduced to reachability among the
// nodes justified edges touch when that is small enough, plus the justified edges. Theory
// nodes are numbered in a topological order of the known split graph.
func (en *encoding) attach(ctx context.Context, just []jkey, to acyclic.Options) error {
	m := en.m
	g := m.known()
	order, ok := graph.Topo(g)
	if !ok {
		return errors.New("si: encoding a cyclic known split graph (prune first)")
	}
	pos := graph.Positions(order)
	var terms []int32
	for _, j := range just {
		terms = append(terms, j.u, j.v)
	}
	slices.Sort(terms)
	terms = slices.Compact(terms)
	red, reduced, err := graph.ReduceAmong(ctx, g, order, pos, terms)
	if err != nil {
		return err
	}
	tn := make([]int32, g.N())
	n := g.N()
	if reduced {
		for i := range tn {
			tn[i] = -1
		}
		slices.SortFunc(terms, func(a, b int32) int { return int(pos[a]) - int(pos[b]) })
		terms = slices.Compact(terms)
		for i, t := range terms {
			tn[t] = int32(i)
		}
		n = len(terms)
	} else {
		copy(tn, pos)
	}
	en.t = acyclic.New(en.s, n, to)
	if reduced {
		for _, e := range red {
			if err := en.t.AddFixed(int(tn[e[0]]), int(tn[e[1]])); err != nil {
				return err
			}
		}
	} else {
		for u := range g.N() {
			for _, v := range g.Out(int32(u)) {
				if err := en.t.AddFixed(int(tn[u]), int(tn[v])); err != nil {
					return err
				}
			}
		}
	}
	for _, j := range just {
		u, v := int(tn[j.u]), int(tn[j.v])
		var err error
		if j.b == sat.LitNull {
			err = en.t.AddEdge(j.a, u, v)
		} else {
			err = en.t.AddComposite(j.a, j.b, u, v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// conj returns a literal equivalent to a ∧ b.
func (en *encoding) conj(a, b sat.Lit) sat.Lit {
	if a > b {
		a, b = b, a
	}
	if x, ok := en.and[[2]sat.Lit{a, b}]; ok {
		return x
	}
	x := en.s.NewVar().Pos()
	en.s.AddClause(x.Not(), a)
	en.s.AddClause(x.Not(), b)
	en.s.AddClause(x, a.Not(), b.Not())
	en.and[[2]sat.Lit{a, b}] = x
	return x
}

// minimalCore returns a minimal set of choices (WW i as i, WR j as len(ww)+j) that is
// unsatisfiable with the known edges: the solver's failed assumptions, shrunk by deletion
// within budget solver calls.
func (en *encoding) minimalCore(ctx context.Context, budget int) ([]int, error) {
	idx := make(map[sat.Lit]int, len(en.sel))
	var all []sat.Lit
	for i, x := range en.sel {
		if i < len(en.m.ww) && en.wwVar[i] == 0 {
			continue
		}
		if i >= len(en.m.ww) && en.wrVar[i-len(en.m.ww)] == nil {
			continue
		}
		idx[x] = i
		all = append(all, x)
	}
	st, err := en.s.Solve(ctx, all...)
	if err != nil || st != sat.Unsat {
		return nil, err
	}
	core := en.s.Failed()
	for i := 0; i < len(core) && budget > 0; {
		try := slices.Delete(slices.Clone(core), i, i+1)
		budget--
		st, err := en.s.Solve(ctx, try...)
		if err != nil {
			return nil, err
		}
		if st == sat.Unsat {
			in := make(map[sat.Lit]bool)
			for _, x := range en.s.Failed() {
				in[x] = true
			}
			core = slices.DeleteFunc(try, func(x sat.Lit) bool { return !in[x] })
			continue
		}
		i++
	}
	out := make([]int, len(core))
	for i, x := range core {
		out[i] = idx[x]
	}
	slices.Sort(out)
	return out, nil
}
