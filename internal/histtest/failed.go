package histtest

import (
	"context"
	"testing"
	"time"

	"isovet/history"
	"isovet/internal/anomaly"
	"isovet/internal/report"
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
		flagged, counted := len(FailedCommitted(h)), 0
		for i := range h.Txns {
			if h.Txns[i].Outcome != history.OutcomeAborted {
				counted++
			}
		}
		if flagged == 0 || counted > maxCounted {
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
				var want bool
				switch reading {
				case history.FailedRolledBack:
					want = oracle(FailedWorld(h, true), level)
				case history.FailedSkipped:
					want = oracle(FailedWorld(h, false), level)
				default:
					for w := range FailedWorlds(h) {
						if oracle(w, level) {
							want = true
							break
						}
					}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				rep, err := check(ctx, r, level)
				cancel()
				if err != nil {
					t.Fatalf("seed %d, %s, %s: %v\n%s", seed, reading, level, err, Format(h))
				}
				switch {
				case rep.Verdict == report.Unknown && allowUnknown:
					tally.Unknown++
				case rep.Verdict == report.Unknown || (rep.Verdict == report.Pass) != want:
					t.Fatalf("seed %d, reading %s, %s: checker %s, oracle pass=%v\n%s\nanomalies: %+v", seed, reading, level, rep.Verdict, want, Format(h), rep.Anomalies)
				case want:
					tally.Pass++
				default:
					tally.Fail++
				}
			}
		}
	}
	return tally
}
