package ts

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
)

// tx is a test transaction: ops like "r x 1; w y 2; a l 3; rl l 1 2; rl l".
type tx struct {
	id   string
	sess int
	s, c int64
	ops  string
}

func datum(s string) history.Datum {
	if s == "nil" {
		return history.NilDatum
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return history.Int(i)
	}
	return history.Str(s)
}

// build makes a history of committed transactions with timestamps.
func build(t testing.TB, initial string, txs ...tx) *history.History {
	t.Helper()
	b := history.NewBuilder()
	b.SetInitial(b.Value(datum(initial)))
	for _, x := range txs {
		s := b.Session(history.Int(int64(x.sess)))
		id := b.BeginTxn(s, history.Str(x.id), history.OutcomeCommitted)
		cur := b.Txn(id)
		cur.Start, cur.Commit, cur.HasTimestamps = history.Timestamp{Physical: x.s}, history.Timestamp{Physical: x.c}, true
		for _, op := range strings.Split(x.ops, ";") {
			f := strings.Fields(op)
			if len(f) == 0 {
				continue
			}
			k := b.Key(datum(f[1]))
			switch f[0] {
			case "r":
				b.Read(k, b.Value(datum(f[2])))
			case "w":
				b.Write(k, b.Value(datum(f[2])))
			case "a":
				b.Append(k, b.Value(datum(f[2])))
			case "rl":
				var vs []history.Value
				for _, v := range f[2:] {
					vs = append(vs, b.Value(datum(v)))
				}
				b.ReadList(k, vs)
			default:
				t.Fatalf("bad op %q", op)
			}
		}
	}
	h, err := b.Build()
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return h
}

func ids(vs []Violation) []string {
	out := make([]string, len(vs))
	for i := range vs {
		out[i] = vs[i].ID()
	}
	slices.Sort(out)
	if len(out) == 0 {
		return nil
	}
	return out
}

func runIDs(t testing.TB, h *history.History, l anomaly.Level) []string {
	t.Helper()
	res, err := Run(context.Background(), h, l, Options{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return ids(res.Violations)
}

// genOpts shape a random history.
type genOpts struct {
	sessions, txns, keys, ops int
	list                      bool
	faults                    float64 // probability a read returns a wrong value
	ties                      bool    // allow equal timestamps
	overlap                   float64 // probability a session's next txn starts before the previous commits
}

// gen makes a random history as a snapshot-isolation database would produce it, then
// injects faults. Writers may overlap (NOCONFLICT) since nothing aborts.
func gen(rng *rand.Rand, o genOpts) *history.History {
	type g struct {
		sess   int
		s, c   int64
		kinds  []byte // r, w, a, l
		keys   []int
		vals   []int64
		listRd [][]int64
	}
	scale := int64(1000)
	if o.ties {
		scale = 1
	}
	txs := make([]*g, 0, o.txns)
	clock := make([]int64, o.sessions)
	for i := range o.txns {
		s := rng.IntN(o.sessions)
		st := clock[s] + rng.Int64N(4)
		if rng.Float64() < o.overlap && clock[s] > 0 {
			st = clock[s] - 1
		}
		ct := st + rng.Int64N(6)
		if !o.ties {
			st, ct = st*scale+int64(i)%scale, ct*scale+int64(i)%scale+scale/2
		}
		clock[s] = ct
		x := &g{sess: s, s: st, c: ct}
		for range 1 + rng.IntN(o.ops) {
			k := rng.IntN(o.keys)
			switch {
			case rng.IntN(2) == 0:
				if o.list {
					x.kinds = append(x.kinds, 'l')
				} else {
					x.kinds = append(x.kinds, 'r')
				}
			case o.list:
				x.kinds = append(x.kinds, 'a')
			default:
				x.kinds = append(x.kinds, 'w')
			}
			x.keys = append(x.keys, k)
			x.vals = append(x.vals, int64(1000*i+len(x.keys)))
			x.listRd = append(x.listRd, nil)
		}
		txs = append(txs, x)
	}
	// Replay as SI: reads see the state at the start, plus own writes.
	type ev struct {
		ts    int64
		ph, i int
	}
	var evs []ev
	for i, x := range txs {
		if x.s == x.c {
			evs = append(evs, ev{x.s, 1, i})
		} else {
			evs = append(evs, ev{x.s, 2, i}, ev{x.c, 0, i})
		}
	}
	slices.SortFunc(evs, func(a, b ev) int {
		return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.ph, b.ph), strings.Compare(fmt.Sprint("t", a.i), fmt.Sprint("t", b.i)))
	})
	kv := make([]int64, o.keys)
	lists := make([][]int64, o.keys)
	snapKV := make([][]int64, len(txs))
	snapL := make([][][]int64, len(txs))
	apply := func(i int) {
		x := txs[i]
		for j, k := range x.keys {
			switch x.kinds[j] {
			case 'w':
				kv[k] = x.vals[j]
			case 'a':
				lists[k] = append(slices.Clip(lists[k]), x.vals[j])
			}
		}
	}
	read := func(i int) {
		snapKV[i] = slices.Clone(kv)
		snapL[i] = slices.Clone(lists)
	}
	for _, e := range evs {
		switch e.ph {
		case 0:
			apply(e.i)
		case 1:
			read(e.i)
			apply(e.i)
		case 2:
			read(e.i)
		}
	}
	b := history.NewBuilder()
	b.SetInitial(b.IntValue(0))
	for i, x := range txs {
		s := b.Session(history.Int(int64(x.sess)))
		id := b.BeginTxn(s, history.Str(fmt.Sprint("t", i)), history.OutcomeCommitted)
		cur := b.Txn(id)
		cur.Start, cur.Commit, cur.HasTimestamps = history.Timestamp{Physical: x.s}, history.Timestamp{Physical: x.c}, true
		mykv := snapKV[i]
		myl := snapL[i]
		for j, k := range x.keys {
			key := b.IntKey(int64(k))
			switch x.kinds[j] {
			case 'r':
				v := mykv[k]
				if rng.Float64() < o.faults {
					v = int64(rng.IntN(3)) * int64(rng.IntN(len(txs)*1000+1))
				}
				b.Read(key, b.IntValue(v))
			case 'w':
				mykv[k] = x.vals[j]
				b.Write(key, b.IntValue(x.vals[j]))
			case 'a':
				myl[k] = append(slices.Clip(myl[k]), x.vals[j])
				b.Append(key, b.IntValue(x.vals[j]))
			case 'l':
				l := myl[k]
				if rng.Float64() < o.faults && len(l) > 0 {
					l = l[:rng.IntN(len(l))]
				}
				vs := make([]history.Value, len(l))
				for m, v := range l {
					vs[m] = b.IntValue(v)
				}
				b.ReadList(key, vs)
			}
		}
	}
	h, err := b.Build()
	if err != nil {
		panic(err)
	}
	return h
}

// benchHistory is a snapshot-isolation history of n transactions: 24 sessions, 8 operations
// each (half reads), 10,000 keys, writes of session s only to keys ≡ s mod 24 so that no
// two writers conflict; reads return what a correct database would.
func benchHistory(n int) *history.History {
	const sessions, ops, keys = 24, 8, 10_000
	rng := rand.New(rand.NewPCG(42, 42))
	type g struct {
		s, c int64
		sess int
	}
	txs := make([]g, n)
	clock := make([]int64, sessions)
	for i := range txs {
		s := i % sessions
		st := clock[s] + 1 + rng.Int64N(20)
		ct := st + 1 + rng.Int64N(40)
		clock[s] = ct
		txs[i] = g{st, ct, s}
	}
	type ev struct {
		ts    int64
		start bool
		i     int32
	}
	evs := make([]ev, 0, 2*n)
	for i, x := range txs {
		evs = append(evs, ev{x.s, true, int32(i)}, ev{x.c, false, int32(i)})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if a.ts != b.ts {
			return cmp.Compare(a.ts, b.ts)
		}
		if a.start != b.start {
			if a.start {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.i, b.i)
	})
	type op struct {
		w    bool
		k, v int64
	}
	txOps := make([][ops]op, n)
	for i := range txOps {
		for j := range ops {
			w := j >= ops/2
			k := rng.Int64N(keys)
			if w {
				k = k - k%sessions + int64(txs[i].sess)
				if k >= keys {
					k -= sessions
				}
			}
			txOps[i][j] = op{w: w, k: k, v: int64(i*ops + j + 1)}
		}
	}
	front := make([]int64, keys)
	for _, e := range evs {
		o := &txOps[e.i]
		if e.start {
			for j := range o {
				if !o[j].w {
					o[j].v = front[o[j].k]
				}
			}
			continue
		}
		for j := range o {
			if o[j].w {
				front[o[j].k] = o[j].v
			}
		}
	}
	b := history.NewBuilder()
	b.Grow(n, n*ops)
	b.SetInitial(b.IntValue(0))
	for s := range sessions {
		b.Session(history.Int(int64(s)))
	}
	for i, x := range txs {
		id := b.BeginTxn(history.SessionID(x.sess), history.Int(int64(i)), history.OutcomeCommitted)
		cur := b.Txn(id)
		cur.Start, cur.Commit, cur.HasTimestamps = history.Timestamp{Physical: x.s}, history.Timestamp{Physical: x.c}, true
		for _, o := range txOps[i] {
			if o.w {
				b.Write(b.IntKey(o.k), b.IntValue(o.v))
			} else {
				b.Read(b.IntKey(o.k), b.IntValue(o.v))
			}
		}
	}
	h, err := b.Build()
	if err != nil {
		panic(err)
	}
	return h
}
