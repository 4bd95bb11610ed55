package ser

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/certify"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

var allLevels = []anomaly.Level{anomaly.Serializable, anomaly.StrongSessionSerializable, anomaly.StrictSerializable}

func check(t *testing.T, h *history.History, level anomaly.Level, o Options) *report.Report {
	t.Helper()
	rep, err := Check(context.Background(), h, level, o)
	if err != nil {
		t.Fatalf("Check(%s): %v", level, err)
	}
	return rep
}

func TestExamples(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want map[anomaly.Level]report.Verdict // missing levels: not checked
		kind anomaly.Kind                     // for a failing serializable check
	}{
		{
			name: "veristrong-fig3-duplicate-values-ser",
			src:  "s1: T1 w(x,1)\ns2: T2 w(x,1)\ns2: T3 r(x,1)",
			want: map[anomaly.Level]report.Verdict{anomaly.Serializable: report.Pass, anomaly.StrongSessionSerializable: report.Pass},
		},
		{
			name: "rmw-is-not-a-self-loop",
			src:  "init 0\ns1: T1 r(x,0) w(x,1)\ns2: T2 r(x,1) w(x,2)",
			want: map[anomaly.Level]report.Verdict{anomaly.Serializable: report.Pass, anomaly.StrongSessionSerializable: report.Pass},
		},
		{
			name: "lost-update",
			src:  "init 0\ns1: T1 r(x,0) w(x,1)\ns2: T2 r(x,0) w(x,2)",
			want: map[anomaly.Level]report.Verdict{anomaly.Serializable: report.Fail},
			kind: anomaly.G2Item,
		},
		{
			name: "write-skew",
			src:  "init 0\ns1: T1 r(x,0) r(y,0) w(x,1)\ns2: T2 r(x,0) r(y,0) w(y,1)",
			want: map[anomaly.Level]report.Verdict{anomaly.Serializable: report.Fail},
			kind: anomaly.G2Item,
		},
		{
			name: "read-skew",
			src:  "init 0\ns1: T1 w(x,1) w(y,1)\ns2: T2 r(x,1) r(y,0)",
			want: map[anomaly.Level]report.Verdict{anomaly.Serializable: report.Fail},
			kind: anomaly.GSingle,
		},
		{
			name: "g1c",
			src:  "s1: T1 w(x,1) r(y,1)\ns2: T2 w(y,1) r(x,1)",
			want: map[anomaly.Level]report.Verdict{anomaly.Serializable: report.Fail},
			kind: anomaly.G1c,
		},
		{
			name: "session-order-matters",
			src:  "init 0\ns1: T1 w(x,1)\ns1: T2 r(x,0)",
			want: map[anomaly.Level]report.Verdict{anomaly.Serializable: report.Pass, anomaly.StrongSessionSerializable: report.Fail},
		},
		{
			name: "real-time-matters",
			src:  "init 0\ns1: T1 @[0,10] w(x,1)\ns2: T2 @[20,30] r(x,0)",
			want: map[anomaly.Level]report.Verdict{anomaly.StrongSessionSerializable: report.Pass, anomaly.StrictSerializable: report.Fail},
		},
		{
			name: "unknown-outcome-read-so-committed",
			src:  "init 0\ns1: T1 w(x,1) info\ns2: T2 r(x,1)",
			want: map[anomaly.Level]report.Verdict{anomaly.Serializable: report.Pass},
		},
		{
			name: "aborted-read",
			src:  "init 0\ns1: T1 w(x,1) abort\ns2: T2 r(x,1)",
			want: map[anomaly.Level]report.Verdict{anomaly.Serializable: report.Fail},
		},
		{
			name: "duplicates-need-solver",
			src:  "init 0\ns1: T1 w(x,1) w(y,1)\ns2: T2 w(x,1) w(y,2)\ns3: T3 r(x,1) r(y,1)\ns4: T4 r(x,1) r(y,2)\ns5: T5 w(x,2)\ns5: T6 r(x,1)",
			want: map[anomaly.Level]report.Verdict{anomaly.Serializable: report.Pass},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := histtest.MustParse(tc.src)
			for level, want := range tc.want {
				rep := check(t, h, level, Options{})
				if rep.Verdict != want {
					t.Errorf("Check(%s) = %v, want %v; anomalies %+v", level, rep.Verdict, want, rep.Anomalies)
				}
				if o := oracle(h, level, 0); o != (want == report.Pass) {
					t.Errorf("oracle(%s) = %v, want %v", level, o, want == report.Pass)
				}
				if rep.Verdict == report.Fail && level == anomaly.Serializable && tc.kind != 0 {
					if len(rep.Anomalies) == 0 || rep.Anomalies[0].Kind != tc.kind {
						t.Errorf("Check(%s) anomalies %+v, want kind %v", level, rep.Anomalies, tc.kind)
					}
				}
				if rep.Verdict == report.Fail {
					for _, a := range rep.Anomalies {
						if a.Message == "" {
							t.Errorf("anomaly %v has no message", a.Kind)
						}
						t.Logf("%s: %s: %s", level, a.Kind, a.Message)
						for _, r := range a.RuledOut {
							t.Logf("  ruled out: %s", r)
						}
					}
				}
			}
		})
	}
}

// TestDifferential compares Check with the brute-force oracle on random small histories
// with duplicate values, aborted and unknown-outcome transactions, for the three levels.
func TestDifferential(t *testing.T) {
	n := 15000
	if testing.Short() {
		n = 700
	}
	disagree := 0
	for seed := uint64(1); seed <= uint64(n); seed++ {
		o := histtest.GenOptions{
			Txns:         3 + int(seed%6),
			Sessions:     2 + int(seed%3),
			Keys:         1 + int(seed%3),
			OpsPerTxn:    1 + int(seed%4),
			Concurrency:  1 + int(seed%3),
			DupRatio:     []float64{0, 0.3, 0.7}[seed%3],
			AbortRatio:   []float64{0, 0.15}[seed%2],
			UnknownRatio: []float64{0, 0.2, 0.1}[(seed/2)%3],
			Perturb:      []float64{0, 0.2, 0.5}[(seed/3)%3],
			// Every fifth history has no client time: plain serializability then tries the
			// session level first (passBySession), which must not change a verdict.
			Intervals:  seed%5 != 4,
			ListAppend: seed%4 == 1,
		}
		if o.ListAppend {
			o.DupRatio = 0 // appended elements are unique in list-append histories (Elle)
		}
		h := histtest.Gen(seed, o)
		for _, level := range allLevels {
			if level.Info().Realtime && !o.Intervals {
				continue
			}
			for _, skip := range []bool{true, false} {
				rep, err := Check(context.Background(), h, level, Options{Shortcuts: skipIf(skip, certify.SkipBasic)})
				if err != nil {
					t.Fatalf("seed %d: Check(%s): %v", seed, level, err)
				}
				want := oracle(h, level, 0)
				if got := rep.Verdict == report.Pass; got != want || rep.Verdict == report.Unknown {
					disagree++
					if disagree <= 5 {
						var msgs []string
						for _, a := range rep.Anomalies {
							msgs = append(msgs, a.Kind.String()+": "+a.Message)
						}
						t.Errorf("seed %d, %s, skipBasic=%v: Check = %v, oracle serializable = %v\n%s\n%s", seed, level, skip, rep.Verdict, want, histtest.Format(h), strings.Join(msgs, "\n"))
					}
				}
			}
		}
	}
	if disagree > 0 {
		t.Errorf("%d disagreements", disagree)
	}
}

// randomHistory builds an arbitrary (mostly invalid) small history: random ops over a tiny
// value domain (many duplicates), random outcomes, random intervals, and sometimes explicit
// read sources.
func randomHistory(seed uint64) *history.History {
	r := rand.New(rand.NewPCG(seed, 99))
	b := history.NewBuilder()
	b.SetInitial(b.IntValue(0))
	nk := 1 + r.IntN(3)
	keys := make([]history.Key, nk)
	for i := range keys {
		keys[i] = b.IntKey(int64(i))
	}
	ns := 1 + r.IntN(3)
	sess := make([]history.SessionID, ns)
	for i := range sess {
		sess[i] = b.Session(history.Int(int64(i)))
	}
	nt := 2 + r.IntN(6)
	type wr struct {
		t  history.TxnID
		op int32
		k  history.Key
	}
	var writes []wr
	clock := make([]int64, ns)
	for i := range nt {
		s := r.IntN(ns)
		out := history.OutcomeCommitted
		switch r.IntN(8) {
		case 0:
			out = history.OutcomeAborted
		case 1:
			out = history.OutcomeUnknown
		}
		t := b.BeginTxn(sess[s], history.Int(int64(i+1)), out)
		begin := clock[s] + int64(r.IntN(5))
		end := begin + int64(r.IntN(6))
		clock[s] = end + 1
		b.Current().Time = history.Interval{Begin: begin, End: end}
		b.Current().HasTime = true
		for j := range 1 + r.IntN(4) {
			k := keys[r.IntN(nk)]
			v := b.IntValue(int64(r.IntN(3)))
			if r.IntN(2) == 0 {
				writes = append(writes, wr{t, int32(j), k})
				b.Write(k, v)
				continue
			}
			if r.IntN(4) == 0 && len(writes) > 0 {
				w := writes[r.IntN(len(writes))]
				if w.k == k && w.t != t {
					b.ReadFrom(k, v, history.Src{Kind: history.SrcTxn, Txn: w.t, Op: w.op})
					continue
				}
			}
			b.Read(k, v)
		}
		b.EndTxn()
	}
	h, err := b.Build()
	if err != nil {
		panic(err)
	}
	return h
}

func TestDifferentialRandom(t *testing.T) {
	n := 5000
	if testing.Short() {
		n = 500
	}
	disagree := 0
	counts := map[report.Verdict]int{}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		h := randomHistory(seed)
		for li, level := range allLevels {
			rep, err := Check(context.Background(), h, level, Options{Shortcuts: skipIf((seed+uint64(li))%2 == 0, certify.SkipBasic)})
			if err != nil {
				t.Fatalf("seed %d: Check(%s): %v", seed, level, err)
			}
			counts[rep.Verdict]++
			want := oracle(h, level, 0)
			if got := rep.Verdict == report.Pass; got != want || rep.Verdict == report.Unknown {
				disagree++
				if disagree <= 5 {
					var msgs []string
					for _, a := range rep.Anomalies {
						msgs = append(msgs, a.Kind.String()+": "+a.Message)
					}
					t.Errorf("seed %d, %s: Check = %v, oracle serializable = %v\n%s\n%s", seed, level, rep.Verdict, want, histtest.Format(h), strings.Join(msgs, "\n"))
				}
			}
		}
	}
	t.Logf("verdicts: %v", counts)
	if disagree > 0 {
		t.Errorf("%d disagreements", disagree)
	}
}

// TestCancel: a cancelled or timed-out check ends with Verdict Unknown and the cause, never
// a verdict.
func TestCancel(t *testing.T) {
	h := histtest.Gen(7, histtest.GenOptions{Txns: 400, Sessions: 8, Keys: 6, Concurrency: 4, DupRatio: 0.5})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, level := range allLevels[:2] {
		rep, err := Check(ctx, h, level, Options{})
		if err == nil || rep == nil || rep.Verdict != report.Unknown {
			t.Fatalf("Check(cancelled, %s) = %v, %v; want Unknown and an error", level, rep, err)
		}
		if rep.Stats.Txns != 400 {
			t.Errorf("stats so far missing: %+v", rep.Stats)
		}
	}
}

// TestFixtures runs testdata/histories/ser/<level>/*.txt: the name says the verdict, a
// "# want:" line the anomaly kinds.
func TestFixtures(t *testing.T) {
	for _, level := range allLevels {
		t.Run(level.String(), func(t *testing.T) {
			dir := os.DirFS(filepath.Join("..", "..", "..", "testdata", "histories", "ser", level.String()))
			histtest.RunDir(t, dir, func(t *testing.T, h *history.History) *report.Report {
				rep := check(t, h, level, Options{})
				for _, a := range rep.Anomalies {
					rep.Anomalies = append(rep.Anomalies, report.Anomaly{Kind: a.Kind})
					for _, k := range a.Also {
						rep.Anomalies = append(rep.Anomalies, report.Anomaly{Kind: k})
					}
				}
				return rep
			})
		})
	}
}

// TestPassBySession: without client time, plain serializability passes through the session
// level when that holds, and falls back to its own pipeline when only session order is
// violated.
func TestPassBySession(t *testing.T) {
	const note = "passed by passing strong-session-serializable"
	for _, tt := range []struct {
		src      string
		o        Options
		viaNote  bool
		wantPass bool
	}{
		{"init 0\ns1: T1 w(x,1) c\ns1: T2 r(x,1) w(y,1) c\ns2: T3 r(y,1) c", Options{}, true, true},
		// T2 follows T1 in its session yet read the initial x: a session violation, but
		// T2, T1 is a serial order.
		{"init 0\ns1: T1 w(x,1) c\ns1: T2 r(x,0) c", Options{}, false, true},
		{"init 0\ns1: T1 w(x,1) c\ns1: T2 r(x,1) w(y,1) c\ns2: T3 r(y,1) c", Options{Shortcuts: certify.SkipShortcuts}, false, true},
		// A write skew fails both levels.
		{"init 0\ns1: T1 r(x,0) w(y,1) c\ns2: T2 r(y,0) w(x,1) c\ns2: T3 r(x,1) c", Options{}, false, false},
	} {
		rep := check(t, histtest.MustParse(tt.src), anomaly.Serializable, tt.o)
		if got := rep.Verdict == report.Pass; got != tt.wantPass || rep.Verdict == report.Unknown {
			t.Errorf("%q: verdict %s, want pass=%v", tt.src, rep.Verdict, tt.wantPass)
		}
		if got := slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, note) }); got != tt.viaNote {
			t.Errorf("%q: passed through the session level = %v, want %v (notes %q)", tt.src, got, tt.viaNote, rep.Notes)
		}
		if rep.Level != anomaly.Serializable {
			t.Errorf("%q: report level %s", tt.src, rep.Level)
		}
	}
}

// skipIf returns s when skip, and no skip otherwise.
func skipIf(skip bool, s certify.Skip) certify.Skip {
	if skip {
		return s
	}
	return 0
}
