package weak_test

import (
	"context"
	"testing"

	"isovet/history"
	"isovet/internal/anomaly"
	"isovet/internal/check/weak"
	"isovet/internal/histtest"
	"isovet/internal/report"
)

// FuzzCheck checks read committed, and with unique values read atomic and causal, against
// the brute-force oracles on small histories in the test DSL (a history with predicates is
// left Unknown, which the agreement skips).
func FuzzCheck(f *testing.F) {
	for _, s := range histtest.FuzzSeeds() {
		f.Add(s)
	}
	f.Add("s1: T1 a(x,1) a(y,1) c\ns2: T2 r(y,[1]) a(x,2) c\ns3: T3 r(x,[2]) c")
	f.Add("init 0\ns1: T1 w(x,1) r(y,2) c\ns2: T2 w(y,2) r(x,1) c")
	f.Add("init 0\ns1: T1 w(x,1) w(y,1) c\ns2: T2 r(x,1) r(y,0) c")
	f.Add("init 0\ns1: T1 w(x,1) c\ns2: T2 r(x,1) w(y,1) c\ns3: T3 r(y,1) r(x,0) c")
	f.Fuzz(func(t *testing.T, src string) {
		h, ok := histtest.ParseSmall(src, 6, 30)
		if !ok {
			return
		}
		levels := []anomaly.Level{anomaly.ReadCommitted}
		if history.Summarize(h).UniqueWrites {
			levels = append(levels, anomaly.ReadAtomic, anomaly.Causal) // oracleAt needs unique values
		}
		histtest.AgreeWithOracle(t, h, levels,
			func(ctx context.Context, l anomaly.Level) (*report.Report, error) {
				return weak.Check(ctx, h, l, weak.Options{})
			},
			func(l anomaly.Level) bool { return oracleAt(h, l) },
			func(error) bool { return false })
	})
}
