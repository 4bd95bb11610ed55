package histtest

import (
	"iter"
	"slices"

	"github.com/isovet/isovet/history"
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
	flagged := FailedCommitted(h)
	hasFailed := slices.ContainsFunc(h.Txns, func(t history.Txn) bool { return t.HasFailedOp() })
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

// FailedCommitted returns the transactions of h logged as committed that contain a failed
// statement, in id order.
func FailedCommitted(h *history.History) []history.TxnID {
	var out []history.TxnID
	for i := range h.Txns {
		if t := &h.Txns[i]; t.Outcome == history.OutcomeCommitted && t.HasFailedOp() {
			out = append(out, t.ID)
		}
	}
	return out
}

// FailedWorld is the one history h stands for when every transaction logged as committed
// that contains a failed statement rolled back (rolledBack), or when each committed without
// its failed statements: the oracle of the rolled-back and skipped readings.
func FailedWorld(h *history.History, rolledBack bool) *history.History {
	aborted := map[history.TxnID]bool{}
	if rolledBack {
		for _, t := range FailedCommitted(h) {
			aborted[t] = true
		}
	}
	return rebuildWithout(h, aborted)
}

// rebuildWithout builds h again without its failed statements, with the transactions in
// aborted rolled back.
func rebuildWithout(h *history.History, aborted map[history.TxnID]bool) *history.History {
	keep := make([][]bool, len(h.Txns))
	for t := range h.Txns {
		keep[t] = make([]bool, len(h.Txns[t].Ops))
		for i, o := range h.Txns[t].Ops {
			keep[t][i] = !o.Failed()
		}
	}
	w := rebuild(h, keep, func(t *history.Txn) history.Outcome {
		if aborted[t.ID] {
			return history.OutcomeAborted
		}
		return t.Outcome
	})
	if w == nil {
		panic("histtest: a history without its failed statements does not build")
	}
	return w
}
