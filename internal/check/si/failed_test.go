package si_test

import (
	"context"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/check/si"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// TestFailedStatementsAgreeWithOracle: on histories whose recorder logged transactions as
// committed although a statement of theirs failed, each reading of them gives, at every
// snapshot isolation level, the verdict of the brute-force oracle over the executions the
// reading stands for.
func TestFailedStatementsAgreeWithOracle(t *testing.T) {
	t.Parallel()
	n := 1200
	if testing.Short() {
		n = 250
	}
	levels := []anomaly.Level{anomaly.SnapshotIsolation, anomaly.StrongSessionSI, anomaly.StrongSI}
	tally := histtest.FailedDifferential(t, n, 6, levels, func(seed uint64) histtest.GenOptions {
		o := histtest.GenOptions{Txns: 3 + int(seed%4), Sessions: 3, Keys: 2 + int(seed%2), OpsPerTxn: 2 + int(seed%2),
			Concurrency: 1 + int(seed%3), FailedRatio: 0.4, Intervals: true}
		if seed%5 == 1 {
			o.UnknownRatio, o.AbortRatio = 0.15, 0.15
		}
		if seed%7 == 3 {
			o.ListAppend = true
		}
		return o
	},
		func(ctx context.Context, h *history.History, l anomaly.Level) (*report.Report, error) {
			return si.Check(ctx, h, l, si.Options{})
		}, oracle, false)
	t.Logf("%d histories: %d passes, %d failures", tally.Histories, tally.Pass, tally.Fail)
	if tally.Pass == 0 || tally.Fail == 0 {
		t.Fatalf("the histories should both pass and fail somewhere: %+v", tally)
	}
}
