package si_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/certify"
	"github.com/isovet/isovet/internal/check/si"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// diffHistories is how many random histories TestDifferential checks (each at both SI
// levels, with and without the basic checks, plus the SER implication).
const diffHistories = 20000

// genOptions picks the shape of history seed generates: 2–8 transactions over 2–4
// sessions and 2–3 keys, serial or snapshot-isolated with first committer wins, with
// duplicate values, aborts, unknown outcomes, perturbed reads and a quarter list-append.
func genOptions(seed uint64) histtest.GenOptions {
	r := rand.New(rand.NewPCG(seed, 0x51))
	o := histtest.GenOptions{
		Txns:         2 + r.IntN(7),
		Sessions:     2 + r.IntN(3),
		Keys:         2 + r.IntN(2),
		OpsPerTxn:    1 + r.IntN(4),
		Concurrency:  1 + r.IntN(3),
		DupRatio:     []float64{0, 0.2, 0.5}[r.IntN(3)],
		AbortRatio:   []float64{0, 0.1}[r.IntN(2)],
		UnknownRatio: []float64{0, 0.15}[r.IntN(2)],
		ListAppend:   r.IntN(4) == 0,
		Intervals:    true,
		Perturb:      []float64{0, 0.2, 0.5}[r.IntN(3)],
	}
	if o.ListAppend {
		o.DupRatio = 0 // appended elements are unique in list-append histories (Elle)
	}
	return o
}

// counted is the number of committed plus unknown-outcome transactions.
func counted(h *history.History) int {
	n := 0
	for i := range h.Txns {
		if h.Txns[i].Outcome != history.OutcomeAborted {
			n++
		}
	}
	return n
}

// TestDifferential compares the checker with the brute-force oracle on random histories
// at snapshot isolation and strong-session SI (strong SI too: the histories carry client
// intervals), and checks that SER passing implies SI passing at each pair of levels.
func TestDifferential(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n := diffHistories
	if testing.Short() {
		n = 2000
	}
	pairs := []struct{ si, ser anomaly.Level }{
		{anomaly.SnapshotIsolation, anomaly.Serializable},
		{anomaly.StrongSessionSI, anomaly.StrongSessionSerializable},
		{anomaly.StrongSI, anomaly.StrictSerializable},
	}
	var stats [3][3]int // level × {pass, fail, solver}
	checked := 0
	for seed := uint64(0); checked < n; seed++ {
		o := genOptions(seed)
		h := histtest.Gen(seed, o)
		if counted(h) > 6 {
			continue
		}
		checked++
		for li, p := range pairs {
			want := oracle(h, p.si)
			for _, skip := range []bool{false, true} {
				rep, err := si.Check(ctx, h, p.si, si.Options{Shortcuts: skipIf(skip, certify.SkipBasic)})
				if err != nil {
					t.Fatalf("seed %d: Check(%s): %v\n%s", seed, p.si, err, histtest.Format(h))
				}
				if got := rep.Verdict == report.Pass; got != want || rep.Verdict == report.Unknown {
					t.Fatalf("seed %d: Check(%s, skipBasic=%v) = %v, oracle says pass=%v\n%s\nanomalies: %+v", seed, p.si, skip, rep.Verdict, want, histtest.Format(h), rep.Anomalies)
				}
				if !skip {
					if want {
						stats[li][0]++
					} else {
						stats[li][1]++
					}
					if rep.Stats.SATVars > 0 {
						stats[li][2]++
					}
				}
			}
			ser, err := check.Check(ctx, h, p.ser, check.Options{})
			if err != nil {
				t.Fatalf("seed %d: Check(%s): %v", seed, p.ser, err)
			}
			if ser.Verdict == report.Pass && !want {
				t.Fatalf("seed %d: %s passes but %s fails\n%s", seed, p.ser, p.si, histtest.Format(h))
			}
			viaCheck, err := check.Check(ctx, h, p.si, check.Options{Method: check.MethodBlackBox})
			if err != nil || (viaCheck.Verdict == report.Pass) != want {
				t.Fatalf("seed %d: check.Check(%s) = %v, %v; want pass=%v", seed, p.si, viaCheck.Verdict, err, want)
			}
		}
	}
	for li, p := range pairs {
		t.Logf("%s: %d histories, %d pass, %d fail, %d reached the solver", p.si, checked, stats[li][0], stats[li][1], stats[li][2])
	}
}

// TestDifferentialUntimed compares the checker with the oracle on histories without client
// time, where plain snapshot isolation first tries the session level (passBySession): a
// pass there must be a pass, and a failure there must not decide the plain level.
func TestDifferentialUntimed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n := diffHistories / 4
	if testing.Short() {
		n = 500
	}
	viaSession := 0
	checked := 0
	for seed := uint64(1 << 40); checked < n; seed++ {
		o := genOptions(seed)
		o.Intervals = false
		h := histtest.Gen(seed, o)
		if counted(h) > 6 {
			continue
		}
		checked++
		for _, l := range []anomaly.Level{anomaly.SnapshotIsolation, anomaly.StrongSessionSI} {
			rep, err := si.Check(ctx, h, l, si.Options{})
			if err != nil {
				t.Fatalf("seed %d: Check(%s): %v\n%s", seed, l, err, histtest.Format(h))
			}
			if want := oracle(h, l); (rep.Verdict == report.Pass) != want || rep.Verdict == report.Unknown {
				t.Fatalf("seed %d: Check(%s) = %v, oracle says pass=%v\n%s\nnotes %q", seed, l, rep.Verdict, want, histtest.Format(h), rep.Notes)
			}
			if l == anomaly.SnapshotIsolation && rep.Verdict == report.Pass && len(rep.Notes) > 0 && strings.HasPrefix(rep.Notes[0], "passed by passing strong-session") {
				viaSession++
			}
		}
	}
	if viaSession == 0 {
		t.Errorf("no history passed snapshot isolation through the session level")
	}
	t.Logf("%d histories; %d passed snapshot isolation through the session level", checked, viaSession)
}

// skipIf returns s when skip, and no skip otherwise.
func skipIf(skip bool, s certify.Skip) certify.Skip {
	if skip {
		return s
	}
	return 0
}
