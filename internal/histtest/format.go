package histtest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"isovet/history"
)

var reserved = map[string]bool{
	"nil": true, "init": true, "none": true, "ts": true,
	"c": true, "commit": true, "ok": true, "abort": true, "fail": true, "info": true, "unknown": true,
}

// Atom renders a datum as the DSL writes it: integers as digits, nil as nil, plain words
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

// Format prints h in the DSL, one transaction per line with its session label, so that
// Parse(Format(h)) rebuilds h. Transactions without a source id are printed as T<n> (with
// "_" appended while that collides with a named transaction).
// Explicit sources print as "<-T", which Parse resolves as the package documentation says.
func Format(h *history.History) string {
	var b strings.Builder
	if h.Initial != history.Nil {
		fmt.Fprintf(&b, "init %s\n", Atom(h.Value(h.Initial)))
	}
	if len(h.InitialByKey) > 0 {
		b.WriteString("init")
		// Keys in interned order, for stable output.
		for k := range h.Keys {
			if v, ok := h.InitialByKey[history.Key(k)]; ok {
				fmt.Fprintf(&b, " %s=%s", Atom(h.Key(history.Key(k))), Atom(h.Value(v)))
			}
		}
		b.WriteString("\n")
	}
	// Name unnamed transactions T<n>, adding "_" until no named transaction has that id.
	used := make(map[string]bool)
	for _, t := range h.All() {
		if !t.Source.IsNil() {
			used[Atom(t.Source)] = true
		}
	}
	names := make(map[history.TxnID]string)
	name := func(t history.TxnID) string {
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
		switch t.Outcome {
		case history.OutcomeCommitted:
			b.WriteString(" c")
		case history.OutcomeAborted:
			b.WriteString(" abort")
		default:
			b.WriteString(" info")
		}
		if t.HasTime {
			fmt.Fprintf(&b, " @[%d,%d]", t.Time.Begin, t.Time.End)
		}
		if t.HasTimestamps {
			fmt.Fprintf(&b, " ts[%s,%s]", tsString(t.Start), tsString(t.Commit))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func tsString(ts history.Timestamp) string {
	if ts.Logical == 0 {
		return strconv.FormatInt(ts.Physical, 10)
	}
	return fmt.Sprintf("%d.%d", ts.Physical, ts.Logical)
}

func writeOp(b *strings.Builder, h *history.History, o history.Op, name func(history.TxnID) string) {
	var k, v string
	if o.Kind != history.OpPredRead && o.Kind != history.OpPredWrite {
		// A predicate op has no key of its own (a history of predicates over no rows has no
		// keys at all).
		k, v = Atom(h.Key(o.Key)), Atom(h.Value(o.Value))
	}
	switch o.Kind {
	case history.OpRead:
		fmt.Fprintf(b, "r(%s,%s)", k, v)
		switch o.Src.Kind {
		case history.SrcInit:
			b.WriteString("<-init")
		case history.SrcNone:
			b.WriteString("<-none")
		case history.SrcTxn:
			b.WriteString("<-" + name(o.Src.Txn))
		}
	case history.OpWrite:
		fmt.Fprintf(b, "w(%s,%s)", k, v)
	case history.OpAppend:
		fmt.Fprintf(b, "a(%s,%s)", k, v)
	case history.OpInsert:
		fmt.Fprintf(b, "ins(%s,%s)", k, v)
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
	case history.OpPredRead, history.OpPredWrite:
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
		switch src := po.Src(i); src.Kind {
		case history.SrcInit:
			b.WriteString("<-init")
		case history.SrcNone:
			b.WriteString("<-none")
		case history.SrcTxn:
			b.WriteString("<-" + name(src.Txn))
		}
	}
	b.WriteByte(']')
}
