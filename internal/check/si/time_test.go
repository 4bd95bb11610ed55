package si_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/certify"
	"github.com/isovet/isovet/internal/check/si"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// The real-time rules of strong SI (docs/si.md, "Client time"): a transaction of unknown
// outcome ends at +inf, one without a client interval is unbounded, and a pass with such
// a counted transaction is Unknown.

func TestTimeStrongSI(t *testing.T) {
	t.Parallel()
	const note = "1 transaction has no client interval"
	for _, tc := range []struct {
		name, src string
		want      report.Verdict
	}{
		// T2 timed out at 4 but committed (T4 read its y), possibly after T3 took its
		// snapshot: T3 reading T1's x, which T2 overwrote, is no violation.
		{"unknown outcome late", "init 0\ns1: T1 @[1,2] w(x,1)\ns2: T2 @[3,4] w(x,2) w(y,2) info\ns3: T3 @[5,6] r(x,1)\ns4: T4 @[7,8] r(y,2)", report.Pass},
		{"committed", "init 0\ns1: T1 @[1,2] w(x,1)\ns2: T2 @[3,4] w(x,2) w(y,2)\ns3: T3 @[5,6] r(x,1)\ns4: T4 @[7,8] r(y,2)", report.Fail},
		{"in-edge kept", "init 0\ns1: T1 @[1,2] r(x,2)\ns2: T2 @[3,4] w(x,2) info", report.Fail},
		// T2 has no interval: unbounded, it may follow T1; the pass becomes Unknown.
		{"untimed", "init 0\ns1: T1 @[1,2] w(x,1)\ns2: T2 r(x,1) w(y,1)\ns3: T3 @[5,6] r(y,1)", report.Unknown},
		{"untimed, real-time violation", "init 0\ns1: T1 @[1,2] w(x,1)\ns2: T2 @[3,4] r(x,0)\ns3: T3 w(y,1)", report.Fail},
		{"untimed and aborted", "init 0\ns1: T1 @[1,2] w(x,1)\ns2: T2 w(x,3) abort\ns3: T3 @[5,6] r(x,1)", report.Pass},
	} {
		h := histtest.MustParse(tc.src)
		for _, ns := range []bool{false, true} {
			rep, err := si.Check(context.Background(), h, anomaly.StrongSI, si.Options{Shortcuts: skipIf(ns, certify.SkipSchedule)})
			if err != nil {
				t.Fatalf("%s: Check: %v", tc.name, err)
			}
			if rep.Verdict != tc.want {
				t.Errorf("%s: Check(strong SI, SkipSchedule=%v) = %s, want %s; %v %q", tc.name, ns, rep.Verdict, tc.want, rep.Anomalies, rep.Notes)
			}
			if hasNote := slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, note) }); hasNote != (tc.want == report.Unknown) {
				t.Errorf("%s: notes %q; want a note %q: %v", tc.name, rep.Notes, note, tc.want == report.Unknown)
			}
		}
		if got := oracle(h, anomaly.StrongSI); got != (tc.want != report.Fail) {
			t.Errorf("%s: oracle = %v, want %v", tc.name, got, tc.want != report.Fail)
		}
	}
	h := histtest.MustParse("init 0\ns1: T1 w(x,1)\ns2: T2 r(x,1)")
	if _, err := si.Check(context.Background(), h, anomaly.StrongSI, si.Options{}); !errors.Is(err, si.ErrNeedsTime) {
		t.Errorf("Check(strong SI) without any interval: err = %v, want ErrNeedsTime", err)
	}
}

// TestTimeDifferential compares strong SI with the oracle on random histories whose clients
// gave up on transactions of unknown outcome early, some without an interval: Fail means
// the oracle fails, Pass that it passes with every counted interval known, Unknown that it
// passes with some missing.
func TestTimeDifferential(t *testing.T) {
	t.Parallel()
	n := 4000
	if testing.Short() {
		n = 800
	}
	var counts [3]int
	checked := 0
	for seed := uint64(0); checked < n; seed++ {
		o := genOptions(seed)
		o.EarlyGiveUp = true
		o.UnknownRatio = 0.3
		o.Concurrency = max(o.Concurrency, 2)
		o.NoIntervalRatio = []float64{0, 0.2}[seed%2]
		h := histtest.Gen(seed, o)
		if counted(h) > 6 || !slices.ContainsFunc(h.Txns, func(t history.Txn) bool { return t.HasTime }) {
			continue
		}
		checked++
		want := oracle(h, anomaly.StrongSI)
		rep, err := si.Check(context.Background(), h, anomaly.StrongSI, si.Options{Shortcuts: skipIf(seed%3 == 0, certify.SkipBasic)})
		if err != nil {
			t.Fatalf("seed %d: Check: %v", seed, err)
		}
		untimed := slices.ContainsFunc(rep.Notes, func(s string) bool { return strings.Contains(s, "no client interval") })
		ok := false
		switch rep.Verdict {
		case report.Pass:
			ok, counts[0] = want && !untimed, counts[0]+1
		case report.Fail:
			ok, counts[1] = !want, counts[1]+1
		case report.Unknown:
			ok, counts[2] = want && untimed, counts[2]+1
		}
		if !ok {
			t.Fatalf("seed %d: Check(strong SI) = %s (notes %q), oracle passes = %v\n%s\n%v", seed, rep.Verdict, rep.Notes, want, histtest.Format(h), rep.Anomalies)
		}
	}
	t.Logf("pass %d, fail %d, unknown %d", counts[0], counts[1], counts[2])
	if counts[0] == 0 || counts[1] == 0 || counts[2] == 0 {
		t.Errorf("the histories do not exercise every verdict: %v", counts)
	}
}
