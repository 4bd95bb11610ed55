package runner

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/memdb"
	"github.com/isovet/isovet/internal/workload"
)

// runMem runs a generated workload on a fresh memdb and returns the history.
func runMem(t *testing.T, mo memdb.Options, w *workload.Workload) *history.History {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Run(ctx, &MemDB{Opts: mo}, w, RunOptions{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res.History
}

func gen(t *testing.T, name string, o workload.Options) *workload.Workload {
	t.Helper()
	w, err := workload.Generate(name, o)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// noSIChecker reports whether rep is Unknown only because no complete checker for its level
// has landed (the SI black-box checker is pending).
func noChecker(rep *check.Report) bool {
	if rep.Verdict != check.Unknown {
		return false
	}
	for _, n := range rep.Notes {
		if strings.Contains(n, "no complete checker") {
			return true
		}
	}
	return false
}

func kinds(rep *check.Report) []anomaly.Kind {
	var ks []anomaly.Kind
	for _, a := range rep.Anomalies {
		ks = append(ks, a.Kind)
		ks = append(ks, a.Also...)
	}
	return ks
}

func kindNames(ks []anomaly.Kind) string {
	var s []string
	for _, k := range ks {
		s = append(s, k.Info().Name)
	}
	return strings.Join(s, ", ")
}

func mustCheck(t *testing.T, h *history.History, l check.Level, m check.Method) *check.Report {
	t.Helper()
	rep, err := check.Check(context.Background(), h, l, check.Options{Method: m})
	if err != nil {
		t.Fatalf("Check(%s): %v", l, err)
	}
	return rep
}

// TestMemDBCleanModes: every clean mode passes its own level on every workload.
func TestMemDBCleanModes(t *testing.T) {
	t.Parallel()
	for _, mode := range []memdb.Mode{memdb.Serializable, memdb.SnapshotIsolation, memdb.ReadCommitted} {
		for _, wl := range []string{"rw-register", "list-append", "bank", "rmw", "write-skew", "tpcc", "twitter", "rubis"} {
			t.Run(mode.String()+"/"+wl, func(t *testing.T) {
				t.Parallel()
				w := gen(t, wl, workload.Options{Seed: 3, Sessions: 6, TxnsPerSess: 60, Keys: 16})
				h := runMem(t, memdb.Options{Mode: mode, Seed: 3}, w)
				level := LevelOf(mode)
				rep := mustCheck(t, h, level, check.MethodAuto)
				switch {
				case rep.Verdict == check.Pass:
				case mode == memdb.ReadCommitted && noChecker(rep):
					// No complete read-committed checker exists; the basic checks found nothing.
					t.Logf("read-committed: basic checks only, nothing found (%s)", rep.Notes)
				case mode == memdb.SnapshotIsolation && noChecker(rep):
					t.Skip("no snapshot-isolation checker has landed yet: check.Check returned Unknown (basic checks only)")
				default:
					t.Fatalf("Check(%s) on memdb %s = %v (checker %s), want pass; anomalies: %s", level, mode, rep.Verdict, rep.Checker, kindNames(kinds(rep)))
				}
			})
		}
	}
}

// faultCase is one row of the fault table: memdb mode and fault, a workload that gives the
// fault a chance, and the levels that must catch it with one of the expected anomaly names.
type faultCase struct {
	fault    memdb.Fault
	mode     memdb.Mode
	workload string
	gen      workload.Options
	catches  []catch
}

type catch struct {
	level  check.Level
	method check.Method
	want   []anomaly.Kind
}

var faultCases = []faultCase{
	{memdb.LostUpdate, memdb.SnapshotIsolation, "rmw", workload.Options{Keys: 2}, []catch{
		{check.Serializable, check.MethodBlackBox, []anomaly.Kind{anomaly.LostUpdate}},
		{check.SnapshotIsolation, check.MethodAuto, []anomaly.Kind{anomaly.LostUpdate, anomaly.NoConflict}},
	}},
	{memdb.LostUpdate, memdb.Serializable, "rmw", workload.Options{Keys: 2}, []catch{
		{check.Serializable, check.MethodBlackBox, []anomaly.Kind{anomaly.LostUpdate}},
	}},
	// Read-heavy: only read-only transactions commit stale reads (writers are validated).
	{memdb.StaleRead, memdb.Serializable, "rw-register", workload.Options{Keys: 16, OpsPerTxn: 4, TxnsPerSess: 50, ReadRatio: 0.9}, []catch{
		{check.StrictSerializable, check.MethodBlackBox, []anomaly.Kind{anomaly.StaleRead}},
	}},
	{memdb.FracturedRead, memdb.SnapshotIsolation, "bank", workload.Options{Keys: 4}, []catch{
		{check.Serializable, check.MethodBlackBox, []anomaly.Kind{anomaly.FracturedRead, anomaly.ReadSkew}},
		{check.SnapshotIsolation, check.MethodAuto, []anomaly.Kind{anomaly.FracturedRead, anomaly.ReadSkew, anomaly.ExtViolation}},
	}},
	{memdb.LongFork, memdb.SnapshotIsolation, "long-fork", workload.Options{}, []catch{
		{check.Serializable, check.MethodBlackBox, []anomaly.Kind{anomaly.LongFork}},
		{check.SnapshotIsolation, check.MethodAuto, []anomaly.Kind{anomaly.LongFork, anomaly.ExtViolation}},
	}},
	{memdb.AbortedRead, memdb.ReadCommitted, "rw-register", workload.Options{Keys: 8, OpsPerTxn: 4}, []catch{
		{check.ReadCommitted, check.MethodAuto, []anomaly.Kind{anomaly.AbortedRead}},
		{check.Serializable, check.MethodAuto, []anomaly.Kind{anomaly.AbortedRead}},
	}},
	{memdb.IntermediateRead, memdb.ReadCommitted, "rw-register", workload.Options{Keys: 4, OpsPerTxn: 6, ReadRatio: 0.4}, []catch{
		{check.ReadCommitted, check.MethodAuto, []anomaly.Kind{anomaly.IntermediateRead}},
	}},
	{memdb.IntermediateRead, memdb.SnapshotIsolation, "rw-register", workload.Options{Keys: 4, OpsPerTxn: 6, ReadRatio: 0.4}, []catch{
		{check.Serializable, check.MethodAuto, []anomaly.Kind{anomaly.IntermediateRead}},
	}},
}

// longForkWorkload: writers each write one key of a pair living in different halves of
// memdb's key space; readers read both keys. Only a long fork (or a stale read) can go wrong.
func longForkWorkload(seed uint64) *workload.Workload {
	w := &workload.Workload{Name: "long-fork", Keys: []string{"a", "b"}}
	r := rand.New(rand.NewPCG(seed, 1))
	for range 4 {
		var txns []workload.Txn
		for range 40 {
			switch r.IntN(3) {
			case 0:
				txns = append(txns, workload.Txn{Name: "write-a", Ops: []workload.Op{{Kind: workload.OpWrite, Key: "a", From: -1}}})
			case 1:
				txns = append(txns, workload.Txn{Name: "write-b", Ops: []workload.Op{{Kind: workload.OpWrite, Key: "b", From: -1}}})
			default:
				txns = append(txns, workload.Txn{Name: "read", Ops: []workload.Op{{Kind: workload.OpRead, Key: "a", From: -1}, {Kind: workload.OpRead, Key: "b", From: -1}}})
			}
		}
		w.Sessions = append(w.Sessions, txns)
	}
	return w
}

// TestMemDBFaults: every fault is caught by the checker of a level it breaks, with the
// expected anomaly name.
func TestMemDBFaults(t *testing.T) {
	t.Parallel()
	for _, fc := range faultCases {
		t.Run(fc.fault.String()+"/"+fc.mode.String(), func(t *testing.T) {
			t.Parallel()
			found := make([]bool, len(fc.catches))
			var seen [][]anomaly.Kind = make([][]anomaly.Kind, len(fc.catches))
			skipped := ""
			for seed := uint64(1); seed <= 8 && slices.Contains(found, false); seed++ {
				var w *workload.Workload
				if fc.workload == "long-fork" {
					w = longForkWorkload(seed)
				} else {
					o := fc.gen
					o.Seed, o.Sessions = seed, 8
					if o.TxnsPerSess == 0 {
						o.TxnsPerSess = 100
					}
					w = gen(t, fc.workload, o)
				}
				h := runMem(t, memdb.Options{Mode: fc.mode, Faults: fc.fault, Seed: seed}, w)
				for i, c := range fc.catches {
					if found[i] {
						continue
					}
					rep := mustCheck(t, h, c.level, c.method)
					if c.level == check.SnapshotIsolation && noChecker(rep) {
						skipped = "no snapshot-isolation checker has landed yet: check.Check returned Unknown (basic checks only)"
						found[i] = true
						continue
					}
					ks := kinds(rep)
					seen[i] = append(seen[i], ks...)
					if rep.Verdict == check.Fail && slices.ContainsFunc(c.want, func(k anomaly.Kind) bool { return slices.Contains(ks, k) }) {
						found[i] = true
						t.Logf("%s at %s: %s caught it as %s (seed %d)", fc.fault, c.level, rep.Checker, kindNames(ks), seed)
					}
				}
			}
			for i, c := range fc.catches {
				if !found[i] {
					t.Errorf("fault %s in mode %s: Check(%s) never reported %s; it reported: %s", fc.fault, fc.mode, c.level, kindNames(c.want), kindNames(seen[i]))
				}
			}
			if skipped != "" {
				t.Skip(skipped)
			}
		})
	}
}
