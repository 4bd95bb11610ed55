package ser

import (
	"slices"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

func keyOf(k int) history.Key { return history.Key(k) }

// forced marks a step as forced by pruning, through predicate pred ("" for none).
func forced(s report.Step, pred string) report.Step {
	s.Forced, s.Pred = true, pred
	return s
}

func TestClassify(t *testing.T) {
	step := func(rel report.Rel, key int) report.Step { return report.Step{Rel: rel, Key: keyOf(key)} }
	tests := []struct {
		name string
		cyc  []report.Step
		kind anomaly.Kind
		also []anomaly.Kind
	}{
		{"G0", []report.Step{step(report.WW, 1), step(report.WW, 2)}, anomaly.G0, nil},
		{"G1c", []report.Step{step(report.WR, 1), step(report.WR, 2)}, anomaly.G1c, nil},
		{"G1c with so", []report.Step{step(report.WR, 1), step(report.SO, -1), step(report.WR, 2)}, anomaly.G1c, nil},
		{"lost update", []report.Step{step(report.RW, 1), step(report.WW, 1)}, anomaly.GSingle, []anomaly.Kind{anomaly.LostUpdate}},
		{"lost update rw rw", []report.Step{step(report.RW, 1), step(report.RW, 1)}, anomaly.G2Item, []anomaly.Kind{anomaly.LostUpdate}},
		{"write skew", []report.Step{step(report.RW, 1), step(report.RW, 2)}, anomaly.G2Item, []anomaly.Kind{anomaly.WriteSkew}},
		{"read skew", []report.Step{step(report.WR, 1), step(report.RW, 2)}, anomaly.GSingle, []anomaly.Kind{anomaly.ReadSkew, anomaly.FracturedRead}},
		{"long fork", []report.Step{step(report.WR, 1), step(report.RW, 1), step(report.WR, 2), step(report.RW, 2)}, anomaly.G2Item, []anomaly.Kind{anomaly.LongFork}},
		{"stale read", []report.Step{step(report.RT, -1), step(report.RW, 1)}, anomaly.GSingle, []anomaly.Kind{anomaly.StaleRead}},
		// A write-read cycle that pruning forced is not known to be G1c in every completion.
		{"forced G1c", []report.Step{forced(step(report.WR, 1), ""), step(report.WR, 2)}, anomaly.G2, nil},
		{"forced G0", []report.Step{forced(step(report.WW, 1), ""), step(report.WW, 2)}, anomaly.G2, nil},
		{"forced predicate reads", []report.Step{forced(step(report.WR, 1), "v1 in [10, 19]"), forced(step(report.WR, 2), "v1 in [10, 19]")}, anomaly.G2, []anomaly.Kind{anomaly.Phantom}},
		{"forced lost update", []report.Step{step(report.RW, 1), forced(step(report.WW, 1), "")}, anomaly.GSingle, []anomaly.Kind{anomaly.LostUpdate}},
	}
	for _, tc := range tests {
		kind, also := classify(tc.cyc)
		if kind != tc.kind || !slices.Equal(also, tc.also) {
			t.Errorf("%s: classify = %v %v, want %v %v", tc.name, kind, also, tc.kind, tc.also)
		}
	}
}
