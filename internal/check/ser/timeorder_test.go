package ser

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/certify"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// The real-time rules of the strict level (docs/ser.md, "Client time"): a transaction of
// unknown outcome ended at +inf (it may have committed after the client gave up), and a
// transaction without a client interval is unbounded (no real-time edge in or out), which
// turns a pass into Unknown.

// TestTimeUnknownOutcomeLate: T2 timed out at 4 (info); T4 read its y, so it committed, but
// possibly after T3 began. Its recorded end does not order it before T3, so the serial order
// T1 T3 T2 T4 is strict serializable. With an rt edge T2 -> T3 at its recorded end, T3
// reading T1's x (which T2 overwrote) closed a false cycle.
func TestTimeUnknownOutcomeLate(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      report.Verdict
	}{
		{"promoted", "init 0\ns1: T1 @[1,2] w(x,1)\ns2: T2 @[3,4] w(x,2) w(y,2) info\ns3: T3 @[5,6] r(x,1)\ns4: T4 @[7,8] r(y,2)", report.Pass},
		// Same with T2 committed: its end is known, and the cycle is real.
		{"committed", "init 0\ns1: T1 @[1,2] w(x,1)\ns2: T2 @[3,4] w(x,2) w(y,2)\ns3: T3 @[5,6] r(x,1)\ns4: T4 @[7,8] r(y,2)", report.Fail},
		// T2 is one of two candidate writers of y=2 (a choice, deps.Maybe) and of z=2; T5's
		// y and T6's z are too late for T4 (they began after T4 ended), so T4 read both
		// from T2, which then committed, but possibly after T3 began.
		{"maybe", "init 0\ns1: T1 @[1,2] w(x,1)\ns2: T2 @[3,4] w(x,2) w(y,2) w(z,2) info\ns3: T3 @[5,6] r(x,1)\ns4: T4 @[7,8] r(y,2) r(z,2)\ns5: T5 @[9,10] w(y,2)\ns6: T6 @[9,10] w(z,2) w(y,3)", report.Pass},
		// The same through a predicate read: T4's predicate did not return x, so it saw a
		// version on which it is false: T2's, which is in T4's reach though T3 began after
		// T2's recorded end and ended before T4 began (T2 committed after T3).
		{"predicate read", "init 0\ns2: T2 @[3,4] w(x,1) info\ns3: T3 @[5,6] w(x,2)\ns4: T4 @[7,8] pr(\"v in [2, 2]\", [])", report.Pass},
		// Unknown outcome does not lift in-edges: T2 began after T1 ended, so T2 follows T1,
		// and T1 reading T2's x is a cycle.
		{"in-edge kept", "init 0\ns1: T1 @[1,2] r(x,2)\ns2: T2 @[3,4] w(x,2) info", report.Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := histtest.MustParse(tc.src)
			for _, nf := range []bool{false, true} {
				rep := check(t, h, anomaly.StrictSerializable, Options{Shortcuts: skipIf(nf, certify.SkipShortcuts)})
				if rep.Verdict != tc.want {
					t.Errorf("Check(strict, no shortcuts=%v) = %s, want %s; anomalies %v", nf, rep.Verdict, tc.want, rep.Anomalies)
				}
				if got := oracle(h, anomaly.StrictSerializable, 0); got != (tc.want == report.Pass) {
					t.Errorf("oracle = %v, want %v", got, tc.want == report.Pass)
				}
			}
		})
	}
}

// TestTimeMissingIntervals: transactions without a client interval are unbounded; a pass
// becomes Unknown with a note, a violation stays one, and a history with no interval at all
// is refused.
func TestTimeMissingIntervals(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      report.Verdict
	}{
		// T2 has no interval: read as [0,0] it would precede T1 and close a cycle with
		// T1 -wr-> T2; unbounded, it may follow T1.
		{"unbounded", "init 0\ns1: T1 @[1,2] w(x,1)\ns2: T2 r(x,1) w(y,1)\ns3: T3 @[5,6] r(y,1)", report.Unknown},
		// A cycle through the timed transactions' real time stays a violation.
		{"real-time cycle", "init 0\ns1: T1 @[1,2] w(x,1)\ns2: T2 @[3,4] r(x,0)\ns3: T3 w(y,1)", report.Fail},
		// A cycle of reads alone (the untimed transaction is on it).
		{"read cycle", "init 0\ns1: T1 @[1,2] r(x,1) w(y,1)\ns2: T2 r(y,1) w(x,1)", report.Fail},
		// Untimed but aborted: it takes no part, so a pass is a pass.
		{"aborted untimed", "init 0\ns1: T1 @[1,2] w(x,1)\ns2: T2 w(x,3) abort\ns3: T3 @[5,6] r(x,1)", report.Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := histtest.MustParse(tc.src)
			for _, nf := range []bool{false, true} {
				rep := check(t, h, anomaly.StrictSerializable, Options{Shortcuts: skipIf(nf, certify.SkipShortcuts)})
				if rep.Verdict != tc.want {
					t.Errorf("Check(strict, no shortcuts=%v) = %s, want %s; anomalies %v, notes %q", nf, rep.Verdict, tc.want, rep.Anomalies, rep.Notes)
				}
				if tc.want == report.Unknown && !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "1 transaction has no client interval") }) {
					t.Errorf("notes %q, want one naming the transaction without an interval", rep.Notes)
				}
				// The verdict agrees with the oracle on the unbounded reading: a violation is
				// one there, and an Unknown is a pass there.
				if got := oracle(h, anomaly.StrictSerializable, 0); got != (tc.want != report.Fail) {
					t.Errorf("oracle = %v, want %v", got, tc.want != report.Fail)
				}
			}
		})
	}
	h := histtest.MustParse("init 0\ns1: T1 w(x,1)\ns2: T2 r(x,1)")
	if _, err := Check(context.Background(), h, anomaly.StrictSerializable, Options{}); !errors.Is(err, ErrNeedsTime) {
		t.Errorf("Check(strict) without any interval: err = %v, want ErrNeedsTime", err)
	}
}

// TestTimeDifferential compares the strict level with the oracle on random histories whose
// clients gave up on transactions of unknown outcome before the database committed them,
// some transactions recorded without an interval: a violation must be one for the oracle,
// a pass must be one, and Unknown is the answer exactly when a counted transaction has no
// interval and the oracle passes. Some of the histories the checker passes are ones the old
// reading (unknown outcomes ended at their recorded end) failed.
func TestTimeDifferential(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	var counts [3]int // pass, fail, unknown
	rescued := 0      // the oracle passes, the old reading fails
	for seed := uint64(1); seed <= uint64(n); seed++ {
		o := histtest.GenOptions{
			Txns:            3 + int(seed%6),
			Sessions:        2 + int(seed%3),
			Keys:            1 + int(seed%3),
			OpsPerTxn:       1 + int(seed%4),
			Concurrency:     2 + int(seed%2),
			DupRatio:        []float64{0, 0.3}[seed%2],
			AbortRatio:      []float64{0, 0.15}[(seed/2)%2],
			UnknownRatio:    []float64{0.2, 0.4}[(seed/3)%2],
			Perturb:         []float64{0, 0.2, 0.5}[(seed/4)%3],
			Intervals:       true,
			EarlyGiveUp:     seed%5 != 0,
			NoIntervalRatio: []float64{0, 0, 0.2}[(seed/5)%3],
			ListAppend:      seed%4 == 1,
		}
		if o.ListAppend {
			o.DupRatio = 0
		}
		h := histtest.Gen(seed, o)
		if !slices.ContainsFunc(h.Txns, func(t history.Txn) bool { return t.HasTime }) {
			continue
		}
		want := oracle(h, anomaly.StrictSerializable, 0)
		if want && h.HasTime() && !oracleRecordedEnd(h, anomaly.StrictSerializable, 0) {
			rescued++
		}
		for _, nf := range []bool{false, true} {
			rep := check(t, h, anomaly.StrictSerializable, Options{Shortcuts: skipIf(nf, certify.SkipShortcuts)})
			untimed := slices.ContainsFunc(rep.Notes, func(s string) bool { return strings.Contains(s, "no client interval") })
			ok := false
			switch rep.Verdict {
			case report.Pass:
				ok = want && !untimed
				counts[0]++
			case report.Fail:
				ok = !want
				counts[1]++
			case report.Unknown:
				ok = want && untimed
				counts[2]++
			}
			if !ok {
				t.Fatalf("seed %d, no shortcuts=%v: Check(strict) = %s (notes %q), oracle passes = %v\n%s\n%v", seed, nf, rep.Verdict, rep.Notes, want, histtest.Format(h), rep.Anomalies)
			}
		}
	}
	t.Logf("pass %d, fail %d, unknown %d; %d histories the old reading of unknown outcomes failed", counts[0], counts[1], counts[2], rescued)
	if counts[0] == 0 || counts[1] == 0 || counts[2] == 0 || rescued == 0 {
		t.Errorf("the histories do not exercise every verdict and the late commits: %v, %d", counts, rescued)
	}
}
