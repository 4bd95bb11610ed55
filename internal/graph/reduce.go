package graph

import (
	"context"
	"math/bits"
	"slices"
)

// MaxReduceTerminals bounds the terminals [ReduceAmong] accepts (its matrix is T²/8 bytes).
const MaxReduceTerminals = 32768

// ReduceAmong returns the edges of the transitive reduction of reachability among the
// terminals of the acyclic graph g (order and pos as for [ReachBatch]): u→v for terminals u
// ≠ v such that u reaches v and no other terminal reached from u reaches v. Reachability
// among terminals in the returned graph equals that in g. Terminals may repeat. It returns
// false if there are more than [MaxReduceTerminals] distinct terminals. Memory is T²/8 bytes
// (T distinct terminals) plus a window of at most 64 MiB.
func ReduceAmong(ctx context.Context, g *Digraph, order, pos []int32, terms []int32) ([][2]int32, bool, error) {
	ts := slices.Clone(terms)
	slices.SortFunc(ts, func(a, b int32) int { return int(pos[a]) - int(pos[b]) })
	ts = slices.Compact(ts)
	T := len(ts)
	if T > MaxReduceTerminals {
		return nil, false, nil
	}
	words := (T + 63) / 64
	tidx := make([]int32, g.N())
	for i := range tidx {
		tidx[i] = -1
	}
	for i, t := range ts {
		tidx[t] = int32(i)
	}
	reach := make([]uint64, T*words)
	n := g.N()
	block := 4096
	if n > 0 && n*block/8 > maxBlockBytes {
		block = max(64, (maxBlockBytes*8/n)&^63)
	}
	bw := block / 64
	var rows []uint64
	for c0 := 0; c0 < T; c0 += block {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		c1 := min(T, c0+block)
		// Window: from the first terminal to the last target of the block.
		lo, hi := pos[ts[0]], pos[ts[c1-1]]
		w := int(hi-lo) + 1
		need := w * bw
		if cap(rows) < need {
			rows = make([]uint64, need)
		} else {
			rows = rows[:need]
			clear(rows)
		}
		for p := hi; p >= lo; p-- {
			u := order[p]
			r := rows[int(p-lo)*bw : int(p-lo+1)*bw]
			if ti := tidx[u]; ti >= 0 && int(ti) >= c0 && int(ti) < c1 {
				c := int(ti) - c0
				r[c>>6] |= 1 << (c & 63)
			}
			for _, v := range g.out[u] {
				pv := pos[v]
				if pv > hi || pv <= p {
					continue
				}
				s := rows[int(pv-lo)*bw : int(pv-lo+1)*bw]
				for i := range r {
					r[i] |= s[i]
				}
			}
			if ti := tidx[u]; ti >= 0 {
				dst := reach[int(ti)*words:]
				for i := range bw {
					if c0/64+i < words {
						dst[c0/64+i] |= r[i]
					}
				}
			}
		}
	}
	// Transitive reduction: for each terminal, take reachable terminals in topological
	// order, keeping one unless an earlier kept one already reaches it.
	var out [][2]int32
	covered := make([]uint64, words)
	for i := range T {
		clear(covered)
		row := reach[i*words : (i+1)*words]
		covered[i>>6] |= 1 << (i & 63)
		for wi, word := range row {
			word &^= covered[wi]
			for word != 0 {
				b := bits.TrailingZeros64(word)
				j := wi*64 + b
				word &^= 1 << b
				if covered[wi]&(1<<b) != 0 {
					continue
				}
				out = append(out, [2]int32{ts[i], ts[j]})
				rj := reach[j*words : (j+1)*words]
				for k := range covered {
					covered[k] |= rj[k]
				}
				word &^= covered[wi]
			}
		}
	}
	return out, true, nil
}
