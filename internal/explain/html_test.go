package explain

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// find returns the key or value of h written name.
func find(t *testing.T, h *history.History, name string) (history.Key, history.Value) {
	t.Helper()
	k, v := history.Key(-1), history.Value(-1)
	for i, d := range h.Keys {
		if d.String() == name {
			k = history.Key(i)
		}
	}
	for i, d := range h.Values.All() {
		if d.String() == name {
			v = history.Value(i)
		}
	}
	return k, v
}

// TestLayoutLabelsClear: however many steps join however few transactions (repeated
// steps, both directions, loops), no label's box overlaps another label's or a
// transaction's, and every label and box lies inside the view box.
func TestLayoutLabelsClear(t *testing.T) {
	for n := 1; n <= 6; n++ {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var e Explanation
			for i := range n {
				e.Txns = append(e.Txns, Txn{ID: history.TxnID(i), Name: fmt.Sprintf("T%d", i+1)})
			}
			rels := []report.Rel{report.WW, report.WR, report.RW, report.SO, report.RT}
			for i := range 3 * n {
				from, to := i%n, (i*7+1)%n
				e.Steps = append(e.Steps, Step{FromID: history.TxnID(from), ToID: history.TxnID(to), Rel: rels[i%len(rels)], Key: fmt.Sprintf("key%d", i%4)})
			}
			g := layout(e)
			if len(g.Nodes) != n || len(g.Edges) != len(e.Steps) {
				t.Fatalf("%d nodes and %d edges for %d transactions and %d steps", len(g.Nodes), len(g.Edges), n, len(e.Steps))
			}
			view := rect{g.X, g.Y, g.W, g.H}
			inside := func(r rect) bool {
				return r.x >= view.x && r.y >= view.y && r.x+r.w <= view.x+view.w && r.y+r.h <= view.y+view.h
			}
			var boxes []rect
			for _, nd := range g.Nodes {
				boxes = append(boxes, rect{nd.X, nd.Y, nd.W, nd.H})
			}
			for i, ed := range g.Edges {
				r := rect{ed.LX - ed.LW/2, ed.LY - ed.LH/2, ed.LW, ed.LH}
				for j, q := range boxes {
					if r.overlaps(q, 0) {
						t.Errorf("label %d (%s) at %+v overlaps box %d at %+v", i, ed.Label, r, j, q)
					}
				}
				if !inside(r) {
					t.Errorf("label %d at %+v outside the view box %+v", i, r, view)
				}
				boxes = append(boxes, r)
			}
		})
	}
}

// TestGraphDrawsOnlyTheCycle: a transaction the anomaly names but no step joins is not
// drawn in the cycle; the timeline, which shows all of them in time, has it.
func TestGraphDrawsOnlyTheCycle(t *testing.T) {
	h := histtest.MustParse(`
		init 0
		s1: T1 r(x,0) w(y,1) c @[1,4]
		s2: T2 r(y,0) w(x,1) c @[2,5]
		s3: T3 r(x,0) c @[3,6]
	`)
	x, zero := find(t, h, "x")
	y, one := find(t, h, "y")
	_, v0 := find(t, h, "0")
	_, v1 := find(t, h, "1")
	_, _ = zero, one
	a := report.Anomaly{Kind: anomaly.G2Item, Txns: []history.TxnID{0, 2, 1}, Key: -1, Cycle: []report.Step{
		{From: 0, To: 1, Rel: report.RW, Key: x, Value: v0, Value2: v1},
		{From: 1, To: 0, Rel: report.RW, Key: y, Value: v0, Value2: v1},
	}}
	e := Explain(h, a)
	g := layout(e)
	var names []string
	for _, n := range g.Nodes {
		names = append(names, n.Name)
	}
	if strings.Join(names, " ") != "T1 T2" {
		t.Errorf("the cycle draws %v, want T1 T2", names)
	}
	tl := layoutTimeline(h, e)
	if len(tl.Boxes) != 3 || len(tl.Rows) != 3 || len(tl.Arrows) != 2 {
		t.Errorf("timeline: %d boxes in %d rows with %d arrows, want 3, 3, 2", len(tl.Boxes), len(tl.Rows), len(tl.Arrows))
	}
	// The ops that make the steps are marked: step 1 is T1's r(x,0) and T2's w(x,1),
	// step 2 T2's r(y,0) and T1's w(y,1); T3's read makes none.
	marked := map[string]string{}
	for _, b := range tl.Boxes {
		for _, l := range b.Lines {
			if l.Steps != "" {
				marked[b.Name+" "+l.Text] = l.Steps
			}
		}
	}
	want := map[string]string{"T1 r(x,0)": "1", "T2 w(x,1)": "1", "T2 r(y,0)": "2", "T1 w(y,1)": "2"}
	if fmt.Sprint(marked) != fmt.Sprint(want) {
		t.Errorf("marked ops %v, want %v", marked, want)
	}
	// Client time orders the ticks: six events, labelled since the history's start.
	if len(tl.Ticks) != 6 || tl.Ticks[0].Label != "+0s" || tl.Axis != axisClient {
		t.Errorf("ticks %+v on axis %q", tl.Ticks, tl.Axis)
	}
	for i := 1; i < len(tl.Ticks); i++ {
		if tl.Ticks[i].X < tl.Ticks[i-1].X+tlMinTick {
			t.Errorf("ticks %d and %d are %.1f apart", i-1, i, tl.Ticks[i].X-tl.Ticks[i-1].X)
		}
	}
}

// TestHTMLHeaderAndExpandingOps: the header says what HTMLOptions give it, and a
// transaction whose operations the explanation elides lists them all in an element that
// expands.
func TestHTMLHeaderAndExpandingOps(t *testing.T) {
	var ops []string
	for i := range 20 {
		ops = append(ops, fmt.Sprintf("w(k%d,%d)", i, i))
	}
	h := histtest.MustParse(`
		init 0
		s1: T1 ` + strings.Join(ops, " ") + ` w(x,1) c
		s2: T2 r(x,0) c
	`)
	x, _ := find(t, h, "x")
	_, v0 := find(t, h, "0")
	_, v1 := find(t, h, "1")
	rep := &report.Report{Level: anomaly.Serializable, Checker: "ser", Verdict: report.Fail, History: h, Anomalies: []report.Anomaly{{
		Kind: anomaly.GSingle, Txns: []history.TxnID{1, 0}, Key: -1,
		Cycle: []report.Step{{From: 1, To: 0, Rel: report.RW, Key: x, Value: v0, Value2: v1}, {From: 0, To: 1, Rel: report.RT, Key: -1}},
	}}}
	var b strings.Builder
	o := HTMLOptions{File: "h.jsonl", Format: "native", Bytes: 1234567, Version: "v1.2.3 (commit abc)", Date: time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("x", 3600)),
		Database: "PostgreSQL 16.4 at 127.0.0.1:5432, REPEATABLE READ", Isolation: "repeatable-read", Workload: "write-skew: 100 transactions", Index: "../index.html"}
	if err := HTMLWith(&b, rep, o); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"<th>history</th><td><code>h.jsonl</code>", "native, 1,234,567 bytes, 2 transactions in 2 sessions",
		"serializable, checked by ser", `class="verdict-fail">fail: 1 anomaly reported`,
		"PostgreSQL 16.4 at 127.0.0.1:5432, REPEATABLE READ", "<th>isolation asked</th><td>repeatable-read",
		"write-skew: 100 transactions", "v1.2.3 (commit abc)", "2026-03-04 04:06:07 UTC", `<a href="../index.html">`,
		"… 20 more (show all 21)</summary>w(k0,0) w(k1,1)", "w(k19,19) w(x,1)</details>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not contain %q", want)
		}
	}
	b.Reset()
	if err := HTML(&b, rep); err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"<th>history</th>", "<th>date</th>", "<th>isovet</th>", "<th>database</th>"} {
		if strings.Contains(b.String(), absent) {
			t.Errorf("a page without options has %s", absent)
		}
	}
}
