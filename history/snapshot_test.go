package history_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/history"
)

func TestParseSnapshot(t *testing.T) {
	t.Parallel()
	good := []struct {
		in   string
		want history.Snapshot
	}{
		{"10:20:10,14,15", history.Snapshot{Xmin: 10, Xmax: 20, Xip: []uint64{10, 14, 15}}},
		{"12:12:", history.Snapshot{Xmin: 12, Xmax: 12}},
		{"3:9:", history.Snapshot{Xmin: 3, Xmax: 9}},
	}
	for _, tt := range good {
		got, err := history.ParseSnapshot(tt.in)
		if err != nil || got.Xmin != tt.want.Xmin || got.Xmax != tt.want.Xmax || !slices.Equal(got.Xip, tt.want.Xip) {
			t.Errorf("ParseSnapshot(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
		if s := got.String(); s != tt.in {
			t.Errorf("ParseSnapshot(%q).String() = %q", tt.in, s)
		}
	}
	bad := []struct{ in, want string }{
		{"10:20", "expected xmin:xmax:xip"},
		{"x:20:", "xmin: expected an unsigned integer"},
		{"10:-1:", "xmax: expected an unsigned integer"},
		{"20:10:", "xmax 10 is below xmin 20"},
		{"10:20:9", "outside [xmin, xmax)"},
		{"10:20:20", "outside [xmin, xmax)"},
		{"10:20:14,12", "not ascending"},
		{"10:20:14,", `in-progress id ""`},
	}
	for _, tt := range bad {
		if _, err := history.ParseSnapshot(tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseSnapshot(%q) = %v, want an error saying %q", tt.in, err, tt.want)
		}
	}
}

// simTxn is one transaction of a simulated MVCC execution.
type simTxn struct {
	snap    history.Snapshot
	xid     uint64 // 0: never wrote
	outcome history.Outcome
	end     int64 // a client end time, jittered (0: none recorded)
}

// simulate runs n transactions of a PostgreSQL-like MVCC database with the given
// concurrency: a snapshot at each begin, an id at the first write (from a counter that
// other, unrecorded clients also draw from), then commit, abort or an unknown end.
func simulate(rng *rand.Rand, n, conc int) []simTxn {
	next := uint64(3)
	running := map[uint64]bool{} // ids assigned and not ended
	snapshot := func() history.Snapshot {
		s := history.Snapshot{Xmin: next, Xmax: next}
		for x := range running {
			s.Xip = append(s.Xip, x)
			s.Xmin = min(s.Xmin, x)
		}
		slices.Sort(s.Xip)
		return s
	}
	txns := make([]simTxn, n)
	var open []int
	begun := 0
	for begun < n || len(open) > 0 {
		switch r := rng.IntN(10); {
		case begun < n && (len(open) < conc && r < 4 || len(open) == 0):
			txns[begun].snap = snapshot()
			open = append(open, begun)
			begun++
		case r == 4:
			// A foreign client's transaction: an id, in progress for a while or not.
			x := next
			next++
			if rng.IntN(2) == 0 {
				running[x] = true
			}
		case r == 5:
			for x := range running {
				delete(running, x) // some foreign or recorded transaction ends
				break
			}
		default:
			i := rng.IntN(len(open))
			t := &txns[open[i]]
			if t.xid == 0 && rng.IntN(3) > 0 {
				t.xid = next
				next++
				running[t.xid] = true
				continue
			}
			open = slices.Delete(open, i, i+1)
			switch rng.IntN(8) {
			case 0:
				t.outcome = history.OutcomeAborted
			case 1:
				t.outcome = history.OutcomeUnknown
			default:
				t.outcome = history.OutcomeCommitted
			}
			delete(running, t.xid)
			if rng.IntN(4) > 0 {
				t.end = int64(begun*10 + rng.IntN(40))
			}
		}
	}
	return txns
}

func buildSim(t testing.TB, sim []simTxn) *history.History {
	t.Helper()
	b := history.NewBuilder()
	s := b.Session(history.Int(1))
	for i, x := range sim {
		id := history.NilDatum
		if x.xid != 0 {
			id = history.Int(int64(x.xid))
		}
		tid := b.BeginTxn(s, id, x.outcome)
		if x.xid != 0 {
			b.Write(b.IntKey(int64(i)), b.IntValue(1))
		} else {
			b.Read(b.IntKey(int64(i)), history.Nil)
		}
		b.SetSnapshot(tid, x.snap)
		if x.end != 0 {
			b.Current().Time, b.Current().HasTime = history.Interval{Begin: 0, End: x.end}, true
		}
	}
	h, err := b.Build()
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return h
}

// TestDeriveTimestampsKeepsVisibility: on simulated executions, the derived timestamps
// order each committed writer before exactly the snapshots that see it.
func TestDeriveTimestampsKeepsVisibility(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	for c := range 2000 {
		sim := simulate(rng, 1+rng.IntN(25), 1+rng.IntN(6))
		h := buildSim(t, sim)
		if h.SnapshotErr != nil {
			t.Fatalf("case %d: %v", c, h.SnapshotErr)
		}
		for i, s := range sim {
			x := &h.Txns[i]
			if x.HasTimestamps != (s.outcome != history.OutcomeUnknown) {
				t.Fatalf("case %d: txn %d (%v) HasTimestamps = %v", c, i, s.outcome, x.HasTimestamps)
			}
			if x.HasTimestamps && x.Commit.Less(x.Start) {
				t.Fatalf("case %d: txn %d commits at %v before its start %v", c, i, x.Commit, x.Start)
			}
			if s.xid == 0 && x.HasTimestamps && x.Commit != x.Start {
				t.Fatalf("case %d: read-only txn %d has [%v, %v]", c, i, x.Start, x.Commit)
			}
		}
		for i, s := range sim {
			if !h.Txns[i].HasTimestamps {
				continue
			}
			for j, w := range sim {
				if i == j || w.xid == 0 || w.outcome != history.OutcomeCommitted {
					continue
				}
				before := h.Txns[j].Commit.Less(h.Txns[i].Start)
				if before != s.snap.Sees(w.xid) {
					t.Fatalf("case %d: txn %d's snapshot %v sees %d: %v, but its start %v and %d's commit %v say %v",
						c, i, s.snap, w.xid, s.snap.Sees(w.xid), h.Txns[i].Start, j, h.Txns[j].Commit, before)
				}
			}
		}
	}
}

func TestDeriveTimestampsRefuses(t *testing.T) {
	t.Parallel()
	snap := func(s string) history.Snapshot {
		sn, err := history.ParseSnapshot(s)
		if err != nil {
			t.Fatal(err)
		}
		return sn
	}
	type txn struct {
		id    int64 // 0: none
		write bool
		snap  string // "": none
		ts    bool
	}
	tests := []struct {
		name string
		txns []txn
		want string
	}{
		{"not nested", []txn{
			{id: 10, write: true, snap: "10:10:"},
			{id: 11, write: true, snap: "10:10:"},
			{snap: "10:12:11"}, // sees 10, not 11
			{snap: "10:12:10"}, // sees 11, not 10
		}, "not nested"},
		{"crossed, one a writer's own", []txn{
			{id: 10, write: true, snap: "10:10:"},
			{id: 11, write: true, snap: "10:12:"}, // sees 10 committed
			{snap: "11:12:11"},                    // sees 10 ...
			{snap: "10:12:10"},                    // ... and this one sees 11 but not 10
		}, "not nested"},
		{"writer without id", []txn{{write: true, snap: "5:5:"}}, "wrote but has no positive integer id"},
		{"committed without snapshot", []txn{{id: 4, write: true, snap: "4:4:"}, {id: 5, write: true}}, "has no snapshot"},
		{"same id twice", []txn{{id: 5, write: true, snap: "5:5:"}, {id: 5, write: true, snap: "5:5:"}}, "have the same id"},
		{"timestamps given", []txn{{id: 5, write: true, snap: "5:5:", ts: true}}, "gives timestamps itself"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := history.NewBuilder()
			s := b.Session(history.Int(1))
			for i, x := range tt.txns {
				id := history.NilDatum
				if x.id != 0 {
					id = history.Int(x.id)
				}
				tid := b.BeginTxn(s, id, history.OutcomeCommitted)
				if x.write {
					b.Write(b.IntKey(int64(i)), b.IntValue(1))
				}
				if x.snap != "" {
					b.SetSnapshot(tid, snap(x.snap))
				}
				if x.ts {
					b.Current().HasTimestamps = true
				}
			}
			h, err := b.Build()
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if !errors.Is(h.SnapshotErr, history.ErrSnapshots) || !strings.Contains(h.SnapshotErr.Error(), tt.want) {
				t.Fatalf("SnapshotErr = %v, want %q", h.SnapshotErr, tt.want)
			}
			for i := range h.Txns {
				if h.Txns[i].HasTimestamps != tt.txns[i].ts {
					t.Errorf("txn %d: HasTimestamps = %v after a refusal", i, h.Txns[i].HasTimestamps)
				}
			}
		})
	}
}

// BenchmarkDeriveTimestamps derives the timestamps of a simulated run of 100,000
// transactions, 8 at a time, with foreign clients.
func BenchmarkDeriveTimestamps(b *testing.B) {
	sim := simulate(rand.New(rand.NewPCG(1, 2)), 100_000, 8)
	h := buildSim(b, sim)
	if h.SnapshotErr != nil {
		b.Fatal(h.SnapshotErr)
	}
	b.ReportAllocs()
	for b.Loop() {
		for i := range h.Txns {
			h.Txns[i].HasTimestamps = false
		}
		if _, err := history.DeriveTimestamps(h); err != nil {
			b.Fatal(err)
		}
	}
}
