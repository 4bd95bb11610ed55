package explain

import (
	"fmt"
	"strings"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

// This file says a step in the reader's terms: a list read as the list it returned, with the
// element that makes the edge marked ("T2 read l=[1 2 *3*], which ends with T1's append of
// 3"); a read whose value renders like the value that overwrote it with its writer named
// ("T3 read x=1 written by T1, which T2 overwrote with x=1"); a real-time step with its
// times. Checkers write their own reasons in register terms ("T2 read l=3, which T1
// wrote"); restate replaces that opening clause, and keeps what follows it (why the order
// holds).

// markOpen and markClose surround the element of a list that makes an edge: plain text,
// so that text, HTML and JSON show the same mark.
const markOpen, markClose = "*", "*"

// listRead returns the elements of t's read of list k that shows v: the read that ends with
// v (the empty list for the initial version, v == Nil), else, unless mustEnd, the first that
// holds it. ok is false when t has no list read of k, or none shows v.
func listRead(h *history.History, t history.TxnID, k history.Key, v history.Value, mustEnd bool) (vs []history.Value, mark int, ok bool) {
	if h == nil || !validTxn(h, t) || k < 0 {
		return nil, -1, false
	}
	var holds []history.Value
	holdsAt := -1
	for _, o := range h.Txn(t).Ops {
		if o.Kind != history.OpListRead || o.Key != k || o.Failed() {
			continue
		}
		l := h.List(o)
		switch {
		case v == history.Nil && len(l) == 0:
			return l, -1, true
		case len(l) > 0 && l[len(l)-1] == v:
			return l, len(l) - 1, true
		}
		if i := indexOf(l, v); i >= 0 && holds == nil && !mustEnd {
			holds, holdsAt = l, i
		}
	}
	return holds, holdsAt, holds != nil
}

func indexOf(l []history.Value, v history.Value) int {
	for i, x := range l {
		if x == v {
			return i
		}
	}
	return -1
}

// appends reports whether t appends to k: k is a list key.
func appends(h *history.History, t history.TxnID, k history.Key) bool {
	if h == nil || !validTxn(h, t) || k < 0 {
		return false
	}
	for _, o := range h.Txn(t).Ops {
		if o.Kind == history.OpAppend && o.Key == k {
			return true
		}
	}
	return false
}

// markedList renders vs as [1 2 *3*], marking element mark (none when mark < 0). A list of
// more than 8 elements shows its ends and the marked element with its neighbours, the rest
// elided as "... (n more) ...".
func markedList(h *history.History, vs []history.Value, mark int) string {
	show := make([]bool, len(vs))
	for i := range vs {
		show[i] = len(vs) <= maxList || i < maxList/2 || i >= len(vs)-maxList/2
	}
	if len(vs) > maxList && mark >= 0 && !show[mark] {
		for i := range show {
			show[i] = i < 2 || i >= len(vs)-2 || i >= mark-1 && i <= mark+1
		}
	}
	var parts []string
	for i := 0; i < len(vs); i++ {
		if !show[i] {
			j := i
			for j < len(vs) && !show[j] {
				j++
			}
			parts = append(parts, fmt.Sprintf("... (%d more) ...", j-i))
			i = j - 1
			continue
		}
		s := h.Value(vs[i]).String()
		if i == mark {
			s = markOpen + s + markClose
		}
		parts = append(parts, s)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// listWR is a read dependency on a list in the reader's terms: "T2 read l=[1 2 *3*], which
// ends with T1's append of 3". ok is false when the reader read no list that shows the
// value.
func (t stepText) listWR() (string, bool) {
	l, mark, ok := listRead(t.h, t.s.To, t.s.Key, t.s.Value, false)
	if !ok || mark < 0 {
		return "", false
	}
	how := "ends with"
	if mark < len(l)-1 {
		how = "holds"
	}
	return fmt.Sprintf("%s read %v=%s, which %s %s's append of %s", t.to, t.n.key(t.s.Key), markedList(t.h, l, mark), how, t.from, t.val(t.s.Value)), true
}

// listRW is an anti-dependency on a list in the reader's terms: "T1 read l=[1 2] and did not
// observe T2's append of 3".
func (t stepText) listRW() (string, bool) {
	l, _, ok := listRead(t.h, t.s.From, t.s.Key, t.s.Value, true)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%s read %v=%s and did not observe %s", t.from, t.n.key(t.s.Key), markedList(t.h, l, -1), t.appendOf(t.to, t.s.Value2)), true
}

// listWW is a write dependency on a list in Elle's terms: "T2 appended 3 to l after T1's
// append of 2".
func (t stepText) listWW() (string, bool) {
	if !appends(t.h, t.s.To, t.s.Key) || t.s.Value2 == history.Nil || t.s.Value == history.Nil {
		return "", false
	}
	return fmt.Sprintf("%s appended %s to %v after %s's append of %s", t.to, t.val(t.s.Value2), t.n.key(t.s.Key), t.from, t.val(t.s.Value)), true
}

// appendOf names w's append of v to the step's key: "T2's append of 3", or "T2's appends"
// when the value is unknown.
func (t stepText) appendOf(w string, v history.Value) string {
	if v == history.Nil {
		return w + "'s appends"
	}
	return fmt.Sprintf("%s's append of %s", w, t.val(v))
}

// val renders one value of the step's key.
func (t stepText) val(v history.Value) string { return history.ShowValue(t.n.value(v)) }

// sameRender reports whether the step's two values print alike, so that only their
// writers tell them apart.
func (t stepText) sameRender() bool {
	return t.s.Value2 != history.Nil && t.kv(t.s.Value) == t.kv(t.s.Value2)
}

// readWriter names the writer of the version the step's reader (From) read: the read's
// explicit source, else the one transaction that wrote that value. "" when neither says.
func (t stepText) readWriter() string {
	h, s := t.h, t.s
	if h == nil || !validTxn(h, s.From) {
		return ""
	}
	for _, o := range h.Txn(s.From).Ops {
		if o.Kind == history.OpRead && o.Key == s.Key && o.Value == s.Value {
			switch o.Src.Kind {
			case history.SrcTxn:
				return h.Name(o.Src.Txn)
			case history.SrcInit:
				return ""
			}
		}
	}
	writer := history.TxnID(-1)
	for id, tx := range h.All() {
		for _, o := range tx.Ops {
			if o.Kind == history.OpWrite && o.Key == s.Key && o.Value == s.Value && id != writer {
				if writer >= 0 {
					return ""
				}
				writer = id
			}
		}
	}
	if writer < 0 {
		return ""
	}
	return h.Name(writer)
}

// restate says a checker's reason for s (why) in the reader's terms: it replaces the
// reason's opening clause, when it is one of the checkers' register clauses, by the clause
// the step's relation has here, and keeps the rest. A reason it does not recognise stays as
// it is.
func (t stepText) restate(why string) string {
	for _, r := range restaters {
		if t.s.Rel&r.rel == 0 {
			continue
		}
		if out, ok := r.restate(t, why); ok {
			return out
		}
	}
	return why
}

// restaters rewrite the opening clause of a checker's reason, per relation.
var restaters = []struct {
	rel     report.Rel
	restate func(stepText, string) (string, bool)
}{
	{report.WR, stepText.restateWR},
	{report.RW, stepText.restateRW},
	{report.WW, stepText.restateWW},
	{report.RT, stepText.restateRT},
}

// restateWR recognises "R read KV, which W wrote" and "R read K=[...], holding V, which W
// appended", and says a list read as the list, its element marked.
func (t stepText) restateWR(why string) (string, bool) {
	rest, ok := strings.CutPrefix(why, fmt.Sprintf("%s read %s, which %s wrote", t.to, t.kv(t.s.Value), t.from))
	if !ok {
		head, tail, found := strings.Cut(why, fmt.Sprintf(", holding %s, which %s appended", t.val(t.s.Value), t.from))
		if !found || !strings.HasPrefix(head, fmt.Sprintf("%s read %v=[", t.to, t.n.key(t.s.Key))) {
			return "", false
		}
		rest = tail
	}
	c, ok := t.listWR()
	return c + rest, ok
}

// restateRW recognises "R read [the initial ]KV[ (written by W)], which O overwrote with KV2":
// a list read becomes the list, and a read that prints like the overwrite names its writer.
func (t stepText) restateRW(why string) (string, bool) {
	rest, ok := strings.CutPrefix(why, t.from+" read ")
	if !ok {
		return "", false
	}
	kv := t.kv(t.s.Value)
	initial := strings.HasPrefix(rest, "the initial "+kv)
	rest = strings.TrimPrefix(rest, "the initial ")
	if rest, ok = strings.CutPrefix(rest, kv); !ok {
		return "", false
	}
	writer := ""
	if after, ok := strings.CutPrefix(rest, " (written by "); ok {
		name, tail, found := strings.Cut(after, ")")
		if !found {
			return "", false
		}
		writer, rest = name, tail
	}
	if rest, ok = strings.CutPrefix(rest, fmt.Sprintf(", which %s overwrote with %s", t.to, t.kv(t.s.Value2))); !ok {
		return "", false
	}
	if c, ok := t.listRW(); ok {
		return c + rest, true
	}
	if initial || !t.sameRender() {
		return "", false
	}
	if writer == "" {
		writer = t.readWriter()
	}
	if writer == "" {
		return "", false
	}
	return t.namedRW(writer) + rest, true
}

// namedRW is an anti-dependency whose read and overwrite print alike, its writers named:
// "T3 read x=1 written by T1, which T2 overwrote with x=1".
func (t stepText) namedRW(writer string) string {
	return fmt.Sprintf("%s read %s written by %s, which %s overwrote with %s", t.from, t.kv(t.s.Value), writer, t.to, t.kv(t.s.Value2))
}

func (t stepText) restateWW(why string) (string, bool) {
	for _, f := range []string{"%s overwrote %s's %s with %s", "%s overwrote %s's write of %s with %s"} {
		if rest, ok := strings.CutPrefix(why, fmt.Sprintf(f, t.to, t.from, t.kv(t.s.Value), t.kv(t.s.Value2))); ok {
			c, ok := t.listWW()
			return c + rest, ok
		}
	}
	return "", false
}

// restateRT gives a real-time step its times: "T1 ended (at +3ms) before T2 began (at +5ms)".
func (t stepText) restateRT(why string) (string, bool) {
	for _, p := range []string{" (real time)", ""} {
		if rest, ok := strings.CutPrefix(why, fmt.Sprintf("%s ended before %s began%s", t.from, t.to, p)); ok {
			c := t.rt()
			return c + rest, c != fmt.Sprintf("%s ended before %s began", t.from, t.to)
		}
	}
	return "", false
}
