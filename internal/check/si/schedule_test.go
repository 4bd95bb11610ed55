package si_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/certify"
	"github.com/isovet/isovet/internal/check/si"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// scheduled reports whether rep passed through the scheduled witness (schedule.go): its
// last phase is "schedule".
func scheduled(rep *report.Report) bool {
	ph := rep.Stats.Phases
	return rep.Verdict == report.Pass && len(ph) > 0 && ph[len(ph)-1].Name == "schedule"
}

// blindHistory is a random history in the shape of Vbox's BlindW: every transaction only
// reads or only writes (one to three operations), values are unique, so most written
// versions are never read (blind writes nobody reads, which need no WW choice among
// themselves in any witness). It is snapshot-isolated or serial, then perturbed (reads
// corrupted; client intervals shuffled, so the time hint points the wrong way).
func blindHistory(seed uint64) *history.History {
	r := rand.New(rand.NewPCG(seed, 0xb1))
	o := histtest.GenOptions{
		Txns:        3 + r.IntN(5),
		Sessions:    2 + r.IntN(3),
		Keys:        1 + r.IntN(3),
		OpsPerTxn:   1 + r.IntN(3),
		ReadRatio:   []float64{0.3, 0.5, 0.7}[r.IntN(3)],
		Concurrency: 1 + r.IntN(3),
		AbortRatio:  []float64{0, 0.1}[r.IntN(2)],
		Intervals:   true,
		Perturb:     []float64{0, 0, 0.2, 0.5}[r.IntN(4)],
	}
	if o.OpsPerTxn > 1 && r.IntN(2) == 0 {
		o.OpsPerTxn = 1 // every transaction a single read or a single blind write
	}
	h := histtest.Gen(seed, o)
	if r.IntN(3) == 0 {
		// A misleading hint: intervals in a random order.
		perm := r.Perm(len(h.Txns))
		ivs := make([]history.Interval, len(h.Txns))
		for i := range h.Txns {
			ivs[i] = h.Txns[perm[i]].Time
		}
		for i := range h.Txns {
			h.Txns[i].Time = ivs[i]
		}
	}
	return h
}

// TestDifferentialSchedule compares both paths (the scheduled witness first, and the
// pairwise choices alone) with the brute-force oracle on 8,000 BlindW-shaped histories at
// snapshot isolation and strong-session SI.
func TestDifferentialSchedule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n := 8000
	if testing.Short() {
		n = 1000
	}
	levels := []anomaly.Level{anomaly.SnapshotIsolation, anomaly.StrongSessionSI}
	var pass, fail, viaSchedule [2]int
	checked := 0
	for seed := uint64(0); checked < n; seed++ {
		h := blindHistory(seed)
		if counted(h) > 6 {
			continue
		}
		checked++
		for li, l := range levels {
			want := oracle(h, l)
			for _, no := range []bool{false, true} {
				rep, err := si.Check(ctx, h, l, si.Options{Shortcuts: skipIf(no, certify.SkipSchedule) | skipIf(seed%2 == 0, certify.SkipBasic) | certify.SkipRows | certify.SkipSnapshots})
				if err != nil {
					t.Fatalf("seed %d: Check(%s): %v", seed, l, err)
				}
				if got := rep.Verdict == report.Pass; got != want || rep.Verdict == report.Unknown {
					t.Fatalf("seed %d: Check(%s, SkipSchedule=%v) = %v, oracle says pass=%v\n%s\nanomalies: %+v", seed, l, no, rep.Verdict, want, histtest.Format(h), rep.Anomalies)
				}
				if rep.Verdict == report.Fail && (len(rep.Anomalies) == 0 || rep.Anomalies[0].Message == "" || len(rep.Anomalies[0].Cycle) == 0 && rep.Anomalies[0].Kind == anomaly.GSingle) {
					t.Fatalf("seed %d: Check(%s, SkipSchedule=%v) fails without an explained cycle: %+v", seed, l, no, rep.Anomalies)
				}
				if no && scheduled(rep) {
					t.Fatalf("seed %d: SkipSchedule passed through the schedule", seed)
				}
				if !no && scheduled(rep) {
					viaSchedule[li]++
				}
			}
			if want {
				pass[li]++
			} else {
				fail[li]++
			}
		}
	}
	for li, l := range levels {
		t.Logf("%s: %d histories, %d pass (%d through the schedule), %d fail", l, checked, pass[li], viaSchedule[li], fail[li])
		// The schedule must carry most passes of these histories, or the test exercises
		// nothing new.
		if viaSchedule[li] < pass[li]/2 {
			t.Errorf("%s: only %d of %d passes went through the schedule", l, viaSchedule[li], pass[li])
		}
	}
}
