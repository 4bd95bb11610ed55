package basic

import (
	"context"
	"fmt"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

// Run is the basic checker's entry in the check registry: it runs [Check] and fails the
// history if any finding's kind is one level forbids, else passes it. (check.Check turns a
// basic-only Pass into Unknown for levels no complete checker covers yet.) Findings of kinds
// the level allows are left out of the report; a note counts them.
func Run(ctx context.Context, h *history.History, level anomaly.Level, o Options) (*report.Report, error) {
	f, err := Check(ctx, h, o)
	rep := &report.Report{
		Level:   level,
		Checker: "basic",
		Notes:   f.Notes,
		Stats:   f.Stats,
		History: h,
	}
	if err != nil {
		rep.Verdict = report.Unknown
		return rep, err
	}
	rep.Verdict = report.Pass
	for _, a := range f.Anomalies {
		if level.Forbids(a.Kind) {
			rep.Anomalies = append(rep.Anomalies, a)
		}
	}
	for _, k := range anomaly.Kinds() {
		n := f.Counts[k]
		switch {
		case n == 0:
		case level.Forbids(k):
			rep.Verdict = report.Fail
		default:
			rep.Notes = append(rep.Notes, fmt.Sprintf("%d %s findings were left out: %s allows them", n, k.Info().Title, level))
		}
	}
	return rep, nil
}
