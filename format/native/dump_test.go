package native_test

import (
	"fmt"
	"slices"
	"strings"

	"github.com/isovet/isovet/history"
)

// dump renders every part of h's model, independently of the native writer, so tests can
// compare histories field by field. Keys and values are shown as their originals: dense
// ids depend on interning order, which is not part of the model's meaning.
func dump(h *history.History) string {
	var b strings.Builder
	k := func(k history.Key) string { return fmt.Sprintf("%#v", h.Key(k)) }
	v := func(v history.Value) string { return fmt.Sprintf("%#v", h.Value(v)) }
	fmt.Fprintf(&b, "initial %s\n", v(h.Initial))
	var inits []string
	for kk, vv := range h.InitialByKey {
		inits = append(inits, fmt.Sprintf("initial[%s] %s\n", k(kk), v(vv)))
	}
	slices.Sort(inits)
	b.WriteString(strings.Join(inits, ""))
	for _, s := range h.Sessions {
		fmt.Fprintf(&b, "session %d %#v %v\n", s.ID, s.Source, s.Txns)
	}
	for _, t := range h.Txns {
		fmt.Fprintf(&b, "txn %d src=%#v sess=%d seq=%d %v", t.ID, t.Source, t.Session, t.Seq, t.Outcome)
		if t.HasTime {
			fmt.Fprintf(&b, " time=%v", t.Time)
		}
		if t.HasTimestamps {
			fmt.Fprintf(&b, " ts=%v..%v", t.Start, t.Commit)
		}
		if sn, ok := h.Snapshots[t.ID]; ok {
			fmt.Fprintf(&b, " snap=%v", sn)
		}
		b.WriteByte('\n')
		for i, o := range t.Ops {
			fmt.Fprintf(&b, "  %v flags=%d src=%+v", o.Kind, o.Flags, o.Src)
			if o.Kind != history.OpPredRead && o.Kind != history.OpPredWrite {
				fmt.Fprintf(&b, " k=%s v=%s", k(o.Key), v(o.Value))
			}
			if t.OpTimes != nil {
				fmt.Fprintf(&b, " t=%v", t.OpTimes[i])
			}
			switch o.Kind {
			case history.OpListRead:
				for _, x := range h.List(o) {
					fmt.Fprintf(&b, " %s", v(x))
				}
			case history.OpPredRead, history.OpPredWrite:
				p := h.Pred(o)
				fmt.Fprintf(&b, " pred=%#v rows:", p.Pred)
				for ri, r := range p.Rows {
					fmt.Fprintf(&b, " [%s %s %+v %v]", k(r.Key), v(r.Value), p.Src(ri), r.Match)
				}
			}
			b.WriteByte('\n')
		}
	}
	if h.SnapshotErr != nil {
		fmt.Fprintf(&b, "snapshots: %v\n", h.SnapshotErr)
	}
	return b.String()
}
