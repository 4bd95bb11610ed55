package weak_test

import (
	"context"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/internal/check/weak"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// BenchmarkCheck checks a generated snapshot-isolated history of 100,000 transactions (8
// sessions, 1,000 keys, 4 operations each) at each weak level; all three pass.
func BenchmarkCheck(b *testing.B) {
	h := histtest.Gen(1, histtest.GenOptions{Txns: 100_000, Sessions: 8, Keys: 1000, OpsPerTxn: 4, Concurrency: 4})
	for _, l := range []anomaly.Level{anomaly.ReadCommitted, anomaly.ReadAtomic, anomaly.Causal} {
		b.Run(l.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rep, err := weak.Check(context.Background(), h, l, weak.Options{})
				if err != nil || rep.Verdict != report.Pass {
					b.Fatalf("%v, %v %v", err, rep.Verdict, rep.Notes)
				}
			}
		})
	}
}
