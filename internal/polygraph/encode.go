package polygraph

import (
	"context"
	"errors"
	"slices"

	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/graph"
	"github.com/isovet/isovet/internal/report"
	"github.com/isovet/isovet/internal/sat"
	"github.com/isovet/isovet/internal/sat/acyclic"
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

	ands *Ands
	pend []Justified // the justified edges, collected by just for attach
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

// Encode builds the solver problem for the undecided constraints, in phases: outcome
// variables and guarded edges, WR candidate variables, selectors, WW pairs with their
// derived anti-dependencies, the 2-width clauses, WR constraints, then the theory.
func (p *Polygraph) Encode(ctx context.Context, o EncodeOptions) (*Encoding, error) {
	s := sat.New(o.Solver)
	b := &encoder{
		Poll: Poll{Ctx: ctx}, o: o, p: p, d: p.D, s: s,
		en:   &Encoding{P: p, S: s, ands: NewAnds(s)},
		byWK: make(map[wk][]wrRef),
	}
	steps := []func() error{b.outcomes, b.guarded, b.wrVars, b.selectors, b.wwPairs, b.twoWidth, b.wrConstraints, b.attach}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return b.en, nil
}

// encoder is the state shared by the phases of [Polygraph.Encode].
type encoder struct {
	Poll // the context, polled by clauses made
	o    EncodeOptions
	p    *Polygraph
	d    *deps.Deps
	s    *sat.Solver
	en   *Encoding
	// byWK indexes WR candidate variables by (writer, key), for the WW derivations.
	byWK map[wk][]wrRef
}

// in reports whether transaction u is in the component being encoded.
func (b *encoder) in(u int32) bool {
	return b.o.Comp == nil || b.p.nodeComp(b.o.Comp, u) == b.o.Only
}

// outcomes makes one variable per transaction of unknown outcome.
func (b *encoder) outcomes() error {
	b.en.CVar = make([]sat.Var, b.d.N)
	for t := range b.d.N {
		if b.d.Status[t] == deps.Maybe && b.in(int32(t)) {
			b.en.CVar[t] = b.s.NewVar()
		}
	}
	return nil
}

// guarded justifies the edges that hold when their transactions committed.
func (b *encoder) guarded() error {
	var lits []sat.Lit
	for _, e := range b.d.Guarded {
		if !b.in(e.From) && !b.in(e.To) {
			continue
		}
		lits = Guards(lits[:0], b.en.CVar, e.Guards)
		if err := b.en.just(lits, e.From, e.To); err != nil {
			return err
		}
	}
	return nil
}

// wrVars makes one variable per candidate of each undecided read, indexed by (writer, key).
func (b *encoder) wrVars() error {
	p := b.p
	b.en.WRVar = make([][]sat.Var, len(p.WR))
	for wi := range p.WR {
		rc := &p.WR[wi]
		if rc.Fixed || !b.in(b.d.Reads[rc.Read].Txn) {
			continue
		}
		r := &b.d.Reads[rc.Read]
		b.en.WRVar[wi] = make([]sat.Var, len(rc.Cands))
		for j, w := range rc.Cands {
			b.en.WRVar[wi][j] = b.s.NewVar()
			b.byWK[wk{w, r.Key}] = append(b.byWK[wk{w, r.Key}], wrRef{int32(wi), int32(j)})
		}
	}
	return nil
}

// selectors makes one selector per constraint, when asked for.
func (b *encoder) selectors() error {
	if b.o.Selectors {
		b.en.Sel = make([]sat.Lit, len(b.p.WW)+len(b.p.WR))
		for i := range b.en.Sel {
			b.en.Sel[i] = b.s.NewVar().Pos()
		}
	}
	return nil
}

// wwPairs makes one variable per undecided WW pair and justifies each orientation's edges.
// A pair's uncertain readers can be many: ctx is polled by clauses made.
func (b *encoder) wwPairs() error {
	p := b.p
	b.en.WWVar = make([]sat.Var, len(p.WW))
	var buf []deps.Edge
	for ci := range p.WW {
		if err := b.Tick(1); err != nil {
			return err
		}
		c := &p.WW[ci]
		if c.Fixed != 0 || !b.in(c.A) {
			continue
		}
		v := b.s.NewVar()
		b.en.WWVar[ci] = v
		base := Guard(Guard(nil, b.en.CVar, c.A), b.en.CVar, c.B)
		if b.o.Selectors {
			base = append(base, b.en.Sel[ci])
		}
		var err error
		if buf, err = b.wwSide(c, c.A, c.B, append(slices.Clone(base), v.Pos()), buf); err != nil {
			return err
		}
		if buf, err = b.wwSide(c, c.B, c.A, append(slices.Clone(base), v.Neg()), buf); err != nil {
			return err
		}
	}
	return nil
}

// wwSide justifies, under ls, the edges of pair c oriented a before b: the orientation's own
// edges, and the anti-dependencies of uncertain readers of a's version of a shared key on b.
func (b *encoder) wwSide(c *WW, a, bb int32, ls []sat.Lit, buf []deps.Edge) ([]deps.Edge, error) {
	buf = b.p.orientEdgesX(c, a, bb, buf[:0], true)
	for _, e := range buf {
		if err := b.en.just(ls, e.From, e.To); err != nil {
			return buf, err
		}
	}
	for i, k := range c.Keys {
		from, to := c.sideEnds(a, i)
		if err := b.Tick(len(b.byWK[wk{from, k}])); err != nil {
			return buf, err
		}
		for _, cd := range b.byWK[wk{from, k}] {
			rd := b.d.Reads[b.p.WR[cd.wi].Read].Txn
			if rd == to {
				continue
			}
			l2 := append(slices.Clone(ls), b.en.WRVar[cd.wi][cd.j].Pos())
			if err := b.en.just(l2, rd, to); err != nil {
				return buf, err
			}
		}
	}
	return buf, nil
}

func (b *encoder) twoWidth() error { return b.en.twoWidth(b.Ctx, b.byWK) }

// wrConstraints says each undecided read reads from one of its candidates (if its
// transaction committed), and justifies each candidate's edges.
func (b *encoder) wrConstraints() error {
	p := b.p
	for wi := range p.WR {
		rc := &p.WR[wi]
		if rc.Fixed || b.en.WRVar[wi] == nil {
			continue
		}
		if err := b.Tick(1 + len(rc.Cands)); err != nil {
			return err
		}
		if err := b.wrConstraint(wi); err != nil {
			return err
		}
	}
	return nil
}

// wrConstraint encodes undecided read wi: each candidate, then that the read reads from
// one (if its reader committed and, with selectors, its selector holds), and from at most
// one.
func (b *encoder) wrConstraint(wi int) error {
	rc := &b.p.WR[wi]
	reader := b.d.Reads[rc.Read].Txn
	for j, w := range rc.Cands {
		if err := b.wrCandidate(rc, b.en.WRVar[wi][j], w, reader); err != nil {
			return err
		}
	}
	sel := sat.LitNull
	if b.o.Selectors {
		sel = b.en.Sel[len(b.p.WW)+wi]
	}
	if err := ReadOne(b.s, b.en.CVar, reader, sel, b.en.WRVar[wi]); err != nil {
		return err
	}
	return b.atMostOne(b.en.WRVar[wi])
}

// wrCandidate encodes reading from writer w (variable x): both transactions committed, and
// the read's edges hold.
func (b *encoder) wrCandidate(rc *WR, x sat.Var, w, reader int32) error {
	if err := ReadCandidate(b.s, b.en.CVar, x, w, reader); err != nil {
		return err
	}
	for _, e := range b.p.readEdgesX(rc.Read, w, true) {
		ls := Guards([]sat.Lit{x.Pos()}, b.en.CVar, e.Guards)
		if err := b.en.just(ls, e.From, e.To); err != nil {
			return err
		}
	}
	return nil
}

// atMostOne says at most one source (equisatisfiable with at least one, since acyclicity is
// anti-monotone in the edges; it keeps spurious edges out of the search), for small sets.
func (b *encoder) atMostOne(vs []sat.Var) error {
	if len(vs) > 8 {
		return nil
	}
	for i := range vs {
		for j := i + 1; j < len(vs); j++ {
			if err := b.s.AddClause(vs[i].Neg(), vs[j].Neg()); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *encoder) attach() error { return b.en.attach(b.Ctx, b.o.Theory) }

// wrRef names candidate j of WR constraint wi.
type wrRef struct{ wi, j int32 }

// twoWidth adds VeriStrong's 2-width RW clauses (§6.1, Alg. 2 RWCYCLE with the erratum's
// reader ≠ overwriter): if read R may read k from A (variable x) and A's block may precede
// B's on k (literal w), the derived anti-dependency R→B closes a cycle with known edges when
// B already reaches R; then ¬x ∨ ¬w. Each clause is implied by acyclicity, so adding it
// changes no answer; it lets unit propagation see what the theory would learn by conflict.
func (en *Encoding) twoWidth(ctx context.Context, byWK map[wk][]wrRef) error {
	tw := &twoWidth{en: en, byWK: byWK}
	if err := tw.collect(ctx); err != nil || len(tw.qs) == 0 {
		return err
	}
	order, ok := graph.Topo(en.P.G)
	if !ok {
		return errors.New("polygraph: encoding a cyclic known graph (prune first)")
	}
	ans, err := graph.ReachBatch(ctx, en.P.G, order, graph.Positions(order), tw.qs)
	if err != nil {
		return err
	}
	for i, yes := range ans {
		if yes {
			if err := en.S.AddClause(tw.cls[i][0].Not(), tw.cls[i][1].Not()); err != nil {
				return err
			}
		}
	}
	return nil
}

// twoWidth is the state of [Encoding.twoWidth]: the candidate clauses ¬x ∨ ¬w, as {x, w},
// each with the reachability query that adds it when answered yes.
type twoWidth struct {
	en   *Encoding
	byWK map[wk][]wrRef
	qs   []graph.Query
	cls  [][2]sat.Lit
}

// collect gathers the clauses and queries of both orientations of every encoded pair,
// polling ctx every 1024 pairs.
func (tw *twoWidth) collect(ctx context.Context) error {
	en := tw.en
	for ci := range en.P.WW {
		if ci&1023 == 0 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if en.WWVar[ci] == 0 {
			continue
		}
		c := &en.P.WW[ci]
		tw.side(c, c.A, en.WWVar[ci].Pos())
		tw.side(c, c.B, en.WWVar[ci].Neg())
	}
	return nil
}

// side gathers the clauses of pair c oriented with a's block first (literal w): for every
// read R that may read a shared key from a's block's last writer (variable x), ¬x ∨ ¬w when
// the block placed second reaches R.
func (tw *twoWidth) side(c *WW, a int32, w sat.Lit) {
	p, d := tw.en.P, tw.en.P.D
	for i, k := range c.Keys {
		from, to := c.sideEnds(a, i)
		for _, r := range tw.byWK[wk{from, k}] {
			rd := d.Reads[p.WR[r.wi].Read].Txn
			if rd == to || tw.en.WRVar[r.wi] == nil {
				continue
			}
			tw.qs = append(tw.qs, graph.Query{From: to, To: rd})
			tw.cls = append(tw.cls, [2]sat.Lit{tw.en.WRVar[r.wi][r.j].Pos(), w})
		}
	}
}

// attach creates the theory and gives it the known graph and the justified edges collected
// by just (see [Attach]).
func (en *Encoding) attach(ctx context.Context, o acyclic.Options) error {
	order, ok := graph.Topo(en.P.G)
	if !ok {
		return errors.New("polygraph: encoding a cyclic known graph (prune first)")
	}
	t, err := Attach(ctx, en.S, en.P.G, order, en.pend, o)
	en.T, en.pend = t, nil
	return err
}

// just makes the conjunction of lits justify u→v.
func (en *Encoding) just(lits []sat.Lit, u, v int32) error {
	if u == v {
		return nil
	}
	if a, b, ok := en.ands.Fold(lits); ok {
		en.pend = append(en.pend, Justified{U: u, V: v, A: a, B: b})
	}
	return nil
}

// AddSolverStats adds a solver's counters to a report's statistics (a check that solves
// several problems, one per component, reports their sums).
func AddSolverStats(st *report.Stats, ss sat.Stats) {
	st.SATVars += ss.Vars
	st.SATClauses += ss.Clauses
	st.Conflicts += ss.Conflicts
	st.Decisions += ss.Decisions
	st.Propagations += ss.Propagations
}

// Solve solves the encoding under the given assumptions.
func (en *Encoding) Solve(ctx context.Context, assumptions ...sat.Lit) (sat.Status, error) {
	return en.S.Solve(ctx, assumptions...)
}

// MinimalCore returns a minimal set of constraints (indexes into Sel: WW i as i, WR j as
// len(WW)+j) that is unsatisfiable with the known edges, shrinking the solver's failed
// assumptions by deletion (see [MinimalCore]). The encoding must have selectors. It stops
// shrinking (returning a core that is unsatisfiable but maybe not minimal) after budget
// solver calls.
func (en *Encoding) MinimalCore(ctx context.Context, budget int) ([]int, error) {
	return MinimalCore(ctx, en.S, en.Sel, en.open, budget)
}

// open reports whether constraint i (as in Sel) was encoded: it is undecided and of the
// component encoded.
func (en *Encoding) open(i int) bool {
	if i < len(en.WWVar) {
		return en.WWVar[i] != 0
	}
	return en.WRVar[i-len(en.WWVar)] != nil
}
