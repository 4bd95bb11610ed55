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
	if len(ts) > MaxReduceTerminals {
		return nil, false, nil
	}
	m := &terminalReach{g: g, order: order, pos: pos, ts: ts, words: (len(ts) + 63) / 64}
	m.tidx = make([]int32, g.N())
	for i := range m.tidx {
		m.tidx[i] = -1
	}
	for i, t := range ts {
		m.tidx[t] = int32(i)
	}
	m.reach = make([]uint64, len(ts)*m.words)
	block := blockTargetsFor(g.N())
	for c0 := 0; c0 < len(ts); c0 += block {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		m.sweep(c0, min(len(ts), c0+block), block/64)
	}
	return m.reduce(), true, nil
}

// terminalReach is the state of [ReduceAmong]: reach holds, per terminal (ts, sorted by
// position; tidx maps a node to its index or -1), the set of terminals it reaches.
type terminalReach struct {
	g          *Digraph
	order, pos []int32
	ts, tidx   []int32
	words      int // words per row of reach
	reach      []uint64
	rows       []uint64 // the window's rows of the current block
}

// sweep computes, in reverse topological order over the window from the first terminal to
// the last of the block [c0, c1), the block's terminals each node reaches (bw words a row),
// and ors them into the terminals' rows of reach.
func (m *terminalReach) sweep(c0, c1, bw int) {
	lo, hi := m.pos[m.ts[0]], m.pos[m.ts[c1-1]]
	need := int(hi-lo+1) * bw
	if cap(m.rows) < need {
		m.rows = make([]uint64, need)
	} else {
		m.rows = m.rows[:need]
		clear(m.rows)
	}
	rows, order, pos, tidx, out, reach, words := m.rows, m.order, m.pos, m.tidx, m.g.out, m.reach, m.words
	for p := hi; p >= lo; p-- {
		u := order[p]
		r := rows[int(p-lo)*bw : int(p-lo+1)*bw]
		if ti := tidx[u]; ti >= 0 && int(ti) >= c0 && int(ti) < c1 {
			c := int(ti) - c0
			r[c>>6] |= 1 << (c & 63)
		}
		for _, v := range out[u] {
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

// reduce is the transitive reduction: for each terminal, take reachable terminals in
// topological order, keeping one unless an earlier kept one already reaches it.
func (m *terminalReach) reduce() [][2]int32 {
	var out [][2]int32
	words, reach, ts := m.words, m.reach, m.ts
	covered := make([]uint64, words)
	for i := range ts {
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
	return out
}
