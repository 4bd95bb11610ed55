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
	idx := forwardQueries(pos, qs, ans)
	if len(idx) == 0 {
		return ans, nil
	}
	b := &reachBlocks{g: g, order: order, pos: pos, qs: qs, idx: idx}
	b.sortQueries()
	n := g.N()
	b.block = blockTargetsFor(n)
	b.colOf = make([]int32, n)
	for i := range b.colOf {
		b.colOf[i] = -1
	}
	for start := 0; start < len(idx); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end, lo, hi := b.nextBlock(start)
		words := b.sweep(lo, hi)
		for _, qi := range idx[start:end] {
			ans[qi] = b.reaches(qs[qi], lo, words)
		}
		start = end
	}
	return ans, nil
}

// forwardQueries answers at once the queries of a node to itself (true) and those whose
// source does not come before the target (false), and returns the indexes of the rest.
func forwardQueries(pos []int32, qs []Query, ans []bool) []int32 {
	var idx []int32
	for i, q := range qs {
		switch {
		case q.From == q.To:
			ans[i] = true
		case pos[q.From] < pos[q.To]:
			idx = append(idx, int32(i))
		}
	}
	return idx
}

// blockTargetsFor is the number of targets of a block on a graph of n nodes: 4096, fewer
// (a multiple of 64) if the rows would take more than maxBlockBytes.
func blockTargetsFor(n int) int {
	block := 4096
	if n > 0 && n*block/8 > maxBlockBytes {
		block = max(64, (maxBlockBytes*8/n)&^63)
	}
	return block
}

// reachBlocks is the state of [ReachBatch]'s blocks.
type reachBlocks struct {
	g          *Digraph
	order, pos []int32
	qs         []Query
	idx        []int32 // queries left to sweep for, in sweep order
	block      int     // targets per block at most
	// colOf is the column of a target in the current block, or -1.
	colOf        []int32
	blockTargets []int32
	// rows holds, per position of the window, the set of block targets it reaches.
	rows []uint64
}

// local reports whether query i's source and target are close in the order, as between
// overlapping transactions.
func (b *reachBlocks) local(i int32) bool {
	return b.pos[b.qs[i].To]-b.pos[b.qs[i].From] <= localWindow
}

// sortQueries puts local queries first, in blocks whose window stays small; the rest follow
// in blocks of up to b.block targets. Within each class, by target position.
func (b *reachBlocks) sortQueries() {
	pos, qs := b.pos, b.qs
	slices.SortFunc(b.idx, func(x, y int32) int {
		lx, ly := b.local(x), b.local(y)
		if lx != ly {
			if lx {
				return -1
			}
			return 1
		}
		return int(pos[qs[x].To]) - int(pos[qs[y].To])
	})
}

// nextBlock gathers the block of queries from idx[start]: it returns the end of the block
// and the window [lo, hi] of positions its queries span, with its targets' columns set.
func (b *reachBlocks) nextBlock(start int) (end int, lo, hi int32) {
	pos, qs, idx := b.pos, b.qs, b.idx
	for _, t := range b.blockTargets {
		b.colOf[t] = -1
	}
	b.blockTargets = b.blockTargets[:0]
	end = start
	lo, hi = int32(b.g.N()), 0
	isLocal := b.local(idx[start])
	for end < len(idx) {
		t := qs[idx[end]].To
		if b.local(idx[end]) != isLocal {
			break
		}
		if isLocal && end > start && pos[t]-min(lo, pos[qs[idx[end]].From]) > 2*localWindow {
			break
		}
		if b.colOf[t] < 0 {
			if len(b.blockTargets) == b.block {
				break
			}
			b.colOf[t] = int32(len(b.blockTargets))
			b.blockTargets = append(b.blockTargets, t)
		}
		lo = min(lo, pos[qs[idx[end]].From])
		hi = max(hi, pos[t])
		end++
	}
	return end, lo, hi
}

// sweep computes, in reverse topological order over the window [lo, hi], the set of block
// targets each node reaches. It returns the words per row.
func (b *reachBlocks) sweep(lo, hi int32) int {
	words := (len(b.blockTargets) + 63) / 64
	need := int(hi-lo+1) * words
	if cap(b.rows) < need {
		b.rows = make([]uint64, need)
	} else {
		b.rows = b.rows[:need]
		clear(b.rows)
	}
	rows, order, pos, colOf, out := b.rows, b.order, b.pos, b.colOf, b.g.out
	for p := hi; p >= lo; p-- {
		u := order[p]
		r := rows[int(p-lo)*words : int(p-lo+1)*words]
		if c := colOf[u]; c >= 0 {
			r[c>>6] |= 1 << (c & 63)
		}
		for _, v := range out[u] {
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
	return words
}

// reaches reads query q's answer from the swept rows.
func (b *reachBlocks) reaches(q Query, lo int32, words int) bool {
	c := b.colOf[q.To]
	p := b.pos[q.From] - lo
	return b.rows[int(p)*words+int(c>>6)]&(1<<(c&63)) != 0
}
