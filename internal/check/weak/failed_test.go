package weak_test

import (
	"context"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/check/weak"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// TestFailedStatementsAgreeWithOracle: on histories whose recorder logged transactions as
// committed although a statement of theirs failed, each reading of them gives, at read
// committed, read atomic and causal consistency, the verdict of the brute-force oracle over
// the executions the reading stands for, wherever the checker decides (a failed read may
// repeat a written value, which these levels can leave undecided; they are counted).
func TestFailedStatementsAgreeWithOracle(t *testing.T) {
	t.Parallel()
	n := 1500
	if testing.Short() {
		n = 300
	}
	tally := histtest.FailedDifferential(t, n, 6, weak.Levels, func(seed uint64) histtest.GenOptions {
		o := histtest.GenOptions{Txns: 3 + int(seed%4), Sessions: 3, Keys: 2 + int(seed%2), OpsPerTxn: 1 + int(seed%3),
			Concurrency: 1 + int(seed%4), FailedRatio: 0.4}
		if seed%5 == 1 {
			o.UnknownRatio, o.AbortRatio = 0.15, 0.15
		}
		if seed%3 == 0 {
			o.ListAppend, o.Txns = true, 3+int(seed%3)
		}
		return o
	},
		func(ctx context.Context, h *history.History, l anomaly.Level) (*report.Report, error) {
			return weak.Check(ctx, h, l, weak.Options{})
		}, oracleAt, true)
	t.Logf("%d histories: %d passes, %d failures, %d unknown", tally.Histories, tally.Pass, tally.Fail, tally.Unknown)
	if tally.Pass == 0 || tally.Fail == 0 || tally.Unknown*10 > tally.Pass+tally.Fail {
		t.Fatalf("want both verdicts and few unknowns: %+v", tally)
	}
}
