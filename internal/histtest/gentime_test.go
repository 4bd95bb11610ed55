package histtest_test

import (
	"testing"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/histtest"
)

// TestGenTimeOptions: EarlyGiveUp and NoIntervalRatio change only the recorded intervals
// of the history the same seed gives without them: unknown outcomes end no later (and no
// earlier than they began), and some transactions lose their interval. Everything else
// (operations, outcomes, sessions, the other intervals) is the same, so existing seeds keep
// their histories.
func TestGenTimeOptions(t *testing.T) {
	t.Parallel()
	base := histtest.GenOptions{Txns: 40, Concurrency: 3, UnknownRatio: 0.3, AbortRatio: 0.1, Perturb: 0.1, Intervals: true}
	early, untimedSeen := 0, 0
	for seed := uint64(1); seed <= 50; seed++ {
		o := base
		o.EarlyGiveUp, o.NoIntervalRatio = true, 0.2
		h0, h1 := histtest.Gen(seed, base), histtest.Gen(seed, o)
		if len(h0.Txns) != len(h1.Txns) {
			t.Fatalf("seed %d: %d transactions, want %d", seed, len(h1.Txns), len(h0.Txns))
		}
		for i := range h0.Txns {
			a, b := &h0.Txns[i], &h1.Txns[i]
			if a.Outcome != b.Outcome || a.Session != b.Session || len(a.Ops) != len(b.Ops) {
				t.Fatalf("seed %d: T%d differs beyond its interval", seed, i)
			}
			for j := range a.Ops {
				if a.Ops[j] != b.Ops[j] {
					t.Fatalf("seed %d: T%d op %d differs", seed, i, j)
				}
			}
			if !b.HasTime {
				untimedSeen++
				continue
			}
			switch {
			case b.Time.Begin != a.Time.Begin:
				t.Errorf("seed %d: T%d begins at %d, want %d", seed, i, b.Time.Begin, a.Time.Begin)
			case a.Outcome != history.OutcomeUnknown && b.Time.End != a.Time.End:
				t.Errorf("seed %d: T%d ends at %d, want %d", seed, i, b.Time.End, a.Time.End)
			case b.Time.End > a.Time.End || b.Time.End < b.Time.Begin:
				t.Errorf("seed %d: T%d (unknown outcome) ends at %d, want within [%d,%d]", seed, i, b.Time.End, a.Time.Begin, a.Time.End)
			case b.Time.End < a.Time.End:
				early++
			}
		}
	}
	if early == 0 || untimedSeen == 0 {
		t.Errorf("%d early ends, %d transactions without interval; want some of each", early, untimedSeen)
	}
}
