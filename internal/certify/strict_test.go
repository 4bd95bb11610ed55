package certify_test

import (
	"context"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/certify"
	"github.com/isovet/isovet/internal/check/ser"
	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/graph"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// fastPasses runs the strict fast path alone (no fallback) on h.
func fastPasses(t *testing.T, h *history.History) (bool, certify.Stats) {
	t.Helper()
	d, err := deps.Build(h, deps.Options{Session: true, Realtime: true, NoEdges: true})
	if err != nil {
		t.Fatal(err)
	}
	p, ok, err := certify.Strict(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return ok, p.Stats
}

// check runs the serializability checker on h at level.
func check(t *testing.T, h *history.History, level anomaly.Level, o ser.Options) *report.Report {
	t.Helper()
	rep, err := ser.Check(context.Background(), h, level, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestStrictFastLongTransaction: a transaction spanning the whole history widens every
// window of the compact closure; with the bound lowered the fast path declines, and the
// general pipeline decides the same verdicts.
func TestStrictFastLongTransaction(t *testing.T) {
	defer certify.SetClosureLimits(1<<22, 4)()
	bounded := 0
	for seed := uint64(1); seed <= 40; seed++ {
		h := histtest.Gen(seed, histtest.GenOptions{Txns: 200, Sessions: 4, Keys: 6, OpsPerTxn: 3, Concurrency: 1 + int(seed%3), Perturb: []float64{0, 0.02}[seed%2], Intervals: true})
		// Stretch the first committed transaction over the whole history.
		for i := range h.Txns {
			if h.Txns[i].Outcome == history.OutcomeCommitted {
				h.Txns[i].Time.End = h.Txns[len(h.Txns)-1].Time.End + 1
				break
			}
		}
		want := check(t, h, anomaly.StrictSerializable, ser.Options{Shortcuts: certify.SkipShortcuts})
		certify.SetClosureLimits(1<<22, 4)
		ok, fs := fastPasses(t, h)
		if ok && want.Verdict != report.Pass {
			t.Fatalf("seed %d: fast path passed (%+v), general path %v", seed, fs, want.Verdict)
		}
		if fs.Why == "out of scope" {
			continue // deps found a violation already
		}
		bounded++
		certify.SetClosureLimits(100, 0)
		if ok, fs := fastPasses(t, h); ok || fs.Why != graph.ErrTooLarge.Error() {
			t.Fatalf("seed %d: with a bound of 100 words the fast path gave %v (%+v), want ErrTooLarge", seed, ok, fs)
		}
		got := check(t, h, anomaly.StrictSerializable, ser.Options{})
		if got.Verdict != want.Verdict {
			t.Fatalf("seed %d: %v with the bound, %v without the fast path", seed, got.Verdict, want.Verdict)
		}
	}
	if bounded < 20 {
		t.Fatalf("only %d histories reached the closure", bounded)
	}
}
