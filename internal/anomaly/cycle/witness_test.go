package cycle_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/anomaly/cycle"
	"github.com/isovet/isovet/internal/certify"
	"github.com/isovet/isovet/internal/check/ser"
	"github.com/isovet/isovet/internal/check/si"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// genHistory returns a small random history for seed: snapshot-isolated executions (so
// write skew and its kin), lists or registers, with or without client intervals, some
// duplicate values, unknown outcomes and perturbed reads; every fifth one with predicates.
func genHistory(seed uint64) *history.History {
	if seed%5 == 4 {
		return histtest.GenPred(rand.New(rand.NewPCG(seed, 7)))
	}
	return histtest.Gen(seed, histtest.GenOptions{
		Txns: 4 + int(seed%7), Sessions: 2 + int(seed%3), Keys: 1 + int(seed%3), OpsPerTxn: 1 + int(seed%4),
		Concurrency: 2 + int(seed%3), ListAppend: seed%3 == 1, Intervals: seed%2 == 0,
		Perturb:      []float64{0, 0, 0, 0, 0, 0.2}[seed%6],
		DupRatio:     []float64{0, 0.2}[seed%2],
		UnknownRatio: []float64{0, 0, 0.1}[seed%3],
	})
}

// TestWitnessesNamedAsBefore checks ser and si on random histories and names every
// failing witness's cycle with the classifiers the checkers had before the table: each
// must carry the kind and Also those gave.
func TestWitnessesNamedAsBefore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n := uint64(3000)
	if testing.Short() {
		n = 500
	}
	type checker struct {
		name   string
		levels []anomaly.Level
		check  func(*history.History, anomaly.Level) (*report.Report, error)
		old    func([]report.Step) (anomaly.Kind, []anomaly.Kind)
	}
	checkers := []checker{
		{"ser", []anomaly.Level{anomaly.Serializable, anomaly.StrongSessionSerializable, anomaly.StrictSerializable},
			func(h *history.History, l anomaly.Level) (*report.Report, error) {
				return ser.Check(ctx, h, l, ser.Options{Shortcuts: certify.SkipBasic})
			}, cycle.OldSer},
		{"si", []anomaly.Level{anomaly.SnapshotIsolation, anomaly.StrongSessionSI, anomaly.StrongSI},
			func(h *history.History, l anomaly.Level) (*report.Report, error) {
				return si.Check(ctx, h, l, si.Options{Shortcuts: certify.SkipBasic})
			}, cycle.OldSI},
	}
	named := make(map[string]int)
	for seed := range n {
		h := genHistory(seed)
		for _, c := range checkers {
			for _, l := range c.levels {
				rep, err := c.check(h, l)
				if err != nil {
					continue // an input the level cannot check (no intervals, predicates)
				}
				for _, a := range rep.Anomalies {
					if len(a.Cycle) == 0 {
						continue
					}
					kind, also := c.old(a.Cycle)
					if a.Kind != kind || !slices.Equal(a.Also, also) || (a.Also == nil) != (also == nil) {
						t.Fatalf("seed %d, %s: witness named %s, the old classifier says %v %v\n%s", seed, l, a.Name(), kind, also, histtest.Format(h))
					}
					named[c.name+" "+a.Name()]++
				}
			}
		}
	}
	t.Logf("witnesses named: %v", named)
	if len(named) < 10 {
		t.Errorf("only %d distinct names among the witnesses: the generator is too narrow", len(named))
	}
}
