package ts

import (
	"cmp"
	"context"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/cputime"
)

// deliver feeds h to a fresh Online in commit order, each transaction delayed by a random
// amount up to maxDelay (so arrivals are shuffled), one every step, and returns the final
// violations and the other events.
//
// With o.Shards > 1, the history goes to that many shards, each given every transaction at
// the same time, and their findings are pooled; on is shard 0. With compiled set, the
// transactions are compiled apart ([Compile], as the server does) and observed with
// [Online.ObserveCompiled]; every third is compiled for the wrong shard, which the checker
// must notice.
func deliver(t testing.TB, h *history.History, o OnlineOptions, rng *rand.Rand, step, maxDelay time.Duration, compiled bool) (viol []Violation, other []Event, on *Online) {
	t.Helper()
	shards := make([]*Online, max(o.Shards, 1))
	for i := range shards {
		o.Shard = i
		var err error
		if shards[i], err = NewOnline(o); err != nil {
			t.Fatal(err)
		}
	}
	on = shards[0]
	type arrival struct {
		at time.Time
		t  history.TxnID
	}
	order := make([]history.TxnID, len(h.Txns))
	for i := range order {
		order[i] = history.TxnID(i)
	}
	slices.SortStableFunc(order, func(a, b history.TxnID) int { return h.Txns[a].Commit.Compare(h.Txns[b].Commit) })
	base := time.Unix(1_000_000, 0)
	arr := make([]arrival, len(order))
	for i, id := range order {
		d := time.Duration(0)
		if maxDelay > 0 {
			d = time.Duration(rng.Int64N(int64(maxDelay)))
		}
		arr[i] = arrival{base.Add(time.Duration(i)*step + d), id}
	}
	slices.SortStableFunc(arr, func(a, b arrival) int { return a.at.Compare(b.at) })
	collect := func(evs []Event) {
		for _, e := range evs {
			if e.Kind == EventViolation {
				viol = append(viol, e.Violation)
			} else {
				other = append(other, e)
			}
		}
	}
	var comp []Compiled
	cs := make([]Compiler, len(shards)) // reused: each batch is observed before the next
	for n, a := range arr {
		x := FromHistory(h, a.t)
		for i, sh := range shards {
			collect(sh.Advance(a.at))
			if !compiled {
				collect(sh.Observe(x))
				continue
			}
			shard := i
			if n%3 == 0 {
				shard = (i + 1) % len(shards)
			}
			comp = cs[i].Compile([]Txn{x}, shard, len(shards), comp)
			collect(sh.ObserveCompiled(&comp[0]))
		}
	}
	for _, sh := range shards {
		collect(sh.Advance(arr[len(arr)-1].at.Add(o.Settle + time.Millisecond)))
	}
	return viol, other, on
}

// TestOnlineMatchesOffline is the differential test: the same history delivered shuffled,
// with a bounded delay below the settle timeout, yields Chronos's violations.
func TestOnlineMatchesOffline(t *testing.T) {
	t.Parallel()
	shapes := []struct {
		name    string
		g       genOpts
		n       uint64
		shards  int
		inOrder bool // delivered exactly in commit order (the server's common case)
		comp    bool // compiled apart, as the server does
	}{
		{"kv", genOpts{sessions: 4, txns: 60, keys: 5, ops: 4, faults: 0.05, overlap: 0.1}, 150, 1, false, false},
		{"kv-ties", genOpts{sessions: 4, txns: 60, keys: 4, ops: 4, faults: 0.05, overlap: 0.1, ties: true}, 150, 1, false, false},
		{"list", genOpts{sessions: 4, txns: 60, keys: 4, ops: 4, faults: 0.05, overlap: 0.1, list: true}, 100, 1, false, false},
		{"list-ties", genOpts{sessions: 3, txns: 60, keys: 3, ops: 4, faults: 0.05, overlap: 0.1, list: true, ties: true}, 100, 1, false, false},
		{"large-gc", genOpts{sessions: 8, txns: 3000, keys: 40, ops: 6, faults: 0.002, overlap: 0.01}, 3, 1, false, false},
		// Split by key over shards (as the server runs it), which must change nothing.
		{"kv-shards-2", genOpts{sessions: 4, txns: 60, keys: 5, ops: 4, faults: 0.05, overlap: 0.1}, 150, 2, false, false},
		{"kv-ties-shards-3", genOpts{sessions: 4, txns: 60, keys: 6, ops: 4, faults: 0.05, overlap: 0.1, ties: true}, 150, 3, false, false},
		{"list-shards-2", genOpts{sessions: 4, txns: 60, keys: 4, ops: 4, faults: 0.05, overlap: 0.1, list: true}, 100, 2, false, false},
		{"large-gc-shards-2", genOpts{sessions: 8, txns: 3000, keys: 40, ops: 6, faults: 0.002, overlap: 0.01}, 3, 2, false, false},
		{"kv-ties-in-order", genOpts{sessions: 4, txns: 60, keys: 4, ops: 4, faults: 0.05, overlap: 0.1, ties: true}, 150, 1, true, false},
		{"list-ties-in-order-shards-2", genOpts{sessions: 3, txns: 60, keys: 3, ops: 4, faults: 0.05, overlap: 0.1, list: true, ties: true}, 100, 2, true, false},
		{"kv-ties-compiled", genOpts{sessions: 4, txns: 60, keys: 4, ops: 4, faults: 0.05, overlap: 0.1, ties: true}, 150, 1, false, true},
		{"list-compiled-shards-2", genOpts{sessions: 4, txns: 60, keys: 4, ops: 4, faults: 0.05, overlap: 0.1, list: true}, 100, 2, false, true},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			total := 0
			defer func() {
				if total == 0 {
					t.Errorf("no violations in any history: the test proves nothing")
				}
			}()
			n := sh.n
			if raceEnabled {
				n = max(1, n/5)
			}
			for seed := range n {
				rng := rand.New(rand.NewPCG(seed, 7))
				h := gen(rng, sh.g)
				for _, l := range ts4 {
					want := runIDs(t, h, l)
					total += len(want)
					o := OnlineOptions{Level: l, Initial: history.Int(0), Settle: 100 * time.Millisecond, Retain: 100 * time.Millisecond, Shards: sh.shards}
					delay := 20 * time.Millisecond
					if sh.inOrder {
						delay = 0
					}
					got, other, on := deliver(t, h, o, rng, time.Millisecond, delay, sh.comp)
					if len(other) > 0 {
						t.Fatalf("seed %d %s: unexpected events %v", seed, l, other)
					}
					if diff := gocmp.Diff(want, ids(got)); diff != "" {
						t.Fatalf("seed %d %s: online vs offline (-offline +online):\n%s", seed, l, diff)
					}
					if strings.HasPrefix(sh.name, "large-gc") {
						st := on.Stats()
						if st.Versions > 4*st.Keys+200 || st.InMemory > 400 {
							t.Errorf("seed %d %s: memory not collected: %+v", seed, l, st)
						}
					}
				}
			}
		})
	}
}

var ts4 = []anomaly.Level{si, ssi, ser, sser}

// TestOnlineLateWriterClearsAlarm is Example 5 of the paper: a reader arrives before the
// writer it read from; the verdict flips and settles clean.
func TestOnlineLateWriterClearsAlarm(t *testing.T) {
	t.Parallel()
	h := build(t, "0", tx{"W", 1, 1, 2, "w x 1"}, tx{"R", 2, 3, 4, "r x 1"})
	on, _ := NewOnline(OnlineOptions{Initial: history.Int(0), Settle: time.Second})
	t0 := time.Unix(100, 0)
	on.Advance(t0)
	if evs := on.Observe(FromHistory(h, 1)); len(evs) != 0 {
		t.Fatalf("Observe(R) = %v", evs)
	}
	on.Advance(t0.Add(500 * time.Millisecond))
	on.Observe(FromHistory(h, 0))
	if evs := on.Advance(t0.Add(3 * time.Second)); len(evs) != 0 {
		t.Errorf("Advance = %v, want no violation", evs)
	}
	if st := on.Stats(); st.Flips != 1 || st.Settled != 2 {
		t.Errorf("stats = %+v, want 1 flip, 2 settled", st)
	}
	// The same writer after the reader settled cannot clear it.
	on2, _ := NewOnline(OnlineOptions{Initial: history.Int(0), Settle: time.Second, Retain: time.Hour})
	on2.Advance(t0)
	on2.Observe(FromHistory(h, 1))
	evs := on2.Advance(t0.Add(2 * time.Second))
	if len(evs) != 1 || evs[0].Violation.Kind != anomaly.ExtViolation || evs[0].Violation.Ext != ExtNever {
		t.Fatalf("Advance = %v, want one EXT NEVER", evs)
	}
	on2.Observe(FromHistory(h, 0))
	if evs := on2.Advance(t0.Add(5 * time.Second)); len(evs) != 0 {
		t.Errorf("late writer: %v", evs)
	}
}

func TestOnlineDuplicateAndLate(t *testing.T) {
	t.Parallel()
	h := build(t, "0", tx{"A", 1, 1, 2, "w x 1"}, tx{"B", 2, 10, 11, "w x 2"}, tx{"C", 3, 3, 4, "r x 1"})
	on, _ := NewOnline(OnlineOptions{Initial: history.Int(0), Settle: time.Second, Retain: time.Second})
	t0 := time.Unix(100, 0)
	on.Advance(t0)
	on.Observe(FromHistory(h, 0))
	if evs := on.Observe(FromHistory(h, 0)); len(evs) != 1 || evs[0].Kind != EventDuplicate {
		t.Fatalf("second Observe(A) = %v, want duplicate", evs)
	}
	on.Advance(t0.Add(time.Second))
	on.Observe(FromHistory(h, 1))
	on.Advance(t0.Add(5 * time.Second)) // A and B retired; horizon passes C's snapshot
	if evs := on.Observe(FromHistory(h, 0)); len(evs) != 1 || evs[0].Kind != EventDuplicate {
		t.Fatalf("Observe(A) after retire = %v, want duplicate", evs)
	}
	evs := on.Observe(FromHistory(h, 2))
	if len(evs) != 1 || evs[0].Kind != EventLate {
		t.Fatalf("Observe(C) = %v, want late", evs)
	}
	if st := on.Stats(); st.Late != 1 || st.Duplicates != 2 {
		t.Errorf("stats = %+v", st)
	}
}

func TestOnlineMemoryBound(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	h := gen(rng, genOpts{sessions: 8, txns: 2000, keys: 50, ops: 6, overlap: 0.01})
	on, _ := NewOnline(OnlineOptions{Initial: history.Int(0), Settle: time.Hour, MaxBytes: 200_000})
	t0 := time.Unix(100, 0)
	dropped := 0
	for i := range h.Txns {
		for _, e := range on.Advance(t0.Add(time.Duration(i) * time.Millisecond)) {
			if e.Kind == EventDropped {
				dropped += e.Count
			}
		}
		on.Observe(FromHistory(h, history.TxnID(i)))
	}
	st := on.Stats()
	if dropped == 0 || st.Dropped != int64(dropped) {
		t.Fatalf("dropped %d (stats %d), want a warning", dropped, st.Dropped)
	}
	if st.Bytes > 400_000 {
		t.Errorf("estimated memory %d above twice the bound", st.Bytes)
	}
}

// TestOnlineSessionReordered: explicit sequence numbers let SESSION be checked whatever
// the arrival order.
func TestOnlineSessionReordered(t *testing.T) {
	t.Parallel()
	h := build(t, "0", tx{"A", 1, 1, 3, ""}, tx{"B", 1, 2, 4, ""}, tx{"C", 1, 5, 6, ""})
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 2, 0}, {2, 0, 1}} {
		on, _ := NewOnline(OnlineOptions{Level: ssi})
		var got []string
		for _, i := range order {
			for _, e := range on.Observe(FromHistory(h, history.TxnID(i))) {
				got = append(got, e.Violation.ID())
			}
		}
		if diff := gocmp.Diff([]string{"session|B|A|"}, got); diff != "" {
			t.Errorf("order %v (-want +got):\n%s", order, diff)
		}
	}
}

func BenchmarkChronos(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		h := benchHistory(n)
		b.Run("txns="+itoa(n), func(b *testing.B) {
			c0 := cputime.Self()
			for b.Loop() {
				res, err := Run(context.Background(), h, si, Options{})
				if err != nil || len(res.Violations) > 0 {
					b.Fatal(err, len(res.Violations))
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "txns/s")
			b.ReportMetric(float64(n)*float64(b.N)/(cputime.Self()-c0).Seconds(), "txns/cpu-s")
		})
	}
}

func BenchmarkOnline(b *testing.B) {
	n := 200_000
	h := benchHistory(n)
	txs := make([]Txn, n)
	for i := range txs {
		txs[i] = FromHistory(h, history.TxnID(i))
	}
	slices.SortFunc(txs, func(a, b Txn) int { return cmp.Compare(a.Commit.Physical, b.Commit.Physical) })
	b.Run("txns="+itoa(n), func(b *testing.B) {
		c0 := cputime.Self()
		for b.Loop() {
			on, _ := NewOnline(OnlineOptions{Initial: history.Int(0), Settle: 50 * time.Millisecond})
			t0 := time.Unix(0, 0)
			for i := range txs {
				if i%256 == 0 {
					on.Advance(t0.Add(time.Duration(i) * 10 * time.Microsecond))
				}
				on.Observe(txs[i])
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "txns/s")
		b.ReportMetric(float64(n)*float64(b.N)/(cputime.Self()-c0).Seconds(), "txns/cpu-s")
	})
}

// BenchmarkOnlineSustained is the service's load without the service: 400,000 transactions
// in commit order arriving at 100,000 a second (virtual time), a 1 s settle time and the
// server's GC target, so that about 200,000 transactions and 40 versions a key are held.
func BenchmarkOnlineSustained(b *testing.B) {
	const n = 400_000
	h := benchHistory(n)
	txs := make([]Txn, n)
	for i := range txs {
		txs[i] = FromHistory(h, history.TxnID(i))
	}
	slices.SortFunc(txs, func(a, b Txn) int { return cmp.Compare(a.Commit.Physical, b.Commit.Physical) })
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	// compiled: batches of 1,000 compiled apart and observed with ObserveCompiled, as the
	// server does (it compiles on the goroutines that decode; here it is the same one, so
	// the figure is the total CPU).
	for _, compiled := range []bool{false, true} {
		name := "txns=" + itoa(n)
		if compiled {
			name += "/compiled"
		}
		b.Run(name, func(b *testing.B) {
			c0 := cputime.Self()
			var held, versions int
			var comp []Compiled
			var cc Compiler
			for b.Loop() {
				on, _ := NewOnline(OnlineOptions{Initial: history.Int(0), Settle: time.Second})
				t0 := time.Unix(0, 0)
				for i := range txs {
					if i%1000 == 0 { // a batch
						on.Advance(t0.Add(time.Duration(i) * 10 * time.Microsecond))
						if compiled {
							comp = cc.Compile(txs[i:min(i+1000, n)], 0, 1, comp)
						}
					}
					if compiled {
						on.ObserveCompiled(&comp[i%1000])
					} else {
						on.Observe(txs[i])
					}
				}
				st := on.Stats()
				held, versions = st.InMemory, st.Versions
			}
			b.ReportMetric(float64(n)*float64(b.N)/(cputime.Self()-c0).Seconds(), "txns/cpu-s")
			b.ReportMetric(float64(held), "held")
			b.ReportMetric(float64(versions), "versions")
		})
	}
}

func itoa(n int) string {
	return history.Int(int64(n)).String()
}

// TestKeyShard: every key has one shard in range, fixed across calls, and keys spread.
func TestKeyShard(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 3, 8} {
		count := make([]int, n)
		for i := range 4000 {
			for _, k := range []history.Datum{history.Int(int64(i)), history.Str("key" + itoa(i))} {
				s := KeyShard(k, n)
				if s < 0 || s >= n || s != KeyShard(k, n) {
					t.Fatalf("KeyShard(%v, %d) = %d", k, n, s)
				}
				count[s]++
			}
		}
		for s, c := range count {
			if c < 8000/n*8/10 {
				t.Errorf("KeyShard(_, %d): shard %d has %d of 8000 keys", n, s, c)
			}
		}
	}
	if _, err := NewOnline(OnlineOptions{Shard: 2, Shards: 2}); err == nil {
		t.Error("NewOnline accepted shard 2 of 2")
	}
}

// TestOnlineKeyTables: small non-negative integer keys live in a dense table, others in
// maps, and the table grows under keys already seen; a key's state is one whatever its
// table.
func TestOnlineKeyTables(t *testing.T) {
	t.Parallel()
	h := build(t, "0",
		tx{"A", 1, 1, 2, "w 5 1; w -3 1; w 3000000 1; w x 1"},
		tx{"B", 2, 3, 4, "w 100 2; w 70000 2; w -3 2"},
		tx{"C", 1, 5, 6, "r 5 1; r -3 2; r 3000000 1; r x 1; r 100 2; r 70000 2"},
		tx{"D", 2, 5, 7, "r 5 0; r -3 1; r 3000000 0; r x 0; r 100 0; r 70000 0"},
	)
	on, _ := NewOnline(OnlineOptions{Initial: history.Int(0), Settle: time.Second})
	t0 := time.Unix(100, 0)
	on.Advance(t0)
	for _, i := range []history.TxnID{3, 2, 1, 0} { // readers first: each key re-checked on a write
		if evs := on.Observe(FromHistory(h, i)); len(evs) != 0 {
			t.Fatalf("Observe(%d) = %v", i, evs)
		}
	}
	var got []string
	for _, e := range on.Advance(t0.Add(2 * time.Second)) {
		got = append(got, e.Violation.ID())
	}
	slices.Sort(got)
	want := []string{`EXT|D||"x"`, "EXT|D||-3", "EXT|D||100", "EXT|D||3000000", "EXT|D||5", "EXT|D||70000"}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	if st := on.Stats(); st.Keys != 6 {
		t.Errorf("Stats().Keys = %d, want 6", st.Keys)
	}
}

// TestOnlineForgetsIDs: an id is recognised as a duplicate for three settle+retain windows
// after its transaction was forgotten, and not after.
func TestOnlineForgetsIDs(t *testing.T) {
	t.Parallel()
	h := build(t, "0", tx{"A", 1, 1, 2, "w x 1"})
	on, _ := NewOnline(OnlineOptions{Initial: history.Int(0), Settle: time.Second, Retain: time.Second})
	t0 := time.Unix(100, 0)
	on.Advance(t0)
	on.Observe(FromHistory(h, 0))
	on.Advance(t0.Add(2 * time.Second)) // retired and forgotten now
	if st := on.Stats(); st.InMemory != 0 {
		t.Fatalf("InMemory = %d after retiring", st.InMemory)
	}
	on.Advance(t0.Add(7 * time.Second)) // forgotten 5 s ago: within 3 × 2 s
	if evs := on.Observe(FromHistory(h, 0)); len(evs) != 1 || evs[0].Kind != EventDuplicate {
		t.Fatalf("Observe(A) 5 s after forgetting = %v, want a duplicate", evs)
	}
	on.Advance(t0.Add(8*time.Second + time.Millisecond)) // 6 s and a little
	for _, e := range on.Observe(FromHistory(h, 0)) {
		if e.Kind == EventDuplicate {
			t.Fatalf("Observe(A) after three windows = %v, want it treated as new", e)
		}
	}
	if st := on.Stats(); st.Duplicates != 1 {
		t.Errorf("Duplicates = %d, want 1", st.Duplicates)
	}
}
