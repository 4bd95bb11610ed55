package histtest

import "isovet/history"

// Shrink returns a smallest-it-can-find sub-history of h on which fails still returns
// true: it drops runs of transactions (halving the run length down to one, in the manner
// of delta debugging), then single operations, until nothing more can go. fails must be
// deterministic and must hold for h. Explicit read sources follow their op; a read whose
// source was dropped reverts to matching by value.
//
// Use it to turn a failing generated history into a fixture:
//
//	small := histtest.Shrink(h, func(h *history.History) bool { return check(h) != want })
//	t.Logf("shrunk:\n%s", histtest.Format(small))
func Shrink(h *history.History, fails func(*history.History) bool) *history.History {
	keep := make([][]bool, len(h.Txns)) // keep[t][i]: op i of txn t; nil: txn dropped
	for t := range h.Txns {
		keep[t] = make([]bool, len(h.Txns[t].Ops))
		for i := range keep[t] {
			keep[t][i] = true
		}
	}
	cur := h
	try := func(next [][]bool) bool {
		c := rebuild(h, next, nil)
		if c != nil && fails(c) {
			keep, cur = next, c
			return true
		}
		return false
	}
	clone := func() [][]bool {
		c := make([][]bool, len(keep))
		for t := range keep {
			if keep[t] != nil {
				c[t] = append([]bool(nil), keep[t]...)
			}
		}
		return c
	}
	for changed := true; changed; {
		changed = false
		// Runs of transactions.
		var live []int
		for t := range keep {
			if keep[t] != nil {
				live = append(live, t)
			}
		}
		for size := max(len(live)/2, 1); size >= 1; size /= 2 {
			for start := 0; start < len(live); {
				next := clone()
				dropped := 0
				for _, t := range live[start:min(start+size, len(live))] {
					if next[t] != nil {
						next[t] = nil
						dropped++
					}
				}
				if dropped > 0 && try(next) {
					changed = true
				}
				start += size
			}
			if size == 1 {
				break
			}
		}
		// Single operations.
		for t := range keep {
			for i := range keep[t] {
				if keep[t] == nil || !keep[t][i] {
					continue
				}
				next := clone()
				next[t][i] = false
				if try(next) {
					changed = true
				}
			}
		}
	}
	return cur
}

// rebuild copies the transactions and ops of h that keep selects into a new history, each
// transaction with the outcome outcome gives it (nil: its own). It returns nil if the result
// does not build.
func rebuild(h *history.History, keep [][]bool, outcome func(t *history.Txn) history.Outcome) *history.History {
	b := history.NewBuilder()
	b.SetInitial(b.Value(h.Value(h.Initial)))
	for k := range h.Keys { // keep key order stable for InitialByKey
		if v, ok := h.InitialByKey[history.Key(k)]; ok {
			b.SetInitialKey(b.Key(h.Key(history.Key(k))), b.Value(h.Value(v)))
		}
	}
	sess := make([]history.SessionID, len(h.Sessions))
	for s := range h.Sessions {
		sess[s] = b.NewSession(h.Sessions[s].Source)
	}
	newID := make([]history.TxnID, len(h.Txns))
	newOp := make([][]int32, len(h.Txns))
	next := history.TxnID(0)
	for t := range h.Txns {
		newID[t] = -1
		if keep[t] == nil {
			continue
		}
		newID[t] = next
		next++
		newOp[t] = make([]int32, len(keep[t]))
		j := int32(0)
		for i, k := range keep[t] {
			newOp[t][i] = -1
			if k {
				newOp[t][i] = j
				j++
			}
		}
	}
	remap := func(src history.Src) history.Src {
		if src.Kind != history.SrcTxn {
			return src
		}
		if newID[src.Txn] < 0 || newOp[src.Txn][src.Op] < 0 {
			return history.Src{}
		}
		return history.Src{Kind: history.SrcTxn, Txn: newID[src.Txn], Op: newOp[src.Txn][src.Op]}
	}
	key := func(k history.Key) history.Key { return b.Key(h.Key(k)) }
	val := func(v history.Value) history.Value { return b.Value(h.Value(v)) }
	for id, t := range h.All() {
		if keep[id] == nil {
			continue
		}
		o := t.Outcome
		if outcome != nil {
			o = outcome(t)
		}
		b.BeginTxn(sess[t.Session], t.Source, o)
		cur := b.Current()
		cur.Time, cur.HasTime = t.Time, t.HasTime
		cur.Start, cur.Commit, cur.HasTimestamps = t.Start, t.Commit, t.HasTimestamps
		for i, o := range t.Ops {
			if !keep[id][i] {
				continue
			}
			var j int32
			switch o.Kind {
			case history.OpRead:
				j = b.ReadFrom(key(o.Key), val(o.Value), remap(o.Src))
			case history.OpWrite:
				j = b.Write(key(o.Key), val(o.Value))
			case history.OpAppend:
				j = b.Append(key(o.Key), val(o.Value))
			case history.OpInsert:
				j = b.Insert(key(o.Key), val(o.Value))
			case history.OpDelete:
				j = b.Delete(key(o.Key))
			case history.OpListRead:
				l := h.List(o)
				vs := make([]history.Value, len(l))
				for x, v := range l {
					vs[x] = val(v)
				}
				j = b.ReadList(key(o.Key), vs)
			case history.OpPredRead, history.OpPredWrite:
				p := *h.Pred(o)
				p.Rows = append([]history.Row(nil), p.Rows...)
				for x := range p.Rows {
					r := &p.Rows[x]
					r.Key, r.Value = key(r.Key), val(r.Value)
				}
				if p.Srcs != nil {
					p.Srcs = append([]history.Src(nil), p.Srcs...)
					for x := range p.Srcs {
						p.Srcs[x] = remap(p.Srcs[x])
					}
				}
				if o.Kind == history.OpPredRead {
					j = b.PredRead(p)
				} else {
					j = b.PredWrite(p)
				}
			default:
				continue
			}
			if o.Flags != 0 {
				b.SetOpFlags(j, o.Flags)
			}
			if t.OpTimes != nil {
				b.SetOpTime(j, t.OpTimes[i])
			}
		}
		b.EndTxn()
	}
	out, err := b.Build()
	if err != nil {
		return nil
	}
	return out
}
