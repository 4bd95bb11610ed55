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
