package check_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/histtest"
)

// cancelHistories are large generated histories on few keys, each slow to check for some
// checker: many concurrent transactions with timestamps (every checker runs, the linear
// ones for a few hundred milliseconds), read-modify-writes of repeated values, and blind
// writes of one value to one key without client time (the pairs of writers are quadratic).
var cancelHistories = []struct {
	name string
	o    histtest.GenOptions
}{
	{"big", histtest.GenOptions{Txns: 300000, Sessions: 200, Keys: 8, OpsPerTxn: 4, Concurrency: 8, DupRatio: 0.01, Intervals: true, Timestamps: true}},
	{"rmw-dups", histtest.GenOptions{Txns: 20000, Sessions: 50, Keys: 2, OpsPerTxn: 2, Concurrency: 4, DupRatio: 0.9, Intervals: true}},
	{"blind-one-value", histtest.GenOptions{Txns: 20000, Sessions: 50, Keys: 1, OpsPerTxn: 1, ReadRatio: -1, Concurrency: 8, DupRatio: 1}},
}

// TestCancelStopsEveryChecker cancels every checker at every level it supports at seeded
// random points of large histories (delays log-uniform in [1ms, 2s), so the fast checkers
// are stopped too) and requires it to return within a second of the cancellation with
// Verdict Unknown and the cause, or with a violation it had proved already, never Pass. A
// checker looks at ctx once more before it passes, but it may pass just before the
// cancellation fires and return just after: a pass after the cancellation is accepted
// only when the same check, uncancelled, passes too. What is measured is the latency from the cancellation to the return,
// not the check's total time. ISOVET_CANCEL_LOG=1 logs every latency.
func TestCancelStopsEveryChecker(t *testing.T) {
	if testing.Short() {
		t.Skip("large histories; skipped with -short")
	}
	bound := time.Second
	if raceEnabled {
		bound = 10 * time.Second // the detector slows the work between two polls as much
	}
	rng := rand.New(rand.NewPCG(20261129, 1))
	cause := errors.New("cancelled by the test")
	for _, hc := range cancelHistories {
		h := histtest.Gen(1, hc.o)
		for _, c := range check.Checkers() {
			if c.Method == check.MethodTimestamp && !h.HasTimestamps() {
				continue
			}
			for _, l := range c.Levels {
				if l.Info().Realtime && !h.HasTime() {
					continue // refused (ErrNeedsTime) before any work
				}
				name := fmt.Sprintf("%s/%s/%s", hc.name, c.Name, l)
				t.Run(name, func(t *testing.T) {
					var truth *check.Verdict // the uncancelled verdict, when a pass needs it
					uncancelled := func() check.Verdict {
						if truth == nil {
							ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
							defer cancel()
							v := check.Unknown
							if rep, err := check.Check(ctx, h, l, check.Options{Method: c.Method}); err == nil {
								v = rep.Verdict
							}
							truth = &v
						}
						return *truth
					}
					for range 3 {
						// Log-uniform in [1ms, 2s): fast checkers are stopped too.
						delay := time.Duration(float64(time.Millisecond) * math.Pow(2000, rng.Float64()))
						// On a loaded machine one stop can miss the bound by a scheduling
						// delay or a collection; a loop that does not poll misses it every
						// time. So a slow stop is tried twice more at the same delay, and
						// fails only when all three are slow.
						var slow []time.Duration
						for range 3 {
							latency := cancelOnce(t, h, c.Method, l, delay, cause, uncancelled)
							if latency <= bound {
								slow = nil
								break
							}
							slow = append(slow, latency)
						}
						if len(slow) > 0 {
							t.Errorf("Check(%s) cancelled after %v returned %v later (three tries), want within %v", l, delay, slow, bound)
						}
					}
				})
			}
		}
	}
}

// cancelOnce runs one check cancelled after delay, judges how it stopped, and returns the
// latency from the cancellation to the return (0 when it finished before the cancellation).
func cancelOnce(t *testing.T, h *history.History, m check.Method, l check.Level, delay time.Duration, cause error, uncancelled func() check.Verdict) time.Duration {
	t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var cancelled time.Time
	timer := time.AfterFunc(delay, func() {
		cancelled = time.Now()
		cancel(cause)
	})
	rep, err := check.Check(ctx, h, l, check.Options{Method: m})
	end := time.Now()
	if timer.Stop() {
		// Finished before the cancellation: nothing to judge but that it ended cleanly.
		if err != nil {
			t.Errorf("Check(%s, delay %v) ended before the cancellation with error %v", l, delay, err)
		}
		return 0
	}
	<-ctx.Done()
	latency := end.Sub(cancelled)
	if os.Getenv("ISOVET_CANCEL_LOG") != "" {
		t.Logf("delay %v: latency %v, verdict %v, err %v", delay, latency, verdictOf(rep), err)
	}
	switch {
	case rep == nil:
		if !errors.Is(err, cause) {
			t.Errorf("Check(%s) cancelled after %v = nil report, error %v, want the cause", l, delay, err)
		}
	case rep.Verdict == check.Pass:
		if err != nil || uncancelled() != check.Pass {
			t.Errorf("Check(%s) cancelled after %v = Pass (err %v), want Unknown or a proved violation", l, delay, err)
		}
	case rep.Verdict == check.Unknown:
		// Unknown without the cause only when the check is Unknown uncancelled too (the basic
		// checks never pass: they may have finished just before the cancellation fired).
		if !errors.Is(err, cause) && (err != nil || uncancelled() != check.Unknown) {
			t.Errorf("Check(%s) cancelled after %v = Unknown with error %v, want the cause %v", l, delay, err, cause)
		}
	case rep.Verdict == check.Fail:
		if len(rep.Anomalies) == 0 {
			t.Errorf("Check(%s) cancelled after %v = Fail without an anomaly", l, delay)
		}
	}
	return latency
}

func verdictOf(rep *check.Report) string {
	if rep == nil {
		return "no report"
	}
	return rep.Verdict.String()
}
