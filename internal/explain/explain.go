// Package explain turns anomalies into explanations people can check by hand, in the
// manner of Elle: first as data ([Explain] returns an [Explanation]: the transactions with
// their operations, each step of the proof as a sentence, and the closing contradiction),
// then through separate renderers: [Text] (prose), [DOT] (Graphviz source, written as text
// so Graphviz is never needed), [JSON] (a stable, documented shape of the whole report) and
// [HTML] (one self-contained page that draws each anomaly's cycle as SVG, laid out here).
//
// Every name in an explanation is the source's: transaction ids via [history.History.Name],
// keys and values as the source wrote them. Output is deterministic, byte for byte.
//
// # Sentences
//
// Each anomaly opens with its lead ([Explanation.Lead]): one plain sentence saying what went
// wrong in the words of the level's definition, the first template of the words table
// ([anomaly.Kind.Words]) that the anomaly's evidence fills, for its most specific name ("T3
// and T5 both read x=1 and both overwrote it, so one of the updates is lost."), else the
// kind's meaning.
//
// A step From -> To with relation rel reads "From < To, because <why>", where why is a
// sentence made from the relation:
//
//	wr   T2 read x=3, which T1 wrote
//	     T2 read l=[1 2 *3*], which ends with T1's append of 3      (a list, its element marked)
//	ww   T2 overwrote T1's write of x=1 with x=2
//	     T2 appended 3 to l after T1's append of 2
//	rw   T1 read x=1, which T2 overwrote with x=2
//	     T1 read l=[1 2] and did not observe T2's append of 3
//	     T3 read x=1 written by T1, which T2 overwrote with x=1     (values that print alike)
//	so   T1 precedes T2 in session s1
//	rt   T1 ended (at +9ns) before T2 began (at +12ns)            (since the history's start)
//	ts   T1 committed (at 7) before T2 started (at 8)
//	pwr  T2's predicate read saw T1's write of x=3
//	prw  T1's predicate read missed T2's write of x=4
//
// When the checker gave the step a reason of its own (Why), that reason is kept, but its
// opening clause, when it is one of the register-style clauses above as the checkers write
// them ("T2 read l=3, which T1 wrote", "T3 read x=1 (written by T1), which T2 overwrote with
// x=1", "T1 ended before T2 began (real time)"), is restated as here: lists as lists, the
// writer of a read that prints like its overwrite, real time with its times. The checker's
// message and ruled-out alternatives, which repeat the reasons, are restated alike. Lists
// of more than 8 elements show their ends and the marked element, eliding the rest.
//
// The last step of a closed cycle begins with "However," and ends with ": a contradiction!".
//
// # Local names
//
//	h History   a Anomaly   e Explanation   s Step   t Txn / TxnID   o Op
package explain

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

// Explanation is one anomaly explained, as data. Renderers only format it.
type Explanation struct {
	Kind anomaly.Kind
	Also []anomaly.Kind
	// Lead is the one plain sentence an anomaly opens with: what went wrong, in the words of
	// the level's definition, filled with the anomaly's transactions and keys from the words
	// table ([anomaly.Kind.Words]), or the kind's meaning when its evidence does not give
	// the facts any template needs.
	Lead string
	// Message is the checker's one- or two-sentence summary, its steps' reasons said as the
	// steps say them.
	Message string
	Key     string // the key for single-key findings, else ""
	// Txns are the transactions involved: the anomaly's own list, then any other endpoint
	// of a step, in order of first appearance.
	Txns []Txn
	// Steps are the edges of the proof, in order.
	Steps []Step
	// Cycle says the steps close a cycle: the last step ends where the first begins.
	Cycle bool
	// Contradiction is the closing sentence: for a cycle, the last step's sentence; else
	// the checker's message.
	Contradiction string
	RuledOut      []string

	keyDatum   history.Datum
	hasKey     bool
	leadFilled bool // Lead was filled from a template, not the kind's meaning
}

// Txn is a transaction as an explanation shows it.
type Txn struct {
	ID      history.TxnID
	Name    string   // the source's id, or T<n>
	Session string   // the source's session id
	Outcome string   // committed, aborted or unknown
	Ops     []string // rendered ops, e.g. "w(x,1)", "r(l,[1 2])", "r(x,1)<-T3", "w(y,2)!" (failed)
	// Elided counts ops left out: transactions with more than maxOps ops show only the ops
	// on the anomaly's keys.
	Elided int
	// Time is the client interval "[begin,end]" and Timestamps the database's
	// "[start,commit]", when recorded; else "".
	Time, Timestamps string

	tx *history.Txn // nil when the history is unknown
}

// Step is one edge of the proof.
type Step struct {
	From, To  string // transaction names
	FromID    history.TxnID
	ToID      history.TxnID
	Rel       report.Rel
	Key       string // "" when the edge is about no one key (so, rt, ts)
	Value     string // the value read or written that makes the edge ("" if none)
	Value2    string // for ww and rw: the overwriting value ("" if none)
	Why       string // "T2 read x=3, which T1 wrote"
	Sentence  string // "T1 < T2, because T2 read x=3, which T1 wrote"
	rawWhy    string // the checker's reason, as it gave it ("" if none)
	keyDatum  history.Datum
	valDatum  history.Datum
	val2Datum history.Datum
	hasKey    bool
	hasVal    bool
	hasVal2   bool
}

// maxOps is how many ops a transaction shows before only the relevant ones are shown.
const maxOps = 16

// maxList is how many elements a list shows before its middle is elided.
const maxList = 8

// namer names transactions, keys and values, also when a report carries no history.
type namer struct{ h *history.History }

func (n namer) txn(t history.TxnID) string {
	if n.h == nil || int(t) < 0 || int(t) >= len(n.h.Txns) {
		return fmt.Sprintf("T%d", t)
	}
	return n.h.Name(t)
}

func (n namer) key(k history.Key) history.Datum {
	if n.h == nil || k < 0 || int(k) >= len(n.h.Keys) {
		return history.Int(int64(k))
	}
	return n.h.Key(k)
}

func (n namer) value(v history.Value) history.Datum {
	if n.h == nil || v < 0 || int(v) >= n.h.Values.Len() {
		return history.Int(int64(v))
	}
	return n.h.Value(v)
}

// Explain explains a in terms of h. h may be nil (then transactions are named T<id> and
// their ops are not shown).
func Explain(h *history.History, a report.Anomaly) Explanation {
	n := namer{h}
	e := Explanation{Kind: a.Kind, Also: a.Also, Message: a.Message}
	e.Lead, e.leadFilled = lead(h, a)
	if a.Key >= 0 && h != nil && int(a.Key) < len(h.Keys) {
		e.keyDatum, e.hasKey = h.Key(a.Key), true
		e.Key = e.keyDatum.String()
	}
	keys := map[history.Key]bool{a.Key: true}
	for _, s := range a.Cycle {
		keys[s.Key] = true
	}
	for _, t := range involved(a) {
		e.Txns = append(e.Txns, explainTxn(h, n, t, keys))
	}
	e.Cycle = len(a.Cycle) >= 2 && a.Cycle[len(a.Cycle)-1].To == a.Cycle[0].From
	e.Steps = steps(h, a.Cycle, e.Cycle)
	e.Message = restateIn(a.Message, e.Steps)
	for _, r := range a.RuledOut {
		e.RuledOut = append(e.RuledOut, restateIn(r, e.Steps))
	}
	if e.Cycle {
		e.Contradiction = e.Steps[len(e.Steps)-1].Sentence
	} else {
		e.Contradiction = a.Message
	}
	return e
}

// steps explains each step of cyc; the last step of a cycle is the contradiction.
func steps(h *history.History, cyc []report.Step, cycle bool) []Step {
	var out []Step
	for i, s := range cyc {
		st := Pair(h, s)
		if cycle && i == len(cyc)-1 {
			st.Sentence = "However, " + st.Sentence + ": a contradiction!"
		}
		out = append(out, st)
	}
	return out
}

// involved returns the transactions a names, then those of its steps, each once.
func involved(a report.Anomaly) []history.TxnID {
	var ids []history.TxnID
	addID := func(t history.TxnID) {
		if !slices.Contains(ids, t) {
			ids = append(ids, t)
		}
	}
	for _, t := range a.Txns {
		addID(t)
	}
	for _, s := range a.Cycle {
		addID(s.From)
		addID(s.To)
	}
	return ids
}

// Pair explains one step on its own: "From < To, because <why>", with the step's Why when
// it has one (its opening clause restated in the reader's terms), else a sentence made from
// its relation (see the package documentation).
func Pair(h *history.History, s report.Step) Step {
	n := namer{h}
	st := Step{From: n.txn(s.From), To: n.txn(s.To), FromID: s.From, ToID: s.To, Rel: s.Rel}
	if s.Key >= 0 && !isOrderRel(s.Rel) {
		st.keyDatum, st.hasKey = n.key(s.Key), true
		st.Key = st.keyDatum.String()
		st.valDatum, st.hasVal = n.value(s.Value), true
		st.Value = st.valDatum.String()
		if s.Value2 != history.Nil {
			st.val2Datum, st.hasVal2 = n.value(s.Value2), true
			st.Value2 = st.val2Datum.String()
		}
	}
	st.rawWhy = s.Why
	if s.Why == "" {
		st.Why = why(h, n, s)
	} else {
		st.Why = newStepText(h, n, s).restate(s.Why)
	}
	st.Sentence = fmt.Sprintf("%s < %s, because %s", st.From, st.To, st.Why)
	return st
}

// isOrderRel reports whether r is only about order (session, real time, timestamps).
func isOrderRel(r report.Rel) bool {
	return r&(report.WW|report.WR|report.RW|report.PredWR|report.PredRW) == 0
}

func explainTxn(h *history.History, n namer, id history.TxnID, keys map[history.Key]bool) Txn {
	t := Txn{ID: id, Name: n.txn(id)}
	if h == nil || int(id) < 0 || int(id) >= len(h.Txns) {
		return t
	}
	tx := h.Txn(id)
	t.tx = tx
	t.Session = h.Sessions[tx.Session].Source.String()
	t.Outcome = tx.Outcome.String()
	t.Time, t.Timestamps = txnTimes(h, tx)
	for _, o := range tx.Ops {
		if len(tx.Ops) > maxOps && !keys[o.Key] {
			t.Elided++
			continue
		}
		t.Ops = append(t.Ops, Op(h, o))
	}
	return t
}

// txnTimes renders tx's client interval and database timestamps ("" when it has none),
// with the snapshot its timestamps were derived from.
func txnTimes(h *history.History, tx *history.Txn) (interval, timestamps string) {
	if tx.HasTime {
		interval = fmt.Sprintf("[%s, %s]", sinceStart(h, tx.Time.Begin), sinceStart(h, tx.Time.End))
	}
	if tx.HasTimestamps {
		timestamps = fmt.Sprintf("[%v,%v]", tx.Start, tx.Commit)
		if sn, ok := h.Snapshots[tx.ID]; ok && h.DerivedTimestamps() {
			timestamps += " from snapshot " + sn.String()
		}
	}
	return interval, timestamps
}

// sinceStart renders client time ns (nanoseconds, as histories record it) as the duration
// since the history's earliest client time: "+1.2ms", "+0s".
func sinceStart(h *history.History, ns int64) string {
	if ns == math.MaxInt64 {
		return "never"
	}
	return "+" + time.Duration(ns-h.TimeOrigin()).String()
}

// Op renders one operation with the source's keys and values: r(x,1), w(x,1), a(l,3),
// r(l,[1 2 3]), ins(k,v), del(k), pred-read(expr: n rows). A failed op ends in "!"; a read
// with an explicit source ends in "<-T1", "<-init" or "<-none". Lists longer than 8
// elements show their ends around "...".
func Op(h *history.History, o history.Op) string {
	var b strings.Builder
	k := func() string { return h.Key(o.Key).String() }
	switch o.Kind {
	case history.OpRead:
		fmt.Fprintf(&b, "r(%s,%s)", k(), history.ShowValue(h.Value(o.Value)))
		b.WriteString(srcSuffix(h, o.Src))
	case history.OpWrite:
		fmt.Fprintf(&b, "w(%s,%s)", k(), history.ShowValue(h.Value(o.Value)))
	case history.OpAppend:
		fmt.Fprintf(&b, "a(%s,%s)", k(), history.ShowValue(h.Value(o.Value)))
	case history.OpInsert:
		fmt.Fprintf(&b, "ins(%s,%s)", k(), history.ShowValue(h.Value(o.Value)))
	case history.OpDelete:
		fmt.Fprintf(&b, "del(%s)", k())
	case history.OpListRead:
		fmt.Fprintf(&b, "r(%s,%s)", k(), List(h, h.List(o)))
	case history.OpPredRead, history.OpPredWrite:
		p := h.Pred(o)
		fmt.Fprintf(&b, "%s(%s: %d rows)", o.Kind, p.Pred.Expr, len(p.Rows))
	default:
		b.WriteString(o.Kind.String())
	}
	if o.Failed() {
		b.WriteByte('!')
	}
	return b.String()
}

// srcSuffix renders a read's explicit source: "<-T1", "<-init", "<-none", or "" when it has
// none.
func srcSuffix(h *history.History, src history.Src) string {
	switch src.Kind {
	case history.SrcTxn:
		return "<-" + h.Name(src.Txn)
	case history.SrcInit:
		return "<-init"
	case history.SrcNone:
		return "<-none"
	}
	return ""
}

// List renders list values as [1 2 3], eliding the middle of lists longer than 8.
func List(h *history.History, vs []history.Value) string { return markedList(h, vs, -1) }

// why makes the reason for a step from its relation (the lowest relation in the set).
func why(h *history.History, n namer, s report.Step) string {
	t := newStepText(h, n, s)
	for _, r := range reasons {
		if s.Rel&r.rel != 0 {
			return r.why(t)
		}
	}
	return fmt.Sprintf("%s must precede %s", t.from, t.to)
}

// reasons gives, in order of precedence, the reason a step of each relation has.
var reasons = []struct {
	rel report.Rel
	why func(stepText) string
}{
	{report.WW, stepText.ww},
	{report.WR, stepText.wr},
	{report.RW, stepText.rw},
	{report.SO, stepText.so},
	{report.RT, stepText.rt},
	{report.TS, stepText.ts},
	{report.PredWR, stepText.predWR},
	{report.PredRW, stepText.predRW},
}

// stepText is what why writes a step's reason from: the step, its history (or nil) and
// the names of its ends.
type stepText struct {
	h        *history.History
	n        namer
	s        report.Step
	from, to string
}

func newStepText(h *history.History, n namer, s report.Step) stepText {
	return stepText{h: h, n: n, s: s, from: n.txn(s.From), to: n.txn(s.To)}
}

// kv renders the step's key holding v.
func (t stepText) kv(v history.Value) string { return history.KV(t.n.key(t.s.Key), t.n.value(v)) }

// both returns the step's two transactions when h has them both.
func (t stepText) both() (from, to *history.Txn, ok bool) {
	if t.h == nil || !validTxn(t.h, t.s.From) || !validTxn(t.h, t.s.To) {
		return nil, nil, false
	}
	return t.h.Txn(t.s.From), t.h.Txn(t.s.To), true
}

func (t stepText) ww() string {
	if c, ok := t.listWW(); ok {
		return c
	}
	if t.s.Value2 != history.Nil {
		return fmt.Sprintf("%s overwrote %s's write of %s with %s", t.to, t.from, t.kv(t.s.Value), t.kv(t.s.Value2))
	}
	return fmt.Sprintf("%s overwrote %s's write of %s", t.to, t.from, t.kv(t.s.Value))
}

func (t stepText) wr() string {
	if c, ok := t.listWR(); ok {
		return c
	}
	return fmt.Sprintf("%s read %s, which %s wrote", t.to, t.kv(t.s.Value), t.from)
}

func (t stepText) rw() string {
	if c, ok := t.listRW(); ok {
		return c
	}
	if w := t.readWriter(); w != "" && t.sameRender() {
		return t.namedRW(w)
	}
	if t.s.Value2 != history.Nil {
		return fmt.Sprintf("%s read %s, which %s overwrote with %s", t.from, t.kv(t.s.Value), t.to, t.kv(t.s.Value2))
	}
	return fmt.Sprintf("%s read %s, which %s overwrote", t.from, t.kv(t.s.Value), t.to)
}

func (t stepText) so() string {
	sess := "the same session"
	if t.h != nil && int(t.s.From) < len(t.h.Txns) && t.s.From >= 0 {
		sess = "session " + t.h.Sessions[t.h.Txn(t.s.From).Session].Source.String()
	}
	return fmt.Sprintf("%s precedes %s in %s", t.from, t.to, sess)
}

func (t stepText) rt() string {
	if a, b, ok := t.both(); ok && a.HasTime && b.HasTime {
		return fmt.Sprintf("%s ended (at %s) before %s began (at %s)", t.from, sinceStart(t.h, a.Time.End), t.to, sinceStart(t.h, b.Time.Begin))
	}
	return fmt.Sprintf("%s ended before %s began", t.from, t.to)
}

func (t stepText) ts() string {
	if a, b, ok := t.both(); ok && a.HasTimestamps && b.HasTimestamps {
		return fmt.Sprintf("%s committed (at %v) before %s started (at %v)", t.from, a.Commit, t.to, b.Start)
	}
	return fmt.Sprintf("%s committed before %s started", t.from, t.to)
}

func (t stepText) predWR() string {
	return fmt.Sprintf("%s's predicate read saw %s's write of %s", t.to, t.from, t.kv(t.s.Value))
}

func (t stepText) predRW() string {
	v := t.s.Value2
	if v == history.Nil {
		v = t.s.Value
	}
	return fmt.Sprintf("%s's predicate read missed %s's write of %s", t.from, t.to, t.kv(v))
}

func validTxn(h *history.History, t history.TxnID) bool { return t >= 0 && int(t) < len(h.Txns) }
