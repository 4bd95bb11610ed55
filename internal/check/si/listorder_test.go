package si_test

import (
	"context"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// TestListOrderIsAWriteDependency: list reads that order two transactions' appends
// differently on two keys show a write cycle (G0); the appenders never read the keys, so
// the witness must not call the order a read or an anti-dependency (which made it a read
// skew).
func TestListOrderIsAWriteDependency(t *testing.T) {
	t.Parallel()
	h := histtest.MustParse("s1: T1 a(x,1) a(y,1)\ns2: T2 a(x,2) a(y,2)\ns3: T3 r(x,[1,2]) r(y,[2,1])")
	for _, level := range []anomaly.Level{anomaly.SnapshotIsolation, anomaly.Serializable} {
		rep, err := check.Check(context.Background(), h, level, check.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Verdict != report.Fail || len(rep.Anomalies) == 0 || rep.Anomalies[0].Kind != anomaly.G0 {
			t.Fatalf("%s: verdict %s, anomalies %v; want G0", level, rep.Verdict, rep.Anomalies)
		}
		if text := histtest.Explanation(rep); strings.Contains(text, "T1 read") || strings.Contains(text, "T2 read") {
			t.Errorf("%s: the explanation calls an append a read:\n%s", level, text)
		}
	}
}
