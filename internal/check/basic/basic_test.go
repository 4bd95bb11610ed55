package basic_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/check/basic"
	"github.com/isovet/isovet/internal/cputime"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

func run(t testing.TB, h *history.History, level anomaly.Level) *report.Report {
	t.Helper()
	rep, err := basic.Run(context.Background(), h, level, basic.Options{})
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	return rep
}

func TestFixtures(t *testing.T) {
	t.Parallel()
	histtest.RunDir(t, os.DirFS("../../../testdata/histories/basic"), func(t *testing.T, h *history.History) *report.Report {
		// Strict serializability forbids every basic finding.
		return run(t, h, anomaly.StrictSerializable)
	})
}

// finding is an anomaly without its cycle, for comparison.
type finding struct {
	Kind    string
	Txns    []string
	Key     string
	Message string
}

func findings(h *history.History, as []report.Anomaly) []finding {
	var fs []finding
	for _, a := range as {
		f := finding{Kind: a.Kind.String(), Message: a.Message}
		for _, t := range a.Txns {
			f.Txns = append(f.Txns, h.Name(t))
		}
		if a.Key >= 0 {
			f.Key = h.Key(a.Key).String()
		}
		fs = append(fs, f)
	}
	return fs
}

func TestMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		hist string
		want []finding
	}{
		{"internal", "T0 w(x,2); T1 w(x,1) r(x,2)", []finding{{"internal", []string{"T1"}, "x", "T1 read x=2 after writing x=1 itself"}}},
		{"internal list", "T1 a(l,1) a(l,2) r(l,[2,1])", []finding{{"internal", []string{"T1"}, "l", "T1 read l=[2 1] after appending [1 2] itself, but the list does not end with them"}}},
		{"internal later", "T1 r(x,1) w(x,1)", []finding{{"internal", []string{"T1"}, "x", "T1 read x=1 before writing it itself"}}},
		{"g1a", "s1: 101 w(x,1) abort; s2: 102 r(x,1)", []finding{{"G1a", []string{"T101", "T102"}, "x", "T102 read x=1, which only T101 wrote, and it aborted"}}},
		{"g1a duplicates", "s1: A w(x,1) abort; B w(x,1) abort; s2: C r(x,1)", []finding{{"G1a", []string{"A", "C"}, "x", "C read x=1, which was written only by 2 transactions, all of which aborted (the first is A)"}}},
		{"g1a source", "s1: A w(x,1) abort; s2: B r(x,1)<-A; C w(x,1)", []finding{{"G1a", []string{"A", "B"}, "x", "B read x=1 from A (the source names it), which aborted"}}},
		{"g1a list", `s1: A a("k 1",x) abort; s2: B r("k 1",[x])`, []finding{{"G1a", []string{"A", "B"}, "k 1", "B read k 1=[x], whose element x was appended only by A, which aborted"}}},
		{"g1b", "s1: A w(x,1) w(x,2); s2: B r(x,1)", []finding{{"G1b", []string{"A", "B"}, "x", "B read x=1, which A wrote and then overwrote with x=2 in the same transaction"}}},
		{"g1b list", "s1: A a(l,1) a(l,2); s2: B r(l,[1])", []finding{{"G1b", []string{"A", "B"}, "l", "B read l=[1], which ends with 1; A appended 1 and then 2 to l in the same transaction"}}},
		{"thin air", "init 0; T1 r(x,5)", []finding{{"thin-air-read", []string{"T1"}, "x", "T1 read x=5, which no transaction wrote and which is not x's initial value (0)"}}},
		{"thin air list", "T1 a(l,1); T2 r(l,[1,9])", []finding{{"thin-air-read", []string{"T2"}, "l", "T2 read l=[1 9], whose element 9 no transaction appended"}}},
		{"duplicate elements", "T1 a(l,1); T2 r(l,[1,1])", []finding{{"duplicate-elements", []string{"T2"}, "l", "T2 read l=[1 1], which holds 1 more than once"}}},
		// Appended twice, held twice: the history explains it (and is ambiguous, which the
		// notes say); held three times by one transaction's two appends is a duplicate.
		{"appended twice", "T1 a(l,1); T2 a(l,1) r(l,[1,1])", nil},
		{"appended twice in one txn", "T1 a(l,1) a(l,1); T2 r(l,[1,1])", nil},
		{"own earlier of two appends", "T1 a(l,1) r(l,[1]) a(l,1)", nil},
		{"more than appended", "T1 a(l,1) a(l,1); T2 r(l,[1,1,1])", []finding{{"duplicate-elements", []string{"T2"}, "l", "T2 read l=[1 1 1], which holds 1 more than once"}}},
		{"incompatible", "T1 a(l,1); T2 a(l,2); T3 r(l,[1,2]); T4 r(l,[2])", []finding{{"incompatible-order", []string{"T4", "T3"}, "l", "T4 read l=[2] and T3 read l=[1 2]: neither is a prefix of the other (they differ at position 0: 2 vs 1)"}}},
		{"future", "s1: A r(x,1); B w(x,1)", []finding{{"future-read", []string{"A", "B"}, "x", "A read x=1, which B wrote later in the same session s1"}}},
		{"long list", "T1 a(l,1) a(l,2) a(l,3) a(l,4) a(l,5) a(l,6) a(l,7) a(l,8) a(l,9) a(l,10); T2 r(l,[1,2,3,4,5,6,7,8,9,10,10])",
			[]finding{{"duplicate-elements", []string{"T2"}, "l", "T2 read l=[1 2 3 4 ... (3 more) ... 8 9 10 10], which holds 10 more than once"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := histtest.MustParse(tt.hist)
			f, err := basic.Check(context.Background(), h, basic.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, findings(h, f.Anomalies)); diff != "" {
				t.Errorf("Check(%s) findings (-want +got):\n%s", tt.hist, diff)
			}
		})
	}
}

func TestNotes(t *testing.T) {
	t.Parallel()
	h := histtest.MustParse("T1 w(x,1)! r(y,3)! c; T2 w(x,1) c; T3 a(l,1) info; T4 a(l,1) c")
	f, err := basic.Check(context.Background(), h, basic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"1 failed reads were not checked; 1 failed writes were treated as possibly done: their values count as written, and their transactions' later reads of those keys were not checked",
		"1 transactions have an unknown outcome: their writes count as possibly committed, and their own reads were not checked",
		"1 (key, value) pairs were written by more than one transaction (e.g. x=1 by T1 and others); reads of them are ambiguous, and a finding is reported only if every possible writer agrees",
		"1 list elements were appended to the same key by more than one transaction; list reads holding them are ambiguous",
	}
	if diff := cmp.Diff(want, f.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

func TestLevels(t *testing.T) {
	t.Parallel()
	future := histtest.MustParse("s1: A r(x,1); B w(x,1)")
	tests := []struct {
		level anomaly.Level
		want  report.Verdict
	}{
		{anomaly.ReadCommitted, report.Pass},
		{anomaly.Serializable, report.Pass},
		{anomaly.Causal, report.Fail},
		{anomaly.StrongSessionSerializable, report.Fail},
	}
	for _, tt := range tests {
		rep := run(t, future, tt.level)
		if rep.Verdict != tt.want {
			t.Errorf("Run(future read, %v) = %v, want %v", tt.level, rep.Verdict, tt.want)
		}
		if tt.want == report.Pass && (len(rep.Anomalies) != 0 || len(rep.Notes) != 1) {
			t.Errorf("Run(future read, %v) anomalies %v, notes %q; want none and one note", tt.level, rep.Anomalies, rep.Notes)
		}
	}
}

func TestMaxAnomalies(t *testing.T) {
	t.Parallel()
	h := histtest.MustParse("T1 r(x,1) r(x,2) r(x,3) r(y,4)")
	f, err := basic.Check(context.Background(), h, basic.Options{MaxAnomalies: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Anomalies) != 2 || f.Counts[anomaly.ThinAirRead] != 4 {
		t.Errorf("listed %d, counted %d; want 2 and 4", len(f.Anomalies), f.Counts[anomaly.ThinAirRead])
	}
	if want := "4 thin-air read findings; only the first 2 are listed"; len(f.Notes) == 0 || f.Notes[len(f.Notes)-1] != want {
		t.Errorf("notes = %q, want last %q", f.Notes, want)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := fmt.Errorf("stop")
	cancel(cause)
	_, err := basic.Check(ctx, histtest.Gen(1, histtest.GenOptions{}), basic.Options{})
	if err != cause {
		t.Errorf("Check(cancelled) = %v, want %v", err, cause)
	}
}

// TestGeneratedValid: unperturbed executions (serial, or snapshot isolation) with aborts,
// unknown outcomes and list appends have no basic findings.
func TestGeneratedValid(t *testing.T) {
	t.Parallel()
	for _, o := range []histtest.GenOptions{
		{Txns: 300, Keys: 5, AbortRatio: 0.1, UnknownRatio: 0.1},
		{Txns: 300, Keys: 5, Concurrency: 3, AbortRatio: 0.1, UnknownRatio: 0.1},
		{Txns: 300, Keys: 3, Concurrency: 3, ListAppend: true, AbortRatio: 0.1, UnknownRatio: 0.1},
	} {
		histtest.Seeds(t, 10, func(t *testing.T, seed uint64) {
			h := histtest.GenT(t, seed, o)
			f, err := basic.Check(context.Background(), h, basic.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Anomalies) > 0 {
				t.Errorf("options %+v: findings %v", o, findings(h, f.Anomalies))
			}
		})
	}
}

// TestAgainstOracle compares the register checks with a quadratic oracle on perturbed
// histories: for each committed read, the candidates are every write of the same pair.
func TestAgainstOracle(t *testing.T) {
	t.Parallel()
	o := histtest.GenOptions{Txns: 60, Keys: 3, Sessions: 3, Concurrency: 2, AbortRatio: 0.2, UnknownRatio: 0.1, DupRatio: 0.1, Perturb: 0.1}
	histtest.Seeds(t, 200, func(t *testing.T, seed uint64) {
		h := histtest.GenT(t, seed, o)
		f, err := basic.Check(context.Background(), h, basic.Options{MaxAnomalies: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		want := oracle(h)
		got := map[anomaly.Kind]int{}
		for k, n := range f.Counts {
			got[k] = n
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("counts (-oracle +Check):\n%s", diff)
			small := histtest.Shrink(h, func(h *history.History) bool {
				f, err := basic.Check(context.Background(), h, basic.Options{MaxAnomalies: 1 << 20})
				return err == nil && !cmp.Equal(oracle(h), map[anomaly.Kind]int(f.Counts), cmpopts.EquateEmpty())
			})
			t.Logf("shrunk:\n%s", histtest.Format(small))
		}
	})
}

func oracle(h *history.History) map[anomaly.Kind]int {
	got := map[anomaly.Kind]int{}
	type w struct {
		t     *history.Txn
		final bool
	}
	for _, t := range h.All() {
		if !t.Committed() {
			continue
		}
		for j, r := range t.Ops {
			if r.Kind != history.OpRead {
				continue
			}
			own := -1
			for i := range j {
				if t.Ops[i].Kind == history.OpWrite && t.Ops[i].Key == r.Key {
					own = i
				}
			}
			if own >= 0 {
				if t.Ops[own].Value != r.Value {
					got[anomaly.Internal]++
				}
				continue
			}
			var ws []w
			for _, u := range h.All() {
				for i, o := range u.Ops {
					if o.Kind == history.OpWrite && o.Key == r.Key && o.Value == r.Value {
						final := true
						for _, o2 := range u.Ops[i+1:] {
							if o2.Kind == history.OpWrite && o2.Key == r.Key {
								final = false
							}
						}
						ws = append(ws, w{u, final})
					}
				}
			}
			if len(ws) == 0 {
				if r.Value != h.InitialValue(r.Key) {
					got[anomaly.ThinAirRead]++
				}
				continue
			}
			if r.Value == h.InitialValue(r.Key) {
				continue
			}
			writers := map[history.TxnID]bool{}
			allAborted, anyFinal, anyAborted := true, false, false
			for _, x := range ws {
				writers[x.t.ID] = true
				if x.t.Outcome == history.OutcomeAborted {
					anyAborted = true
				} else {
					allAborted = false
					anyFinal = anyFinal || x.final
				}
			}
			if len(writers) == 1 && ws[0].t.ID == t.ID {
				got[anomaly.Internal]++
				continue
			}
			if allAborted {
				got[anomaly.AbortedRead]++
				continue
			}
			if !anyFinal && ws[0].t.ID != t.ID {
				got[anomaly.IntermediateRead]++
			}
			if len(writers) == 1 && !anyAborted && ws[0].t.Session == t.Session && ws[0].t.Seq > t.Seq {
				got[anomaly.FutureRead]++
			}
		}
	}
	return got
}

// BenchmarkBasic runs every basic check over a generated snapshot-isolation history of 8 ops
// per transaction (half reads) over n/10 keys and 50 sessions, with 5% aborts, 2% unknown
// outcomes and a few perturbed reads.
func BenchmarkBasic(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("txns=%d", n), func(b *testing.B) {
			h := histtest.Gen(1, histtest.GenOptions{Txns: n, Sessions: 50, Keys: n / 10, OpsPerTxn: 8, Concurrency: 8, AbortRatio: 0.05, UnknownRatio: 0.02, Perturb: 0.0001})
			ctx := context.Background()
			var cpu int64
			for b.Loop() {
				c0 := int64(cputime.Self())
				if _, err := basic.Check(ctx, h, basic.Options{}); err != nil {
					b.Fatal(err)
				}
				cpu += int64(cputime.Self()) - c0
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "txns/s")
			// CPU time (all threads, GC included) is steadier than wall time on a shared
			// 2-core machine.
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

func ExampleCheck() {
	h := histtest.MustParse(`
		s1: T1 w(x,1) abort
		s2: T2 r(x,1) r(y,7) c
	`)
	f, _ := basic.Check(context.Background(), h, basic.Options{})
	for _, a := range f.Anomalies {
		fmt.Printf("%s: %s\n", a.Kind, a.Message)
	}
	// Output:
	// G1a: T2 read x=1, which only T1 wrote, and it aborted
	// thin-air-read: T2 read y=7, which no transaction wrote and which is not y's initial value (nil)
}

// TestListsAgainstOracle compares the list checks with a quadratic oracle on perturbed
// list-append histories (unique elements).
func TestListsAgainstOracle(t *testing.T) {
	t.Parallel()
	o := histtest.GenOptions{Txns: 40, Keys: 2, Sessions: 3, Concurrency: 2, ListAppend: true, AbortRatio: 0.2, UnknownRatio: 0.1, Perturb: 0.15}
	total := map[anomaly.Kind]int{}
	histtest.Seeds(t, 200, func(t *testing.T, seed uint64) {
		h := histtest.GenT(t, seed, o)
		f, err := basic.Check(context.Background(), h, basic.Options{MaxAnomalies: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		want := listOracle(h)
		for k, n := range want {
			total[k] += n
		}
		if diff := cmp.Diff(want, map[anomaly.Kind]int(f.Counts), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("counts (-oracle +Check):\n%s", diff)
		}
	})
	for _, k := range []anomaly.Kind{anomaly.ThinAirRead, anomaly.AbortedRead, anomaly.IntermediateRead, anomaly.DuplicateElements, anomaly.IncompatibleOrder, anomaly.FutureRead} {
		if total[k] == 0 {
			t.Errorf("the generator never produced %v; the comparison proves little", k)
		}
	}
}

func listOracle(h *history.History) map[anomaly.Kind]int {
	got := map[anomaly.Kind]int{}
	type ref struct {
		t  *history.Txn
		op int
	}
	appends := func(k history.Key, e history.Value) []ref {
		var rs []ref
		for _, u := range h.All() {
			for i, o := range u.Ops {
				if o.Kind == history.OpAppend && o.Key == k && o.Value == e {
					rs = append(rs, ref{u, i})
				}
			}
		}
		return rs
	}
	reads := map[history.Key][][]history.Value{}
	for _, t := range h.All() {
		if !t.Committed() {
			continue
		}
		for j, r := range t.Ops {
			if r.Kind != history.OpListRead {
				continue
			}
			l := h.List(r)
			var own []history.Value
			for _, o := range t.Ops[:j] {
				if o.Kind == history.OpAppend && o.Key == r.Key {
					own = append(own, o.Value)
				}
			}
			// The order check compares what others appended: the list without the
			// reader's own earlier appends.
			reads[r.Key] = append(reads[r.Key], l[:max(len(l)-len(own), 0)])
			if len(own) > 0 && (len(l) < len(own) || !slices.Equal(l[len(l)-len(own):], own)) {
				got[anomaly.Internal]++
			}
			seen := map[history.Value]bool{}
			dup := false
			for _, e := range l {
				dup = dup || seen[e]
				seen[e] = true
			}
			if dup {
				got[anomaly.DuplicateElements]++
			}
			for _, e := range l {
				ws := appends(r.Key, e)
				if len(ws) == 0 {
					got[anomaly.ThinAirRead]++
					continue
				}
				w := ws[0]
				if w.t.ID == t.ID {
					if w.op > j {
						got[anomaly.Internal]++
					}
					continue
				}
				if w.t.Outcome == history.OutcomeAborted {
					got[anomaly.AbortedRead]++
					continue
				}
				if w.t.Session == t.Session && w.t.Seq > t.Seq {
					got[anomaly.FutureRead]++
				}
			}
			if len(l) > 0 {
				if ws := appends(r.Key, l[len(l)-1]); len(ws) == 1 && ws[0].t.ID != t.ID && ws[0].t.Outcome != history.OutcomeAborted {
					for _, o := range ws[0].t.Ops[ws[0].op+1:] {
						if o.Kind == history.OpAppend && o.Key == r.Key {
							got[anomaly.IntermediateRead]++
							break
						}
					}
				}
			}
		}
	}
	for _, ls := range reads {
		bad := false
		for _, a := range ls {
			for _, b := range ls {
				if len(a) <= len(b) && !slices.Equal(a, b[:len(a)]) {
					bad = true
				}
			}
		}
		if bad {
			got[anomaly.IncompatibleOrder]++
		}
	}
	return got
}
