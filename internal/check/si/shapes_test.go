package si_test

import (
	"context"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/certify"
	"github.com/isovet/isovet/internal/check/si"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// shapeHistory is histtest.Shapes as this package's oracle test draws it.
func shapeHistory(seed uint64, nt int) *history.History {
	return histtest.Shapes(seed, nt, 14, false)
}

// TestCheckShapesOracle pins what the shapes of issue #26 reach at the SI levels (closed
// sets of reads decided in deps; write-write conflicts of keys nobody reads kept) to the
// brute-force oracle, on histories of 6 or 7 transactions, and counts the closed-set
// findings so that the test is known to reach them.
func TestCheckShapesOracle(t *testing.T) {
	t.Parallel()
	n := 3000
	if testing.Short() {
		n = 300
	}
	levels := []anomaly.Level{anomaly.SnapshotIsolation, anomaly.StrongSessionSI, anomaly.StrongSI}
	disagree, closed := 0, 0
	for seed := uint64(1); seed <= uint64(n); seed++ {
		h := shapeHistory(seed, 6+int(seed%2))
		for li, level := range levels {
			rep, err := si.Check(context.Background(), h, level, si.Options{Shortcuts: skipIf((seed+uint64(li))%2 == 0, certify.SkipBasic)})
			if err != nil {
				t.Fatalf("seed %d: Check(%s): %v", seed, level, err)
			}
			for _, a := range rep.Anomalies {
				if strings.Contains(a.Message, "each read a value that only others among them wrote") {
					closed++
				}
			}
			want := oracle(h, level)
			if got := rep.Verdict == report.Pass; got != want || rep.Verdict == report.Unknown {
				disagree++
				if disagree <= 5 {
					t.Errorf("seed %d, %s: Check = %v, oracle = %v\n%s\n%v", seed, level, rep.Verdict, want, histtest.Format(h), rep.Anomalies)
				}
			}
		}
	}
	t.Logf("closed-set findings: %d", closed)
	if closed == 0 {
		t.Errorf("no history reached a closed set of reads: the generator no longer tests that shortcut")
	}
	if disagree > 0 {
		t.Errorf("%d disagreements", disagree)
	}
}
