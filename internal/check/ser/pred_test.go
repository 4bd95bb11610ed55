package ser

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/certify"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// Vbox's running example (Fig. 1): T2 updates x and y together; T4's predicate read
// "v = 2" sees x at 2 but not y. The cycle the paper draws is T2 -wr-> T4 -rw(θ on y)-> T2.
const vboxFig1 = `
s1: T1 ins(x,1) ins(y,1)
s2: T2 w(x,2) w(y,2)
s3: T3 pw("v = 2", [x=3, y=3])
s4: T4 pr("v = 2", [x=2])
`

func TestVboxFigure1(t *testing.T) {
	variants := []struct {
		name, src string
		want      report.Verdict
	}{
		{"fig1", vboxFig1, report.Fail},
		// T3's update evaluated false on both rows (it ran before T2, or saw T1's versions).
		{"fig1-update-matched-nothing", strings.Replace(vboxFig1, `pw("v = 2", [x=3, y=3])`, `pw("v = 2", [])`, 1), report.Fail},
		// The same history without T4's predicate read is serializable (T1, T2, T3).
		{"fig1-without-predicate-read", strings.Replace(vboxFig1, `s4: T4 pr("v = 2", [x=2])`, ``, 1), report.Pass},
		// T4 seeing both rows at 2 is serializable (T1, T2, T4, T3).
		{"fig1-consistent-read", strings.Replace(vboxFig1, `pr("v = 2", [x=2])`, `pr("v = 2", [x=2, y=2])`, 1), report.Pass},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			h := histtest.MustParse(v.src)
			for _, level := range allLevels[:2] {
				rep := check(t, h, level, Options{})
				if rep.Verdict != v.want {
					t.Fatalf("%s: verdict %s, want %s\n%v", level, rep.Verdict, v.want, rep.Anomalies)
				}
				if o := oracle(h, level, 0); o != (v.want == report.Pass) {
					t.Fatalf("%s: oracle says %v", level, o)
				}
				if v.want == report.Pass {
					continue
				}
				a := rep.Anomalies[0]
				if !slices.Contains(a.Also, anomaly.Phantom) {
					t.Errorf("anomaly %s (also %v) is not named a phantom", a.Kind, a.Also)
				}
				pred := false
				for _, s := range a.Cycle {
					if s.Pred == "v = 2" && s.Rel.Has(report.RW) && h.Key(s.Key).String() == "y" {
						pred = true
					}
				}
				if !pred {
					t.Errorf("cycle has no predicate anti-dependency on y: %s", a.Message)
				}
			}
		})
	}
	// The cycle the paper draws, in the first variant: T2 -wr-> T4 -rw(θ, y)-> T2.
	h := histtest.MustParse(vboxFig1)
	rep := check(t, h, anomaly.Serializable, Options{})
	a := rep.Anomalies[0]
	if a.Kind != anomaly.GSingle || len(a.Cycle) != 2 {
		t.Errorf("anomaly %s with %d steps, want a 2-step G-single: %s", a.Kind, len(a.Cycle), a.Message)
	}
	var whys []string
	for _, s := range a.Cycle {
		whys = append(whys, s.Why)
	}
	if w := strings.Join(whys, "; "); !strings.Contains(w, `T4's predicate read "v = 2" did not return row y`) {
		t.Errorf("the cycle does not say which row the predicate missed: %s", w)
	}
}

// A phantom: two transactions each read an empty range and insert into it.
func TestPredicateWriteSkew(t *testing.T) {
	src := `
s1: T1 pr("v in [0, 9]", []) ins(a,1)
s2: T2 pr("v in [0, 9]", []) ins(b,2)
`
	h := histtest.MustParse(src)
	rep := check(t, h, anomaly.Serializable, Options{})
	if rep.Verdict != report.Fail {
		t.Fatalf("verdict %s, want fail", rep.Verdict)
	}
	if a := rep.Anomalies[0]; a.Kind != anomaly.G2 || !slices.Contains(a.Also, anomaly.Phantom) {
		t.Errorf("anomaly %s (also %v), want G2, a phantom: %s", a.Kind, a.Also, a.Message)
	}
	// Serial: the second sees the first's insert.
	h = histtest.MustParse(`
s1: T1 pr("v in [0, 9]", []) ins(a,1)
s2: T2 pr("v in [0, 9]", [a=1]) ins(b,2)
`)
	if rep := check(t, h, anomaly.Serializable, Options{}); rep.Verdict != report.Pass {
		t.Fatalf("serial phantom-free history: verdict %s: %v", rep.Verdict, rep.Anomalies)
	}
}

// Partial row images: a predicate on a column the update did not set cannot always be
// decided; the checker must then not claim a pass.
func TestPredicatePartialImages(t *testing.T) {
	src := `
s1: T1 w(x,"v1=1,v2=5")
s2: T2 w(x,"v2=7")
s3: T3 w(x,"v1=9")
s4: T4 pr("v1 = 1", [])
`
	h := histtest.MustParse(src)
	rep := check(t, h, anomaly.Serializable, Options{})
	if rep.Verdict == report.Pass {
		t.Fatalf("a pass needs T2's v1, which depends on the order: %v", rep.Notes)
	}
}

// TestPredicateOracle compares the checker with the brute-force oracle on random predicate
// histories: small relations, every serial order.
func TestPredicateOracle(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	var pass, fail int
	for seed := range n {
		rng := rand.New(rand.NewPCG(uint64(seed), 99))
		h := histtest.GenPred(rng)
		for _, level := range allLevels {
			rep := check(t, h, level, Options{})
			want := oracle(h, level, 0)
			if rep.Verdict == report.Unknown || (rep.Verdict == report.Pass) != want {
				t.Fatalf("seed %d, %s: checker %s, oracle %v\n%s\n%v", seed, level, rep.Verdict, want, histtest.Format(h), rep.Anomalies)
			}
			if want {
				pass++
			} else {
				fail++
			}
		}
	}
	t.Logf("%d serializable, %d not", pass, fail)
	if pass < n/10 || fail < n/10 {
		t.Errorf("generator is lopsided: %d pass, %d fail", pass, fail)
	}
}

// TestPredicateTimeFirst: on a predicate history with client time, the weaker levels try
// the time certificate before anything else, and when it fails (the history is
// serializable but not strict) the general pipeline still passes it; a phantom still fails.
func TestPredicateTimeFirst(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      report.Verdict
		byTime    bool
	}{
		// T2 sees T1's insert, in real-time order.
		{"strict", "s1: T1 @[1,2] pr(\"v in [0, 9]\", []) ins(a,1)\ns2: T2 @[3,4] pr(\"v in [0, 9]\", [a=1]) ins(b,2)", report.Pass, true},
		// T2 began after T1 ended but did not see its insert: a stale read, serializable
		// (T2 first) but not strict.
		{"stale", "s1: T1 @[1,2] pr(\"v in [0, 9]\", []) ins(a,1)\ns2: T2 @[3,4] pr(\"v in [0, 9]\", []) ins(b,2)", report.Fail, false},
		{"stale, read only", "s1: T1 @[1,2] ins(a,1)\ns2: T2 @[3,4] pr(\"v in [0, 9]\", [])", report.Pass, false},
	} {
		for _, level := range []anomaly.Level{anomaly.Serializable, anomaly.StrongSessionSerializable} {
			h := histtest.MustParse(tc.src)
			rep := check(t, h, level, Options{})
			byTime := slices.ContainsFunc(rep.Notes, func(s string) bool { return strings.Contains(s, "strict-serializable too") })
			if rep.Verdict != tc.want || byTime != tc.byTime {
				t.Errorf("%s at %s: verdict %s (by the time certificate: %v), want %s (%v); notes %q", tc.name, level, rep.Verdict, byTime, tc.want, tc.byTime, rep.Notes)
			}
			if want := oracle(h, level, 0); want != (tc.want == report.Pass) {
				t.Errorf("%s at %s: the oracle says %v", tc.name, level, want)
			}
		}
	}
}

// TestPredBudgetUnknown: beyond the predicate expansion's memory bound the verdict is unknown,
// never a pass, and a history with client time is pointed at the strict level, which decides
// it here.
func TestPredBudgetUnknown(t *testing.T) {
	h := histtest.MustParse(`init 0
s1: T1 w(x,1) w(y,1) c @[1,2]
s2: T2 w(x,2) w(y,2) c @[3,4]
s3: T3 pr("v in [1, 1]", []) r(z,5) c @[5,6]
s4: T4 w(z,5) c @[7,8]
`)
	rep := check(t, h, anomaly.Serializable, Options{Shortcuts: certify.SkipShortcuts, PredWords: 1})
	if rep.Verdict != report.Unknown {
		t.Fatalf("beyond the bound: verdict %v, want unknown", rep.Verdict)
	}
	if !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "--level strict-serializable") }) {
		t.Errorf("no note pointing at the strict level: %q", rep.Notes)
	}
	if rep := check(t, h, anomaly.Serializable, Options{Shortcuts: certify.SkipShortcuts}); rep.Verdict != report.Pass {
		t.Errorf("within the bound: verdict %v, want pass (T1 T2 T4 T3)", rep.Verdict)
	}
	if rep := check(t, h, anomaly.StrictSerializable, Options{PredWords: 1}); rep.Verdict != report.Fail {
		t.Errorf("strict: verdict %v, want fail (T3 read z=5 before T4 wrote it)", rep.Verdict)
	}
}

// Two updates that each left out the row the other changed (the shape memdb's phantom
// fault produces): the witness says the update did not change the row, not that a
// predicate read did not return it.
func TestPredicateUpdateMissWitness(t *testing.T) {
	h := histtest.MustParse(`
s0: T1 ins(a,1) ins(b,1)
s1: T2 pw("v = 1", [a=7])
s2: T3 pw("v = 1", [b=8])
`)
	rep := check(t, h, anomaly.Serializable, Options{})
	if rep.Verdict != report.Fail {
		t.Fatalf("verdict %s, want fail", rep.Verdict)
	}
	var whys []string
	for _, s := range rep.Anomalies[0].Cycle {
		whys = append(whys, s.Why)
	}
	w := strings.Join(whys, "; ")
	if !strings.Contains(w, "update with predicate") || !strings.Contains(w, "did not change row") || strings.Contains(w, "predicate read") {
		t.Errorf("the witness does not say which update left which row unchanged: %s (%s)", w, rep.Anomalies[0].Message)
	}
}

// TestThroughStrict: when the pipeline refuses a predicate history (here by a bound of one
// word on the reads of rows predicates did not return), serializability is decided through
// strict serializability where that passes, and stays Unknown otherwise; never a wrong
// verdict.
func TestThroughStrict(t *testing.T) {
	t.Parallel()
	histtest.ThroughRealtime(t, 3000, 17, anomaly.Serializable, anomaly.StrictSerializable,
		func(h *history.History) *report.Report {
			return check(t, h, anomaly.Serializable, Options{Shortcuts: certify.SkipRows, PredWords: 1})
		},
		func(h *history.History, l anomaly.Level) bool { return oracle(h, l, 0) })
}
