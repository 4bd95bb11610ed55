package histtest

import (
	"iter"
	"slices"

	"isovet/history"
)

// Worlds yields, for a brute-force oracle, every set of transactions of h that may have
// committed: the committed ones, with each subset of those of unknown outcome (2^u sets).
// Each set is a fresh slice, committed transactions first, in id order within each part.
func Worlds(h *history.History) iter.Seq[[]int] {
	var committed, unknown []int
	for i := range h.Txns {
		switch h.Txns[i].Outcome {
		case history.OutcomeCommitted:
			committed = append(committed, i)
		case history.OutcomeUnknown:
			unknown = append(unknown, i)
		}
	}
	return func(yield func([]int) bool) {
		for mask := 0; mask < 1<<len(unknown); mask++ {
			in := slices.Clone(committed)
			for j, t := range unknown {
				if mask&(1<<j) != 0 {
					in = append(in, t)
				}
			}
			if !yield(in) {
				return
			}
		}
	}
}

// FailedWorlds yields, for a brute-force oracle, each history h may stand for when some of
// its statements are marked failed: a failed statement took no effect, and each transaction
// logged as committed that contains one either committed without it or rolled back (2^f
// histories for f such transactions). The histories are built afresh, statement by
// statement, with the same transaction ids; a history with no failed statement yields
// itself. A level holds on h when it holds on one of them.
func FailedWorlds(h *history.History) iter.Seq[*history.History] {
	var flagged []history.TxnID
	hasFailed := false
	for i := range h.Txns {
		for _, o := range h.Txns[i].Ops {
			if o.Failed() {
				hasFailed = true
				if h.Txns[i].Outcome == history.OutcomeCommitted {
					flagged = append(flagged, history.TxnID(i))
				}
				break
			}
		}
	}
	return func(yield func(*history.History) bool) {
		if !hasFailed {
			yield(h)
			return
		}
		for mask := 0; mask < 1<<len(flagged); mask++ {
			aborted := map[history.TxnID]bool{}
			for j, t := range flagged {
				if mask&(1<<j) == 0 {
					aborted[t] = true
				}
			}
			if !yield(rebuildWithout(h, aborted)) {
				return
			}
		}
	}
}

// FailedWorld is the one history h stands for when every transaction logged as committed
// that contains a failed statement rolled back (rolledBack), or when each committed without
// its failed statements: the oracle of the rolled-back and skipped readings.
func FailedWorld(h *history.History, rolledBack bool) *history.History {
	aborted := map[history.TxnID]bool{}
	for i := range h.Txns {
		if rolledBack && h.Txns[i].Outcome == history.OutcomeCommitted && slices.ContainsFunc(h.Txns[i].Ops, history.Op.Failed) {
			aborted[history.TxnID(i)] = true
		}
	}
	return rebuildWithout(h, aborted)
}

// rebuildWithout builds h again without its failed statements, with the transactions in
// aborted rolled back.
func rebuildWithout(h *history.History, aborted map[history.TxnID]bool) *history.History {
	b := history.NewBuilder()
	val := func(v history.Value) history.Value { return b.Value(h.Value(v)) }
	key := func(k history.Key) history.Key { return b.Key(h.Key(k)) }
	b.SetInitial(val(h.Initial))
	for k, v := range h.InitialByKey {
		b.SetInitialKey(key(k), val(v))
	}
	for s := range h.Sessions {
		b.NewSession(h.Sessions[s].Source)
	}
	// newOp[t][i] is op i of t in the rebuilt history (-1: dropped).
	newOp := make([][]int32, len(h.Txns))
	for i := range h.Txns {
		j := int32(0)
		for _, o := range h.Txns[i].Ops {
			if o.Failed() {
				newOp[i] = append(newOp[i], -1)
				continue
			}
			newOp[i] = append(newOp[i], j)
			j++
		}
	}
	src := func(s history.Src) history.Src {
		if s.Kind == history.SrcTxn {
			s.Op = newOp[s.Txn][s.Op]
		}
		return s
	}
	for i := range h.Txns {
		t := &h.Txns[i]
		outcome := t.Outcome
		if aborted[t.ID] {
			outcome = history.OutcomeAborted
		}
		b.BeginTxn(history.SessionID(t.Session), t.Source, outcome)
		cur := b.Current()
		cur.Time, cur.HasTime = t.Time, t.HasTime
		cur.Start, cur.Commit, cur.HasTimestamps = t.Start, t.Commit, t.HasTimestamps
		for oi, o := range t.Ops {
			if o.Failed() {
				continue
			}
			var j int32
			switch o.Kind {
			case history.OpRead:
				j = b.ReadFrom(key(o.Key), val(o.Value), src(o.Src))
			case history.OpWrite:
				j = b.Write(key(o.Key), val(o.Value))
			case history.OpAppend:
				j = b.Append(key(o.Key), val(o.Value))
			case history.OpInsert:
				j = b.Insert(key(o.Key), val(o.Value))
			case history.OpDelete:
				j = b.Delete(key(o.Key))
			case history.OpListRead:
				var l []history.Value
				for _, v := range h.List(o) {
					l = append(l, val(v))
				}
				j = b.ReadList(key(o.Key), l)
			case history.OpPredRead, history.OpPredWrite:
				p := *h.Pred(o)
				p.Rows = slices.Clone(p.Rows)
				for r := range p.Rows {
					p.Rows[r].Key, p.Rows[r].Value = key(p.Rows[r].Key), val(p.Rows[r].Value)
				}
				if p.Srcs != nil {
					p.Srcs = slices.Clone(p.Srcs)
					for r := range p.Srcs {
						p.Srcs[r] = src(p.Srcs[r])
					}
				}
				if o.Kind == history.OpPredRead {
					j = b.PredRead(p)
				} else {
					j = b.PredWrite(p)
				}
			}
			if t.OpTimes != nil {
				b.SetOpTime(j, t.OpTimes[oi])
			}
		}
		b.EndTxn()
	}
	w, err := b.Build()
	if err != nil {
		panic("histtest: rebuilding a history without its failed statements: " + err.Error())
	}
	return w
}
