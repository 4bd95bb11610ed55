package ser

import (
	"context"
	"errors"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// FuzzCheck: on any small history the test DSL accepts (items, lists, predicates, inserts
// and deletes, unknown outcomes, intervals), the checker never panics, and every verdict it
// gives at each level agrees with the brute-force oracle.
func FuzzCheck(f *testing.F) {
	for _, s := range histtest.FuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		h, ok := histtest.ParseSmall(src, 7, 40)
		if !ok {
			return
		}
		histtest.AgreeWithOracle(t, h, allLevels,
			func(ctx context.Context, l anomaly.Level) (*report.Report, error) { return Check(ctx, h, l, Options{}) },
			func(l anomaly.Level) bool { return oracle(h, l, 0) },
			func(err error) bool { return errors.Is(err, deps.ErrUnsupported) || errors.Is(err, ErrNeedsTime) })
	})
}
