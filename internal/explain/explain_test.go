package explain_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/check/basic"
	"github.com/isovet/isovet/internal/explain"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

var update = flag.Bool("update", false, "update golden files")

// handReports are reports built by hand, as cycle checkers will build them.
func handReports() map[string]*report.Report {
	gsingle := histtest.MustParse(`
		init 0
		s1: T1 w(x,1) w(y,1) c @[1,5]
		s2: T2 r(x,1) r(y,0) c @[2,6]
	`)
	skew := histtest.MustParse(`
		init 0
		a: 11 r(x,0) w(y,1) c ts[1,3]
		b: 12 r(y,0) w(x,1) c ts[2,4]
	`)
	g0 := histtest.MustParse(`
		s1: T1 w(x,1) w(y,1) c @[1,2]
		s1: T2 w(x,2) c @[3,4]
		s2: T3 w(y,2) w(x,3) c @[5,6]
	`)
	key := func(h *history.History, name string) history.Key {
		for k, d := range h.Keys {
			if d.String() == name {
				return history.Key(k)
			}
		}
		panic("no key " + name)
	}
	val := func(h *history.History, i int64) history.Value {
		for v, d := range h.Values.All() {
			if d == history.Int(i) {
				return history.Value(v)
			}
		}
		panic("no value")
	}
	return map[string]*report.Report{
		"gsingle": {
			Level: anomaly.Serializable, Checker: "ser-sat", Verdict: report.Fail, History: gsingle,
			Anomalies: []report.Anomaly{{
				Kind: anomaly.GSingle, Also: []anomaly.Kind{anomaly.ReadSkew}, Txns: []history.TxnID{0, 1}, Key: -1,
				Message: "T2 saw T1's write of x but not its write of y",
				Cycle: []report.Step{
					{From: 0, To: 1, Rel: report.WR, Key: key(gsingle, "x"), Value: val(gsingle, 1)},
					{From: 1, To: 0, Rel: report.RW, Key: key(gsingle, "y"), Value: val(gsingle, 0), Value2: val(gsingle, 1)},
				},
			}},
			Stats: report.Stats{Txns: 2, Committed: 2, Sessions: 2, Keys: 2, Ops: 4},
		},
		"writeskew": {
			Level: anomaly.Serializable, Checker: "ser-sat", Verdict: report.Fail, History: skew,
			Anomalies: []report.Anomaly{{
				Kind: anomaly.G2Item, Also: []anomaly.Kind{anomaly.WriteSkew}, Txns: []history.TxnID{0, 1}, Key: -1,
				Message: "T11 and T12 each read what the other overwrote",
				Cycle: []report.Step{
					{From: 0, To: 1, Rel: report.RW, Key: key(skew, "x"), Value: val(skew, 0), Value2: val(skew, 1)},
					{From: 1, To: 0, Rel: report.RW, Key: key(skew, "y"), Value: val(skew, 0), Value2: val(skew, 1)},
				},
				RuledOut: []string{"T11 before T12: then T12 would have read y=1", "T12 before T11: then T11 would have read x=1"},
			}},
		},
		"g0": {
			Level: anomaly.StrictSerializable, Checker: "ser-sat", Verdict: report.Fail, History: g0,
			Anomalies: []report.Anomaly{{
				Kind: anomaly.G0, Txns: []history.TxnID{0, 1, 2}, Key: -1,
				Cycle: []report.Step{
					{From: 0, To: 1, Rel: report.WW | report.SO | report.RT, Key: key(g0, "x"), Value: val(g0, 1), Value2: val(g0, 2)},
					{From: 1, To: 2, Rel: report.RT, Key: -1},
					{From: 2, To: 0, Rel: report.WW, Key: key(g0, "y"), Value: val(g0, 2), Value2: val(g0, 1), Why: "the final state has y=1, so T1 overwrote T3's y=2"},
				},
			}},
			Notes: []string{"version order of y taken from the final read"},
		},
		"nohistory": {
			Level: anomaly.ReadCommitted, Verdict: report.Fail,
			Anomalies: []report.Anomaly{{
				Kind: anomaly.G1c, Txns: []history.TxnID{3, 4}, Key: -1,
				Cycle: []report.Step{{From: 3, To: 4, Rel: report.SO, Key: -1}, {From: 4, To: 3, Rel: report.TS, Key: -1}},
			}},
		},
		"pass":     {Level: anomaly.Causal, Checker: "basic", Verdict: report.Pass},
		"unproved": unproved(),
	}
}

// basicReports come from the basic checker over fixtures with several findings.
func basicReports(t *testing.T) map[string]*report.Report {
	hists := map[string]string{
		"basic-mixed": `
			init 0
			s1: 101 w(x,1) abort
			s2: 102 r(x,1) r(y,9) c
			s3: 103 r(z,5) c
			s3: 104 w(z,5) c
			s4: 105 a(l,1) a(l,2) c; 106 r(l,[1,2]) c; 107 r(l,[2,1]) c
			s5: 108 w(w,1) r(w,2) w(w,2) c
			s6: 109 w(q,1) w(q,2) c; 110 r(q,1)<-109 c
			s7: 111 r(p,1) info; 112 w(k,1)! c
		`,
		"basic-long": `
			s1: T1 a(l,1) a(l,2) a(l,3) a(l,4) a(l,5) a(l,6) a(l,7) a(l,8) a(l,9) a(l,10) a(m,1) a(m,2) a(m,3) a(m,4) a(m,5) a(m,6) a(m,7) c
			s2: T2 r(l,[1,2,3,4,5,6,7,8,9,10,10]) c
		`,
	}
	reps := map[string]*report.Report{}
	for name, src := range hists {
		h := histtest.MustParse(src)
		rep, err := basic.Run(context.Background(), h, anomaly.StrictSerializable, basic.Options{})
		if err != nil {
			t.Fatal(err)
		}
		reps[name] = rep
	}
	return reps
}

// unproved is a pass that rests on a caveat, finished: Unknown, the caveat's sentence among
// the notes and, in JSON, among the caveats.
func unproved() *report.Report {
	r := &report.Report{Level: anomaly.Serializable, Checker: "ser", Verdict: report.Pass, Notes: []string{"a note"}}
	r.AddCaveat(report.CaveatPartial, "predicate operations could only partly be checked")
	report.Finish(r)
	return r
}

// goldenPage is what the golden pages say about where their reports came from.
var goldenPage = explain.HTMLOptions{
	File: "history.txt", Format: "histtest", Bytes: 1234, Version: "v0.0.0-golden",
	Date: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
}

func TestGolden(t *testing.T) {
	t.Parallel()
	reps := handReports()
	for name, r := range basicReports(t) {
		reps[name] = r
	}
	renderers := []struct {
		ext    string
		render func(*bytes.Buffer, *report.Report) error
	}{
		{"txt", func(b *bytes.Buffer, r *report.Report) error { return explain.Text(b, r) }},
		{"dot", func(b *bytes.Buffer, r *report.Report) error { return explain.DOT(b, r) }},
		{"json", func(b *bytes.Buffer, r *report.Report) error { return explain.JSON(b, r) }},
		{"html", func(b *bytes.Buffer, r *report.Report) error { return explain.HTMLWith(b, r, goldenPage) }},
	}
	for name, r := range reps {
		for _, rd := range renderers {
			t.Run(name+"."+rd.ext, func(t *testing.T) {
				var b bytes.Buffer
				if err := rd.render(&b, r); err != nil {
					t.Fatal(err)
				}
				// Byte-stable: a second render is identical.
				var b2 bytes.Buffer
				if err := rd.render(&b2, r); err != nil || !bytes.Equal(b.Bytes(), b2.Bytes()) {
					t.Errorf("second render differs (err %v)", err)
				}
				if rd.ext == "json" && !json.Valid(b.Bytes()) {
					t.Errorf("invalid JSON:\n%s", b.String())
				}
				if rd.ext == "html" {
					checkHTML(t, b.Bytes(), len(r.Anomalies))
				}
				golden := filepath.Join("testdata", name+"."+rd.ext)
				if *update {
					if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run with -update to create)", err)
				}
				if diff := cmp.Diff(string(want), b.String()); diff != "" {
					t.Errorf("%s (-want +got):\n%s", golden, diff)
				}
			})
		}
	}
}

func TestExplainData(t *testing.T) {
	t.Parallel()
	r := handReports()["gsingle"]
	e := explain.Explain(r.History, r.Anomalies[0])
	if !e.Cycle || len(e.Steps) != 2 || len(e.Txns) != 2 {
		t.Fatalf("Explain = %+v", e)
	}
	want := []string{
		"T1 < T2, because T2 read x=1, which T1 wrote",
		"However, T2 < T1, because T2 read y=0, which T1 overwrote with y=1: a contradiction!",
	}
	got := []string{e.Steps[0].Sentence, e.Steps[1].Sentence}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sentences (-want +got):\n%s", diff)
	}
	if e.Contradiction != want[1] {
		t.Errorf("Contradiction = %q", e.Contradiction)
	}
	if got, want := e.Txns[1].Ops, []string{"r(x,1)", "r(y,0)"}; !cmp.Equal(got, want) {
		t.Errorf("T2 ops = %q, want %q", got, want)
	}
}

func TestDOTAnomaly(t *testing.T) {
	t.Parallel()
	r := handReports()["gsingle"]
	var b strings.Builder
	if err := explain.DOTAnomaly(&b, r.History, r.Anomalies[0]); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"digraph isovet {", `t0 -> t1 [label="wr x"`, `t1 -> t0 [label="rw y"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("DOTAnomaly output lacks %q:\n%s", want, b.String())
		}
	}
}

func TestOpElision(t *testing.T) {
	t.Parallel()
	src := "T1"
	for i := range 20 {
		src += " w(k" + string(rune('a'+i)) + ",1)"
	}
	src += " w(x,1) c; T2 r(x,1) c"
	h := histtest.MustParse(src)
	var x history.Key
	for k, d := range h.Keys {
		if d == history.Str("x") {
			x = history.Key(k)
		}
	}
	e := explain.Explain(h, report.Anomaly{Kind: anomaly.AbortedRead, Txns: []history.TxnID{0, 1}, Key: x})
	if got := e.Txns[0]; !cmp.Equal(got.Ops, []string{"w(x,1)"}) || got.Elided != 20 {
		t.Errorf("T1 ops %q, elided %d; want [w(x,1)] and 20", got.Ops, got.Elided)
	}
}

func ExampleText() {
	h := histtest.MustParse("s1: T1 w(x,1) abort; s2: T2 r(x,1) c")
	rep, _ := basic.Run(context.Background(), h, anomaly.ReadCommitted, basic.Options{})
	_ = explain.Text(os.Stdout, rep)
	// Output:
	// read-committed, checked by basic: fail (1 anomaly)
	//
	// [1] G1a: aborted read (G1a)
	//     T2 read x=1, which T1 wrote before it aborted.
	//
	//     Let:
	//       T1 = {w(x,1)} (session s1, aborted)
	//       T2 = {r(x,1)} (session s2, committed)
	//
	//     Then:
	//       - T1 < T2, because T2 read x=1, which T1 wrote.
}

func ExampleExplain() {
	h := histtest.MustParse("s1: T1 r(x,1) c; T2 w(x,1) c")
	rep, _ := basic.Run(context.Background(), h, anomaly.Causal, basic.Options{})
	e := explain.Explain(h, rep.Anomalies[0])
	for _, s := range e.Steps {
		fmt.Println(s.Sentence)
	}
	// Output:
	// T1 < T2, because T1 precedes T2 in session s1
	// However, T2 < T1, because T1 read x=1, which T2 wrote: a contradiction!
}

func ExampleDOTAnomaly() {
	h := histtest.MustParse("s1: T1 w(x,1) abort; s2: T2 r(x,1) c")
	rep, _ := basic.Run(context.Background(), h, anomaly.ReadCommitted, basic.Options{})
	_ = explain.DOTAnomaly(os.Stdout, h, rep.Anomalies[0])
	// Output:
	// digraph isovet {
	//   node [shape=box, fontname="monospace"];
	//   edge [fontname="monospace"];
	//   label="G1a: aborted read (G1a)";
	//   t0 [label="T1\nw(x,1)\naborted"];
	//   t1 [label="T2\nr(x,1)\ncommitted"];
	//   t0 -> t1 [label="wr x", color="#C000A5", fontcolor="#C000A5"];
	// }
}

func ExamplePair() {
	h := histtest.MustParse("init 0; s1: T1 r(x,0) c; s2: T2 w(x,5) c")
	x, zero, five := h.Txn(0).Ops[0].Key, h.Txn(0).Ops[0].Value, h.Txn(1).Ops[0].Value
	fmt.Println(explain.Pair(h, report.Step{From: 0, To: 1, Rel: report.RW, Key: x, Value: zero, Value2: five}).Sentence)
	fmt.Println(explain.Pair(h, report.Step{From: 1, To: 0, Rel: report.SO, Key: -1}).Sentence)
	// Output:
	// T1 < T2, because T1 read x=0, which T2 overwrote with x=5
	// T2 < T1, because T2 precedes T1 in session s2
}

// checkHTML parses page as HTML (every element closed, as the renderer writes it) and checks
// that it draws one SVG graph per anomaly that has transactions.
func checkHTML(t *testing.T, page []byte, anomalies int) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(page))
	d.Strict = false
	d.AutoClose = append(xml.HTMLAutoClose, "meta")
	d.Entity = xml.HTMLEntity
	var open []string
	svgs, timelines, sections := 0, 0, 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the page does not parse: %v\n%s", err, page)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			open = append(open, x.Name.Local)
			if x.Name.Local == "svg" {
				switch class(x) {
				case "cycle":
					svgs++
				case "timeline":
					timelines++
				default:
					t.Errorf("an svg of class %q", class(x))
				}
			}
			if x.Name.Local == "section" {
				sections++
			}
		case xml.EndElement:
			if len(open) == 0 || open[len(open)-1] != x.Name.Local {
				t.Fatalf("</%s> closes %v\n%s", x.Name.Local, open, page)
			}
			open = open[:len(open)-1]
		}
	}
	if len(open) != 0 {
		t.Errorf("elements left open: %v", open)
	}
	if sections != anomalies || svgs > anomalies || timelines > anomalies {
		t.Errorf("%d anomaly sections, %d graphs and %d timelines for %d anomalies", sections, svgs, timelines, anomalies)
	}
}

// class is the class attribute of element x.
func class(x xml.StartElement) string {
	for _, a := range x.Attr {
		if a.Name.Local == "class" {
			return a.Value
		}
	}
	return ""
}

// TestHTMLEscapesAndDraws: names from the history are escaped, and a cycle of three
// transactions is drawn as three boxes and three arrows, one per step.
func TestHTMLEscapesAndDraws(t *testing.T) {
	h := histtest.MustParse(`
		init 0
		s1: T1 w("<b>x</b>",1) c
		s2: T2 r("<b>x</b>",1) w(y,2) c
		s3: T3 r(y,2) w(z,3) r("<b>x</b>",0) c
	`)
	rep, err := basic.Run(context.Background(), h, anomaly.Serializable, basic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := func(name string) history.Key {
		for k, d := range h.Keys {
			if d.String() == name {
				return history.Key(k)
			}
		}
		t.Fatalf("no key %s", name)
		return 0
	}
	rep.Verdict = report.Fail
	rep.Anomalies = []report.Anomaly{{
		Kind: anomaly.GSingle, Txns: []history.TxnID{0, 1, 2}, Key: -1,
		Cycle: []report.Step{
			{From: 0, To: 1, Rel: report.WR, Key: x("<b>x</b>")},
			{From: 1, To: 2, Rel: report.WR, Key: x("y")},
			{From: 2, To: 0, Rel: report.RW, Key: x("<b>x</b>")},
		},
		Message: "T3 read <b>x</b>=0, which T1 overwrote",
	}}
	var b bytes.Buffer
	if err := explain.HTML(&b, rep); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Contains(page, "<b>") {
		t.Errorf("a key reached the page unescaped:\n%s", page)
	}
	if !strings.Contains(page, "&lt;b&gt;x&lt;/b&gt;") {
		t.Errorf("the escaped key is missing:\n%s", page)
	}
	for what, want := range map[string]int{
		`<g class="node">`:   3, // the cycle's transactions
		`<path class="edge"`: 3, // its steps
		`<g class="label">`:  3, // their labels
		`<g class="txn">`:    3, // the timeline's transactions
		`<path class="step"`: 3, // its steps
	} {
		if n := strings.Count(page, what); n != want {
			t.Errorf("%d of %s, want %d", n, what, want)
		}
	}
	checkHTML(t, b.Bytes(), 1)
}

// TestSnapshotTimestamps: a transaction whose timestamps were derived from its snapshot
// shows the snapshot next to them, so a reader sees what the database said.
func TestSnapshotTimestamps(t *testing.T) {
	t.Parallel()
	b := history.NewBuilder()
	x := b.StrKey("x")
	t1 := b.BeginTxn(b.Session(history.Int(1)), history.Int(10), history.OutcomeCommitted)
	b.Write(x, b.IntValue(1))
	t2 := b.BeginTxn(b.Session(history.Int(2)), history.Int(11), history.OutcomeCommitted)
	b.Write(x, b.IntValue(2))
	for _, tid := range []history.TxnID{t1, t2} {
		b.SetSnapshot(tid, history.Snapshot{Xmin: 10, Xmax: 10})
	}
	h, err := b.Build()
	if err != nil || !h.DerivedTimestamps() {
		t.Fatalf("Build: %v, %v", err, h.SnapshotErr)
	}
	e := explain.Explain(h, report.Anomaly{Kind: anomaly.LostUpdate, Key: x, Txns: []history.TxnID{t1, t2}})
	for _, tx := range e.Txns {
		if !strings.HasSuffix(tx.Timestamps, " from snapshot 10:10:") {
			t.Errorf("%s: timestamps %q, want them followed by the snapshot", tx.Name, tx.Timestamps)
		}
	}
}

// TestJSONResults: one document holds every result, each naming its file and format; a
// history that could not be checked is a result with verdict error; an integer key is a
// string, as the history wrote it.
func TestJSONResults(t *testing.T) {
	h := histtest.MustParse(`
		s1: T1 w(7,1) abort
		s2: T2 r(7,1) c
	`)
	rep, err := basic.Run(context.Background(), h, anomaly.Serializable, basic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	err = explain.JSONResults(&b, []explain.Result{
		{File: "a.edn", Format: "elle-edn", Report: rep},
		{File: "b.edn", Level: anomaly.Serializable, Err: fmt.Errorf("unreadable: no such file")},
	})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema  int
		Results []struct {
			File, Format, Level, Verdict, Error string
			Anomalies                           []struct {
				Key   any
				Steps []struct{ Key any }
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if doc.Schema != explain.SchemaVersion || len(doc.Results) != 2 {
		t.Fatalf("schema %d, %d results; want %d, 2:\n%s", doc.Schema, len(doc.Results), explain.SchemaVersion, b.String())
	}
	a, e := doc.Results[0], doc.Results[1]
	if a.File != "a.edn" || a.Format != "elle-edn" || a.Verdict != "fail" || len(a.Anomalies) == 0 || a.Anomalies[0].Key != "7" {
		t.Errorf("first result %+v, want a.edn's failure", a)
	}
	for _, an := range a.Anomalies {
		if k, ok := an.Key.(string); an.Key != nil && (!ok || k != "7") {
			t.Errorf("anomaly key %#v, want the string \"7\"", an.Key)
		}
		for _, s := range an.Steps {
			if s.Key != nil && s.Key != "7" {
				t.Errorf("step key %#v, want the string \"7\"", s.Key)
			}
		}
	}
	if e.File != "b.edn" || e.Verdict != "error" || e.Level != "serializable" || e.Error != "unreadable: no such file" {
		t.Errorf("second result %+v, want b.edn's error at serializable", e)
	}
}
