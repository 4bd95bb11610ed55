package histtest

import (
	"fmt"
	"math/rand/v2"

	"isovet/history"
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
	const absent = -1
	b := history.NewBuilder()
	keys := []history.Key{b.StrKey("x"), b.StrKey("y"), b.StrKey("z")}
	initial := int64(absent)
	if rng.IntN(2) == 0 {
		initial = 0
		b.SetInitial(b.IntValue(0))
	}
	value := func(x int64) history.Value {
		if x == absent {
			return history.Nil
		}
		return b.IntValue(x)
	}
	states := []map[history.Key]int64{{}}
	get := func(st map[history.Key]int64, k history.Key) int64 {
		if v, ok := st[k]; ok {
			return v
		}
		return initial
	}
	nt := 2 + rng.IntN(4)
	for i := range nt {
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
		seen := len(states) - 1 // the commits in the state read
		if rng.IntN(2) == 0 {
			seen = rng.IntN(len(states))
		}
		base := states[seen]
		if timestamps {
			x := b.Current()
			x.Start, x.Commit, x.HasTimestamps = history.Timestamp{Physical: int64(seen)}, history.Timestamp{Physical: int64(len(states))}, true
		}
		cur := make(map[history.Key]int64)
		for _, k := range keys {
			cur[k] = get(base, k)
		}
		wrote := make(map[history.Key]bool)
		for range 1 + rng.IntN(3) {
			k := keys[rng.IntN(len(keys))]
			switch rng.IntN(5) {
			case 0:
				b.Read(k, value(cur[k]))
			case 1:
				x := int64(rng.IntN(4))
				b.Write(k, value(x))
				cur[k], wrote[k] = x, true
			case 2, 3:
				lo := int64(rng.IntN(4))
				hi := lo + int64(rng.IntN(2))
				pr := history.Predicate{Expr: fmt.Sprintf("v in [%d, %d]", lo, hi), Field: history.Str("v"), Lo: lo, Hi: hi, IsRange: true}
				write := rng.IntN(2) == 0
				nv := int64(rng.IntN(4))
				var rows []history.Row
				for _, k := range keys {
					x := cur[k]
					if x == absent || x < lo || x > hi {
						continue
					}
					if rng.IntN(12) == 0 {
						continue // a row the database wrongly left out
					}
					if write {
						rows = append(rows, history.Row{Key: k, Value: value(nv), Match: true})
						cur[k], wrote[k] = nv, true
					} else {
						rows = append(rows, history.Row{Key: k, Value: value(x), Match: true})
					}
				}
				if write {
					b.PredWrite(history.PredOp{Pred: pr, Rows: rows})
				} else {
					b.PredRead(history.PredOp{Pred: pr, Rows: rows})
				}
			case 4:
				if cur[k] == absent {
					x := int64(rng.IntN(4))
					b.Insert(k, value(x))
					cur[k] = x
				} else {
					b.Delete(k)
					cur[k] = absent
				}
				wrote[k] = true
			}
		}
		b.EndTxn()
		if outcome == history.OutcomeCommitted {
			// Install the writes on top of the latest state (a stale read then shows as
			// a cycle).
			next := make(map[history.Key]int64)
			for _, k := range keys {
				next[k] = get(states[len(states)-1], k)
				if wrote[k] {
					next[k] = cur[k]
				}
			}
			states = append(states, next)
		}
	}
	h, err := b.Build()
	if err != nil {
		panic(err)
	}
	return h
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
