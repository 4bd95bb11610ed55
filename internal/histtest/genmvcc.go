package histtest

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
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
	s := &mvccSim{rng: rng, f: f, running: map[uint64]bool{}, versions: map[string][]mvccVersion{}}
	s.keys = []string{"x", "y", "z"}[:2+rng.IntN(2)]
	s.next = uint64(100 + rng.IntN(5))
	n := 4 + rng.IntN(4)
	for len(s.order) < n {
		if len(s.txns) < n && s.wantsBegin() {
			s.begin()
			continue
		}
		oi := rng.IntN(len(s.open))
		ti := s.open[oi]
		if t := s.txns[ti]; t.done < len(t.plan) {
			s.step(t)
			continue
		}
		s.open = slices.Delete(s.open, oi, oi+1)
		s.commit(ti)
	}
	h, err := s.record().Build()
	if err != nil {
		panic(fmt.Sprintf("GenMVCC built an invalid history: %v", err))
	}
	return h
}

// mvccSim is the simulated database of [GenMVCC] and the transactions run on it.
type mvccSim struct {
	rng      *rand.Rand
	f        MVCCFaults
	keys     []string
	next     uint64          // the next transaction id
	running  map[uint64]bool // ids of the transactions that wrote and have not ended
	versions map[string][]mvccVersion
	txns     []*mvccTxn
	open     []int // indexes into txns of the transactions not ended
	order    []int // completion order
	val      int64 // the last value written
}

type mvccVersion struct {
	v      int64
	writer int // index into txns
}

type mvccTxn struct {
	snap    history.Snapshot
	xid     uint64
	plan    []bool   // true: write, false: read
	keys    []string // the key of each planned op
	done    int
	writes  map[string]int64
	ops     [][3]any // kind, key, value
	outcome history.Outcome
}

// wantsBegin decides whether a new transaction begins now rather than an open one
// stepping: always when none is open, never when four are, else at random.
func (s *mvccSim) wantsBegin() bool {
	return len(s.open) == 0 || len(s.open) < 4 && s.rng.IntN(2) == 0
}

// begin starts a transaction: its snapshot, and a plan of two to four reads and writes.
func (s *mvccSim) begin() {
	t := &mvccTxn{writes: map[string]int64{}}
	t.snap = history.Snapshot{Xmin: s.next, Xmax: s.next}
	for x := range s.running {
		t.snap.Xip = append(t.snap.Xip, x)
		t.snap.Xmin = min(t.snap.Xmin, x)
	}
	slices.Sort(t.snap.Xip)
	for range 2 + s.rng.IntN(3) {
		t.plan = append(t.plan, s.rng.IntN(2) == 0)
		t.keys = append(t.keys, s.keys[s.rng.IntN(len(s.keys))])
	}
	s.txns = append(s.txns, t)
	s.open = append(s.open, len(s.txns)-1)
}

// step runs t's next planned op; its first write takes an id.
func (s *mvccSim) step(t *mvccTxn) {
	k := t.keys[t.done]
	t.done++
	if !t.plan[t.done-1] {
		t.ops = append(t.ops, [3]any{"r", k, s.read(t, k)})
		return
	}
	if t.xid == 0 {
		t.xid = s.next
		s.next++
		s.running[t.xid] = true
	}
	s.val++
	t.writes[k] = s.val
	t.ops = append(t.ops, [3]any{"w", k, s.val})
}

// read returns the value t reads of k: its own write, else the last version its snapshot
// sees (or, with StaleRead, sometimes the latest or a random one).
func (s *mvccSim) read(t *mvccTxn, k string) int64 {
	if own, ok := t.writes[k]; ok {
		return own
	}
	v := int64(0)
	vs := s.versions[k]
	for _, ver := range vs {
		if t.snap.Sees(s.txns[ver.writer].xid) {
			v = ver.v
		}
	}
	if s.f.StaleRead && len(vs) > 0 && s.rng.IntN(2) == 0 {
		if s.rng.IntN(2) == 0 {
			return vs[len(vs)-1].v // the latest commit, whatever the snapshot (read committed)
		}
		return vs[s.rng.IntN(len(vs))].v
	}
	return v
}

// commit ends txns[ti]: it aborts at random, or when first-committer-wins forbids it
// (unless NoFCW skips that), else installs its writes.
func (s *mvccSim) commit(ti int) {
	t := s.txns[ti]
	s.order = append(s.order, ti)
	t.outcome = history.OutcomeCommitted
	if s.rng.IntN(8) == 0 {
		t.outcome = history.OutcomeAborted
	}
	if s.loses(t) {
		t.outcome = history.OutcomeAborted // first committer wins
	}
	if t.outcome == history.OutcomeCommitted {
		for _, k := range slices.Sorted(maps.Keys(t.writes)) {
			s.versions[k] = append(s.versions[k], mvccVersion{t.writes[k], ti})
		}
		if s.f.UnknownEnds && s.rng.IntN(5) == 0 {
			t.outcome = history.OutcomeUnknown // committed, but the client never heard
		}
	}
	delete(s.running, t.xid)
}

// loses says whether another transaction committed a write to a key t writes that t's
// snapshot does not see; with NoFCW each such write is overlooked half the time. Every
// version is looked at (and with NoFCW draws), whatever the earlier ones gave.
func (s *mvccSim) loses(t *mvccTxn) bool {
	lost := false
	for k := range t.writes {
		for _, ver := range s.versions[k] {
			if !t.snap.Sees(s.txns[ver.writer].xid) && !(s.f.NoFCW && s.rng.IntN(2) == 0) {
				lost = true
			}
		}
	}
	return lost
}

// record builds the history the runner would record, in completion order.
func (s *mvccSim) record() *history.Builder {
	b := history.NewBuilder()
	b.SetInitial(b.IntValue(0))
	for _, ti := range s.order {
		t := s.txns[ti]
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
		b.SetSnapshot(tid, s.reportedSnap(t.snap))
	}
	return b
}

// reportedSnap is the snapshot the database reports for one it took: sn, or with
// WrongSnap sometimes one that misses a running transaction or is one id later.
func (s *mvccSim) reportedSnap(sn history.Snapshot) history.Snapshot {
	if !s.f.WrongSnap || s.rng.IntN(4) != 0 {
		return sn
	}
	if len(sn.Xip) > 0 && s.rng.IntN(2) == 0 {
		sn.Xip = sn.Xip[1:] // claims it saw a transaction that was running
		if len(sn.Xip) > 0 {
			sn.Xmin = sn.Xip[0]
		} else {
			sn.Xmin = sn.Xmax
		}
		return sn
	}
	return history.Snapshot{Xmin: min(sn.Xmin, sn.Xmax+1), Xmax: sn.Xmax + 1, Xip: sn.Xip} // one id later
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
		f := drawFaults(rng, seed, nonzero)
		h := GenMVCC(rng, f)
		rep, err := check(h)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		want := oracle(h)
		if rep.Verdict != report.Unknown && (rep.Verdict == report.Pass) != want {
			t.Fatalf("seed %d (%+v): checker %s, oracle pass=%v; snapshots: %v\n%s\n%v %v", seed, f, rep.Verdict, want, h.SnapshotErr, Format(h), rep.Anomalies, rep.Notes)
		}
		n.add(f, h, rep, want)
		if each != nil {
			each(f, h, rep)
		}
	}
	return n
}

// drawFaults draws the faults of the run of seed from rng: none for an even seed, random
// ones for an odd seed, drawn again until there is one with nonzero.
func drawFaults(rng *rand.Rand, seed uint64, nonzero bool) MVCCFaults {
	var f MVCCFaults
	for seed%2 == 1 && (f == MVCCFaults{} || !nonzero) {
		f = MVCCFaults{StaleRead: rng.IntN(2) == 0, NoFCW: rng.IntN(2) == 0, WrongSnap: rng.IntN(2) == 0, UnknownEnds: rng.IntN(3) == 0}
		if !nonzero {
			break
		}
	}
	return f
}

// add counts a run with faults f, history h, the checker's report rep and the oracle's
// verdict want.
func (n *MVCCTally) add(f MVCCFaults, h *history.History, rep *report.Report, want bool) {
	if h.DerivedTimestamps() {
		n.Derived++
	}
	if !want {
		n.OracleFails++
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
}
