package si_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/check/si"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// TestSnapshotsEndToEnd: histories of a simulated PostgreSQL-like database, with snapshots
// and ids but no timestamps, some with faults (stale reads, lost updates, snapshots that
// misreport what the reads used, unknown outcomes). The timestamps derived from the
// snapshots, and every route of the checker after them, must agree with the brute-force
// oracle wherever it decides; clean runs must pass on the derived timestamps.
func TestSnapshotsEndToEnd(t *testing.T) {
	t.Parallel()
	n := histtest.MVCCAgree(t, 12000, 77, true,
		func(h *history.History) (*report.Report, error) {
			return si.Check(context.Background(), h, anomaly.SnapshotIsolation, si.Options{})
		},
		func(h *history.History) bool { return oracle(h, anomaly.SnapshotIsolation) },
		func(f histtest.MVCCFaults, h *history.History, rep *report.Report) {
			if f != (histtest.MVCCFaults{}) {
				return
			}
			cert := slices.ContainsFunc(rep.Notes, func(s string) bool { return strings.Contains(s, "derived from its snapshots") })
			committed := slices.ContainsFunc(h.Txns, func(x history.Txn) bool { return x.Committed() })
			if !h.DerivedTimestamps() || rep.Verdict != report.Pass || committed && !cert {
				t.Fatalf("a clean run: derived %v (%v), verdict %s, on the derived timestamps %v; notes %v\n%s", h.DerivedTimestamps(), h.SnapshotErr, rep.Verdict, cert, rep.Notes, histtest.Format(h))
			}
		})
	t.Logf("%d clean and %d faulty runs: timestamps derived for %d, passed on them %d; %d not SI (oracle), %d failed, %d unknown", n.Clean, n.Faulty, n.Derived, n.OnDerived, n.OracleFails, n.Failed, n.Unknown)
	if n.OracleFails < n.Faulty/10 {
		t.Errorf("only %d of %d faulty runs are not SI: the faults test too little", n.OracleFails, n.Faulty)
	}
}
