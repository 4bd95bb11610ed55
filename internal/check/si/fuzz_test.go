package si_test

import (
	"context"
	"errors"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/internal/check/si"
	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// FuzzCheck: on any small history the test DSL accepts, the snapshot isolation checker never
// panics, and every verdict it gives at each level agrees with the brute-force oracle.
func FuzzCheck(f *testing.F) {
	for _, s := range histtest.FuzzSeeds() {
		f.Add(s)
	}
	// Histories whose clocks describe an SI execution without a serial order, for the
	// snapshot certificate: a write skew, and a predicate one.
	f.Add("s0: T0 w(x,0) w(y,0) c @[1,2] ts[1,2]\ns1: T1 r(x,0) r(y,0) w(x,1) c @[3,6] ts[3,5]\ns2: T2 r(x,0) r(y,0) w(y,1) c @[4,7] ts[4,6]\ns1: T3 r(x,1) r(y,1) c @[8,9] ts[7,7]")
	f.Add("s1: T1 pr(\"v in [0, 9]\", []) ins(a,1) c @[1,5]\ns2: T2 pr(\"v in [0, 9]\", []) ins(b,2) c @[2,6]\ns1: T3 pr(\"v in [0, 9]\", [a=1, b=2]) c @[7,8]")
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
