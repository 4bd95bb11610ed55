package ser

import (
	"context"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// TestFailedStatementsAgreeWithOracle: on histories whose recorder logged transactions as
// committed although a statement of theirs failed, each reading of them gives, at every
// serializability level, the verdict of the brute-force oracle over the executions the
// reading stands for.
func TestFailedStatementsAgreeWithOracle(t *testing.T) {
	t.Parallel()
	n := 1500
	if testing.Short() {
		n = 300
	}
	tally := histtest.FailedDifferential(t, n, 6, allLevels, failedGen,
		func(ctx context.Context, h *history.History, l anomaly.Level) (*report.Report, error) {
			return Check(ctx, h, l, Options{})
		},
		func(h *history.History, l anomaly.Level) bool { return oracle(h, l, 0) }, false)
	t.Logf("%d histories: %d passes, %d failures", tally.Histories, tally.Pass, tally.Fail)
	if tally.Pass == 0 || tally.Fail == 0 {
		t.Fatalf("the histories should both pass and fail somewhere: %+v", tally)
	}
}

func failedGen(seed uint64) histtest.GenOptions {
	o := histtest.GenOptions{Txns: 3 + int(seed%4), Sessions: 3, Keys: 2 + int(seed%2), OpsPerTxn: 2 + int(seed%2),
		Concurrency: 1 + int(seed%3), FailedRatio: 0.4, Intervals: true, EarlyGiveUp: seed%2 == 0}
	if seed%5 == 1 {
		o.UnknownRatio, o.AbortRatio = 0.15, 0.15
	}
	if seed%7 == 3 {
		o.ListAppend = true
	}
	return o
}
