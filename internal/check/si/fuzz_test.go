package si_test

import (
	"context"
	"errors"
	"testing"

	"isovet/internal/anomaly"
	"isovet/internal/check/si"
	"isovet/internal/deps"
	"isovet/internal/histtest"
	"isovet/internal/report"
)

// FuzzCheck: on any small history the test DSL accepts, the snapshot isolation checker never
// panics, and every verdict it gives at each level agrees with the brute-force oracle.
func FuzzCheck(f *testing.F) {
	for _, s := range histtest.FuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		h, ok := histtest.ParseSmall(src, 6, 30)
		if !ok {
			return
		}
		histtest.AgreeWithOracle(t, h, []anomaly.Level{anomaly.SnapshotIsolation, anomaly.StrongSessionSI, anomaly.StrongSI},
			func(ctx context.Context, l anomaly.Level) (*report.Report, error) {
				return si.Check(ctx, h, l, si.Options{})
			},
			func(l anomaly.Level) bool { return oracle(h, l) },
			func(err error) bool { return errors.Is(err, deps.ErrUnsupported) || errors.Is(err, si.ErrNeedsTime) })
	})
}
