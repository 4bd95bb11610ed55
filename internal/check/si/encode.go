package si

import (
	"context"
	"errors"
	"slices"

	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/graph"
	"github.com/isovet/isovet/internal/polygraph"
	"github.com/isovet/isovet/internal/report"
	"github.com/isovet/isovet/internal/sat"
	"github.com/isovet/isovet/internal/sat/acyclic"
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
	sel  []sat.Lit
	ands *polygraph.Ands
}

// encode builds the solver problem for the undecided choices: the variables, then the
// justified edges of the guarded known edges, of both orders of every write-write
// choice and of every read choice's candidates, with each read's clauses, and finally
// the theory over the justified edges.
func (m *model) encode(ctx context.Context, selectors bool, to acyclic.Options) (*encoding, error) {
	s := sat.New(sat.Options{})
	en := &encoding{m: m, s: s, ands: polygraph.NewAnds(s)}
	b := &encoder{en: en, m: m, Poll: polygraph.Poll{Ctx: ctx}, selectors: selectors, seen: make(map[polygraph.Justified]bool)}
	b.vars()
	var lits []sat.Lit
	for _, e := range m.guarded {
		lits = polygraph.Guards(lits[:0], en.cvar, e.Guards)
		b.add(e, lits)
	}
	if err := b.wwChoices(); err != nil {
		return nil, err
	}
	if err := b.wrChoices(); err != nil {
		return nil, err
	}
	if b.err != nil {
		return nil, b.err
	}
	if err := en.attach(ctx, b.just, to); err != nil {
		return nil, err
	}
	return en, nil
}

// encoder is the state of one encode: the justified edges collected so far and the
// candidates of the open read choices by writer and key.
type encoder struct {
	en             *encoding
	m              *model
	polygraph.Poll // the context, polled by clauses made
	selectors      bool
	// Every justified raw edge is one split-graph edge with its justification (see
	// model.go, "The split graph"); emit collects them.
	just []polygraph.Justified
	seen map[polygraph.Justified]bool
	err  error // the first error of emit
	byWK map[wk][]wrCand
	buf  []deps.Edge
}

// wrCand is candidate j of read choice wi.
type wrCand struct{ wi, j int32 }

// vars creates the variables, in a fixed order: the outcomes of transactions of unknown
// outcome, the candidates of the open read choices, and the selectors.
func (b *encoder) vars() {
	m, d, en, s := b.m, b.m.d, b.en, b.en.s
	en.cvar = make([]sat.Var, d.N)
	for t := range d.N {
		if d.Status[t] == deps.Maybe {
			en.cvar[t] = s.NewVar()
		}
	}
	en.wrVar = make([][]sat.Var, len(m.wr))
	b.byWK = make(map[wk][]wrCand)
	for wi := range m.wr {
		rc := &m.wr[wi]
		if rc.Fixed {
			continue
		}
		r := &d.Reads[rc.Read]
		en.wrVar[wi] = make([]sat.Var, len(rc.Cands))
		for j, w := range rc.Cands {
			en.wrVar[wi][j] = s.NewVar()
			b.byWK[wk{w, r.Key}] = append(b.byWK[wk{w, r.Key}], wrCand{int32(wi), int32(j)})
		}
	}
	if b.selectors {
		en.sel = make([]sat.Lit, len(m.ww)+len(m.wr))
		for i := range en.sel {
			en.sel[i] = s.NewVar().Pos()
		}
	}
	en.wwVar = make([]sat.Var, len(m.ww))
}

// add records raw edge e justified by lits (after the first error, nothing).
func (b *encoder) add(e deps.Edge, lits []sat.Lit) {
	if e.From == e.To || b.err != nil {
		return
	}
	x, y := b.m.split(e)
	b.err = b.emit(x, y, lits)
}

// emit records split-graph edge x→y justified by the conjunction ls, reduced to at
// most two literals (a contradictory conjunction never holds and is dropped), once.
func (b *encoder) emit(x, y int32, ls []sat.Lit) error {
	l1, l2, ok := b.en.ands.Fold(ls)
	if !ok {
		return nil // never holds
	}
	if l1 == sat.LitNull {
		return errors.New("si: a justified edge without literals")
	}
	k := polygraph.Justified{U: x, V: y, A: l1, B: l2}
	if !b.seen[k] {
		b.seen[k] = true
		b.just = append(b.just, k)
	}
	return nil
}

// wwChoices gives every open write-write choice its variable and the justified edges of
// both its orders.
func (b *encoder) wwChoices() error {
	m, en := b.m, b.en
	for ci := range m.ww {
		if err := b.Tick(1); err != nil {
			return err
		}
		c := &m.ww[ci]
		if c.Fixed != 0 {
			continue
		}
		v := en.s.NewVar()
		en.wwVar[ci] = v
		base := polygraph.Guard(polygraph.Guard(nil, en.cvar, c.A), en.cvar, c.B)
		if b.selectors {
			base = append(base, en.sel[ci])
		}
		if err := b.wwOrder(c, c.A, c.B, append(slices.Clone(base), v.Pos())); err != nil {
			return err
		}
		if err := b.wwOrder(c, c.B, c.A, append(slices.Clone(base), v.Neg())); err != nil {
			return err
		}
	}
	return nil
}

// wwOrder adds the edges of choice c ordered a before b, justified by ls: its write-write
// edges, and an rw edge to b from every candidate reader of a's write to a shared key.
func (b *encoder) wwOrder(c *polygraph.WW, first, second int32, ls []sat.Lit) error {
	m, d := b.m, b.m.d
	b.buf = m.wwEdges(c, first, second, b.buf[:0])
	for _, e := range b.buf {
		b.add(e, ls)
	}
	for _, k := range c.Keys {
		cands := b.byWK[wk{first, k}]
		if err := b.Tick(len(cands)); err != nil {
			return err
		}
		for _, cd := range cands {
			ri := m.wr[cd.wi].Read
			rd := d.Reads[ri].Txn
			if rd == second {
				continue
			}
			wa, _ := d.WriteOf(first, k)
			wb, _ := d.WriteOf(second, k)
			e := deps.Edge{From: rd, To: second, Rel: report.RW, Key: k, Value: wa.Value, Value2: wb.Value, Via: first, Guards: [3]int32{-1, -1, -1}}
			b.add(e, append(slices.Clone(ls), b.en.wrVar[cd.wi][cd.j].Pos()))
		}
	}
	return nil
}

// wrChoices adds, for every open read choice, its clauses (a committed reader reads from
// one candidate; a candidate read is from a committed writer by a committed reader) and
// the justified edges of each candidate.
func (b *encoder) wrChoices() error {
	for wi := range b.m.wr {
		rc := &b.m.wr[wi]
		if rc.Fixed {
			continue
		}
		if err := b.Tick(1 + len(rc.Cands)); err != nil {
			return err
		}
		if err := b.wrChoice(wi); err != nil {
			return err
		}
	}
	return nil
}

// wrChoice adds the clauses and justified edges of open read choice wi.
func (b *encoder) wrChoice(wi int) error {
	m, en := b.m, b.en
	rc := &m.wr[wi]
	reader := m.d.Reads[rc.Read].Txn
	for j, w := range rc.Cands {
		x := en.wrVar[wi][j]
		if err := polygraph.ReadCandidate(en.s, en.cvar, x, w, reader); err != nil {
			return err
		}
		for _, e := range m.readEdges(rc.Read, w) {
			b.add(e, polygraph.Guards([]sat.Lit{x.Pos()}, en.cvar, e.Guards))
		}
	}
	sel := sat.LitNull
	if b.selectors {
		sel = en.sel[len(m.ww)+wi]
	}
	return polygraph.ReadOne(en.s, en.cvar, reader, sel, en.wrVar[wi])
}

// attach creates the theory over the known split graph and the justified edges (see
// [polygraph.Attach]); theory nodes are numbered in a topological order of the known split
// graph.
func (en *encoding) attach(ctx context.Context, just []polygraph.Justified, to acyclic.Options) error {
	g := en.m.known()
	order, ok := graph.Topo(g)
	if !ok {
		return errors.New("si: encoding a cyclic known split graph (prune first)")
	}
	t, err := polygraph.Attach(ctx, en.s, g, order, just, to)
	en.t = t
	return err
}

// minimalCore returns a minimal set of choices (WW i as i, WR j as len(ww)+j) that is
// unsatisfiable with the known edges: the solver's failed assumptions, shrunk by deletion
// within budget solver calls (see [polygraph.MinimalCore]).
func (en *encoding) minimalCore(ctx context.Context, budget int) ([]int, error) {
	return polygraph.MinimalCore(ctx, en.s, en.sel, en.open, budget)
}

// open reports whether choice i (as in sel) is undecided.
func (en *encoding) open(i int) bool {
	if i < len(en.wwVar) {
		return en.wwVar[i] != 0
	}
	return en.wrVar[i-len(en.wwVar)] != nil
}
