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

	"isovet/check"
	"isovet/history"
	"isovet/internal/histtest"
)

// cancelHistories are large generated histories on few keys, each slow to check for some
// checker: concurrent transactions with duplicate values (ambiguous version orders), blind
// writes of one value, and read-modify-writes of repeated values.
var cancelHistories = []struct {
	name string
	o    histtest.GenOptions
}{
	{"big", histtest.GenOptions{Txns: 300000, Sessions: 200, Keys: 8, OpsPerTxn: 4, Concurrency: 8, DupRatio: 0.01, Intervals: true, Timestamps: true}},
	{"rmw-dups", histtest.GenOptions{Txns: 20000, Sessions: 50, Keys: 2, OpsPerTxn: 2, Concurrency: 4, DupRatio: 0.9, Intervals: true}},
}

// TestCancelStopsEveryChecker cancels every checker at every level it supports at seeded
// random points of large histories and requires it to return within a second of the
// cancellation with Verdict Unknown and the cause, or with a violation it had proved
// already, never Pass. A check that ends before its cancellation must agree with the
// uncancelled verdict.
func TestCancelStopsEveryChecker(t *testing.T) {
	if testing.Short() {
		t.Skip("large histories; skipped with -short")
	}
	const bound = time.Second
	rng := rand.New(rand.NewPCG(20261129, 1))
	cause := errors.New("cancelled by the test")
	for _, hc := range cancelHistories {
		h := histtest.Gen(1, hc.o)
		for _, c := range check.Checkers() {
			if c.Method == check.MethodTimestamp && !h.HasTimestamps() {
				continue
			}
			for _, l := range c.Levels {
				name := fmt.Sprintf("%s/%s/%s", hc.name, c.Name, l)
				t.Run(name, func(t *testing.T) {
					for range 3 {
						// Log-uniform in [1ms, 2s): fast checkers are stopped too.
						delay := time.Duration(float64(time.Millisecond) * math.Pow(2000, rng.Float64()))
						cancelOnce(t, h, c.Method, l, delay, cause, bound)
					}
				})
			}
		}
	}
}

// cancelOnce runs one check cancelled after delay and judges how it stopped.
func cancelOnce(t *testing.T, h *history.History, m check.Method, l check.Level, delay time.Duration, cause error, bound time.Duration) {
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
		// Finished before the cancellation: nothing to judge but the verdict itself.
		if err != nil {
			t.Errorf("Check(%s, delay %v) ended before the cancellation with error %v", l, delay, err)
		}
		return
	}
	<-ctx.Done()
	latency := end.Sub(cancelled)
	if os.Getenv("ISOVET_CANCEL_LOG") != "" {
		t.Logf("delay %v: latency %v, verdict %v, err %v", delay, latency, verdictOf(rep), err)
	}
	if latency > bound {
		t.Errorf("Check(%s) cancelled after %v returned %v later, want within %v", l, delay, latency, bound)
	}
	switch {
	case rep == nil:
		if !errors.Is(err, cause) {
			t.Errorf("Check(%s) cancelled after %v = nil report, error %v, want the cause", l, delay, err)
		}
	case rep.Verdict == check.Pass:
		// The check may have finished just as the cancellation fired; a pass is honest only
		// when nothing reports the cancellation.
		if err != nil || latency > 0 {
			t.Errorf("Check(%s) cancelled after %v = Pass (err %v), want Unknown or a proved violation", l, delay, err)
		}
	case rep.Verdict == check.Unknown:
		if !errors.Is(err, cause) {
			t.Errorf("Check(%s) cancelled after %v = Unknown with error %v, want the cause %v", l, delay, err, cause)
		}
	case rep.Verdict == check.Fail:
		if len(rep.Anomalies) == 0 {
			t.Errorf("Check(%s) cancelled after %v = Fail without an anomaly", l, delay)
		}
	}
}

func verdictOf(rep *check.Report) string {
	if rep == nil {
		return "no report"
	}
	return rep.Verdict.String()
}
