package ser

import (
	"fmt"
	"slices"
	"strings"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/polygraph"
	"github.com/isovet/isovet/internal/report"
)

// witness turns graph cycles into report data.
type witness struct {
	p *polygraph.Polygraph
	d *deps.Deps
	h *history.History
}

func (w *witness) isTxn(u int32) bool { return u < int32(w.d.N) }

// steps turns a cycle of typed graph edges into steps between transactions, collapsing
// virtual nodes: a run through time nodes is one rt step, reader→ρ(k)→writer one rw step.
func (w *witness) steps(cyc []deps.Edge) []report.Step {
	if len(cyc) == 0 {
		return nil
	}
	// Rotate so the cycle starts at a transaction.
	start := slices.IndexFunc(cyc, func(e deps.Edge) bool { return w.isTxn(e.From) })
	if start < 0 {
		return nil
	}
	cyc = append(slices.Clone(cyc[start:]), cyc[:start]...)
	var out []report.Step
	for i := 0; i < len(cyc); {
		j := i
		for !w.isTxn(cyc[j].To) {
			j++
		}
		out = append(out, w.step(cyc[i:j+1]))
		i = j + 1
	}
	return out
}

// step is the step of run, the edges from one transaction to the next through virtual
// nodes, with its reason.
func (w *witness) step(run []deps.Edge) report.Step {
	e, last := run[0], run[len(run)-1]
	st := report.Step{From: history.TxnID(e.From), To: history.TxnID(last.To), Rel: e.Rel, Key: e.Key, Value: e.Value, Value2: e.Value2}
	if len(run) > 1 {
		w.collapse(&st, e, last)
	}
	if e.Rel == report.SO || e.Rel == report.RT {
		st.Key = -1
	}
	// A run through a version node is forced when either of its edges is: the reader's
	// edge into the version, or the version's edge to the writer that pruning put next.
	for _, x := range run {
		st.Forced = st.Forced || w.p.Forced(x.From, x.To)
	}
	if ls, ok := w.d.AppendStep(st, e.Via, st.Forced); ok {
		return ls
	}
	w.explain(&st, e)
	return st
}

// collapse makes st, from a run through virtual nodes whose first edge is e and last is
// last, the step it stands for: real time through time nodes, an anti-dependency through
// a version node.
func (w *witness) collapse(st *report.Step, e, last deps.Edge) {
	switch w.d.Nodes[e.To].Kind {
	case deps.NodeTime:
		st.Rel, st.Key = report.RT, -1
	case deps.NodeInitVersion, deps.NodeVersion:
		st.Rel, st.Key, st.Value, st.Value2 = report.RW, e.Key, e.Value, last.Value2
	}
}

// explain gives st, whose first edge is e, its reason: a predicate's when a predicate read
// made it, else the item's.
func (w *witness) explain(st *report.Step, e deps.Edge) {
	var pr *deps.Read
	if st.Rel == report.WR {
		pr = w.predRead(st.To, st.Key, int32(st.From))
	} else if st.Rel == report.RW {
		pr = w.predRead(st.From, st.Key, e.Via)
	}
	if pr != nil {
		st.Pred = w.h.Pred(w.h.Txns[pr.Txn].Ops[pr.Op]).Pred.Expr
		st.Why = w.whyPred(*st, e, pr, st.Forced)
	} else {
		st.Why = w.why(*st, e, st.Forced)
	}
}

func (w *witness) name(t history.TxnID) string { return w.h.Name(t) }

func (w *witness) kv(k history.Key, v history.Value) string {
	return w.h.KV(k, v)
}

// why says in a sentence why a step holds.
func (w *witness) why(s report.Step, e deps.Edge, forced bool) string {
	a, b := w.name(s.From), w.name(s.To)
	var out string
	switch s.Rel {
	case report.WR:
		out = fmt.Sprintf("%s read %s, which %s wrote", b, w.kv(s.Key, s.Value), a)
	case report.WW:
		out = w.whyWW(s, a, b, forced)
	case report.RW:
		out = w.whyRW(s, e, b, forced)
	case report.SO:
		out = fmt.Sprintf("%s precedes %s in their session", a, b)
	case report.RT:
		out = fmt.Sprintf("%s ended before %s began (real time)", a, b)
	default:
		out = fmt.Sprintf("%s precedes %s", a, b)
	}
	if forced {
		out += deps.RuledOut
	}
	return out
}

// whyWW says why write-write step s from a to b holds: b overwrote a's version, and (unless
// pruning forced the order) what orders them.
func (w *witness) whyWW(s report.Step, a, b string, forced bool) string {
	out := fmt.Sprintf("%s overwrote %s's %s with %s", b, a, w.kv(s.Key, s.Value), w.kv(s.Key, s.Value2))
	if !forced {
		out += w.d.OrderWhy(int32(s.From), int32(s.To), s.Key)
	}
	return out
}

// whyRW says why anti-dependency step s (first edge e) to b holds: b overwrote the version
// read, and (unless pruning forced the order) what orders the two writers.
func (w *witness) whyRW(s report.Step, e deps.Edge, b string, forced bool) string {
	out := fmt.Sprintf("%s, which %s overwrote with %s", w.d.ReadPhrase(int32(s.From), e.Via, s.Key, s.Value), b, w.kv(s.Key, s.Value2))
	if !forced && e.Via >= 0 && e.Via < int32(w.d.N) {
		out += w.d.OrderWhy(e.Via, int32(s.To), s.Key)
	}
	return out
}

// predRead returns t's predicate read of k that may have read writer's version (Init for
// the initial state), or nil if t read k by an item read.
func (w *witness) predRead(t history.TxnID, k history.Key, writer int32) *deps.Read {
	if !w.isTxn(int32(t)) || k < 0 {
		return nil
	}
	var found *deps.Read
	for _, ri := range w.d.ReadsOf[t] {
		r := &w.d.Reads[ri]
		if r.Key != k {
			continue
		}
		if r.Kind == deps.ReadItem {
			if slices.Contains(r.Cands, writer) {
				return nil // an item read explains the step on its own
			}
			continue
		}
		if found == nil && slices.Contains(r.Cands, writer) {
			found = r
		}
	}
	return found
}

// version names writer's version of k ("T1's x=3", "the initial x=nil").
func (w *witness) version(writer int32, k history.Key) string {
	v, txn := w.valueOf(writer, k), writer >= 0 && w.isTxn(writer)
	switch {
	case v != history.Nil && txn:
		return fmt.Sprintf("%s's %s", w.name(history.TxnID(writer)), w.kv(k, v))
	case v != history.Nil:
		return "the initial " + w.kv(k, v)
	case txn:
		return fmt.Sprintf("no row %v (%s deleted it)", w.h.Key(k), w.name(history.TxnID(writer)))
	}
	return fmt.Sprintf("no row %v (not yet inserted)", w.h.Key(k))
}

// valueOf returns the value of writer's version of k (the initial value for Init).
func (w *witness) valueOf(writer int32, k history.Key) history.Value {
	if writer < 0 || !w.isTxn(writer) {
		return w.h.InitialValue(k)
	}
	wr, _ := w.d.WriteOf(writer, k)
	return wr.Value
}

// whyPred says in a sentence why a step through a predicate operation holds.
func (w *witness) whyPred(s report.Step, e deps.Edge, r *deps.Read, forced bool) string {
	a, b := w.name(s.From), w.name(s.To)
	reader, src := b, s.From
	if s.Rel == report.RW {
		reader, src = a, history.TxnID(e.Via)
	}
	saw := w.saw(s, r, reader, src)
	out := saw
	if s.Rel == report.RW {
		out = w.overwrote(s, saw, b, src)
	}
	if forced {
		out += deps.RuledOut
	}
	return out
}

// saw says what reader's predicate operation r saw of s's key: src's version.
func (w *witness) saw(s report.Step, r *deps.Read, reader string, src history.TxnID) string {
	switch r.Kind {
	case deps.ReadPredVisible:
		return fmt.Sprintf("%s's predicate read %q returned %s", reader, s.Pred, w.version(int32(src), s.Key))
	case deps.ReadPredMiss:
		if w.h.Txns[r.Txn].Ops[r.Op].Kind == history.OpPredWrite {
			return fmt.Sprintf("%s's update with predicate %q did not change row %v, so it saw a version on which the predicate is false: %s", reader, s.Pred, w.h.Key(s.Key), w.version(int32(src), s.Key))
		}
		return fmt.Sprintf("%s's predicate read %q did not return row %v, so it saw a version on which the predicate is false: %s", reader, s.Pred, w.h.Key(s.Key), w.version(int32(src), s.Key))
	}
	return fmt.Sprintf("%s's update with predicate %q changed row %v, so it read a version on which the predicate holds: %s", reader, s.Pred, w.h.Key(s.Key), w.version(int32(src), s.Key))
}

// overwrote adds to saw, the sentence of an anti-dependency step s from a predicate
// operation that saw src's version, how b (named b) overwrote it: deleted, inserted or
// overwrote the row.
func (w *witness) overwrote(s report.Step, saw, b string, src history.TxnID) string {
	wb, _ := w.d.WriteOf(int32(s.To), s.Key)
	switch {
	case wb.Value == history.Nil:
		return fmt.Sprintf("%s, which %s later deleted", saw, b)
	case w.valueOf(int32(src), s.Key) == history.Nil:
		return fmt.Sprintf("%s, which %s later inserted as %s", saw, b, w.kv(s.Key, wb.Value))
	}
	return fmt.Sprintf("%s, which %s later overwrote with %s", saw, b, w.kv(s.Key, wb.Value))
}

// option describes one alternative of a constraint.
func (w *witness) option(o polygraph.Option) string {
	if o.WW >= 0 {
		c := &w.p.WW[o.WW]
		a, b := c.A, c.B
		if o.First == b {
			a, b = b, a
		}
		var ks []string
		for _, k := range c.Keys {
			ks = append(ks, fmt.Sprint(w.h.Key(k)))
		}
		return fmt.Sprintf("%s's write of %s came before %s's", w.name(history.TxnID(a)), strings.Join(ks, ", "), w.name(history.TxnID(b)))
	}
	if o.WR >= 0 {
		rc := &w.p.WR[o.WR]
		r := &w.d.Reads[rc.Read]
		src := "the initial state"
		if o.Writer != w.d.Init {
			src = w.name(history.TxnID(o.Writer))
		}
		if r.Kind != deps.ReadItem {
			expr := w.h.Pred(w.h.Txns[r.Txn].Ops[r.Op]).Pred.Expr
			return fmt.Sprintf("%s's predicate %q evaluated row %v on %s", w.name(history.TxnID(r.Txn)), expr, w.h.Key(r.Key), w.version(o.Writer, r.Key))
		}
		return fmt.Sprintf("%s read %s from %s", w.name(history.TxnID(r.Txn)), w.kv(r.Key, r.Value), src)
	}
	return "the known dependencies"
}

// cycleText renders steps as "T1 → T2 → T1".
func (w *witness) cycleText(st []report.Step) string {
	var b strings.Builder
	for i, s := range st {
		if i == 0 {
			b.WriteString(w.name(s.From))
		}
		fmt.Fprintf(&b, " -%s-> %s", s.Rel, w.name(s.To))
	}
	return b.String()
}

// anomaly builds the report entry for a set of alternatives, each closing its cycle.
func (w *witness) anomaly(alts []polygraph.Alternative) report.Anomaly {
	alts = polygraph.Useful(alts)
	best := -1
	var bestSteps []report.Step
	var ruled []string
	var txns txnSet
	for i, alt := range alts {
		st := w.steps(alt.Cycle)
		if r, ok := w.ruledOut(alt, st); ok {
			ruled = append(ruled, r)
		}
		for _, s := range st {
			txns.add(s.From, s.To)
		}
		if st != nil && (best < 0 || weaker(st, bestSteps)) {
			best, bestSteps = i, st
		}
	}
	kind, also := classify(bestSteps)
	a := report.Anomaly{Kind: kind, Also: also, Txns: txns.list, Key: -1, Cycle: bestSteps, RuledOut: ruled}
	switch {
	case len(ruled) == 0:
		a.Message = fmt.Sprintf("%s; so %s, a contradiction", whys(bestSteps), w.cycleText(bestSteps))
	default:
		a.Message = fmt.Sprintf("no serial order of %d transactions explains what they read: each of the %d alternatives below closes a cycle, e.g. %s", len(txns.list), len(alts), w.cycleText(bestSteps))
	}
	return a
}

// ruledOut is the RuledOut sentence of alt, whose cycle is st: its choices, and the cycle
// they close. ok is false for an alternative of no choice (the known dependencies).
func (w *witness) ruledOut(alt polygraph.Alternative, st []report.Step) (string, bool) {
	var opts []string
	for _, o := range alt.Options {
		if o.WW >= 0 || o.WR >= 0 {
			opts = append(opts, w.option(o))
		}
	}
	if len(opts) == 0 {
		return "", false
	}
	if st == nil {
		return fmt.Sprintf("if %s: (no cycle found for this alternative)", strings.Join(opts, " and ")), true
	}
	return fmt.Sprintf("if %s: %s; so %s, a contradiction", strings.Join(opts, " and "), whys(st), w.cycleText(st)), true
}

// txnSet lists transactions in the order first added, each once.
type txnSet struct {
	seen map[history.TxnID]bool
	list []history.TxnID
}

func (s *txnSet) add(ts ...history.TxnID) {
	if s.seen == nil {
		s.seen = make(map[history.TxnID]bool)
	}
	for _, t := range ts {
		if !s.seen[t] {
			s.seen[t] = true
			s.list = append(s.list, t)
		}
	}
}

// weaker reports whether the cycle st names a weaker anomaly than best, the one chosen so
// far: a cycle with an anti-dependency over one without (when the alternatives differ in
// which version was read, a write-read cycle in one of them does not make the history
// G1c), else a shorter one.
func weaker(st, best []report.Step) bool {
	return hasRW(st) && !hasRW(best) || hasRW(st) == hasRW(best) && len(st) < len(best)
}

// whys joins the steps' reasons.
func whys(st []report.Step) string {
	var whys []string
	for _, s := range st {
		whys = append(whys, s.Why)
	}
	return strings.Join(whys, "; ")
}

// hasRW reports whether a cycle has an anti-dependency step.
func hasRW(st []report.Step) bool {
	return slices.ContainsFunc(st, func(s report.Step) bool { return s.Rel.Has(report.RW) })
}
