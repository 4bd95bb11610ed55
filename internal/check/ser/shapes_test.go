package ser

import (
	"context"
	"strings"
	"testing"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/certify"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// shapeHistory is histtest.Shapes as this package's oracle test draws it.
func shapeHistory(seed uint64, nt int) *history.History {
	return histtest.Shapes(seed, nt, 12, true)
}

// TestCheckShapesOracle pins the shortcuts for these shapes (closed sets of reads decided
// in deps, no write-order constraints for keys no read may read) to the brute-force
// oracle at the three levels, with and without the basic checks, on histories of 6 to 8
// transactions (closed sets are reported from 6 members on, smaller ones are left to the
// pipeline). It also counts the closed-set findings, so that the test is known to reach
// them.
func TestCheckShapesOracle(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 400
	}
	disagree, closed := 0, 0
	for seed := uint64(1); seed <= uint64(n); seed++ {
		h := shapeHistory(seed, 6+int(seed%3))
		for li, level := range allLevels {
			rep, err := Check(context.Background(), h, level, Options{Shortcuts: skipIf((seed+uint64(li))%2 == 0, certify.SkipBasic)})
			if err != nil {
				t.Fatalf("seed %d: Check(%s): %v", seed, level, err)
			}
			for _, a := range rep.Anomalies {
				if strings.Contains(a.Message, "each read a value that only others among them wrote") {
					closed++
				}
			}
			want := oracle(h, level, 0)
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
