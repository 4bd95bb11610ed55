package ser

import (
	"context"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// TestSnapshotsEndToEnd: histories of a simulated PostgreSQL-like database at snapshot
// isolation, with snapshots and ids but no timestamps (so reading derives them), some with
// faults. Serializability, decided on the derived commit order where the row certificate
// replays and by the search elsewhere, must agree with the brute-force oracle wherever it
// decides; the write skews snapshot isolation allows must fail.
func TestSnapshotsEndToEnd(t *testing.T) {
	t.Parallel()
	n := histtest.MVCCAgree(t, 8000, 78, false,
		func(h *history.History) (*report.Report, error) {
			return Check(context.Background(), h, anomaly.Serializable, Options{})
		},
		func(h *history.History) bool { return oracle(h, anomaly.Serializable, 0) }, nil)
	t.Logf("8000 runs: passed on the derived commit order %d; %d not serializable (oracle), %d failed, %d unknown", n.OnDerived, n.OracleFails, n.Failed, n.Unknown)
	if n.OracleFails < 400 || n.OnDerived < 2000 {
		t.Errorf("%d not serializable, %d passed on the derived order: the test tests too little", n.OracleFails, n.OnDerived)
	}
}
