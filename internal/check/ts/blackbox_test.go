package ts_test

import (
	"context"
	"testing"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/internal/histtest"
)

// TestBlackBoxAgrees: where Chronos says a timestamped history satisfies SI or SER, the
// black-box checkers (which search for any explaining order) agree. The converse need not
// hold: the timestamps fix one execution, so Chronos is stricter (the paper's Fig. 11).
func TestBlackBoxAgrees(t *testing.T) {
	t.Parallel()
	passed := map[check.Level]int{}
	for seed := range uint64(150) {
		o := histtest.GenOptions{Txns: 10, Sessions: 3, Keys: 3, Concurrency: 3, Timestamps: true, ListAppend: seed%3 == 0}
		if seed%2 == 1 {
			o.Perturb = 0.1
		}
		h := histtest.Gen(seed, o)
		for _, l := range []check.Level{check.SnapshotIsolation, check.Serializable, check.StrongSessionSI, check.StrongSessionSerializable} {
			rep, err := check.Check(context.Background(), h, l, check.Options{Method: check.MethodTimestamp})
			if err != nil {
				t.Fatalf("seed %d %s: chronos: %v", seed, l, err)
			}
			if rep.Verdict != check.Pass {
				continue
			}
			passed[l]++
			bb, err := check.Check(context.Background(), h, l, check.Options{Method: check.MethodBlackBox})
			if err != nil {
				t.Fatalf("seed %d %s: black box: %v", seed, l, err)
			}
			if bb.Verdict == check.Fail {
				t.Errorf("seed %d %s: Chronos passes but the black-box checker finds %v", seed, l, bb.Anomalies[0].Message)
			}
		}
	}
	t.Logf("histories Chronos passes, per level: %v", passed)
	for _, l := range []check.Level{check.SnapshotIsolation, check.Serializable} {
		if passed[l] < 20 {
			t.Errorf("only %d histories pass %s under Chronos: the test proves little", passed[l], l)
		}
	}
}
