package graph

import (
	"context"
	"slices"
)

// Query asks whether From reaches To.
type Query struct{ From, To int32 }

// Positions returns pos with pos[order[i]] = i.
func Positions(order []int32) []int32 {
	pos := make([]int32, len(order))
	for i, u := range order {
		pos[u] = int32(i)
	}
	return pos
}

// maxBlockBytes bounds the bitset memory of one block of [ReachBatch].
const maxBlockBytes = 64 << 20

// localWindow is the largest source-to-target distance in the topological order of a query
// answered in a local block (a variable so tests can exercise both paths).
var localWindow int32 = 4096

// ReachBatch answers reachability queries on the acyclic graph g, given a topological order
// (see [Topo]) and pos = [Positions](order). A node reaches itself.
//
// Queries whose source comes after the target in the order are answered false at once.
// The rest are grouped by target into blocks of at most 4096 targets; for each block one
// sweep in reverse topological order over the window of positions the block's queries span
// computes, for each node of the window, the set of block targets it reaches. Memory is
// therefore bounded by the window size times 512 bytes (at most 64 MiB), never n²/8, and
// time is O((n+m) · targets/64) in the worst case, much less when windows are narrow (client
// intervals make them so).
//
// It polls ctx between blocks and returns ctx's error if it is done.
func ReachBatch(ctx context.Context, g *Digraph, order, pos []int32, qs []Query) ([]bool, error) {
	ans := make([]bool, len(qs))
	type pend struct {
		q   int32
		col int32
	}
	var idx []int32
	for i, q := range qs {
		switch {
		case q.From == q.To:
			ans[i] = true
		case pos[q.From] < pos[q.To]:
			idx = append(idx, int32(i))
		}
	}
	if len(idx) == 0 {
		return ans, nil
	}
	// Local queries (source and target close in the order, as between overlapping
	// transactions) go first, in blocks whose window stays small; the rest follow in blocks
	// of up to 4096 targets. Within each class, sort by target position.
	local := func(i int32) bool { return pos[qs[i].To]-pos[qs[i].From] <= localWindow }
	slices.SortFunc(idx, func(a, b int32) int {
		la, lb := local(a), local(b)
		if la != lb {
			if la {
				return -1
			}
			return 1
		}
		return int(pos[qs[a].To]) - int(pos[qs[b].To])
	})
	n := g.N()
	block := 4096
	if n > 0 && n*block/8 > maxBlockBytes {
		block = max(64, (maxBlockBytes*8/n)&^63)
	}
	colOf := make([]int32, n) // column of a target in the current block, or -1
	for i := range colOf {
		colOf[i] = -1
	}
	var blockTargets []int32
	var rows []uint64
	for start := 0; start < len(idx); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, t := range blockTargets {
			colOf[t] = -1
		}
		blockTargets = blockTargets[:0]
		end := start
		lo, hi := int32(n), int32(0)
		isLocal := local(idx[start])
		for end < len(idx) {
			t := qs[idx[end]].To
			if local(idx[end]) != isLocal {
				break
			}
			if isLocal && end > start && pos[t]-min(lo, pos[qs[idx[end]].From]) > 2*localWindow {
				break
			}
			if colOf[t] < 0 {
				if len(blockTargets) == block {
					break
				}
				colOf[t] = int32(len(blockTargets))
				blockTargets = append(blockTargets, t)
			}
			lo = min(lo, pos[qs[idx[end]].From])
			hi = max(hi, pos[t])
			end++
		}
		w := int(hi-lo) + 1
		words := (len(blockTargets) + 63) / 64
		need := w * words
		if cap(rows) < need {
			rows = make([]uint64, need)
		} else {
			rows = rows[:need]
			clear(rows)
		}
		for p := hi; p >= lo; p-- {
			u := order[p]
			r := rows[int(p-lo)*words : int(p-lo+1)*words]
			if c := colOf[u]; c >= 0 {
				r[c>>6] |= 1 << (c & 63)
			}
			for _, v := range g.out[u] {
				pv := pos[v]
				if pv > hi || pv <= p {
					continue
				}
				s := rows[int(pv-lo)*words : int(pv-lo+1)*words]
				for i := range r {
					r[i] |= s[i]
				}
			}
		}
		for _, qi := range idx[start:end] {
			q := qs[qi]
			c := colOf[q.To]
			p := pos[q.From] - lo
			ans[qi] = rows[int(p)*words+int(c>>6)]&(1<<(c&63)) != 0
		}
		start = end
	}
	return ans, nil
}
