package weak

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/graph"
	"github.com/isovet/isovet/internal/report"
	"github.com/isovet/isovet/internal/sat"
	"github.com/isovet/isovet/internal/sat/acyclic"
)

// This file decides the histories the graphs alone leave open: some choice of writers closes
// a cycle and the certain edges do not. The choices are a SAT problem, solved with the
// acyclicity theory, as the serializability checker solves its version orders:
//
//   - a variable per transaction of unknown outcome (it committed) and per candidate writer
//     of every read whose writer is not certain (it read from that writer); a read whose
//     reader committed reads from at least one of its candidates, and only from committed
//     ones. (At most one is not needed: every constraint grows with the choices made, so a
//     model that chose two writers for a read holds with either.)
//   - the edges every level keeps, each justified by the literals that make it exist: a
//     chosen writer before its reader, the orders list reads show, session order (causal).
//   - the edges the read atomic and causal axioms force, added lazily: each model is
//     resolved (every read given its chosen writer, every transaction an outcome) and
//     checked exactly as a history without choices is; every forced edge the model's order
//     breaks joins the theory, justified by the read and the chain of reads and session
//     order that force it, and the search goes on.
//
// A model whose resolved history passes proves the level: that check is the one a history
// without choices gets. Unsatisfiable means every choice closes a cycle, because every edge
// in the problem exists under exactly the choices that justify it; the witness is the cycle
// of the last choice tried, resolved and explained like any other.

// search is the SAT search over one history's choices.
type search struct {
	d       *deps.Deps
	level   anomaly.Level
	session bool
	s       *sat.Solver
	g       *acyclic.Theory // nil: choices only, no order (witness only)
	tru     sat.Lit
	commit  []sat.Lit  // per transaction: it committed (tru: certainly; LitNull: it did not)
	options [][]option // per read: the writers it may have read from; nil: none to choose
	ands    map[string]sat.Lit
	added   map[[3]int32]bool // forced edges in the theory: t1, t2, justifying variable
	open    int               // reads and transactions whose writer or outcome is a choice
	budget  int64             // bound on the conflicts of every solve together (0: none)
	after   map[[2]int32]bool // (reader, writer): the writer certainly follows the reader
	// report, when set, reports the solver's work and the choices tried so far (observe).
	report func(tries int)
}

// option is a writer a read may have read from (d.Init: the initial state) and the literal
// that says it did.
type option struct {
	w   int32
	lit sat.Lit
}

// choice is one assignment of the search, resolved: per read, the writer it read from
// (-1: its reader did not commit, or at read committed a read that may have read the
// initial state, which orders nothing), and per transaction whether it committed.
type choice struct {
	writer    []int32
	committed []bool
}

// newSearch encodes d's choices at level; with order, the edges too (else only the choices,
// for a witness's sake).
// after holds the (reader, writer) pairs the certain graph orders writer after reader: such
// a writer is no option (reading from it closes a cycle), and the search leaves it out.
func newSearch(d *deps.Deps, level anomaly.Level, session, order bool, budget int64, after map[[2]int32]bool) (*search, error) {
	se := &search{d: d, level: level, session: session, s: sat.New(sat.Options{ConflictBudget: budget}), budget: budget, after: after, ands: make(map[string]sat.Lit), added: make(map[[3]int32]bool)}
	se.tru = se.s.NewVar().Pos()
	if err := se.s.AddClause(se.tru); err != nil {
		return nil, err
	}
	if order {
		se.g = acyclic.New(se.s, d.N+1, acyclic.Options{})
	}
	se.commitVars()
	steps := []func() error{se.readVars, se.needs, se.depEdges, se.listOrder, se.initFirst}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return se, nil
}

// commitVars gives every transaction its literal: tru if committed, a variable if of unknown
// outcome and possibly read from, LitNull if it does not count.
func (se *search) commitVars() {
	d := se.d
	se.commit = make([]sat.Lit, d.N)
	for t := range d.N {
		switch d.Status[t] {
		case deps.Committed:
			se.commit[t] = se.tru
		case deps.Maybe:
			se.commit[t] = se.s.NewVar().Pos()
			se.open++
		default:
			se.commit[t] = sat.LitNull
		}
	}
}

// commitOf is t's commit literal, tru for the initial state.
func (se *search) commitOf(t int32) sat.Lit {
	if t == se.d.Init {
		return se.tru
	}
	return se.commit[t]
}

// readVars gives every read of a transaction that counts its options, and adds the clauses
// that tie them to the outcomes and the edges from the writers. At read committed a read
// that may have read the initial state gets none: reading it orders nothing.
func (se *search) readVars() error {
	d := se.d
	se.options = make([][]option, len(d.Reads))
	for ri := range d.Reads {
		r := &d.Reads[ri]
		cr := se.commit[r.Txn]
		if cr == sat.LitNull || se.level == anomaly.ReadCommitted && slices.Contains(r.Cands, d.Init) {
			continue
		}
		var ws []int32
		n, open := 0, cr != se.tru
		for _, w := range r.Cands {
			if w == d.Init || w != r.Txn && se.commit[w] != sat.LitNull {
				n++
				open = open || n > 1 || se.commitOf(w) != se.tru
				if !se.after[[2]int32{r.Txn, w}] {
					ws = append(ws, w)
				}
			}
		}
		if open {
			se.open++
		}
		if err := se.readOptions(ri, cr, ws); err != nil {
			return err
		}
	}
	return nil
}

// readOptions encodes read ri, whose reader has commit literal cr, with candidate writers ws.
func (se *search) readOptions(ri int, cr sat.Lit, ws []int32) error {
	r := &se.d.Reads[ri]
	if len(ws) == 0 {
		return se.s.AddClause(cr.Not()) // only an uncommitted reader reads nothing
	}
	opts := make([]option, len(ws))
	alo := []sat.Lit{cr.Not()}
	for i, w := range ws {
		cw := se.commitOf(w)
		lit := se.tru
		switch {
		case len(ws) == 1 && cw == se.tru:
			lit = cr // read from w exactly when its reader committed
		case len(ws) > 1 || cr != se.tru || cw != se.tru:
			lit = se.s.NewVar().Pos()
			for _, c := range []sat.Lit{cr, cw} {
				if c != se.tru {
					if err := se.s.AddClause(lit.Not(), c); err != nil {
						return err
					}
				}
			}
		}
		alo = append(alo, lit)
		opts[i] = option{w, lit}
		if err := se.edge(lit, w, r.Txn); err != nil {
			return err
		}
	}
	se.options[ri] = opts
	if opts[0].lit == se.tru {
		return nil // certain
	}
	return se.s.AddClause(alo...)
}

// edge puts u→v into the theory while m holds (always, for tru). Edges from the initial
// state are left out: it precedes everything (initFirst), and nothing else is its concern.
func (se *search) edge(m sat.Lit, u, v int32) error {
	if se.g == nil || u == se.d.Init || u == v {
		return nil
	}
	if m == se.tru {
		return se.g.AddFixed(int(u), int(v))
	}
	return se.g.AddEdge(m, int(u), int(v))
}

// needs makes every appender a list read shows commit when its reader did.
func (se *search) needs() error {
	d := se.d
	for ri := range d.Reads {
		r := &d.Reads[ri]
		cr := se.commit[r.Txn]
		if cr == sat.LitNull || cr == se.tru {
			continue // deps settled these: a committed reader's appenders committed
		}
		for _, w := range r.Needs {
			if w < 0 || se.commit[w] == sat.LitNull {
				if err := se.s.AddClause(cr.Not()); err != nil {
					return err
				}
			} else if se.commit[w] != se.tru {
				if err := se.s.AddClause(cr.Not(), se.commit[w]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// depEdges adds deps' write orders (list orders) and, with sessions, session order: the
// certain ones fixed, the guarded ones while their guards committed. (Write-read edges come
// from the reads' options.)
func (se *search) depEdges() error {
	d := se.d
	n := int32(d.N)
	keep := func(e deps.Edge) bool {
		return e.From < n && e.To < n && (e.Rel == report.WW || se.session && e.Rel == report.SO)
	}
	for _, e := range d.Known {
		if keep(e) {
			if err := se.edge(se.tru, e.From, e.To); err != nil {
				return err
			}
		}
	}
	for _, e := range d.Guarded {
		if !keep(e) {
			continue
		}
		var lits []sat.Lit
		for _, t := range e.Guards {
			if t >= 0 {
				lits = append(lits, se.commit[t])
			}
		}
		m, err := se.and(lits)
		if err != nil {
			return err
		}
		if err := se.edge(m, e.From, e.To); err != nil {
			return err
		}
	}
	return nil
}

// listOrder adds, for the list reads that stand for all ([shownListReads]), an edge from
// the last appender each shows to every appender of the key it does not show, while the
// reader and both appenders committed.
func (se *search) listOrder() error {
	d := se.d
	for _, ri := range shownListReads(d, func(t int32) bool { return se.commit[t] != sat.LitNull }) {
		if err := se.afterLast(&d.Reads[ri]); err != nil {
			return err
		}
	}
	return nil
}

// afterLast orders every appender of r's key that r does not show after the last one it
// shows, while r's reader and both appenders committed.
func (se *search) afterLast(r *deps.Read) error {
	last := r.Cands[0]
	for _, w := range se.d.Writers[r.Key] {
		if w == last || w == r.Txn || slices.Contains(r.Needs, w) || se.commit[w] == sat.LitNull {
			continue
		}
		m, err := se.and([]sat.Lit{se.commit[r.Txn], se.commit[last], se.commit[w]})
		if err != nil {
			return err
		}
		if err := se.edge(m, last, w); err != nil {
			return err
		}
	}
	return nil
}

// initFirst puts the initial state before every transaction (read atomic and causal, where
// an axiom may force a writer before the initial state a read returned).
func (se *search) initFirst() error {
	if se.g == nil || se.level == anomaly.ReadCommitted {
		return nil
	}
	for t := range int32(se.d.N) {
		if se.commit[t] != sat.LitNull {
			if err := se.g.AddFixed(int(se.d.Init), int(t)); err != nil {
				return err
			}
		}
	}
	return nil
}

// and returns a literal that holds when every one of lits does: tru for none, the literal
// itself for one, else a variable implied by their conjunction (only that direction: every
// constraint it justifies holds the more, the more is chosen), one per set.
func (se *search) and(lits []sat.Lit) (sat.Lit, error) {
	lits = slices.DeleteFunc(slices.Clone(lits), func(m sat.Lit) bool { return m == se.tru })
	slices.Sort(lits)
	lits = slices.Compact(lits)
	switch len(lits) {
	case 0:
		return se.tru, nil
	case 1:
		return lits[0], nil
	}
	var b strings.Builder
	for _, m := range lits {
		fmt.Fprintf(&b, "%d,", m)
	}
	if y, ok := se.ands[b.String()]; ok {
		return y, nil
	}
	y := se.s.NewVar().Pos()
	clause := []sat.Lit{y}
	for _, m := range lits {
		clause = append(clause, m.Not())
	}
	if err := se.s.AddClause(clause...); err != nil {
		return sat.LitNull, err
	}
	se.ands[b.String()] = y
	return y, nil
}

// model reads the solver's model as a choice.
func (se *search) model() choice {
	d := se.d
	ch := choice{writer: make([]int32, len(d.Reads)), committed: make([]bool, d.N)}
	for t := range d.N {
		ch.committed[t] = se.commit[t] != sat.LitNull && se.s.Value(se.commit[t])
	}
	for ri, opts := range se.options {
		ch.writer[ri] = -1
		for _, o := range opts {
			if se.s.Value(o.lit) {
				ch.writer[ri] = o.w
				break
			}
		}
	}
	return ch
}

// valid reports a choice that is not one: a committed reader that reads from nothing (except
// at read committed, where an open read may read the initial state), or from a transaction
// the choice does not commit. A search or guess that proposed one is wrong; checking it
// would be checking another history.
func (ch choice) valid(d *deps.Deps, level anomaly.Level) error {
	committed := func(t int32) bool {
		return d.Status[t] == deps.Committed || d.Status[t] == deps.Maybe && ch.committed[t]
	}
	for ri := range d.Reads {
		r := &d.Reads[ri]
		w := ch.writer[ri]
		switch {
		case !committed(r.Txn):
		case w < 0 && (level == anomaly.ReadCommitted && slices.Contains(r.Cands, d.Init) || len(r.Cands) == 1 && r.Cands[0] == d.Init):
		case w == d.Init && slices.Contains(r.Cands, d.Init):
		case w >= 0 && w != d.Init && committed(w) && slices.Contains(r.Cands, w):
		default:
			return fmt.Errorf("weak: internal error: a choice of writers has %s read %v from %d, which it cannot", d.H.Name(history.TxnID(r.Txn)), d.H.Key(r.Key), w)
		}
	}
	return nil
}

// resolve returns d as it would be had every choice of ch been recorded: transactions of
// unknown outcome committed or not, every read of a committed reader with its one writer
// (the initial state, for a read committed read left open), and the edges that hold.
func resolve(d *deps.Deps, ch choice) *deps.Deps {
	rd := *d
	rd.Status = slices.Clone(d.Status)
	for t := range d.N {
		if d.Status[t] == deps.Maybe {
			rd.Status[t] = deps.Excluded
			if ch.committed[t] {
				rd.Status[t] = deps.Committed
			}
		}
	}
	rd.Known = slices.Clone(d.Known)
	rd.Reads = slices.Clone(d.Reads)
	for ri := range rd.Reads {
		if rd.Status[rd.Reads[ri].Txn] == deps.Committed {
			resolveRead(d, &rd, ri, ch.writer[ri])
		}
	}
	for _, e := range d.Guarded {
		if !slices.ContainsFunc(e.Guards[:], func(t int32) bool { return t >= 0 && rd.Status[t] != deps.Committed }) {
			e.Guards = [3]int32{-1, -1, -1}
			rd.Known = append(rd.Known, e)
		}
	}
	rd.Guarded = nil
	return &rd
}

// resolveRead gives read ri of rd (resolved from d) its one writer w (-1: the initial
// state, for a read committed read left open), and its edge when d did not have it.
func resolveRead(d, rd *deps.Deps, ri int, w int32) {
	r := &rd.Reads[ri]
	if w < 0 {
		w = d.Init
	}
	certain := len(r.Cands) == 1 && d.Status[r.Txn] == deps.Committed && (w == d.Init || d.Status[w] == deps.Committed)
	r.Cands = []int32{w}
	if !certain && w != d.Init {
		rd.Known = append(rd.Known, deps.Edge{From: w, To: r.Txn, Rel: report.WR, Key: r.Key, Value: r.Value, Via: -1, Guards: [3]int32{-1, -1, -1}})
	}
}

// resolved is a choice's resolved history with its graphs checked: cyclic when the choice
// fails.
type resolved struct {
	ch     choice
	c      *check
	cyclic bool
	cyc    []int32 // a short cycle, once cycle found it
}

// cycle returns a short cycle of r's graph (nil when it has none).
func (r *resolved) cycle() []int32 {
	if r.cyclic && r.cyc == nil {
		r.cyc = graph.FindCycle(r.c.certain)
	}
	return r.cyc
}

// verify checks choice ch exactly, as a history without choices is checked.
func (se *search) verify(ctx context.Context, ch choice, maxWords int) (*resolved, bool, error) {
	return verify(ctx, se.d, se.level, se.session, ch, maxWords)
}

// verify checks choice ch of d's choices exactly at level, as a history without choices is
// checked: ok is false when the causal check's clocks are over maxWords.
func verify(ctx context.Context, d *deps.Deps, level anomaly.Level, session bool, ch choice, maxWords int) (r *resolved, ok bool, err error) {
	if err := ch.valid(d, level); err != nil {
		return nil, false, err
	}
	c := newCheck(resolve(d, ch), session)
	c.edges(level == anomaly.ReadCommitted)
	if ctx.Err() != nil {
		return nil, false, context.Cause(ctx)
	}
	if level != anomaly.ReadCommitted {
		ok, err := c.saturate(ctx, level, true, maxWords)
		if err != nil || !ok {
			return nil, ok, err
		}
	}
	if ctx.Err() != nil {
		return nil, false, context.Cause(ctx)
	}
	c.alts = alternatives(d, ch)
	_, acyclic := graph.Topo(c.certain)
	return &resolved{ch: ch, c: c, cyclic: !acyclic}, true, nil
}

// alternatives returns, per read edge ch chose (writer, reader, key; and with key -1, per
// writer and reader), the other writers the read could have read from, for the witness's
// steps.
func alternatives(d *deps.Deps, ch choice) map[[3]int32][]int32 {
	alts := make(map[[3]int32][]int32)
	for ri := range d.Reads {
		r := &d.Reads[ri]
		w := ch.writer[ri]
		if len(r.Cands) < 2 || w < 0 || w == d.Init {
			continue
		}
		k := [3]int32{w, r.Txn, int32(r.Key)}
		for _, o := range r.Cands {
			if o != w && o != r.Txn && (o == d.Init || d.Status[o] != deps.Excluded) && !slices.Contains(alts[k], o) {
				alts[k] = append(alts[k], o)
				k2 := [3]int32{w, r.Txn, -1}
				alts[k2] = append(alts[k2], o)
			}
		}
	}
	return alts
}

// learn adds to the problem what the rejected choice r shows: every edge the axioms force
// under it that the model's order breaks, justified by the literals that force it; when
// there is none, a clause that rules out the choice itself (and every choice containing it,
// which has its cycle too).
func (se *search) learn(r *resolved) error {
	pos := make([]int, se.d.N+1)
	for i, u := range se.g.Order() {
		pos[u] = i
	}
	keys := make([][2]int32, 0, len(r.c.forced))
	for k := range r.c.forced {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]int32) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	learnt := 0
	for _, k := range keys {
		f := r.c.forced[k]
		if pos[f.t1] < pos[f.t2] {
			continue // the model's order keeps it already
		}
		lits, ok := se.justify(r, f)
		if !ok {
			continue
		}
		y, err := se.and(lits)
		if err != nil {
			return err
		}
		if se.added[[3]int32{f.t1, f.t2, int32(y)}] {
			continue
		}
		se.added[[3]int32{f.t1, f.t2, int32(y)}] = true
		if err := se.edge(y, f.t1, f.t2); err != nil {
			return err
		}
		if learnt++; learnt == maxLearnt {
			break
		}
	}
	if learnt > 0 {
		return nil
	}
	return se.s.AddClause(se.block(r.ch)...)
}

// maxLearnt bounds the forced edges one rejected choice adds: each needs the chain that
// forces it (a breadth-first search at causal), and the next model shows which others matter.
const maxLearnt = 256

// block is the clause no choice that contains ch's choices satisfies.
func (se *search) block(ch choice) []sat.Lit {
	var clause []sat.Lit
	for t, c := range se.commit {
		if c != sat.LitNull && c != se.tru && ch.committed[t] {
			clause = append(clause, c.Not())
		}
	}
	for ri, opts := range se.options {
		for _, o := range opts {
			if o.w == ch.writer[ri] && o.lit != se.tru {
				clause = append(clause, o.lit.Not())
			}
		}
	}
	return clause
}

// justify returns the literals under which forced edge f exists: the reader's read of f's
// key from f.t2, and each step of the chain by which the reader had seen f.t1 (a read, a
// list read showing it, or session order). ok is false when a step has no literal here.
func (se *search) justify(r *resolved, f forced) ([]sat.Lit, bool) {
	read, ok := se.readLit(r.ch, f.reader, f.t2, func(rd *deps.Read) bool { return rd == &se.d.Reads[f.read] })
	if !ok {
		return nil, false
	}
	lits := []sat.Lit{read}
	path := []int32{f.t1, f.reader}
	if se.level == anomaly.Causal && r.c.past != nil && !slices.Contains(r.c.src[f.reader], f.t1) {
		path = graph.ShortestPath(r.c.past, f.t1, f.reader, nil)
	}
	if len(path) < 2 {
		return nil, false
	}
	for i := 1; i < len(path); i++ {
		m, ok := se.stepLit(r.ch, path[i-1], path[i])
		if !ok {
			return nil, false
		}
		lits = append(lits, m)
	}
	return lits, true
}

// stepLit returns the literal of a step a→b of a chain of what b had seen: b read from a,
// a list read of b showed a, or a precedes b in their session.
func (se *search) stepLit(ch choice, a, b int32) (sat.Lit, bool) {
	if m, ok := se.readLit(ch, b, a, func(*deps.Read) bool { return true }); ok {
		return m, true
	}
	for _, ri := range se.d.ReadsOf[b] {
		if slices.Contains(se.d.Reads[ri].Needs, a) {
			return se.commit[b], true
		}
	}
	h := se.d.H
	if se.session && h.Txns[a].Session == h.Txns[b].Session && h.Txns[a].Seq < h.Txns[b].Seq {
		m, err := se.and([]sat.Lit{se.commit[a], se.commit[b]})
		return m, err == nil
	}
	return sat.LitNull, false
}

// readLit returns the literal of a read of reader accepted by ok that ch has read from w.
func (se *search) readLit(ch choice, reader, w int32, ok func(*deps.Read) bool) (sat.Lit, bool) {
	for _, ri := range se.d.ReadsOf[reader] {
		if ch.writer[ri] != w || !ok(&se.d.Reads[ri]) {
			continue
		}
		for _, o := range se.options[ri] {
			if o.w == w {
				return o.lit, true
			}
		}
	}
	return sat.LitNull, false
}

// outcome is what the search decided: a choice that passes (cyc nil), or, when no choice
// does, the last one tried with its cycle.
type outcome struct {
	pass  bool
	last  *resolved
	tries int
}

// run searches until a choice passes, none can, or ctx ends.
func (se *search) run(ctx context.Context, maxWords int) (outcome, error) {
	var out outcome
	for {
		st, err := se.s.Solve(ctx)
		if err != nil {
			return out, err
		}
		if st == sat.Unsat {
			return out, nil
		}
		if se.budget > 0 && se.s.Stats().Conflicts >= se.budget {
			return out, sat.ErrBudget
		}
		out.tries++
		if se.report != nil {
			se.report(out.tries)
		}
		r, ok, err := se.verify(ctx, se.model(), maxWords)
		if err != nil || !ok {
			return out, err // !ok: past the clocks' bound, which saturateBoth checked before
		}
		out.last = r
		if !r.cyclic {
			out.pass = true
			return out, nil
		}
		if err := se.learn(r); err != nil {
			return out, err
		}
	}
}

// observe tells m (when not nil) of the search's solver work and of the choices it tries.
func (se *search) observe(m *report.Meter) {
	if m == nil {
		return
	}
	hook := m.Solver()
	se.s.Observe(func(st sat.Stats) { hook(st.Conflicts, st.Decisions) })
	se.report = func(n int) {
		st := se.s.Stats()
		hook(st.Conflicts, st.Decisions)
		m.Update(func(p *report.Progress) { p.Tries = n })
	}
}

// anyChoice returns a choice that satisfies d's choices without regard to order: the witness
// when the first search finds no choice at all.
func anyChoice(ctx context.Context, d *deps.Deps, level anomaly.Level, session bool) (choice, error) {
	se, err := newSearch(d, level, session, false, 0, nil)
	if err != nil {
		return choice{}, err
	}
	st, err := se.s.Solve(ctx)
	if err != nil {
		return choice{}, err
	}
	if st != sat.Sat {
		return choice{}, fmt.Errorf("weak: the choices of writers have no assignment at all")
	}
	return se.model(), nil
}

// laterWriters returns the (reader, writer) pairs of open reads whose candidate writer the
// certain graph orders after the reader (the reader reaches it): choosing it closes a cycle
// in every world, so the search need not consider it.
func (c *check) laterWriters(ctx context.Context, level anomaly.Level) (map[[2]int32]bool, error) {
	order, ok := graph.Topo(c.certain)
	if !ok {
		return nil, nil
	}
	d := c.d
	var qs []graph.Query
	for ri := range d.Reads {
		r := &d.Reads[ri]
		if len(r.Cands) < 2 || d.Status[r.Txn] != deps.Committed || level == anomaly.ReadCommitted && slices.Contains(r.Cands, d.Init) {
			continue
		}
		for _, w := range r.Cands {
			if w != d.Init && w != r.Txn && d.Status[w] == deps.Committed {
				qs = append(qs, graph.Query{From: r.Txn, To: w})
			}
		}
	}
	ans, err := graph.ReachBatch(ctx, c.certain, order, graph.Positions(order), qs)
	if err != nil {
		return nil, err
	}
	after := make(map[[2]int32]bool)
	for i, q := range qs {
		if ans[i] {
			after[[2]int32{q.From, q.To}] = true
		}
	}
	return after, nil
}

// maxGuesses bounds the rounds of [check.guess]. Each costs a pass over the history; on
// VeriStrong's HD-10k read atomic needs 3 (8 ms each), causal (of which each round costs
// more) ...
const maxGuesses = 64

// guess tries greedy's choice and, while verify finds a cycle, greedy again with the forced
// edges that choice's order broke, for at most maxGuesses rounds. It returns the note of a
// choice that passes, or "".
func (c *check) guess(ctx context.Context, level anomaly.Level, maxWords int) (string, error) {
	extra := make([][]int32, c.n)
	for range maxGuesses {
		if ctx.Err() != nil {
			return "", context.Cause(ctx)
		}
		ch, pos, ok := c.greedy(level, extra)
		if !ok {
			return "", nil
		}
		r, ok, err := verify(ctx, c.d, level, c.session, ch, maxWords)
		if err != nil || !ok {
			return "", err
		}
		if !r.cyclic {
			return greedyNote(c.d, level, ch), nil
		}
		added := false
		cyc := r.cycle()
		for i, t1 := range cyc {
			t2 := cyc[(i+1)%len(cyc)]
			if _, isForced := r.c.forced[[2]int32{t1, t2}]; isForced && t2 < c.n && pos[t1] > pos[t2] && !slices.Contains(extra[t1], t2) {
				extra[t1] = append(extra[t1], t2)
				added = true
			}
		}
		if !added {
			return "", nil
		}
	}
	return "", nil
}

// decideChoices decides the level by the search when the graphs leave it open: on a pass,
// it returns the note that says why; else it gives rep its verdict (Fail with the witness,
// or Unknown) and returns "".
func (c *check) decideChoices(ctx context.Context, level anomaly.Level, o Options, rep *report.Report) (string, error) {
	maxWords := o.MaxClockWords
	c.meter.Start(report.StageSearching)
	if !o.SearchOnly {
		if note, err := c.guess(ctx, level, maxWords); note != "" || err != nil {
			return note, err
		}
	}
	if ctx.Err() != nil {
		return "", context.Cause(ctx)
	}
	after, err := c.laterWriters(ctx, level)
	if err != nil {
		return "", err
	}
	se, err := newSearch(c.d, level, c.session, true, o.SearchConflicts, after)
	if err != nil {
		return "", err
	}
	se.observe(c.meter)
	out, err := se.run(ctx, maxWords)
	if se.report != nil {
		se.report(out.tries)
	}
	if errors.Is(err, sat.ErrBudget) {
		rep.Verdict = report.Unknown
		rep.Stopped(fmt.Errorf("the search over the choices of writers of %s reached its bound of %d conflicts", openReads(se.open), o.SearchConflicts))
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if out.pass {
		return choiceNote(se, out), nil
	}
	return "", c.everyChoiceFails(ctx, se, out, maxWords, rep)
}

// everyChoiceFails gives rep the failure the search proved (no choice passes): the cycle of
// the last choice it tried, or of one that fits the outcomes when it tried none.
func (c *check) everyChoiceFails(ctx context.Context, se *search, out outcome, maxWords int, rep *report.Report) error {
	last := out.last
	if last == nil {
		ch, err := anyChoice(ctx, c.d, se.level, c.session)
		if err != nil {
			return err
		}
		var ok bool
		if last, ok, err = se.verify(ctx, ch, maxWords); err != nil || !ok {
			return err
		}
	}
	if !last.cyclic {
		// The search says no choice passes, and this one does: a fault of the search,
		// never a verdict.
		rep.Verdict = report.Unknown
		rep.Notes = append(rep.Notes, fmt.Sprintf("internal: the search over the choices of writers found none that passes, yet one it then resolved passes %s; please report this history", se.level))
		return nil
	}
	a := last.c.anomaly(se.level, last.cycle())
	a.Message = fmt.Sprintf("every choice of writer closes a cycle (%s could have read from more than one transaction, or from one of unknown outcome; a search over the choices proved it%s); under the %s: %s", openReads(se.open), tried(out.tries), which(out.tries), a.Message)
	rep.Verdict = report.Fail
	rep.Anomalies = append(rep.Anomalies, a)
	return nil
}

// openReads names the n reads whose writer (or writer's outcome) the search chose.
func openReads(n int) string {
	if n == 1 {
		return "one read"
	}
	return fmt.Sprintf("%d reads", n)
}

// tried says how many choices the search resolved and rejected before it proved none passes.
func tried(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return " after trying one"
	}
	return fmt.Sprintf(" after trying %d", n)
}

// which names the choice a witness shows.
func which(tries int) string {
	if tries == 0 {
		return "first choice that fits the outcomes"
	}
	return "last choice it tried"
}

// greedyNote says why the choice greedy found proves the level.
func greedyNote(d *deps.Deps, level anomaly.Level, ch choice) string {
	open := 0
	for ri := range d.Reads {
		if w := ch.writer[ri]; w >= 0 && len(d.Reads[ri].Cands) > 1 {
			open++
		}
	}
	maybe := 0
	for _, st := range d.Status {
		if st == deps.Maybe {
			maybe++
		}
	}
	outcomes := ""
	if maybe > 0 {
		outcomes = fmt.Sprintf(" (the %d transactions of unknown outcome taken as not committed)", maybe)
	}
	subject := openReads(open)
	return fmt.Sprintf("%s could have read from more than one transaction: reading, each, the latest of them in an order of the transactions that has one before it passes%s: %s", strings.ToUpper(subject[:1])+subject[1:], outcomes, passWhy(level))
}

// choiceNote says why a choice the search found proves the level.
func choiceNote(se *search, out outcome) string {
	var in, out2 int
	for t, st := range se.d.Status {
		if st == deps.Maybe {
			if out.last.ch.committed[t] {
				in++
			} else {
				out2++
			}
		}
	}
	outcomes := ""
	if in+out2 > 0 {
		outcomes = fmt.Sprintf(" (of the transactions of unknown outcome, %d taken as committed and %d as not)", in, out2)
	}
	subject := openReads(se.open)
	return fmt.Sprintf("%s could have read from more than one transaction, or from one of unknown outcome: a search over the choices found one that passes%s: %s", strings.ToUpper(subject[:1])+subject[1:], outcomes, passWhy(se.level))
}
