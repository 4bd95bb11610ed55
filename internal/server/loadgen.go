package server

import (
	"math/rand/v2"
	"strconv"
)

// LoadOptions shape the synthetic workload of [LoadGen]. The zero value is the issue's
// benchmark workload: 24 sessions, 8 operations per transaction (4 reads, then 4 writes),
// 10,000 integer keys.
type LoadOptions struct {
	Sessions, Ops, Keys int
	Seed                uint64
	_                   struct{}
}

// LoadGen generates, without end, the transactions of a correct snapshot-isolation database
// in commit order (the order a CDC stream delivers), as native JSON lines: each session
// runs one transaction at a time; reads return the last value committed at or before the
// transaction's start (the initial value is 0); a session writes only keys congruent to its
// number modulo the session count, so writers never conflict. A checker given these
// transactions must report nothing. Not safe for concurrent use.
type LoadGen struct {
	o      LoadOptions
	rng    *rand.Rand
	front  []int64 // committed value of each key
	sess   []loadTxn
	nextID int64
	nextV  int64
}

type loadTxn struct {
	id            int64
	start, commit int64
	keys, vals    []int64 // reads first, then writes
	started       bool
}

// NewLoadGen returns a generator.
func NewLoadGen(o LoadOptions) *LoadGen {
	if o.Sessions <= 0 {
		o.Sessions = 24
	}
	if o.Ops <= 0 {
		o.Ops = 8
	}
	if o.Keys < o.Sessions {
		o.Keys = max(10_000, o.Sessions)
	}
	g := &LoadGen{o: o, rng: rand.New(rand.NewPCG(o.Seed, 0x10ad)), front: make([]int64, o.Keys), sess: make([]loadTxn, o.Sessions)}
	for s := range g.sess {
		t := &g.sess[s]
		t.keys, t.vals = make([]int64, o.Ops), make([]int64, o.Ops)
		g.plan(s, 0)
	}
	return g
}

// plan draws session s's next transaction, starting after after.
func (g *LoadGen) plan(s int, after int64) {
	t := &g.sess[s]
	t.id = g.nextID
	g.nextID++
	t.start = after + 1 + g.rng.Int64N(20)
	t.commit = t.start + 1 + g.rng.Int64N(40)
	t.started = false
	n, reads := g.o.Ops, g.o.Ops/2
	for j := range n {
		k := g.rng.Int64N(int64(g.o.Keys))
		if j >= reads {
			k = k - k%int64(g.o.Sessions) + int64(s)
			if k >= int64(g.o.Keys) {
				k -= int64(g.o.Sessions)
			}
			g.nextV++
			t.vals[j] = g.nextV
		}
		t.keys[j] = k
	}
}

// Append appends the next n transactions, in commit order, one line each, to b.
func (g *LoadGen) Append(b []byte, n int) []byte {
	reads := g.o.Ops / 2
	for n > 0 {
		best := g.next()
		t := &g.sess[best]
		if !t.started {
			for j := range reads {
				t.vals[j] = g.front[t.keys[j]]
			}
			t.started = true
			continue
		}
		for j := reads; j < g.o.Ops; j++ {
			g.front[t.keys[j]] = t.vals[j]
		}
		b = g.line(b, best, t)
		n--
		g.plan(best, t.commit)
	}
	return b
}

// next is the session of the earliest pending event, a start or a commit: at the same
// timestamp a commit comes before a start (a commit at t is visible to a start at t), then
// the lower session.
func (g *LoadGen) next() int {
	best, bestTS, bestCommit := -1, int64(0), false
	for s := range g.sess {
		t := &g.sess[s]
		ts, commit := t.start, false
		if t.started {
			ts, commit = t.commit, true
		}
		if best < 0 || ts < bestTS || ts == bestTS && commit && !bestCommit {
			best, bestTS, bestCommit = s, ts, commit
		}
	}
	return best
}

func (g *LoadGen) line(b []byte, s int, t *loadTxn) []byte {
	b = append(b, `{"s":`...)
	b = strconv.AppendInt(b, int64(s), 10)
	b = append(b, `,"id":`...)
	b = strconv.AppendInt(b, t.id, 10)
	b = append(b, `,"sts":[`...)
	b = strconv.AppendInt(b, t.start, 10)
	b = append(b, `,0],"cts":[`...)
	b = strconv.AppendInt(b, t.commit, 10)
	b = append(b, `,0],"ops":[`...)
	for j := range g.o.Ops {
		if j > 0 {
			b = append(b, ',')
		}
		if j < g.o.Ops/2 {
			b = append(b, `["r",`...)
		} else {
			b = append(b, `["w",`...)
		}
		b = strconv.AppendInt(b, t.keys[j], 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, t.vals[j], 10)
		b = append(b, ']')
	}
	return append(b, "]}\n"...)
}
