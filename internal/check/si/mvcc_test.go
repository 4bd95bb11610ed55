package si_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"isovet/history"
	"isovet/internal/anomaly"
	"isovet/internal/check/si"
	"isovet/internal/histtest"
	"isovet/internal/report"
)

// TestSnapshotsEndToEnd: histories of a simulated PostgreSQL-like database, with snapshots
// and ids but no timestamps, some with faults (stale reads, lost updates, snapshots that
// misreport what the reads used, unknown outcomes). The timestamps derived from the
// snapshots, and every route of the checker after them, must agree with the brute-force
// oracle wherever it decides; clean runs must pass on the derived timestamps.
func TestSnapshotsEndToEnd(t *testing.T) {
	t.Parallel()
	var derived, byCert, clean, faulty, failed, unknown, notSI int
	for seed := range uint64(12000) {
		rng := rand.New(rand.NewPCG(seed, 77))
		var f histtest.MVCCFaults
		if seed%2 == 1 {
			for f == (histtest.MVCCFaults{}) {
				f = histtest.MVCCFaults{StaleRead: rng.IntN(2) == 0, NoFCW: rng.IntN(2) == 0, WrongSnap: rng.IntN(2) == 0, UnknownEnds: rng.IntN(3) == 0}
			}
		}
		h := histtest.GenMVCC(rng, f)
		if h.DerivedTimestamps() {
			derived++
		}
		rep, err := si.Check(context.Background(), h, anomaly.SnapshotIsolation, si.Options{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		want := oracle(h, anomaly.SnapshotIsolation)
		if !want {
			notSI++
		}
		if rep.Verdict != report.Unknown && (rep.Verdict == report.Pass) != want {
			t.Fatalf("seed %d (%+v): checker %s, oracle pass=%v; snapshots: %v\n%s\n%v %v", seed, f, rep.Verdict, want, h.SnapshotErr, histtest.Format(h), rep.Anomalies, rep.Notes)
		}
		switch rep.Verdict {
		case report.Fail:
			failed++
		case report.Unknown:
			unknown++
		}
		cert := slices.ContainsFunc(rep.Notes, func(s string) bool { return strings.Contains(s, "derived from its snapshots") })
		if cert {
			byCert++
		}
		if f == (histtest.MVCCFaults{}) {
			clean++
			committed := slices.ContainsFunc(h.Txns, func(x history.Txn) bool { return x.Committed() })
			if !h.DerivedTimestamps() || rep.Verdict != report.Pass || committed && !cert {
				t.Fatalf("seed %d: a clean run: derived %v (%v), verdict %s, on the derived timestamps %v; notes %v\n%s", seed, h.DerivedTimestamps(), h.SnapshotErr, rep.Verdict, cert, rep.Notes, histtest.Format(h))
			}
		} else {
			faulty++
		}
	}
	t.Logf("%d clean and %d faulty runs: timestamps derived for %d, passed on them %d; %d not SI (oracle), %d failed, %d unknown", clean, faulty, derived, byCert, notSI, failed, unknown)
	if notSI < faulty/10 {
		t.Errorf("only %d of %d faulty runs are not SI: the faults test too little", notSI, faulty)
	}
}
