package si

import (
	"context"
	"slices"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/graph"
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
// It never decides a violation. With exact (the level has session order) it prunes writer
// pairs with session clocks to a fixpoint (clockPrune) and returns the clocks, whose
// decisions addPairs then takes as known, when no guess works.
func (m *model) schedule(ctx context.Context, h *history.History, exact bool) (bool, *clocks, error) {
	if !m.certain() {
		return false, nil, nil
	}
	if h.HasTime() && m.scheduled(m.timePrio(h)) {
		return true, nil, nil
	}
	if err := ctx.Err(); err != nil {
		return false, nil, err
	}
	if exact {
		return m.scheduleExact(ctx, h)
	}
	return m.scheduleHinted(ctx, h)
}

// scheduled reports whether the greedy schedule by priority prio builds version orders
// that witness the history.
func (m *model) scheduled(prio []int32) bool {
	orders, ok := m.greedyOrders(prio)
	return ok && m.witnesses(orders)
}

// scheduleExact is schedule at a level with session order: the clocks' pruning to a
// fixpoint, and their orders tried; the clocks are returned when those do not witness.
func (m *model) scheduleExact(ctx context.Context, h *history.History) (bool, *clocks, error) {
	ck, err := m.clockPrune(ctx, h)
	if err != nil || ck == nil {
		return false, nil, err
	}
	if orders, ok := ck.orders(); ok && m.witnesses(orders) {
		return true, nil, nil
	}
	return false, ck, nil
}

// scheduleHinted is schedule at a level without session order, where session order is only
// a hint: the clocks' guesses, then a schedule by a topological order with session order.
func (m *model) scheduleHinted(ctx context.Context, h *history.History) (bool, *clocks, error) {
	if ok, err := m.clockOrders(ctx, h); ok || err != nil {
		return ok, nil, err
	}
	if prio := m.topoPrio(sessionHint(h, m.d)); prio != nil && m.scheduled(prio) {
		return true, nil, nil
	}
	return false, nil, ctx.Err()
}

// Limits of clockOrders: sessions, clock entries (split nodes × sessions) and writer pairs.
const (
	clockMaxSessions = 64
	clockMaxEntries  = 64 << 20
	clockMaxPairs    = 16 << 20
)

// clocks answers reachability on the known split graph plus session order (and edges
// added since) with session clocks. Consecutive transactions of a session are joined
// (t → t'* → t'), so whatever reaches one event of a session (t* or t) reaches all earlier
// ones: reachability from a transaction's node is one comparison against the target's
// clock, the latest event of each session that reaches it, computed by one sweep in
// topological order. A pass (see pass) applies PolySI's pruning rule to every writer pair
// of every key: a before b on k is impossible when b's entry reaches a, or b reaches a
// reader of a's k (the order's ww or rw edge would close a cycle).
type clocks struct {
	m        *model
	g        *graph.Digraph
	sess, ev []int32 // per split node: session index (-1: none), event (t* 2i, t 2i+1)
	S        int
	clock    []int32
	pos      []int32    // topological positions of the last sweep
	dec      [][]uint64 // per key, n×n bits (i<j): the pair's order is decided
	first    [][]uint64 // per key, n×n bits (i<j): set if ws[i] goes first
	inG      [][]uint64 // per key, n×n bits (i<j): the pair's edges are in g
	touched  []bool     // per key: decided pairs since its edges were last joined
}

// newClocks returns the clocks of m's known graph plus session order, or nil past the
// limits (or for a history whose reads are not all certain).
func (m *model) newClocks(h *history.History) *clocks {
	d := m.d
	pairs := 0
	for _, ws := range d.Writers {
		pairs += len(ws) * (len(ws) - 1) / 2
	}
	if pairs > clockMaxPairs {
		return nil
	}
	c := &clocks{m: m, g: m.known()}
	nn := c.g.N()
	c.S = c.sessions(h)
	if c.S == 0 || c.S > clockMaxSessions || nn*c.S > clockMaxEntries {
		return nil
	}
	c.dec = make([][]uint64, len(d.Writers))
	c.first = make([][]uint64, len(d.Writers))
	c.inG = make([][]uint64, len(d.Writers))
	c.touched = make([]bool, len(d.Writers))
	for k, ws := range d.Writers {
		w := (len(ws)*len(ws) + 63) / 64
		c.dec[k], c.first[k], c.inG[k] = make([]uint64, w), make([]uint64, w), make([]uint64, w)
	}
	return c
}

// sessions numbers the sessions of the counted transactions and their events (a reader's
// t* and every t), joins consecutive transactions of a session in g, and returns the
// number of sessions.
func (c *clocks) sessions(h *history.History) int {
	m, d := c.m, c.m.d
	nn := c.g.N()
	c.sess, c.ev = make([]int32, nn), make([]int32, nn)
	for i := range c.sess {
		c.sess[i] = -1
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
		c.sess[t], c.ev[t] = sid[s], 2*i+1
		if m.reader[t] {
			c.sess[m.star(t)], c.ev[m.star(t)] = sid[s], 2*i
		}
		if p, ok := last[s]; ok {
			c.g.AddEdge(p, m.port(t))
		}
		last[s] = t
	}
	return len(sid)
}

// sweep computes the clocks; false if g is cyclic.
func (c *clocks) sweep() bool {
	order, ok := graph.Topo(c.g)
	if !ok {
		return false
	}
	c.pos = graph.Positions(order)
	S := c.S
	if c.clock == nil {
		c.clock = make([]int32, c.g.N()*S)
	}
	for i := range c.clock {
		c.clock[i] = -1
	}
	for _, x := range order {
		row := c.clock[int(x)*S : int(x)*S+S]
		for _, y := range c.g.Out(x) {
			ry := c.clock[int(y)*S : int(y)*S+S]
			for i, v := range row {
				ry[i] = max(ry[i], v)
			}
			if s := c.sess[x]; s >= 0 {
				ry[s] = max(ry[s], c.ev[x])
			}
		}
	}
	return true
}

// reach reports whether x reaches y (x a transaction's node).
func (c *clocks) reach(x, y int32) bool {
	s := c.sess[x]
	return x == y || (s >= 0 && c.clock[int(y)*c.S+int(s)] >= c.ev[x])
}

// impossible reports whether a before b closes a cycle, given ra, the readers of a's
// version of the key.
func (c *clocks) impossible(a, b int32, ra []int32) bool {
	m := c.m
	if c.reach(m.port(b), a) {
		return true
	}
	for _, r := range ra {
		if r != b && c.reach(b, m.star(r)) {
			return true
		}
	}
	return false
}

// pass evaluates every undecided pair after a sweep and decides those with one possible
// order; it returns how many, and contradiction if some pair has none.
func (c *clocks) pass() (added int, contradiction bool) {
	var rd [][]int32
	for k, ws := range c.m.d.Writers {
		key := history.Key(k)
		rd = rd[:0]
		for _, w := range ws {
			rd = append(rd, c.m.certReaders[wk{w, key}])
		}
		n, bad := c.passKey(k, ws, rd)
		if added += n; bad {
			return added, true
		}
	}
	return added, false
}

// passKey is pass on the writers ws of key k, with rd the readers of each one's version.
func (c *clocks) passKey(k int, ws []int32, rd [][]int32) (added int, contradiction bool) {
	n := len(ws)
	for i := range n {
		for j := i + 1; j < n; j++ {
			bit := i*n + j
			if c.dec[k][bit/64]&(1<<(bit%64)) != 0 {
				continue
			}
			a, b := ws[i], ws[j]
			ab, ba := c.impossible(a, b, rd[i]), c.impossible(b, a, rd[j])
			switch {
			case ab && ba:
				return added, true
			case ab:
			case ba:
				c.first[k][bit/64] |= 1 << (bit % 64)
			default:
				continue
			}
			c.dec[k][bit/64] |= 1 << (bit % 64)
			c.touched[k] = true
			added++
		}
	}
	return added, false
}

// covering returns the decided pairs of key k that use admits, as (first, second) writer
// indexes, reduced (with at most 64 writers) to the covering pairs of that order: a pair
// a < b left out has an intermediate c with a < c and c < b both returned, and a → c* →
// c → b* (a reader of a reaches b through c as well), so their edges give the same
// reachability as all of them.
func (c *clocks) covering(k history.Key, use func(i, j int) bool) [][2]int {
	n := len(c.m.d.Writers[k])
	var out [][2]int
	for i := range n {
		for j := i + 1; j < n; j++ {
			bit := i*n + j
			if c.dec[k][bit/64]&(1<<(bit%64)) == 0 || (use != nil && !use(i, j)) {
				continue
			}
			if c.first[k][bit/64]&(1<<(bit%64)) != 0 {
				out = append(out, [2]int{i, j})
			} else {
				out = append(out, [2]int{j, i})
			}
		}
	}
	if n <= 64 {
		out = coveringPairs(out)
	}
	return out
}

// coveringPairs drops from the ordered pairs of at most 64 writers those with a writer
// ordered between them by two of the pairs.
func coveringPairs(pairs [][2]int) [][2]int {
	var succ, pred [64]uint64
	for _, p := range pairs {
		succ[p[0]] |= 1 << p[1]
		pred[p[1]] |= 1 << p[0]
	}
	return slices.DeleteFunc(pairs, func(p [2]int) bool { return succ[p[0]]&pred[p[1]] != 0 })
}

// joinTouched adds to g the edges of the covering decided pairs of every touched key
// (edges added earlier stay: they hold in every solution).
func (c *clocks) joinTouched() {
	m := c.m
	for k, ws := range m.d.Writers {
		if !c.touched[k] {
			continue
		}
		c.touched[k] = false
		key := history.Key(k)
		n := len(ws)
		for _, p := range c.covering(key, nil) {
			i, j := min(p[0], p[1]), max(p[0], p[1])
			bit := i*n + j
			if c.inG[k][bit/64]&(1<<(bit%64)) != 0 {
				continue
			}
			c.inG[k][bit/64] |= 1 << (bit % 64)
			a, b := ws[p[0]], ws[p[1]]
			c.g.AddEdge(a, m.port(b))
			for _, r := range m.certReaders[wk{a, key}] {
				if r != b {
					c.g.AddEdge(m.star(r), b)
				}
			}
		}
	}
}

// orders orders each key's writers by the decided pairs, ties by topological position.
func (c *clocks) orders() ([][]int32, bool) {
	m := c.m
	out := make([][]int32, len(m.d.Writers))
	for k, ws := range m.d.Writers {
		o := c.keyOrder(k, ws)
		if len(o) != len(ws) {
			return nil, false
		}
		out[k] = o
	}
	return out, true
}

// keyOrder orders the writers ws of key k by the decided pairs, ties by topological
// position; shorter than ws if the decided pairs are cyclic.
func (c *clocks) keyOrder(k int, ws []int32) []int32 {
	m := c.m
	n := len(ws)
	after, indeg := c.decidedAfter(k, n)
	var ready []int32
	for i := range n {
		if indeg[i] == 0 {
			ready = append(ready, int32(i))
		}
	}
	o := make([]int32, 0, n)
	for len(ready) > 0 {
		bi := 0
		for i, x := range ready {
			if c.pos[m.port(ws[x])] < c.pos[m.port(ws[ready[bi]])] {
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
	return o
}

// decidedAfter returns the decided pairs of key k's n writers as a graph of writer indexes:
// the writers each one goes before, and the in-degrees.
func (c *clocks) decidedAfter(k, n int) (after [][]int32, indeg []int32) {
	after = make([][]int32, n)
	indeg = make([]int32, n)
	for i := range n {
		for j := i + 1; j < n; j++ {
			bit := i*n + j
			if c.dec[k][bit/64]&(1<<(bit%64)) == 0 {
				continue
			}
			x, y := i, j
			if c.first[k][bit/64]&(1<<(bit%64)) == 0 {
				x, y = j, i
			}
			after[x] = append(after[x], int32(y))
			indeg[y]++
		}
	}
	return after, indeg
}

// clockOrders guesses version orders with the clocks (session order is a hint at plain
// SI: every strong-session witness is a plain one) and reports whether a guess witnesses
// the history: up to three passes, each followed by ordering every key by the decided
// pairs and checking the result; the decided pairs' edges join the graph for the next.
func (m *model) clockOrders(ctx context.Context, h *history.History) (bool, error) {
	c := m.newClocks(h)
	if c == nil {
		return false, nil
	}
	for range 3 {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		if !c.sweep() {
			return false, nil
		}
		added, bad := c.pass()
		if bad {
			return false, nil // a violation, or a wrong hint: the exact path decides
		}
		if orders, ok := c.orders(); ok && m.witnesses(orders) {
			return true, nil
		}
		if added == 0 {
			return false, nil
		}
		c.joinTouched()
	}
	return false, nil
}

// clockPrune prunes writer pairs with the clocks to a fixpoint, for a level with session
// order (where the clocks' graph is the known graph: the decisions are exact, PolySI's
// pruning), and returns the clocks with the decided pairs, or nil (limits, a cycle, or a
// pair with no possible order: the exact pipeline finds and explains the violation).
func (m *model) clockPrune(ctx context.Context, h *history.History) (*clocks, error) {
	if !m.certain() {
		return nil, nil
	}
	c := m.newClocks(h)
	if c == nil {
		return nil, nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !c.sweep() {
			return nil, nil
		}
		added, bad := c.pass()
		if bad {
			return nil, nil
		}
		if added == 0 {
			return c, nil
		}
		c.joinTouched()
	}
}

// decided reports whether the clocks decided the pair of writers i < j (indexes into
// d.Writers[k]) and whether ws[i] goes first.
func (c *clocks) decided(k history.Key, i, j int) (ok, iFirst bool) {
	n := len(c.m.d.Writers[k])
	bit := i*n + j
	return c.dec[k][bit/64]&(1<<(bit%64)) != 0, c.first[k][bit/64]&(1<<(bit%64)) != 0
}

// certain reports whether every read has exactly one possible writer, committed, and
// nothing is of unknown outcome: then the version orders are the only choices, and
// certReaders lists every reader of every version.
func (m *model) certain() bool {
	if len(m.wr) > 0 || len(m.guarded) > 0 || slices.Contains(m.d.Status, deps.Maybe) {
		return false
	}
	return m.readsCertain()
}

// readsCertain reports whether every read of a counted transaction has exactly one possible
// writer, committed.
func (m *model) readsCertain() bool {
	d := m.d
	for ri := range d.Reads {
		r := &d.Reads[ri]
		if d.Status[r.Txn] != deps.Excluded && (len(r.Cands) != 1 || !m.committed(r.Cands[0])) {
			return false
		}
	}
	return true
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
	gs := m.newGreedy(prio)
	count := int32(0)
	for gs.q.len() > 0 {
		x := gs.q.pop()
		if gs.placed[x] {
			continue
		}
		if t, ok := m.entry(x); ok && d.Status[t] == deps.Committed {
			if need := gs.waitFor(t); need >= 0 {
				gs.waiters[need] = append(gs.waiters[need], x)
				continue
			}
			gs.install(t)
		}
		gs.place(x)
		count++
	}
	return gs.orders, count == int32(gs.g.N())
}

// newGreedy returns the schedule's start: the known split graph's nodes without
// predecessors queued by priority prio, no writer installed.
func (m *model) newGreedy(prio []int32) *greedy {
	g := m.known()
	n := int32(g.N())
	gs := &greedy{m: m, g: g, indeg: make([]int32, n), placed: make([]bool, n)}
	for u := range n {
		for _, v := range g.Out(u) {
			gs.indeg[v]++
		}
	}
	gs.cur = make([]int32, len(m.d.Writers)) // the last writer scheduled per key
	for i := range gs.cur {
		gs.cur[i] = -1
	}
	gs.orders = make([][]int32, len(m.d.Writers))
	gs.waiters = make(map[int32][]int32)
	gs.q = &prioHeap{prio: prio}
	for u := range n {
		if gs.indeg[u] == 0 {
			gs.q.push(u)
		}
	}
	return gs
}

// greedy is the state of greedyOrders' schedule.
type greedy struct {
	m       *model
	g       *graph.Digraph
	indeg   []int32
	placed  []bool
	cur     []int32           // the last writer scheduled per key
	orders  [][]int32         // the version orders built so far
	waiters map[int32][]int32 // node → entry nodes waiting for it
	q       *prioHeap
}

// entry returns the transaction whose entry node (port) x is, if any.
func (m *model) entry(x int32) (int32, bool) {
	if x < int32(m.nn) {
		return x, x < int32(m.d.N) && !m.reader[x]
	}
	t := x - int32(m.nn)
	return t, t < int32(m.d.N) && m.reader[t]
}

// waitFor returns a node committed transaction t must wait for before its writes are
// installed (the current last writer of a key it writes, or a reader of that writer's
// version), or -1.
func (gs *greedy) waitFor(t int32) int32 {
	m := gs.m
	for _, w := range m.d.Writes[t] {
		c := gs.cur[w.Key]
		if c < 0 {
			continue
		}
		if !gs.placed[c] {
			return c
		}
		for _, r := range m.certReaders[wk{c, w.Key}] {
			if r != t && !gs.placed[m.star(r)] {
				return m.star(r)
			}
		}
	}
	return -1
}

// install makes t the last writer of every key it writes.
func (gs *greedy) install(t int32) {
	for _, w := range gs.m.d.Writes[t] {
		gs.cur[w.Key] = t
		gs.orders[w.Key] = append(gs.orders[w.Key], t)
	}
}

// place schedules node x and releases the nodes waiting for it or now without
// predecessors.
func (gs *greedy) place(x int32) {
	gs.placed[x] = true
	for _, y := range gs.waiters[x] {
		gs.q.push(y)
	}
	delete(gs.waiters, x)
	for _, v := range gs.g.Out(x) {
		gs.indeg[v]--
		if gs.indeg[v] == 0 {
			gs.q.push(v)
		}
	}
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
