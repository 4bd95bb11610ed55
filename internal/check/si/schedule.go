package si

import (
	"context"
	"slices"

	"isovet/history"
	"isovet/internal/deps"
	"isovet/internal/graph"
)

// # Scheduling a witness
//
// When every read has exactly one possible writer and every counted transaction
// committed, the only choices left are the version orders. Before building one WW choice
// per pair of writers (n²/2 per key: 7.1 M on Vbox's blindw_wr_100000), schedule tries to
// construct one total version order per key directly and checks it: if the known split
// graph plus the order's chain edges is acyclic, the history passes. The check is exact
// for that order (see chainGraph), so a wrong guess costs time, never soundness; if no
// guess works the exact pipeline (prune, encode, solve) runs as before.
//
// The guess simulates a database committing the transactions one at a time, in priority
// order among the nodes whose known predecessors are scheduled: a writer's entry node is
// held back until every reader of the current version of each key it writes has taken its
// snapshot (its u* node is scheduled), and scheduling it appends it to those keys' orders.
// The priority comes from the client intervals when the history has them (u* at the
// start, u at the end; a hint only, also at levels without real time), else from a
// breadth-first topological order of the known graph plus session order.

// schedule reports whether a scheduled version order witnesses the history (see above).
// It never decides a violation.
func (m *model) schedule(ctx context.Context, h *history.History) (bool, error) {
	d := m.d
	if len(m.wr) > 0 || len(m.guarded) > 0 {
		return false, nil
	}
	for t := range d.N {
		if d.Status[t] == deps.Maybe {
			return false, nil
		}
	}
	for ri := range d.Reads {
		r := &d.Reads[ri]
		if d.Status[r.Txn] != deps.Excluded && (len(r.Cands) != 1 || !m.committed(r.Cands[0])) {
			return false, nil
		}
	}
	if h.HasTime() {
		if orders, ok := m.greedyOrders(m.timePrio(h)); ok && m.witnesses(orders) {
			return true, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if ok, err := m.clockOrders(ctx, h); ok || err != nil {
		return ok, err
	}
	if prio := m.topoPrio(sessionHint(h, d)); prio != nil {
		if orders, ok := m.greedyOrders(prio); ok && m.witnesses(orders) {
			return true, nil
		}
	}
	return false, ctx.Err()
}

// Limits of clockOrders: sessions, clock entries (split nodes × sessions) and writer pairs.
const (
	clockMaxSessions = 64
	clockMaxEntries  = 64 << 20
	clockMaxPairs    = 16 << 20
)

// clockOrders guesses version orders by pruning writer pairs with session clocks, and
// reports whether a guess witnesses the history (checked by witnesses). The graph is the
// known split graph plus session order (a hint at plain SI: every strong-session witness
// is a plain one). Consecutive transactions of a session are joined (t → t'* → t'), so
// whatever reaches one event of a session (t* or t) reaches all earlier ones: reachability
// from a transaction's node is one comparison against the target's clock, the latest event
// of each session that reaches it (one sweep in topological order). A pass marks the order
// a<b of writers of k impossible when b's entry reaches a or b reaches a reader of a's k
// (PolySI's pruning), keeps pairs with exactly one possible order, orders each key's
// writers by those pairs (ties by topological position) and checks the result; the kept
// pairs' edges join the graph for the next pass (three at most).
func (m *model) clockOrders(ctx context.Context, h *history.History) (bool, error) {
	d := m.d
	pairs := 0
	for _, ws := range d.Writers {
		pairs += len(ws) * (len(ws) - 1) / 2
	}
	if pairs > clockMaxPairs {
		return false, nil
	}
	g := m.known()
	nn := g.N()
	sess := make([]int32, nn) // session index of a transaction's node, or -1
	ev := make([]int32, nn)   // its event number in the session: t* 2i, t 2i+1
	for i := range sess {
		sess[i] = -1
	}
	sid := make(map[history.SessionID]int32)
	cnt := make(map[history.SessionID]int32)
	last := make(map[history.SessionID]int32)
	for t := range int32(d.N) {
		if d.Status[t] == deps.Excluded {
			continue
		}
		s := h.Txns[t].Session
		if _, ok := sid[s]; !ok {
			sid[s] = int32(len(sid))
		}
		i := cnt[s]
		cnt[s] = i + 1
		sess[t], ev[t] = sid[s], 2*i+1
		if m.reader[t] {
			sess[m.star(t)], ev[m.star(t)] = sid[s], 2*i
		}
		if p, ok := last[s]; ok {
			g.AddEdge(p, m.port(t))
		}
		last[s] = t
	}
	S := len(sid)
	if S == 0 || S > clockMaxSessions || nn*S > clockMaxEntries {
		return false, nil
	}
	orders := make([][]int32, len(d.Writers))
	joined := make([][]uint64, len(d.Writers)) // per key, n×n bits: pairs whose edges g has
	for k, ws := range d.Writers {
		joined[k] = make([]uint64, (len(ws)*len(ws)+63)/64)
	}
	for range 3 {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		order, ok := graph.Topo(g)
		if !ok {
			return false, nil
		}
		pos := graph.Positions(order)
		clock := make([]int32, nn*S)
		for i := range clock {
			clock[i] = -1
		}
		for _, x := range order {
			row := clock[int(x)*S : int(x)*S+S]
			for _, y := range g.Out(x) {
				ry := clock[int(y)*S : int(y)*S+S]
				for i, v := range row {
					ry[i] = max(ry[i], v)
				}
				if s := sess[x]; s >= 0 {
					ry[s] = max(ry[s], ev[x])
				}
			}
		}
		reach := func(x, y int32) bool {
			s := sess[x]
			return x == y || (s >= 0 && clock[int(y)*S+int(s)] >= ev[x])
		}
		impossible := func(a, b int32, k history.Key) bool { // a before b on k
			if reach(m.port(b), a) {
				return true
			}
			for _, r := range m.certReaders[wk{a, k}] {
				if r != b && reach(b, m.star(r)) {
					return true
				}
			}
			return false
		}
		type kept struct{ a, b, k int32 }
		var keep []kept
		for k, ws := range d.Writers {
			key := history.Key(k)
			n := len(ws)
			after := make([][]int32, n) // after[i]: indexes that must follow ws[i]
			indeg := make([]int32, n)
			for i := range n {
				for j := i + 1; j < n; j++ {
					a, b := ws[i], ws[j]
					ab, ba := impossible(a, b, key), impossible(b, a, key)
					switch {
					case ab && ba:
						return false, nil // a violation, or a wrong hint: the exact path decides
					case ab:
						after[j] = append(after[j], int32(i))
						indeg[i]++
					case ba:
						after[i] = append(after[i], int32(j))
						indeg[j]++
					}
					if bit := i*n + j; (ab || ba) && joined[k][bit/64]&(1<<(bit%64)) == 0 {
						joined[k][bit/64] |= 1 << (bit % 64)
						if ab {
							a, b = b, a
						}
						keep = append(keep, kept{a, b, int32(k)})
					}
				}
			}
			var ready []int32
			for i := range n {
				if indeg[i] == 0 {
					ready = append(ready, int32(i))
				}
			}
			o := orders[k][:0]
			for len(ready) > 0 {
				bi := 0
				for i, x := range ready {
					if pos[m.port(ws[x])] < pos[m.port(ws[ready[bi]])] {
						bi = i
					}
				}
				x := ready[bi]
				ready = slices.Delete(ready, bi, bi+1)
				o = append(o, ws[x])
				for _, y := range after[x] {
					if indeg[y]--; indeg[y] == 0 {
						ready = append(ready, y)
					}
				}
			}
			if len(o) != n {
				return false, nil
			}
			orders[k] = o
		}
		if m.witnesses(orders) {
			return true, nil
		}
		for _, e := range keep {
			g.AddEdge(e.a, m.port(e.b))
			for _, r := range m.certReaders[wk{e.a, history.Key(e.k)}] {
				if r != e.b {
					g.AddEdge(m.star(r), e.b)
				}
			}
		}
	}
	return false, nil
}

// witnesses reports whether orders (one total order of each key's writers) together with
// the known edges is acyclic, i.e. is an SI witness.
func (m *model) witnesses(orders [][]int32) bool {
	d := m.d
	if len(orders) != len(d.Writers) {
		return false
	}
	for k, ws := range d.Writers {
		o := slices.Clone(orders[k])
		slices.Sort(o)
		if !slices.Equal(o, ws) {
			return false
		}
	}
	_, ok := graph.Topo(m.chainGraph(orders))
	return ok
}

// chainGraph returns the known split graph plus, for the version orders (orders[k] lists
// k's writers first to last), the chain edges: w_i → w_{i+1} (ww) and r → w_{i+1} for every
// reader r of w_i other than w_{i+1} (rw). Every edge the orders imply is a path of it:
// w_i → w_j (j > i) runs along the chain, since u* → u joins each step; r → w_j, for r a
// reader of w_i, starts r* → w_{i+1} (or r* → r when r is w_{i+1}) and runs along the
// chain; readers of the initial version reach every writer through ρ(k), a known edge. So
// it is acyclic iff the split graph of these orders is, which has the same cycles as the
// induced SI graph.
func (m *model) chainGraph(orders [][]int32) *graph.Digraph {
	g := m.known()
	for k, ws := range orders {
		for i := 1; i < len(ws); i++ {
			a, b := ws[i-1], ws[i]
			g.AddEdge(a, m.port(b))
			for _, r := range m.certReaders[wk{a, history.Key(k)}] {
				if r != b {
					g.AddEdge(m.star(r), b)
				}
			}
		}
	}
	return g
}

// greedyOrders schedules the known split graph's nodes (see "Scheduling a witness") and
// returns the version orders it builds; ok is false if the schedule deadlocks.
func (m *model) greedyOrders(prio []int32) (orders [][]int32, ok bool) {
	d := m.d
	g := m.known()
	n := int32(g.N())
	indeg := make([]int32, n)
	for u := range n {
		for _, v := range g.Out(u) {
			indeg[v]++
		}
	}
	// entry returns the transaction whose entry node (port) x is, if any.
	entry := func(x int32) (int32, bool) {
		if x < int32(m.nn) {
			return x, x < int32(d.N) && !m.reader[x]
		}
		t := x - int32(m.nn)
		return t, t < int32(d.N) && m.reader[t]
	}
	placed := make([]bool, n)
	cur := make([]int32, len(d.Writers)) // the last writer scheduled per key
	for i := range cur {
		cur[i] = -1
	}
	orders = make([][]int32, len(d.Writers))
	waiters := make(map[int32][]int32) // node → entry nodes waiting for it
	q := &prioHeap{prio: prio}
	for u := range n {
		if indeg[u] == 0 {
			q.push(u)
		}
	}
	count := int32(0)
	for q.len() > 0 {
		x := q.pop()
		if placed[x] {
			continue
		}
		if t, ok := entry(x); ok && d.Status[t] == deps.Committed {
			need := int32(-1)
		keys:
			for _, w := range d.Writes[t] {
				c := cur[w.Key]
				if c < 0 {
					continue
				}
				if !placed[c] {
					need = c
					break
				}
				for _, r := range m.certReaders[wk{c, w.Key}] {
					if r != t && !placed[m.star(r)] {
						need = m.star(r)
						break keys
					}
				}
			}
			if need >= 0 {
				waiters[need] = append(waiters[need], x)
				continue
			}
			for _, w := range d.Writes[t] {
				cur[w.Key] = t
				orders[w.Key] = append(orders[w.Key], t)
			}
		}
		placed[x] = true
		count++
		for _, y := range waiters[x] {
			q.push(y)
		}
		delete(waiters, x)
		for _, v := range g.Out(x) {
			indeg[v]--
			if indeg[v] == 0 {
				q.push(v)
			}
		}
	}
	return orders, count == n
}

// timePrio ranks split nodes by the client intervals: u* (the snapshot) by the start, u
// (the commit) by the end; nodes that are no transaction's come first. (prioHeap needs
// one rank per split node.)
func (m *model) timePrio(h *history.History) []int32 {
	type ev struct {
		t int64
		x int32
	}
	evs := make([]ev, 0, 2*m.d.N)
	for t := range m.d.N {
		iv := h.Txns[t].Time
		evs = append(evs, ev{iv.Begin, m.star(int32(t))}, ev{iv.End, int32(t)})
	}
	slices.SortStableFunc(evs, func(a, b ev) int {
		switch {
		case a.t < b.t:
			return -1
		case a.t > b.t:
			return 1
		}
		return 0
	})
	prio := make([]int32, 2*m.nn)
	for i, e := range evs {
		prio[e.x] = int32(i + 1)
	}
	return prio
}

// topoPrio ranks split nodes by a breadth-first topological order of the known split graph
// plus hint edges (dropped if they close a cycle).
func (m *model) topoPrio(hint [][2]int32) []int32 {
	g := m.known()
	for _, e := range hint {
		g.AddEdge(e[0], m.port(e[1]))
	}
	order, ok := graph.Topo(g)
	if !ok {
		if order, ok = graph.Topo(m.known()); !ok {
			return nil // a known cycle: nothing to schedule
		}
	}
	return graph.Positions(order)
}

// sessionHint returns session-order pairs of consecutive counted transactions.
func sessionHint(h *history.History, d *deps.Deps) [][2]int32 {
	last := make(map[history.SessionID]int32)
	var out [][2]int32
	for ti := range d.N {
		if d.Status[ti] == deps.Excluded {
			continue
		}
		s := h.Txns[ti].Session
		if p, ok := last[s]; ok {
			out = append(out, [2]int32{p, int32(ti)})
		}
		last[s] = int32(ti)
	}
	return out
}

// prioHeap is a binary min-heap of nodes by prio.
type prioHeap struct {
	prio []int32
	xs   []int32
}

func (q *prioHeap) len() int { return len(q.xs) }

func (q *prioHeap) push(x int32) {
	q.xs = append(q.xs, x)
	for i := len(q.xs) - 1; i > 0; {
		p := (i - 1) / 2
		if q.prio[q.xs[p]] <= q.prio[q.xs[i]] {
			break
		}
		q.xs[p], q.xs[i] = q.xs[i], q.xs[p]
		i = p
	}
}

func (q *prioHeap) pop() int32 {
	x := q.xs[0]
	last := len(q.xs) - 1
	q.xs[0] = q.xs[last]
	q.xs = q.xs[:last]
	for i := 0; ; {
		l, r, s := 2*i+1, 2*i+2, i
		if l < last && q.prio[q.xs[l]] < q.prio[q.xs[s]] {
			s = l
		}
		if r < last && q.prio[q.xs[r]] < q.prio[q.xs[s]] {
			s = r
		}
		if s == i {
			return x
		}
		q.xs[s], q.xs[i] = q.xs[i], q.xs[s]
		i = s
	}
}
