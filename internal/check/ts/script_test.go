package ts

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
)

// TestOnlineScript runs testdata/online/* scripts against [Online]:
//
//	new [level=<level>] [settle=<dur>] [retain=<dur>] [initial=<v>] [maxbytes=<n>]
//	observe id=<id> sess=<s> sts=<p[.l]> cts=<p[.l]> [seq=<n>]
//	<ops, one per line: r k v | w k v | a k v | rl k v...>
//	advance <dur>   (relative to the last time)
//	flush
//	stats
func TestOnlineScript(t *testing.T) {
	datadriven.Walk(t, "testdata/online", func(t *testing.T, path string) {
		var on *Online
		now := time.Unix(1000, 0)
		render := func(evs []Event) string {
			var b strings.Builder
			for _, e := range evs {
				switch e.Kind {
				case EventViolation, EventRejected:
					fmt.Fprintf(&b, "%s: %s\n", e.Kind, e.Violation.String())
				default:
					fmt.Fprintf(&b, "%s: %s %d %s\n", e.Kind, e.Txn, e.Count, e.Message)
				}
			}
			if b.Len() == 0 {
				return "ok\n"
			}
			return b.String()
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "new":
				o := OnlineOptions{}
				for _, a := range d.CmdArgs {
					v := ""
					if len(a.Vals) > 0 {
						v = a.Vals[0]
					}
					switch a.Key {
					case "level":
						l, ok := anomaly.ParseLevel(v)
						if !ok {
							d.Fatalf(t, "level %q", v)
						}
						o.Level = l
					case "settle":
						o.Settle, _ = time.ParseDuration(v)
					case "retain":
						o.Retain, _ = time.ParseDuration(v)
					case "initial":
						o.Initial = datum(v)
					case "maxbytes":
						n, _ := strconv.ParseInt(v, 10, 64)
						o.MaxBytes = n
					}
				}
				var err error
				if on, err = NewOnline(o); err != nil {
					return err.Error()
				}
				on.Advance(now)
				return "ok"
			case "observe":
				x := Txn{Seq: -1}
				for _, a := range d.CmdArgs {
					v := a.Vals[0]
					switch a.Key {
					case "id":
						x.ID = history.Str(v)
					case "sess":
						x.Session = datum(v)
					case "sts":
						x.Start = parseTS(t, v)
					case "cts":
						x.Commit = parseTS(t, v)
					case "seq":
						x.Seq, _ = strconv.ParseInt(v, 10, 64)
					}
				}
				for _, line := range strings.Split(d.Input, "\n") {
					f := strings.Fields(line)
					if len(f) == 0 {
						continue
					}
					op := Op{Key: datum(f[1])}
					switch f[0] {
					case "r":
						op.Kind, op.Value = history.OpRead, datum(f[2])
					case "w":
						op.Kind, op.Value = history.OpWrite, datum(f[2])
					case "a":
						op.Kind, op.Value = history.OpAppend, datum(f[2])
					case "rl":
						op.Kind = history.OpListRead
						op.List = []history.Datum{}
						for _, v := range f[2:] {
							op.List = append(op.List, datum(v))
						}
					default:
						d.Fatalf(t, "op %q", line)
					}
					x.Ops = append(x.Ops, op)
				}
				return render(on.Observe(x))
			case "advance":
				dur, err := time.ParseDuration(d.CmdArgs[0].Key)
				if err != nil {
					d.Fatalf(t, "%v", err)
				}
				now = now.Add(dur)
				return render(on.Advance(now))
			case "flush":
				return render(on.Flush())
			case "stats":
				st := on.Stats()
				return fmt.Sprintf("observed=%d settled=%d pending=%d in-memory=%d versions=%d violations=%d flips=%d late=%d dropped=%d duplicates=%d",
					st.Observed, st.Settled, st.Pending, st.InMemory, st.Versions, st.Violations, st.Flips, st.Late, st.Dropped, st.Duplicates)
			}
			d.Fatalf(t, "unknown command %q", d.Cmd)
			return ""
		})
	})
}

func parseTS(t *testing.T, s string) history.Timestamp {
	p, l, _ := strings.Cut(s, ".")
	pi, err := strconv.ParseInt(p, 10, 64)
	if err != nil {
		t.Fatalf("timestamp %q", s)
	}
	var li int64
	if l != "" {
		li, _ = strconv.ParseInt(l, 10, 64)
	}
	return history.Timestamp{Physical: pi, Logical: li}
}
