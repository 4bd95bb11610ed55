package weak

import (
	"slices"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/internal/deps"
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
	p := newPlacer(c, extra)
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
		case !slices.Contains(ws, d.Init): // (the initial state is placed first)
			p.await(int32(ri), ws)
		}
		open = append(open, int32(ri))
	}
	if pos, ok = p.run(); !ok {
		return ch, nil, false
	}
	for t := range d.N {
		ch.committed[t] = d.Status[t] == deps.Committed
	}
	for _, ri := range open {
		ch.writer[ri] = latestBefore(pos, d.Reads[ri].Txn, committedOptions(d, &d.Reads[ri]))
	}
	return ch, pos, true
}

// latestBefore returns the writer of ws placed last before reader (-1: none).
func latestBefore(pos []int32, reader int32, ws []int32) int32 {
	best := int32(-1)
	for _, w := range ws {
		if pos[w] < pos[reader] && (best < 0 || pos[w] > pos[best]) {
			best = w
		}
	}
	return best
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

// placer is greedy's placement: Kahn's algorithm on the certain graph and the extra
// orders, with reads as further conditions.
type placer struct {
	c         *check
	extra     [][]int32
	indeg     []int32   // per node: edges from nodes not placed yet
	pending   []int32   // per transaction: reads with no placed candidate yet
	byCand    [][]int32 // per transaction: the reads it is a candidate of
	satisfied []bool    // per read: a candidate is placed
	queue     []int32
}

func newPlacer(c *check, extra [][]int32) *placer {
	n := c.n
	p := &placer{c: c, extra: extra, indeg: make([]int32, n+1), pending: make([]int32, n), byCand: make([][]int32, n), satisfied: make([]bool, len(c.d.Reads))}
	for u := range n + 1 {
		for _, v := range c.certain.Out(u) {
			p.indeg[v]++
		}
	}
	for _, vs := range extra {
		for _, v := range vs {
			p.indeg[v]++
		}
	}
	return p
}

// await makes read ri, of one of the candidates ws, a condition of placing its reader.
func (p *placer) await(ri int32, ws []int32) {
	p.pending[p.c.d.Reads[ri].Txn]++
	for _, w := range ws {
		p.byCand[w] = append(p.byCand[w], ri)
	}
}

// ready reports whether transaction t can be placed now.
func (p *placer) ready(t int32) bool {
	return t < p.c.n && p.indeg[t] == 0 && p.pending[t] == 0 && p.c.d.Status[t] == deps.Committed
}

// run places what it can, the initial state first, and returns the positions and whether
// every committed transaction was placed.
func (p *placer) run() ([]int32, bool) {
	n := p.c.n
	pos := make([]int32, n+1)
	for i := range pos {
		pos[i] = -1
	}
	p.queue = append(p.queue, n)
	for t := range n {
		if p.ready(t) {
			p.queue = append(p.queue, t)
		}
	}
	for i := 0; i < len(p.queue); i++ {
		u := p.queue[i]
		pos[u] = int32(i)
		p.release(u)
	}
	for t := range n {
		if p.c.d.Status[t] == deps.Committed && pos[t] < 0 {
			return nil, false
		}
	}
	return pos, true
}

// release counts u, just placed, as placed for its successors and for the reads it is a
// candidate of, and queues those that become ready.
func (p *placer) release(u int32) {
	next := p.c.certain.Out(u)
	if u < p.c.n {
		next = slices.Concat(next, p.extra[u])
	}
	for _, v := range next {
		if p.indeg[v]--; p.ready(v) {
			p.queue = append(p.queue, v)
		}
	}
	if u == p.c.n {
		return
	}
	for _, ri := range p.byCand[u] {
		if p.satisfied[ri] {
			continue
		}
		p.satisfied[ri] = true
		t := p.c.d.Reads[ri].Txn
		if p.pending[t]--; p.ready(t) {
			p.queue = append(p.queue, t)
		}
	}
}
