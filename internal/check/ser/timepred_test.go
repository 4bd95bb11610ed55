package ser

import (
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/internal/certify"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// TestTimePredicateMissingInterval: T2's predicate did not return x, so it saw a version of
// x on which the predicate is false: the initial one, if T1 (no interval) came after T2.
// Read as [0,0], T1's interval would put T1 before T2 and leave T2 only T1's matching
// version (a false phantom); unbounded, T1 may follow T2, and the pass is Unknown.
func TestTimePredicateMissingInterval(t *testing.T) {
	h := histtest.MustParse("init 0\ns1: T1 w(x,2)\ns2: T2 @[5,6] pr(\"v in [2, 2]\", [])\ns3: T3 @[7,8] w(y,1)")
	for _, nf := range []bool{false, true} {
		rep := check(t, h, anomaly.StrictSerializable, Options{Shortcuts: skipIf(nf, certify.SkipShortcuts)})
		if rep.Verdict != report.Unknown {
			t.Errorf("Check(strict, no shortcuts=%v) = %s, want unknown; %v %q", nf, rep.Verdict, rep.Anomalies, rep.Notes)
		}
	}
	if !oracle(h, anomaly.StrictSerializable, 0) {
		t.Errorf("oracleTime = false, want true")
	}
}
