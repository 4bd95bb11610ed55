package histtest_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

func TestParseExample(t *testing.T) {
	t.Parallel()
	h := histtest.MustParse(`
		init 0
		init y=7
		s1: T1 w(x,1) w(y,1) c @[1,5] ts[1,4.2]
		s2: T2 r(x,1)<-T1 r(y,0) c; T3 a(z,2)@[6,7] r(z,[1,2])! abort
		T4 ins("my key",v) del(x) info
		5: r(x,nil)<-none r(y,7)<-init ?
	`)
	if got, want := len(h.Txns), 5; got != want {
		t.Fatalf("len(Txns) = %d, want %d", got, want)
	}
	names := []string{}
	for id := range h.All() {
		names = append(names, h.Name(id))
	}
	// The last has no id, so it is named by its dense id (4).
	if diff := cmp.Diff([]string{"T1", "T2", "T3", "T4", "T4"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	t1, t2, t3, t4, t5 := h.Txn(0), h.Txn(1), h.Txn(2), h.Txn(3), h.Txn(4)
	if !t1.HasTime || t1.Time != (history.Interval{Begin: 1, End: 5}) || !t1.HasTimestamps || t1.Commit != (history.Timestamp{Physical: 4, Logical: 2}) {
		t.Errorf("T1 time %v %v, timestamps %v %v", t1.HasTime, t1.Time, t1.Start, t1.Commit)
	}
	if h.Sessions[t2.Session].Source != history.Str("s2") || t3.Session != t2.Session || t4.Session != t2.Session {
		t.Errorf("sessions: T2 %d, T3 %d, T4 %d", t2.Session, t3.Session, t4.Session)
	}
	if h.Sessions[t5.Session].Source != history.Int(5) {
		t.Errorf("T5 session = %v, want 5", h.Sessions[t5.Session].Source)
	}
	if r := t2.Ops[0]; r.Src != (history.Src{Kind: history.SrcTxn, Txn: 0, Op: 0}) {
		t.Errorf("T2 read source = %+v", r.Src)
	}
	if t3.Outcome != history.OutcomeAborted || t4.Outcome != history.OutcomeUnknown || t5.Outcome != history.OutcomeUnknown {
		t.Errorf("outcomes %v %v %v", t3.Outcome, t4.Outcome, t5.Outcome)
	}
	if l := t3.Ops[1]; l.Kind != history.OpListRead || !l.Failed() || len(h.List(l)) != 2 || h.Value(h.List(l)[1]) != history.Int(2) {
		t.Errorf("T3 list read = %+v", l)
	}
	if t3.OpTimes == nil || t3.OpTimes[0] != (history.Interval{Begin: 6, End: 7}) {
		t.Errorf("T3 op times = %v", t3.OpTimes)
	}
	if k := t4.Ops[0].Key; h.Key(k) != history.Str("my key") || h.Value(t4.Ops[0].Value) != history.Str("v") || t4.Ops[1].Kind != history.OpDelete {
		t.Errorf("T4 ops = %+v", t4.Ops)
	}
	if t5.Ops[0].Src.Kind != history.SrcNone || t5.Ops[1].Src.Kind != history.SrcInit || t5.Ops[0].Value != history.Nil {
		t.Errorf("T5 ops = %+v", t5.Ops)
	}
	x := t1.Ops[0].Key
	if h.Value(h.InitialValue(x)) != history.Int(0) || h.Value(h.InitialValue(t1.Ops[1].Key)) != history.Int(7) {
		t.Errorf("initial values: x %v, y %v", h.Value(h.InitialValue(x)), h.Value(h.InitialValue(t1.Ops[1].Key)))
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src, want string
	}{
		{"unknown op", "T1 q(x,1)", "1:4: unknown operation"},
		{"bad char", "T1 w(x,1) $", "1:11: unexpected character"},
		{"unclosed", "T1 w(x,1", "expected \")\""},
		{"dup id", "T1 w(x,1)\nT1 w(x,2)", "2:1: duplicate transaction id"},
		{"unknown source", "T1 r(x,1)<-T9", "no transaction with this id"},
		{"source writes other key", "T1 w(y,1); T2 r(x,1)<-T1", "writes no such key"},
		{"bang first", "T1 ! w(x,1)", "must follow an operation"},
		{"bad interval", "T1 w(x,1) c @[5,1]", "ends before it begins"},
		{"junk after outcome", "T1 w(x,1) c ]", "expected an operation"},
		{"unterminated string", `T1 w("x,1)`, "unterminated string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := histtest.Parse(tt.src)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse(%q) = %v, want an error containing %q", tt.src, err, tt.want)
			}
		})
	}
}

func TestFormatRoundTrip(t *testing.T) {
	t.Parallel()
	opts := []histtest.GenOptions{
		{},
		{Concurrency: 3, AbortRatio: 0.2, UnknownRatio: 0.2, Intervals: true, Timestamps: true, Perturb: 0.2},
		{ListAppend: true, Concurrency: 2, DupRatio: 0.1, Perturb: 0.3},
	}
	for i, o := range opts {
		histtest.Seeds(t, 10, func(t *testing.T, seed uint64) {
			h := histtest.GenT(t, seed, o)
			text := histtest.Format(h)
			h2, err := histtest.Parse(text)
			if err != nil {
				t.Fatalf("options %d: Parse(Format(h)) = %v", i, err)
			}
			if text2 := histtest.Format(h2); text2 != text {
				t.Errorf("options %d: Format(Parse(Format(h))) differs:\n%s", i, cmp.Diff(text, text2))
			}
		})
	}
	h := histtest.MustParse(`init x=0; s: A r(x,0)<-init r(y,nil)<-none w(y,"a b")! w(y,2) r(y,2)<-A c; B r(y,2)<-A c`)
	if got := histtest.Format(histtest.MustParse(histtest.Format(h))); got != histtest.Format(h) {
		t.Errorf("round trip changed:\n%s\nvs\n%s", histtest.Format(h), got)
	}
}

func TestGenDeterministicAndValidWhenUnperturbed(t *testing.T) {
	t.Parallel()
	o := histtest.GenOptions{Txns: 200, Concurrency: 1, AbortRatio: 0.1}
	if a, b := histtest.Format(histtest.Gen(42, o)), histtest.Format(histtest.Gen(42, o)); a != b {
		t.Fatalf("Gen(42) differs between calls")
	}
	// In a serial, unperturbed register history, every committed read sees the last
	// committed write before it (or nil).
	histtest.Seeds(t, 5, func(t *testing.T, seed uint64) {
		h := histtest.GenT(t, seed, o)
		last := map[history.Key]history.Value{}
		for _, tx := range h.All() {
			own := map[history.Key]history.Value{}
			for _, op := range tx.Ops {
				switch op.Kind {
				case history.OpWrite:
					own[op.Key] = op.Value
				case history.OpRead:
					want, ok := own[op.Key]
					if !ok {
						want = last[op.Key]
					}
					if op.Value != want {
						t.Errorf("%s read %v=%v, want %v", h.Name(tx.ID), h.Key(op.Key), h.Value(op.Value), h.Value(want))
					}
				}
			}
			if tx.Committed() {
				for k, v := range own {
					last[k] = v
				}
			}
		}
	})
}

func TestRunDirNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := writeFile(dir+"/"+name, text); err != nil {
			t.Fatal(err)
		}
	}
	write("clean-pass.txt", "T1 w(x,1) c\n")
	write("g1a-fail.txt", "# want: G1a\nT1 w(x,1) abort\nT2 r(x,1) c\n")
	write("other-fail.edn", "ignored without a loader")
	var seen []string
	histtest.RunDir(t, os.DirFS(dir), func(t *testing.T, h *history.History) *report.Report {
		seen = append(seen, t.Name())
		if len(h.Txns) == 1 {
			return &report.Report{Verdict: report.Pass}
		}
		return &report.Report{Verdict: report.Fail, Anomalies: []report.Anomaly{{Kind: 2}}}
	})
	if diff := cmp.Diff([]string{"TestRunDirNames/clean", "TestRunDirNames/g1a"}, seen); diff != "" {
		t.Errorf("subtests (-want +got):\n%s", diff)
	}
}

func ExampleParse() {
	h := histtest.MustParse("s1: T1 w(x,1) c; s2: T2 r(x,1) a(l,5) r(l,[5]) abort")
	for id, tx := range h.All() {
		fmt.Println(h.Name(id), tx.Outcome, len(tx.Ops))
	}
	fmt.Print(histtest.Format(h))
	// Output:
	// T1 committed 1
	// T2 aborted 3
	// s1: T1 w(x,1) c
	// s2: T2 r(x,1) a(l,5) r(l,[5]) abort
}

func TestShrink(t *testing.T) {
	t.Parallel()
	h := histtest.MustParse(`
		s1: T1 w(x,1) w(y,1) c; T2 r(y,1) w(z,3) c
		s2: T3 r(x,1)<-T1 w(x,2) c; T4 r(z,3) abort
		s3: T5 r(x,2) r(q,7) c
	`)
	// Fails while some committed read of x names its writer explicitly.
	fails := func(h *history.History) bool {
		for _, tx := range h.All() {
			for _, o := range tx.Ops {
				if tx.Committed() && o.Kind == history.OpRead && o.Src.Kind == history.SrcTxn && h.Key(o.Key) == history.Str("x") {
					return true
				}
			}
		}
		return false
	}
	got := histtest.Format(histtest.Shrink(h, fails))
	want := "s1: T1 w(x,1) c\ns2: T3 r(x,1)<-T1 c\n"
	if got != want {
		t.Errorf("Shrink = \n%s\nwant\n%s", got, want)
	}
}

func ExampleShrink() {
	// Pretend the checker fails whenever some transaction aborted.
	aborted := func(h *history.History) bool {
		for _, t := range h.All() {
			if t.Outcome == history.OutcomeAborted {
				return true
			}
		}
		return false
	}
	h := histtest.Gen(3, histtest.GenOptions{Txns: 30, AbortRatio: 0.3})
	fmt.Print(histtest.Format(histtest.Shrink(h, aborted)))
	// Output:
	// 1: T0 abort
}

func TestParsePredicates(t *testing.T) {
	t.Parallel()
	src := `s1: T1 ins(x,3) ins(y,1) c
s2: T2 pr("v > 2", [x=3<-T1]) c
s3: T3 pw(accounts, "v < 2", [y=0], [x=3<-T1]) c
s1: T4 pr("v = 0", [y=0<-T3, z=nil<-init]) c`
	h, err := histtest.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	pr := h.Pred(h.Txn(1).Ops[0])
	if pr.Pred.Expr != "v > 2" || len(pr.Rows) != 1 || !pr.Rows[0].Match || pr.Src(0) != (history.Src{Kind: history.SrcTxn, Txn: 0, Op: 0}) {
		t.Errorf("T2 predicate read = %+v", pr)
	}
	pw := h.Pred(h.Txn(2).Ops[0])
	if pw.Pred.Relation != "accounts" || len(pw.Rows) != 2 || !pw.Rows[0].Match || pw.Rows[1].Match || h.Txn(2).Ops[0].Kind != history.OpPredWrite {
		t.Errorf("T3 predicate write = %+v", pw)
	}
	if p := h.Pred(h.Txn(3).Ops[0]); p.Src(0) != (history.Src{Kind: history.SrcTxn, Txn: 2, Op: 0}) || p.Src(1).Kind != history.SrcInit {
		t.Errorf("T4 rows = %+v, sources %+v", p.Rows, p.Srcs)
	}
	want := `s1: T1 ins(x,3) ins(y,1) c
s2: T2 pr("v > 2",[x=3<-T1]) c
s3: T3 pw("accounts","v < 2",[y=0],[x=3<-T1]) c
s1: T4 pr("v = 0",[y=0<-T3,z=nil<-init]) c
`
	if got := histtest.Format(h); got != want {
		t.Errorf("Format:\n%s\nwant:\n%s", got, want)
	}
	for _, bad := range []string{`T1 pr([x=1])`, `T1 pr("e", [x])`, `T1 pr("e", [x=1<-T9])`, `T1 pr(a, b, c, [x=1])`} {
		if _, err := histtest.Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

func ExampleGen() {
	h := histtest.Gen(7, histtest.GenOptions{Txns: 4, Sessions: 2, Keys: 2, OpsPerTxn: 3, Concurrency: 2, AbortRatio: 0.2, Intervals: true})
	fmt.Print(histtest.Format(h))
	// Output:
	// 0: T0 w(1,1) w(1,2) w(1,3) c @[1,2]
	// 1: T1 w(0,4) r(1,3) w(1,5) c @[4,5]
	// 0: T2 r(1,3) r(0,nil) r(1,3) abort @[3,7]
	// 1: T3 w(0,6) r(0,6) r(0,6) c @[6,8]
}
