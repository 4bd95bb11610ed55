package weak

import (
	"slices"

	"isovet/internal/anomaly"
	"isovet/internal/deps"
)

// greedy looks for a choice of writers without a search, in linear time: it places the
// committed transactions one by one, a transaction once every certain edge into it comes
// from a placed one and each of its reads that has a choice has a placed candidate
// (transactions of unknown outcome taken as not committed). Placing a transaction never
// keeps another from being placed, so this places every transaction exactly when some
// order puts, for every read, a candidate before its reader; each read then chooses its
// latest candidate before it. At read committed that choice has every edge forward, which
// proves the level; at read atomic and causal it is a guess (the latest version before the
// reader is the one a database most likely gave) that [verify] confirms or refutes. It
// reports false when some committed transaction could not be placed. extra holds, per
// transaction, others it must be placed before (the orders earlier guesses broke); pos is
// each node's position.
func (c *check) greedy(level anomaly.Level, extra [][]int32) (ch choice, pos []int32, ok bool) {
	d := c.d
	ch = choice{writer: make([]int32, len(d.Reads)), committed: make([]bool, d.N)}
	pending := make([]int32, d.N) // per transaction: reads with no placed candidate yet
	byCand := make([][]int32, d.N)
	var open []int32 // reads with a choice
	for ri := range d.Reads {
		ch.writer[ri] = -1
		r := &d.Reads[ri]
		if d.Status[r.Txn] != deps.Committed || level == anomaly.ReadCommitted && slices.Contains(r.Cands, d.Init) {
			continue
		}
		ws := committedOptions(d, r)
		switch {
		case len(ws) == 0:
			return ch, nil, false // only writers of unknown outcome: not this world
		case len(r.Cands) == 1 && len(ws) == 1:
			ch.writer[ri] = ws[0] // certain: its edge is in the graph
			continue
		case slices.Contains(ws, d.Init):
			// the initial state is placed first
		default:
			pending[r.Txn]++
			for _, w := range ws {
				byCand[w] = append(byCand[w], int32(ri))
			}
		}
		open = append(open, int32(ri))
	}
	if pos, ok = c.place(pending, byCand, extra); !ok {
		return ch, nil, false
	}
	for t := range d.N {
		ch.committed[t] = d.Status[t] == deps.Committed
	}
	for _, ri := range open {
		r := &d.Reads[ri]
		best := int32(-1)
		for _, w := range committedOptions(d, r) {
			if pos[w] < pos[r.Txn] && (best < 0 || pos[w] > pos[best]) {
				best = w
			}
		}
		ch.writer[ri] = best
	}
	return ch, pos, true
}

// committedOptions returns r's candidates that are committed transactions other than its
// reader, or the initial state.
func committedOptions(d *deps.Deps, r *deps.Read) []int32 {
	var ws []int32
	for _, w := range r.Cands {
		if w == d.Init || w != r.Txn && d.Status[w] == deps.Committed {
			ws = append(ws, w)
		}
	}
	return ws
}

// place is greedy's placement (Kahn's algorithm, with reads as extra conditions): it returns
// each node's position (the initial state's first) and whether every committed transaction
// was placed. pending counts, per transaction, its reads with no placed candidate yet, and
// byCand lists, per transaction, the reads it is a candidate of; extra, the nodes each
// must come before besides its edges.
func (c *check) place(pending []int32, byCand, extra [][]int32) ([]int32, bool) {
	d, g := c.d, c.certain
	n := int32(d.N)
	indeg := make([]int32, n+1)
	for u := range n + 1 {
		for _, v := range g.Out(u) {
			indeg[v]++
		}
	}
	for _, vs := range extra {
		for _, v := range vs {
			indeg[v]++
		}
	}
	pos := make([]int32, n+1)
	for i := range pos {
		pos[i] = -1
	}
	satisfied := make([]bool, len(d.Reads))
	queue := []int32{n}
	ready := func(t int32) bool { return t < n && indeg[t] == 0 && pending[t] == 0 && d.Status[t] == deps.Committed }
	for t := range n {
		if ready(t) {
			queue = append(queue, t)
		}
	}
	placed := int32(0)
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		pos[u] = placed
		placed++
		for _, v := range g.Out(u) {
			if indeg[v]--; ready(v) {
				queue = append(queue, v)
			}
		}
		if u == n {
			continue
		}
		for _, v := range extra[u] {
			if indeg[v]--; ready(v) {
				queue = append(queue, v)
			}
		}
		if u == n {
			continue
		}
		for _, ri := range byCand[u] {
			if satisfied[ri] {
				continue
			}
			satisfied[ri] = true
			t := d.Reads[ri].Txn
			if pending[t]--; ready(t) {
				queue = append(queue, t)
			}
		}
	}
	for t := range n {
		if d.Status[t] == deps.Committed && pos[t] < 0 {
			return nil, false
		}
	}
	return pos, true
}
