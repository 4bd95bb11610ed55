package histtest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"isovet/history"
	"isovet/internal/report"
)

// MVCCFaults are what the simulated database of [GenMVCC] may do wrong.
type MVCCFaults struct {
	StaleRead   bool // a read returns the latest or a random committed version
	NoFCW       bool // first-committer-wins is skipped: lost updates commit
	WrongSnap   bool // the snapshot reported is not the one the reads used
	UnknownEnds bool // some commits end with an unknown outcome
}

// GenMVCC runs a few transactions on a simulated PostgreSQL-like MVCC database (a snapshot
// at each begin, an id at the first write, first-committer-wins at commit) and records
// the history the runner would: each transaction's ops, outcome, id and reported snapshot,
// and no timestamps, so that reading derives them from the snapshots.
func GenMVCC(rng *rand.Rand, f MVCCFaults) *history.History {
	type version struct {
		v      int64
		writer int // index into txns
	}
	type txn struct {
		snap    history.Snapshot
		xid     uint64
		plan    []bool   // true: write, false: read
		keys    []string // the key of each planned op
		done    int
		writes  map[string]int64
		ops     [][3]any // kind, key, value
		outcome history.Outcome
	}
	keys := []string{"x", "y", "z"}[:2+rng.IntN(2)]
	next := uint64(100 + rng.IntN(5))
	running := map[uint64]bool{}
	versions := map[string][]version{}
	var txns []*txn
	var order []int // completion order
	val := int64(0)
	visible := func(t *txn, w *txn) bool { return t.snap.Sees(w.xid) }
	n := 4 + rng.IntN(4)
	var open []int
	for len(order) < n {
		if len(txns) < n && (len(open) == 0 || len(open) < 4 && rng.IntN(2) == 0) {
			t := &txn{writes: map[string]int64{}}
			t.snap = history.Snapshot{Xmin: next, Xmax: next}
			for x := range running {
				t.snap.Xip = append(t.snap.Xip, x)
				t.snap.Xmin = min(t.snap.Xmin, x)
			}
			slices.Sort(t.snap.Xip)
			for range 2 + rng.IntN(3) {
				t.plan = append(t.plan, rng.IntN(2) == 0)
				t.keys = append(t.keys, keys[rng.IntN(len(keys))])
			}
			txns = append(txns, t)
			open = append(open, len(txns)-1)
			continue
		}
		oi := rng.IntN(len(open))
		ti := open[oi]
		t := txns[ti]
		if t.done < len(t.plan) {
			k := t.keys[t.done]
			if t.plan[t.done] {
				if t.xid == 0 {
					t.xid = next
					next++
					running[t.xid] = true
				}
				val++
				t.writes[k] = val
				t.ops = append(t.ops, [3]any{"w", k, val})
			} else {
				v := int64(0)
				if own, ok := t.writes[k]; ok {
					v = own
				} else {
					for _, ver := range versions[k] {
						if visible(t, txns[ver.writer]) {
							v = ver.v
						}
					}
					if vs := versions[k]; f.StaleRead && len(vs) > 0 && rng.IntN(2) == 0 {
						if rng.IntN(2) == 0 {
							v = vs[len(vs)-1].v // the latest commit, whatever the snapshot (read committed)
						} else {
							v = vs[rng.IntN(len(vs))].v
						}
					}
				}
				t.ops = append(t.ops, [3]any{"r", k, v})
			}
			t.done++
			continue
		}
		open = slices.Delete(open, oi, oi+1)
		order = append(order, ti)
		t.outcome = history.OutcomeCommitted
		if rng.IntN(8) == 0 {
			t.outcome = history.OutcomeAborted
		}
		for k := range t.writes {
			for _, ver := range versions[k] {
				if !visible(t, txns[ver.writer]) && !(f.NoFCW && rng.IntN(2) == 0) {
					t.outcome = history.OutcomeAborted // first committer wins
				}
			}
		}
		if t.outcome == history.OutcomeCommitted {
			for _, k := range slices.Sorted(func(yield func(string) bool) {
				for k := range t.writes {
					if !yield(k) {
						return
					}
				}
			}) {
				versions[k] = append(versions[k], version{t.writes[k], ti})
			}
			if f.UnknownEnds && rng.IntN(5) == 0 {
				t.outcome = history.OutcomeUnknown // committed, but the client never heard
			}
		}
		delete(running, t.xid)
	}
	b := history.NewBuilder()
	b.SetInitial(b.IntValue(0))
	for _, ti := range order {
		t := txns[ti]
		id := history.NilDatum
		if t.xid != 0 {
			id = history.Int(int64(t.xid))
		}
		tid := b.BeginTxn(b.Session(history.Int(int64(ti))), id, t.outcome)
		for _, o := range t.ops {
			k, v := b.StrKey(o[1].(string)), b.IntValue(o[2].(int64))
			if o[0] == "w" {
				b.Write(k, v)
			} else {
				b.Read(k, v)
			}
		}
		sn := t.snap
		if f.WrongSnap && rng.IntN(4) == 0 {
			switch {
			case len(sn.Xip) > 0 && rng.IntN(2) == 0:
				sn.Xip = sn.Xip[1:] // claims it saw a transaction that was running
				if len(sn.Xip) > 0 {
					sn.Xmin = sn.Xip[0]
				} else {
					sn.Xmin = sn.Xmax
				}
			default:
				sn = history.Snapshot{Xmin: min(sn.Xmin, sn.Xmax+1), Xmax: sn.Xmax + 1, Xip: sn.Xip} // one id later
			}
		}
		b.SetSnapshot(tid, sn)
	}
	h, err := b.Build()
	if err != nil {
		panic(fmt.Sprintf("GenMVCC built an invalid history: %v", err))
	}
	return h
}

// MVCCTally counts what [MVCCAgree] saw.
type MVCCTally struct {
	Clean, Faulty int // runs without and with faults
	Derived       int // histories whose snapshots gave timestamps
	OnDerived     int // passes that say they used them
	OracleFails   int
	Failed        int
	Unknown       int
}

// MVCCAgree runs check on runs histories of [GenMVCC] (seeds 0.., PCG stream), every odd
// seed with random faults (with nonzero, at least one), and fails t when a verdict check
// decides disagrees with oracle. each, if not nil, sees every run (its faults, history and
// report) for the caller's own checks.
func MVCCAgree(t testing.TB, runs int, stream uint64, nonzero bool, check func(*history.History) (*report.Report, error), oracle func(*history.History) bool, each func(f MVCCFaults, h *history.History, rep *report.Report)) MVCCTally {
	t.Helper()
	var n MVCCTally
	for seed := range uint64(runs) {
		rng := rand.New(rand.NewPCG(seed, stream))
		var f MVCCFaults
		for seed%2 == 1 && (f == MVCCFaults{} || !nonzero) {
			f = MVCCFaults{StaleRead: rng.IntN(2) == 0, NoFCW: rng.IntN(2) == 0, WrongSnap: rng.IntN(2) == 0, UnknownEnds: rng.IntN(3) == 0}
			if !nonzero {
				break
			}
		}
		h := GenMVCC(rng, f)
		if h.DerivedTimestamps() {
			n.Derived++
		}
		rep, err := check(h)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		want := oracle(h)
		if !want {
			n.OracleFails++
		}
		if rep.Verdict != report.Unknown && (rep.Verdict == report.Pass) != want {
			t.Fatalf("seed %d (%+v): checker %s, oracle pass=%v; snapshots: %v\n%s\n%v %v", seed, f, rep.Verdict, want, h.SnapshotErr, Format(h), rep.Anomalies, rep.Notes)
		}
		switch rep.Verdict {
		case report.Fail:
			n.Failed++
		case report.Unknown:
			n.Unknown++
		}
		if slices.ContainsFunc(rep.Notes, func(s string) bool { return strings.Contains(s, "derived from its snapshots") }) {
			n.OnDerived++
		}
		if f == (MVCCFaults{}) {
			n.Clean++
		} else {
			n.Faulty++
		}
		if each != nil {
			each(f, h, rep)
		}
	}
	return n
}
