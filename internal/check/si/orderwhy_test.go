package si

import (
	"context"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// TestOrderWhy: a step saying one transaction overwrote another's version says how the
// history shows that order (here: the overwriter read the version first).
func TestOrderWhy(t *testing.T) {
	t.Parallel()
	h := histtest.MustParse("init 0\ns1: T1 w(x,1)\ns2: T2 r(x,1) w(x,2) w(y,2)\ns3: T3 r(x,1) r(y,2)")
	rep, err := Check(context.Background(), h, anomaly.SnapshotIsolation, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != report.Fail || len(rep.Anomalies) == 0 {
		t.Fatalf("verdict %s, want fail", rep.Verdict)
	}
	const want = "T3 read x=1 (written by T1), which T2 overwrote with x=2 (T2 read T1's version before writing its own)"
	if text := histtest.Explanation(rep); !strings.Contains(text, want) {
		t.Errorf("the explanation lacks %q:\n%s", want, text)
	}
}
