package historytest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/isovet/isovet/history"
)

var reserved = map[string]bool{
	"nil": true, "init": true, "none": true, "ts": true,
	"c": true, "commit": true, "ok": true, "abort": true, "fail": true, "info": true, "unknown": true,
}

// Atom renders a datum as the notation writes it: integers as digits, nil as nil, plain words
// bare, anything else quoted.
func Atom(d history.Datum) string {
	if d.IsNil() {
		return "nil"
	}
	if i, ok := d.Int(); ok {
		return strconv.FormatInt(i, 10)
	}
	s, _ := d.Str()
	if s == "" || reserved[s] || !isWordStart(s[0]) {
		return strconv.Quote(s)
	}
	for i := 1; i < len(s); i++ {
		if !isWordByte(s[i]) {
			return strconv.Quote(s)
		}
	}
	return s
}

// Format prints h in the notation, one transaction per line with its session label, so that
// Parse(Format(h)) rebuilds h. Transactions without a source id are printed as T<n> (with
// "_" appended while that collides with a named transaction).
// Explicit sources print as "<-T", which Parse resolves as the package documentation says.
func Format(h *history.History) string {
	var b strings.Builder
	writeInitial(&b, h)
	name := txnNamer(h)
	for id, t := range h.All() {
		fmt.Fprintf(&b, "%s: %s", Atom(h.Sessions[t.Session].Source), name(id))
		for i, o := range t.Ops {
			b.WriteByte(' ')
			writeOp(&b, h, o, name)
			if o.Failed() {
				b.WriteByte('!')
			}
			if t.OpTimes != nil {
				fmt.Fprintf(&b, "@[%d,%d]", t.OpTimes[i].Begin, t.OpTimes[i].End)
			}
		}
		writeTxnEnd(&b, t)
	}
	return b.String()
}

// writeInitial writes the init lines: the initial value of every key, then those of
// single keys.
func writeInitial(b *strings.Builder, h *history.History) {
	if h.Initial != history.Nil {
		fmt.Fprintf(b, "init %s\n", Atom(h.Value(h.Initial)))
	}
	if len(h.InitialByKey) > 0 {
		b.WriteString("init")
		// Keys in interned order, for stable output.
		for k := range h.Keys {
			if v, ok := h.InitialByKey[history.Key(k)]; ok {
				fmt.Fprintf(b, " %s=%s", Atom(h.Key(history.Key(k))), Atom(h.Value(v)))
			}
		}
		b.WriteString("\n")
	}
}

// txnNamer returns the names Format gives h's transactions: a transaction's source id, or
// T<n> for one without, with "_" added until no other transaction has that name.
func txnNamer(h *history.History) func(history.TxnID) string {
	used := make(map[string]bool)
	for _, t := range h.All() {
		if !t.Source.IsNil() {
			used[Atom(t.Source)] = true
		}
	}
	names := make(map[history.TxnID]string)
	return func(t history.TxnID) string {
		if d := h.Txn(t).Source; !d.IsNil() {
			return Atom(d)
		}
		if n, ok := names[t]; ok {
			return n
		}
		n := "T" + strconv.Itoa(int(t))
		for used[n] {
			n += "_"
		}
		used[n] = true
		names[t] = n
		return n
	}
}

// outcomeWords are the words that end a transaction's line; info is any other outcome.
var outcomeWords = map[history.Outcome]string{history.OutcomeCommitted: " c", history.OutcomeAborted: " abort"}

// writeTxnEnd ends t's line: its outcome, client interval and timestamps.
func writeTxnEnd(b *strings.Builder, t *history.Txn) {
	if w, ok := outcomeWords[t.Outcome]; ok {
		b.WriteString(w)
	} else {
		b.WriteString(" info")
	}
	if t.HasTime {
		fmt.Fprintf(b, " @[%d,%d]", t.Time.Begin, t.Time.End)
	}
	if t.HasTimestamps {
		fmt.Fprintf(b, " ts[%s,%s]", tsString(t.Start), tsString(t.Commit))
	}
	b.WriteByte('\n')
}

func tsString(ts history.Timestamp) string {
	if ts.Logical == 0 {
		return strconv.FormatInt(ts.Physical, 10)
	}
	return fmt.Sprintf("%d.%d", ts.Physical, ts.Logical)
}

// writeFuncs are the notation's names of the ops that write a value to a key.
var writeFuncs = map[history.OpKind]string{history.OpWrite: "w", history.OpAppend: "a", history.OpInsert: "ins"}

func writeOp(b *strings.Builder, h *history.History, o history.Op, name func(history.TxnID) string) {
	if o.Kind == history.OpPredRead || o.Kind == history.OpPredWrite {
		// A predicate op has no key of its own (a history of predicates over no rows has no
		// keys at all).
		writePredOp(b, h, o, name)
		return
	}
	k, v := Atom(h.Key(o.Key)), Atom(h.Value(o.Value))
	if f, ok := writeFuncs[o.Kind]; ok {
		fmt.Fprintf(b, "%s(%s,%s)", f, k, v)
		return
	}
	switch o.Kind {
	case history.OpRead:
		fmt.Fprintf(b, "r(%s,%s)", k, v)
		b.WriteString(srcSuffix(o.Src, name))
	case history.OpDelete:
		fmt.Fprintf(b, "del(%s)", k)
	case history.OpListRead:
		fmt.Fprintf(b, "r(%s,[", k)
		for i, e := range h.List(o) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(Atom(h.Value(e)))
		}
		b.WriteString("])")
	}
}

// writePredOp writes the predicate read or write o: pr or pw, the relation if any, the
// expression, the rows it matched and, if any, those it did not.
func writePredOp(b *strings.Builder, h *history.History, o history.Op, name func(history.TxnID) string) {
	po := h.Pred(o)
	if o.Kind == history.OpPredRead {
		b.WriteString("pr(")
	} else {
		b.WriteString("pw(")
	}
	if po.Pred.Relation != "" {
		b.WriteString(strconv.Quote(po.Pred.Relation) + ",")
	}
	b.WriteString(strconv.Quote(po.Pred.Expr) + ",")
	writeRows(b, h, po, true, name)
	if slices.ContainsFunc(po.Rows, func(r history.Row) bool { return !r.Match }) {
		b.WriteByte(',')
		writeRows(b, h, po, false, name)
	}
	b.WriteByte(')')
}

func writeRows(b *strings.Builder, h *history.History, po *history.PredOp, match bool, name func(history.TxnID) string) {
	b.WriteByte('[')
	first := true
	for i, r := range po.Rows {
		if r.Match != match {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		fmt.Fprintf(b, "%s=%s", Atom(h.Key(r.Key)), Atom(h.Value(r.Value)))
		b.WriteString(srcSuffix(po.Src(i), name))
	}
	b.WriteByte(']')
}

// srcSuffix is the "<-" suffix that names an explicit source: init, none or a transaction;
// empty for a source matched by value.
func srcSuffix(src history.Src, name func(history.TxnID) string) string {
	switch src.Kind {
	case history.SrcInit:
		return "<-init"
	case history.SrcNone:
		return "<-none"
	case history.SrcTxn:
		return "<-" + name(src.Txn)
	}
	return ""
}
