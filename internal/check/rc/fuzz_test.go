package rc_test

import (
	"context"
	"testing"

	"isovet/internal/anomaly"
	"isovet/internal/check/rc"
	"isovet/internal/histtest"
	"isovet/internal/report"
)

// FuzzCheck checks read committed against the brute-force oracle on small histories in the
// test DSL (a history with predicates is left Unknown, which the agreement skips).
func FuzzCheck(f *testing.F) {
	for _, s := range histtest.FuzzSeeds() {
		f.Add(s)
	}
	f.Add("s1: T1 a(x,1) a(y,1) c\ns2: T2 r(y,[1]) a(x,2) c\ns3: T3 r(x,[2]) c")
	f.Add("init 0\ns1: T1 w(x,1) r(y,2) c\ns2: T2 w(y,2) r(x,1) c")
	f.Fuzz(func(t *testing.T, src string) {
		h, ok := histtest.ParseSmall(src, 6, 30)
		if !ok {
			return
		}
		histtest.AgreeWithOracle(t, h, []anomaly.Level{anomaly.ReadCommitted},
			func(ctx context.Context, l anomaly.Level) (*report.Report, error) {
				return rc.Check(ctx, h, l, rc.Options{})
			},
			func(anomaly.Level) bool { return oracle(h) },
			func(error) bool { return false })
	})
}
