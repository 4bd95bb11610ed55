package histtest

import (
	"fmt"
	"math/rand/v2"

	"github.com/isovet/isovet/history"
)

// GenPred returns a random small history with predicate reads and writes: a few
// transactions over three rows, executed one after another against states that are
// sometimes stale, so a good share are not serializable. Values are integers (one value
// column), predicates ranges over them, so every predicate is decidable; it is the
// differential test of the checkers' predicate support.
func GenPred(rng *rand.Rand) *history.History { return genPred(rng, false) }

// GenPredTimed is GenPred with database start and commit timestamps that describe the run
// as a snapshot-isolated database's: a transaction's start is the number of commits in the
// state it read (stale or not), its commit one more than the commits before it. The run
// does not enforce first-committer-wins, and some rows are left out of predicates, so a
// share of the histories are not snapshot isolated; the same draws from rng give the same
// history as GenPred, with timestamps.
func GenPredTimed(rng *rand.Rand) *history.History { return genPred(rng, true) }

func genPred(rng *rand.Rand, timestamps bool) *history.History {
	g := &predGen{rng: rng, b: history.NewBuilder(), timestamps: timestamps, initial: predAbsent}
	b := g.b
	g.keys = []history.Key{b.StrKey("x"), b.StrKey("y"), b.StrKey("z")}
	if rng.IntN(2) == 0 {
		g.initial = 0
		b.SetInitial(b.IntValue(0))
	}
	g.states = []map[history.Key]int64{{}}
	nt := 2 + rng.IntN(4)
	for i := range nt {
		g.txn(i)
	}
	h, err := b.Build()
	if err != nil {
		panic(err)
	}
	return h
}

// predAbsent is a row that does not exist, in predGen's states.
const predAbsent = -1

// predGen is the run genPred simulates: the states committed so far, and the transaction
// being generated.
type predGen struct {
	rng        *rand.Rand
	b          *history.Builder
	timestamps bool
	keys       []history.Key
	initial    int64                   // every row's value before any write, or predAbsent
	states     []map[history.Key]int64 // the committed states, in order

	cur   map[history.Key]int64 // the state the current transaction sees, with its writes
	wrote map[history.Key]bool  // the rows it wrote
}

func (g *predGen) value(x int64) history.Value {
	if x == predAbsent {
		return history.Nil
	}
	return g.b.IntValue(x)
}

func (g *predGen) get(st map[history.Key]int64, k history.Key) int64 {
	if v, ok := st[k]; ok {
		return v
	}
	return g.initial
}

// txn generates the i-th transaction and, if it commits, installs its writes on top of
// the latest state (a stale read then shows as a cycle).
func (g *predGen) txn(i int) {
	rng, b := g.rng, g.b
	s := b.Session(history.Int(int64(rng.IntN(3))))
	outcome := history.OutcomeCommitted
	if rng.IntN(8) == 0 {
		outcome = history.OutcomeAborted
	}
	b.BeginTxn(s, history.Str(fmt.Sprintf("T%d", i+1)), outcome)
	// Client intervals around the transaction's place in the run, overlapping its
	// neighbours' often.
	begin := int64(i*10 - rng.IntN(25))
	b.Current().Time, b.Current().HasTime = history.Interval{Begin: begin, End: begin + 1 + int64(rng.IntN(30))}, true
	// Read from the latest state mostly, sometimes from a stale one.
	seen := len(g.states) - 1 // the commits in the state read
	if rng.IntN(2) == 0 {
		seen = rng.IntN(len(g.states))
	}
	base := g.states[seen]
	if g.timestamps {
		x := b.Current()
		x.Start, x.Commit, x.HasTimestamps = history.Timestamp{Physical: int64(seen)}, history.Timestamp{Physical: int64(len(g.states))}, true
	}
	g.cur = make(map[history.Key]int64)
	for _, k := range g.keys {
		g.cur[k] = g.get(base, k)
	}
	g.wrote = make(map[history.Key]bool)
	for range 1 + rng.IntN(3) {
		g.op()
	}
	b.EndTxn()
	if outcome != history.OutcomeCommitted {
		return
	}
	next := make(map[history.Key]int64)
	for _, k := range g.keys {
		next[k] = g.get(g.states[len(g.states)-1], k)
		if g.wrote[k] {
			next[k] = g.cur[k]
		}
	}
	g.states = append(g.states, next)
}

// op generates one op of the current transaction: a read, a write, a predicate read or
// write, or an insert or delete.
func (g *predGen) op() {
	rng, b, cur := g.rng, g.b, g.cur
	k := g.keys[rng.IntN(len(g.keys))]
	switch rng.IntN(5) {
	case 0:
		b.Read(k, g.value(cur[k]))
	case 1:
		x := int64(rng.IntN(4))
		b.Write(k, g.value(x))
		cur[k], g.wrote[k] = x, true
	case 2, 3:
		g.predOp()
	case 4:
		if cur[k] == predAbsent {
			x := int64(rng.IntN(4))
			b.Insert(k, g.value(x))
			cur[k] = x
		} else {
			b.Delete(k)
			cur[k] = predAbsent
		}
		g.wrote[k] = true
	}
}

// predOp generates a predicate read or write over a range of values, which now and then
// wrongly leaves out a row.
func (g *predGen) predOp() {
	rng, cur := g.rng, g.cur
	lo := int64(rng.IntN(4))
	hi := lo + int64(rng.IntN(2))
	pr := history.Predicate{Expr: fmt.Sprintf("v in [%d, %d]", lo, hi), Field: history.Str("v"), Lo: lo, Hi: hi, IsRange: true}
	write := rng.IntN(2) == 0
	nv := int64(rng.IntN(4))
	var rows []history.Row
	for _, k := range g.keys {
		x := cur[k]
		if x == predAbsent || x < lo || x > hi {
			continue
		}
		if rng.IntN(12) == 0 {
			continue // a row the database wrongly left out
		}
		if write {
			rows = append(rows, history.Row{Key: k, Value: g.value(nv), Match: true})
			cur[k], g.wrote[k] = nv, true
		} else {
			rows = append(rows, history.Row{Key: k, Value: g.value(x), Match: true})
		}
	}
	if write {
		g.b.PredWrite(history.PredOp{Pred: pr, Rows: rows})
	} else {
		g.b.PredRead(history.PredOp{Pred: pr, Rows: rows})
	}
}

// PredSees reports whether predicate op o, run on the state value gives for every key of h
// (every row of the relation), lists exactly the rows on which its predicate holds, and, for
// a read, with the values it saw. A read that lists one row twice with different values
// sees nothing any state gives (si's FuzzCheck found the oracle keeping the last of the
// two); a write's rows are what it wrote, and the last one stands. Brute-force oracles use
// it to replay predicate ops.
func PredSees(h *history.History, o history.Op, value func(history.Key) history.Value) bool {
	po := h.Pred(o)
	listed := make(map[history.Key]history.Row)
	for _, r := range po.Rows {
		if r.Match {
			if prev, ok := listed[r.Key]; ok && prev.Value != r.Value && o.Kind == history.OpPredRead {
				return false // two versions of one row: no single state shows both
			}
			listed[r.Key] = r
		}
	}
	for k := range h.Keys {
		v := value(history.Key(k))
		r, isListed := listed[history.Key(k)]
		if (po.Pred.Eval(h.Value(v)) == history.TruthTrue) != isListed {
			return false
		}
		if isListed && o.Kind == history.OpPredRead && r.Value != v {
			return false
		}
	}
	return true
}
