package histtest

import (
	"context"
	"testing"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

// FailedTally counts what [FailedDifferential] saw.
type FailedTally struct {
	Histories int // checked histories with a transaction logged committed that holds a failed statement
	Pass      int // verdicts (every reading and level) that passed
	Fail      int
	Unknown   int
}

// FailedDifferential is the differential test of failed statements for one checker: on n
// random histories in which a recorder logged transactions as committed although one of
// their statements failed ([GenOptions.FailedRatio]), the checker, given the history that
// [history.ResolveFailed] makes of it under each reading, agrees at each level with the
// brute-force oracle run on the histories the reading stands for ([FailedWorlds] for
// uncertain, [FailedWorld] for rolled-back and skipped). The oracle never sees the
// resolved history: it enumerates both outcomes of each such transaction itself. gen gives
// the options for a seed; histories whose oracle would enumerate too much (more than
// maxCounted committed or unknown transactions) are passed over. An Unknown verdict counts
// as disagreement unless allowUnknown.
func FailedDifferential(t *testing.T, n, maxCounted int, levels []anomaly.Level, gen func(seed uint64) GenOptions,
	check func(ctx context.Context, h *history.History, l anomaly.Level) (*report.Report, error),
	oracle func(h *history.History, l anomaly.Level) bool, allowUnknown bool) FailedTally {
	t.Helper()
	var tally FailedTally
	for seed := uint64(0); tally.Histories < n; seed++ {
		h := Gen(seed, gen(seed))
		flagged := len(FailedCommitted(h))
		if flagged == 0 || countedTxns(h) > maxCounted {
			continue
		}
		tally.Histories++
		for _, reading := range []history.FailedReading{history.FailedUncertain, history.FailedRolledBack, history.FailedSkipped} {
			r, res, err := history.ResolveFailed(h, reading)
			if err != nil {
				t.Fatalf("seed %d: ResolveFailed(%s): %v", seed, reading, err)
			}
			if len(res.Committed) != flagged {
				t.Fatalf("seed %d: ResolveFailed names %d transactions, want %d", seed, len(res.Committed), flagged)
			}
			for _, level := range levels {
				want := readingOracle(h, reading, level, oracle)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				rep, err := check(ctx, r, level)
				cancel()
				if err != nil {
					t.Fatalf("seed %d, %s, %s: %v\n%s", seed, reading, level, err, Format(h))
				}
				if !tally.add(rep.Verdict, want, allowUnknown) {
					t.Fatalf("seed %d, reading %s, %s: checker %s, oracle pass=%v\n%s\nanomalies: %+v", seed, reading, level, rep.Verdict, want, Format(h), rep.Anomalies)
				}
			}
		}
	}
	return tally
}

// countedTxns is the number of transactions of h the oracle enumerates both outcomes of:
// the committed and the unknown.
func countedTxns(h *history.History) int {
	counted := 0
	for i := range h.Txns {
		if h.Txns[i].Outcome != history.OutcomeAborted {
			counted++
		}
	}
	return counted
}

// readingOracle is the oracle's verdict on h at level under reading: on the one history
// rolled-back or skipped stands for, or, uncertain, whether any of [FailedWorlds] passes.
func readingOracle(h *history.History, reading history.FailedReading, level anomaly.Level, oracle func(h *history.History, l anomaly.Level) bool) bool {
	switch reading {
	case history.FailedRolledBack:
		return oracle(FailedWorld(h, true), level)
	case history.FailedSkipped:
		return oracle(FailedWorld(h, false), level)
	}
	for w := range FailedWorlds(h) {
		if oracle(w, level) {
			return true
		}
	}
	return false
}

// add counts the checker's verdict v where the oracle says want (pass or not) and says
// whether they agree; an Unknown agrees only when allowUnknown.
func (ft *FailedTally) add(v report.Verdict, want, allowUnknown bool) bool {
	switch {
	case v == report.Unknown && allowUnknown:
		ft.Unknown++
	case v == report.Unknown || (v == report.Pass) != want:
		return false
	case want:
		ft.Pass++
	default:
		ft.Fail++
	}
	return true
}
