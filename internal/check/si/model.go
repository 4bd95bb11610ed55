package si

import (
	"context"
	"slices"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/graph"
	"github.com/isovet/isovet/internal/invariant"
	"github.com/isovet/isovet/internal/polygraph"
	"github.com/isovet/isovet/internal/report"
)

// kind is the role of a raw edge in the induced SI graph (SO ∪ WR ∪ WW) ; RW?.
type kind uint8

const (
	kDep  kind = iota // so, wr, ww, rt: an induced edge, and composes with a following rw
	kRW               // rw: an induced edge only after a dep edge
	kTail             // ρ(k)→writer: the second half of reader→ρ(k)→writer (an rw); never composes
)

// edgeKind classifies a deps edge.
func (m *model) edgeKind(e deps.Edge) kind {
	switch {
	case e.Rel == report.RW:
		return kRW
	case m.d.Nodes[e.From].Kind == deps.NodeInitVersion:
		return kTail
	default:
		return kDep
	}
}

type ekey struct {
	u, v int32
	k    kind
}

type wk struct {
	w int32
	k history.Key
}

// model is the generalized polygraph of a history for SI: known raw edges by kind, WW and
// WR choices, and the bookkeeping that turns choices into edges.
type model struct {
	d  *deps.Deps
	nn int // graph nodes (transactions, Init, ρ(k), time nodes)

	why    map[ekey]deps.Edge // known raw edges with a reason
	forced map[ekey]bool      // known edges added by pruning
	depIn  [][]int32          // known dep edges, by head
	depOut [][]int32
	rwOut  [][]int32 // known rw edges, by tail
	rwIn   [][]int32
	tail   [][]int32 // known tail edges ρ→b, by tail
	// reader: nodes that may have rw out-edges (they read, or deps gave them one).
	reader []bool

	// ww and wr are the choices, as polygraph's constraints: a write-order choice between
	// writers A < B of Keys (merged across keys: opposite orders on two keys are a ww
	// 2-cycle, a dep cycle; never blocks, Ends is nil), and a read choice.
	ww     []polygraph.WW
	wr     []polygraph.WR
	pairOf map[uint64]int32
	// certReaders: readers known to read w's version of k; succ: writers known to follow
	// w on k.
	certReaders map[wk][]int32
	succ        map[wk][]int32
	// guarded: edges that need unknown-outcome transactions to have committed (deps'
	// plus those of reads fixed by pruning).
	guarded []deps.Edge

	passes, prunedWW, prunedWR int
	// sinkPairs, freePairs: writer pairs addPairs left out (see there).
	sinkPairs, freePairs int
	// clockDecided: writer pairs the clocks decided (addPairs); clockEdges: the known
	// edges joinDecided added for them (not in why); ck: those clocks.
	clockDecided, clockEdges int
	ck                       *clocks
}

func pairKey(a, b int32) uint64 {
	if a > b {
		a, b = b, a
	}
	return uint64(a)<<32 | uint64(uint32(b))
}

func (m *model) committed(t int32) bool {
	return t == m.d.Init || (t < int32(m.d.N) && m.d.Status[t] == deps.Committed)
}

func noGuard(e deps.Edge) bool { return e.Guards[0] < 0 && e.Guards[1] < 0 && e.Guards[2] < 0 }

// build constructs the model from the known dependencies.
func build(d *deps.Deps) *model {
	m := buildBase(d)
	_ = m.addPairs(context.Background(), nil) // Background is never done
	return m
}

// buildBase constructs the model without its WW choices.
func buildBase(d *deps.Deps) *model {
	nn := len(d.Nodes)
	m := &model{
		d: d, nn: nn,
		why:         make(map[ekey]deps.Edge),
		forced:      make(map[ekey]bool),
		depIn:       make([][]int32, nn),
		depOut:      make([][]int32, nn),
		rwOut:       make([][]int32, nn),
		rwIn:        make([][]int32, nn),
		tail:        make([][]int32, nn),
		pairOf:      make(map[uint64]int32),
		certReaders: make(map[wk][]int32),
		succ:        make(map[wk][]int32),
	}
	m.markReaders()
	for _, e := range d.Known {
		m.addKnown(e, false)
	}
	m.guarded = append(m.guarded, d.Guarded...)
	m.readChoices()
	return m
}

// markReaders marks the nodes that may have rw out-edges: those that read, and the tails
// of deps' rw edges.
func (m *model) markReaders() {
	d := m.d
	m.reader = make([]bool, m.nn)
	for t, rs := range d.ReadsOf {
		m.reader[t] = len(rs) > 0
	}
	for _, es := range [2][]deps.Edge{d.Known, d.Guarded} {
		for _, e := range es {
			if e.Rel == report.RW {
				m.reader[e.From] = true
			}
		}
	}
}

// readChoices records the readers of certain reads (deps added their edges) and makes
// every other read of a counted transaction a read choice.
func (m *model) readChoices() {
	d := m.d
	for ri := range d.Reads {
		r := &d.Reads[ri]
		st := d.Status[r.Txn]
		if st == deps.Excluded || len(r.Cands) == 0 {
			continue
		}
		if st == deps.Committed && len(r.Cands) == 1 && m.committed(r.Cands[0]) {
			if r.Cands[0] != d.Init {
				m.certReaders[wk{r.Cands[0], r.Key}] = append(m.certReaders[wk{r.Cands[0], r.Key}], r.Txn)
			}
			continue
		}
		m.wr = append(m.wr, polygraph.WR{Read: int32(ri), Cands: slices.Clone(r.Cands)})
	}
}

// addPairs adds one WW choice per unordered pair of writers of a key that nothing orders,
// except pairs no witness needs (docs/si.md, "Writes nobody reads"): a pair with a sink
// (see sinks), and, on a key, a pair of committed writers that read nothing and whose
// writes of that key nobody can read ("free" on the key). Any solution of the rest
// extends to those pairs: free writers of a key in a topological order of the solution's
// split graph, sinks after everything else in a topological order of their own. Pairs
// the clocks decided (ck, if not nil; clockPrune) are no choice either: their edges are
// known, added for the covering pairs of each key's decided order (the others are paths
// through them).
//
// The pairs are quadratic in each key's writers: it polls ctx every 1024 pairs and returns
// context.Cause(ctx) once ctx is done, leaving the model unfit to use.
func (m *model) addPairs(ctx context.Context, ck *clocks) error {
	d := m.d
	p := pairing{m: m, ck: ck, sink: m.sinks(), free: m.freeWriters(), reduce: !d.Partial}
	work := 0
	for k, ws := range d.Writers {
		if p.reduce && !d.Opts.Realtime {
			if err := p.keyPairs(ctx, history.Key(k), ws, &work); err != nil {
				return err
			}
			continue
		}
		for i, a := range ws {
			for jj, b := range ws[i+1:] {
				if work++; work&1023 == 0 && ctx.Err() != nil {
					return context.Cause(ctx)
				}
				if p.choice(history.Key(k), i, i+1+jj, a, b) {
					m.addPair(a, b, history.Key(k))
				}
			}
		}
	}
	if ck != nil {
		m.joinDecided(ck, p.clockJoins)
	}
	return nil
}

// keyPairs is addPairs' loop over the pairs of writers ws of key k when the reductions
// apply and real time orders no pair (d.Before never holds): it visits only the pairs the
// reductions keep, in the same order, and counts the others (sinkPairs, freePairs) without
// visiting them. The pairs left out are a sink's and those of two free writers: n blind
// writes of a key nobody reads, free or sinks all, took n²/2 steps to leave out (10 MB
// of them did not finish in a minute); now n.
func (p *pairing) keyPairs(ctx context.Context, k history.Key, ws []int32, work *int) error {
	var live, bound []int32 // positions of the writers that are no sink; of those, the not free
	for i, w := range ws {
		if !p.sink[w] {
			live = append(live, int32(i))
			if !p.free[k][i] {
				bound = append(bound, int32(i))
			}
		}
	}
	nl, nf := len(live), len(live)-len(bound)
	p.m.sinkPairs += len(ws)*(len(ws)-1)/2 - nl*(nl-1)/2
	p.m.freePairs += nf * (nf - 1) / 2
	for _, i := range live {
		rest := live
		if p.free[k][i] {
			rest = bound
		}
		at, _ := slices.BinarySearch(rest, i+1)
		for _, j := range rest[at:] {
			if *work++; *work&1023 == 0 && ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if p.choice(k, int(i), int(j), ws[i], ws[j]) {
				p.m.addPair(ws[i], ws[j], k)
			}
		}
	}
	return nil
}

// pairing decides which pairs of writers of a key are choices.
type pairing struct {
	m      *model
	ck     *clocks
	sink   []bool
	free   [][]bool
	reduce bool // predicates only partly modelled: keep every pair
}

// freeWriters marks, per key, the writers that are committed, read nothing, and whose
// write to the key no read may read: free[k][i] for d.Writers[k][i].
func (m *model) freeWriters() [][]bool {
	d := m.d
	free := make([][]bool, len(d.Writers))
	for k, ws := range d.Writers {
		free[k] = make([]bool, len(ws))
		for i, w := range ws {
			free[k][i] = m.committed(w) && !m.reader[w]
		}
	}
	for ri := range d.Reads {
		r := &d.Reads[ri]
		for _, c := range r.Cands {
			if i, ok := slices.BinarySearch(d.Writers[r.Key], c); ok {
				free[r.Key][i] = false
			}
		}
	}
	return free
}

// choice reports whether the pair of writers a = d.Writers[k][i] and b =
// d.Writers[k][j] is a choice, counting the pairs the reductions and the clocks settle.
func (p *pairing) choice(k history.Key, i, j int, a, b int32) bool {
	m, d := p.m, p.m.d
	if d.Before(a, b) || d.Before(b, a) {
		// Real time orders them (strong SI, both committed): the time chain is a
		// dep path, and deps derives the anti-dependencies (Deps.ReadFrom).
		return false
	}
	if p.reduced(k, i, j, a, b) {
		return false
	}
	if p.ck != nil {
		if ok, _ := p.ck.decided(k, i, j); ok {
			m.clockDecided++
			return false
		}
	}
	return true
}

// reduced reports whether a reduction leaves the pair of writers a = d.Writers[k][i] and b
// = d.Writers[k][j] out (see addPairs), counting it.
func (p *pairing) reduced(k history.Key, i, j int, a, b int32) bool {
	switch {
	case !p.reduce:
	case p.sink[a] || p.sink[b]:
		p.m.sinkPairs++
		return true
	case p.free[k][i] && p.free[k][j]:
		p.m.freePairs++
		return true
	}
	return false
}

// clockJoins reports whether the clocks' decision on writers i and j of key k gives known
// edges: the pair is one choice would have been.
func (p *pairing) clockJoins(k history.Key, i, j int) bool {
	d := p.m.d
	a, b := d.Writers[k][i], d.Writers[k][j]
	return !d.Before(a, b) && !d.Before(b, a) && !(p.reduce && (p.sink[a] || p.sink[b] || (p.free[k][i] && p.free[k][j])))
}

// addPair adds key k to the write-write choice of a and b, creating it if new.
func (m *model) addPair(a, b int32, k history.Key) {
	pk := pairKey(a, b)
	ci, ok := m.pairOf[pk]
	if !ok {
		ci = int32(len(m.ww))
		m.pairOf[pk] = ci
		m.ww = append(m.ww, polygraph.WW{A: min(a, b), B: max(a, b)})
	}
	m.ww[ci].Keys = append(m.ww[ci].Keys, k)
}

// joinDecided adds the known edges of the pairs the clocks decided and use admits, for
// each key's covering pairs (see clocks.covering). They go straight into the adjacency
// lists, without a reason in why (hundreds of thousands of map entries on large
// histories); clockReason recovers the reason of the few a witness shows.
func (m *model) joinDecided(ck *clocks, use func(k history.Key, i, j int) bool) {
	m.ck = ck
	for k, ws := range m.d.Writers {
		key := history.Key(k)
		for _, p := range ck.covering(key, func(i, j int) bool { return use(key, i, j) }) {
			a, b := ws[p[0]], ws[p[1]]
			m.depOut[a] = append(m.depOut[a], b)
			m.depIn[b] = append(m.depIn[b], a)
			m.clockEdges++
			for _, r := range m.certReaders[wk{a, key}] {
				if r != b {
					m.rwOut[r] = append(m.rwOut[r], b)
					m.rwIn[b] = append(m.rwIn[b], r)
					m.clockEdges++
				}
			}
			m.succ[wk{a, key}] = append(m.succ[wk{a, key}], b)
		}
	}
}

// clockReason returns the reason of a raw edge u→v of kind k that the clocks' decisions
// imply (joinDecided), and records it in why and forced.
func (m *model) clockReason(u, v int32, k kind) (deps.Edge, bool) {
	if m.ck == nil || u >= int32(m.d.N) || v >= int32(m.d.N) {
		return deps.Edge{}, false
	}
	var found *deps.Edge
	switch k {
	case kDep:
		found = m.clockDep(u, v)
	case kRW:
		found = m.clockRW(u, v)
	}
	if found == nil {
		return deps.Edge{}, false
	}
	key := ekey{u, v, k}
	m.why[key] = *found
	m.forced[key] = true
	return *found, true
}

// clockFirst reports whether the clocks put writer a before writer b on key.
func (m *model) clockFirst(a, b int32, key history.Key) bool {
	ws := m.d.Writers[key]
	i, ok1 := slices.BinarySearch(ws, a)
	j, ok2 := slices.BinarySearch(ws, b)
	if !ok1 || !ok2 {
		return false
	}
	ok, iFirst := m.ck.decided(key, min(i, j), max(i, j))
	return ok && iFirst == (i < j)
}

// clockDep is the write-write edge u→v on the first key both write that the clocks order
// u first, or nil.
func (m *model) clockDep(u, v int32) *deps.Edge {
	d := m.d
	for _, w := range d.Writes[u] {
		if _, ok := d.WriteOf(v, w.Key); ok && m.clockFirst(u, v, w.Key) {
			c := polygraph.WW{A: min(u, v), B: max(u, v), Keys: []history.Key{w.Key}}
			e := m.wwEdges(&c, u, v, nil)[0]
			return &e
		}
	}
	return nil
}

// clockRW is the anti-dependency u→v of the first read of u with one candidate writer
// (not the initial one) that the clocks order before v on the read's key, or nil.
func (m *model) clockRW(u, v int32) *deps.Edge {
	d := m.d
	for _, ri := range d.ReadsOf[u] {
		r := &d.Reads[ri]
		if !m.clockOverwrites(r, v) {
			continue
		}
		c := polygraph.WW{A: min(r.Cands[0], v), B: max(r.Cands[0], v), Keys: []history.Key{r.Key}}
		for _, e := range m.wwEdges(&c, r.Cands[0], v, nil) {
			if e.From == u && e.Rel == report.RW {
				return &e
			}
		}
	}
	return nil
}

// clockOverwrites reports whether read r has one candidate writer, not the initial one,
// and the clocks put writer v after it on r's key.
func (m *model) clockOverwrites(r *deps.Read, v int32) bool {
	d := m.d
	if len(r.Cands) != 1 || r.Cands[0] == d.Init {
		return false
	}
	_, ok := d.WriteOf(v, r.Key)
	return ok && m.clockFirst(r.Cands[0], v, r.Key)
}

// sinks marks the transactions that can go after every other writer of each key they
// write: committed, reading nothing, written values nobody can read, and every known edge
// out of them leads to another sink (the greatest such set). Nothing leaves the set, so
// no cycle passes through it, whatever order the pairs with a sink take as long as the
// sinks come last and in an order of their own known edges.
func (m *model) sinks() []bool {
	sink := m.sinkCandidates()
	// Remove, to a fixpoint, every candidate with a known dep edge to a non-candidate.
	var queue []int32
	for t := range int32(m.d.N) {
		if sink[t] && slices.ContainsFunc(m.depOut[t], func(v int32) bool { return !sink[v] }) {
			sink[t] = false
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		v := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, u := range m.depIn[v] {
			if sink[u] {
				sink[u] = false
				queue = append(queue, u)
			}
		}
	}
	return sink
}

// sinkCandidates marks the committed transactions that read nothing, whose written values
// nobody can read, with no known rw or tail edge out and no guarded edge out.
func (m *model) sinkCandidates() []bool {
	d := m.d
	sink := make([]bool, m.nn)
	readFrom := m.readFrom()
	for t := range int32(d.N) {
		sink[t] = d.Status[t] == deps.Committed && !m.reader[t] && !readFrom[t] && len(m.rwOut[t]) == 0 && len(m.tail[t]) == 0
	}
	for _, e := range m.guarded {
		sink[e.From] = false // conservative: edges that exist if others commit
	}
	return sink
}

// readFrom marks the transactions some read may read from.
func (m *model) readFrom() []bool {
	d := m.d
	readFrom := make([]bool, d.N)
	for ri := range d.Reads {
		for _, c := range d.Reads[ri].Cands {
			if c < int32(d.N) {
				readFrom[c] = true
			}
		}
	}
	return readFrom
}

// addKnown adds a known raw edge (ignored if it is already known).
func (m *model) addKnown(e deps.Edge, forced bool) {
	if e.From == e.To {
		return
	}
	k := m.edgeKind(e)
	key := ekey{e.From, e.To, k}
	if _, ok := m.why[key]; ok {
		return
	}
	m.why[key] = e
	if forced {
		m.forced[key] = true
	}
	switch k {
	case kDep:
		m.depOut[e.From] = append(m.depOut[e.From], e.To)
		m.depIn[e.To] = append(m.depIn[e.To], e.From)
	case kRW:
		m.rwOut[e.From] = append(m.rwOut[e.From], e.To)
		m.rwIn[e.To] = append(m.rwIn[e.To], e.From)
	case kTail:
		m.tail[e.From] = append(m.tail[e.From], e.To)
	}
}

// wwEdges returns the raw edges WW choice c adds when a goes first, with known readers.
func (m *model) wwEdges(c *polygraph.WW, a, b int32, dst []deps.Edge) []deps.Edge {
	for i, k := range c.Keys {
		wa, _ := m.d.WriteOf(a, k)
		wb, _ := m.d.WriteOf(b, k)
		if i == 0 {
			dst = append(dst, deps.Edge{From: a, To: b, Rel: report.WW, Key: k, Value: wa.Value, Value2: wb.Value, Via: -1, Guards: [3]int32{-1, -1, -1}})
		}
		for _, r := range m.certReaders[wk{a, k}] {
			if r != b {
				dst = append(dst, deps.Edge{From: r, To: b, Rel: report.RW, Key: k, Value: wa.Value, Value2: wb.Value, Via: a, Guards: [3]int32{-1, -1, -1}})
			}
		}
	}
	return dst
}

// readEdges returns the raw edges read ri adds if it reads from w, given what is known.
func (m *model) readEdges(ri int32, w int32) []deps.Edge {
	r := &m.d.Reads[ri]
	es := m.d.ReadFrom(int(ri), w)
	if w != m.d.Init {
		for _, b := range m.succ[wk{w, r.Key}] {
			if b != r.Txn {
				wb, _ := m.d.WriteOf(b, r.Key)
				es = append(es, deps.Edge{From: r.Txn, To: b, Rel: report.RW, Key: r.Key, Value: r.Value, Value2: wb.Value, Via: w, Guards: [3]int32{-1, -1, -1}})
			}
		}
	}
	return es
}

// # The split graph
//
// Reachability and acyclicity of the induced graph are computed on a split graph with two
// nodes per graph node u: u itself, and u* ("reached by a dep edge"). A dep edge u→v is
// u→v*, an rw edge u→v is u*→v (an anti-dependency may only follow a dep edge), a tail edge
// u→v is u→v, and u*→u is always present (a node reached by a dep edge may go on like any
// other). A path of the split graph never takes two rw edges in a row, every cycle has a dep
// edge, and cycles of the split graph are exactly cycles of the induced graph (SO ∪ WR ∪
// WW) ; RW?, with one edge per raw edge instead of in-degree × out-degree composite edges.

// star returns u*.
func (m *model) star(u int32) int32 { return u + int32(m.nn) }

// split returns the split-graph edge of a raw edge.
func (m *model) split(e deps.Edge) (int32, int32) {
	switch m.edgeKind(e) {
	case kDep:
		return e.From, m.port(e.To)
	case kRW:
		invariant.Assertf(m.reader[e.From], "si: rw edge %d→%d from a node not marked as a reader", e.From, e.To)
		return m.star(e.From), e.To
	default:
		return e.From, e.To
	}
}

// raw decodes a split-graph edge x→y: the raw edge's endpoints and kind, or ok false for a
// u*→u edge.
func (m *model) raw(x, y int32) (u, v int32, k kind, ok bool) {
	n := int32(m.nn)
	switch {
	case x >= n && y == x-n:
		return 0, 0, 0, false
	case y >= n:
		return x, y - n, kDep, true
	case x >= n:
		return x - n, y, kRW, true
	case m.d.Nodes[x].Kind == deps.NodeInitVersion:
		return x, y, kTail, true
	default:
		return x, y, kDep, true // into a node that never anti-depends (see port)
	}
}

// port returns the node a dep edge into v enters: v* when v may have rw out-edges (it
// reads), else v itself (u*→u would be its only way on, so the two are one).
func (m *model) port(v int32) int32 {
	if m.reader[v] {
		return m.star(v)
	}
	return v
}

// known builds the known split graph.
func (m *model) known() *graph.Digraph {
	n := int32(m.nn)
	g := graph.New(2 * m.nn)
	for u := range n {
		g.AddEdge(u+n, u)
		for _, v := range m.depOut[u] {
			g.AddEdge(u, m.port(v))
		}
		for _, v := range m.tail[u] {
			g.AddEdge(u, v)
		}
		for _, v := range m.rwOut[u] {
			g.AddEdge(u+n, v)
		}
	}
	return g
}

// prune removes options whose edges close a cycle with the known split graph,
// to a fixpoint (PolySI Alg. 2, with reachability over the induced graph: a raw path
// through two consecutive rw edges is not an induced path). Each pass asks, for every
// option of every undecided choice, whether its edges close a cycle (one batch of
// reachability queries), then drops the options that do.
func (m *model) prune(ctx context.Context) (*polygraph.Violation, error) {
	p := &pruner{m: m, ctx: ctx}
	return polygraph.Fixpoint(ctx, &m.passes, p.pass)
}

// pruner holds one pruning pass's state: the known split graph in a topological
// order, the reachability queries each option asks, and their answers.
type pruner struct {
	m   *model
	ctx context.Context
	pos []int32
	// The queries and their answers; an option's span has Loop set when the option alone
	// closes an induced self-loop.
	polygraph.Answers
	depsBuf []deps.Edge
	buf     []deps.Edge
	wwOpts  [][2]polygraph.Span
	wrOpts  [][]polygraph.Span
}

// pass runs one pruning pass: a known cycle is a violation; otherwise it queries every
// option and decides the choices, reporting whether anything changed.
func (p *pruner) pass() (*polygraph.Violation, bool, error) {
	m, ctx := p.m, p.ctx
	g := m.known()
	order, ok := graph.Topo(g)
	if !ok {
		return &polygraph.Violation{Cycles: [][]deps.Edge{m.expand(graph.FindCycle(g), nil)}, Options: []polygraph.Option{{WW: -1, WR: -1}}}, false, nil
	}
	p.pos = graph.Positions(order)
	p.Qs = nil
	p.depsBuf = nil
	if err := p.askWW(ctx); err != nil {
		return nil, false, err
	}
	if err := p.askWR(ctx); err != nil {
		return nil, false, err
	}
	ans, err := graph.ReachBatch(ctx, g, order, p.pos, p.Qs)
	if err != nil {
		return nil, false, err
	}
	p.Ans = ans
	return p.decide()
}

// decide decides the write-write choices, then the read choices, by the answers: the
// violation one proves, or whether any changed.
func (p *pruner) decide() (*polygraph.Violation, bool, error) {
	v, changedWW, err := p.decideWW()
	if v != nil || err != nil {
		return v, false, err
	}
	v, changedWR, err := p.decideWR()
	if v != nil || err != nil {
		return v, false, err
	}
	return nil, changedWW || changedWR, nil
}

// openWW reports whether write-write choice c is still to be decided by pruning.
func (m *model) openWW(c *polygraph.WW) bool {
	return c.Fixed == 0 && m.committed(c.A) && m.committed(c.B)
}

// askWW queries both orders of every open write-write choice.
func (p *pruner) askWW(ctx context.Context) error {
	m := p.m
	p.wwOpts = make([][2]polygraph.Span, len(m.ww))
	for ci := range m.ww {
		if ci&1023 == 0 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		c := &m.ww[ci]
		if !m.openWW(c) {
			continue
		}
		p.buf = m.wwEdges(c, c.A, c.B, p.buf[:0])
		p.wwOpts[ci][0] = p.queries(p.buf)
		p.buf = m.wwEdges(c, c.B, c.A, p.buf[:0])
		p.wwOpts[ci][1] = p.queries(p.buf)
	}
	return nil
}

// askWR queries every candidate writer of every open read choice of a committed reader.
func (p *pruner) askWR(ctx context.Context) error {
	m := p.m
	d := m.d
	p.wrOpts = make([][]polygraph.Span, len(m.wr))
	for wi := range m.wr {
		if wi&1023 == 0 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		rc := &m.wr[wi]
		if rc.Fixed || d.Status[d.Reads[rc.Read].Txn] != deps.Committed {
			continue
		}
		p.wrOpts[wi] = make([]polygraph.Span, len(rc.Cands))
		for j, w := range rc.Cands {
			es := slices.DeleteFunc(m.readEdges(rc.Read, w), func(e deps.Edge) bool { return !noGuard(e) })
			p.wrOpts[wi][j] = p.queries(es)
		}
	}
	return nil
}

// queries adds the reachability queries of one option's edges and returns their span.
func (p *pruner) queries(es []deps.Edge) polygraph.Span {
	m := p.m
	s := polygraph.Span{Q0: int32(len(p.Qs))}
	deps0 := p.depsBuf[:0]
	for _, e := range es {
		if e.From != e.To && m.edgeKind(e) == kDep {
			deps0 = append(deps0, e)
		}
	}
	p.depsBuf = deps0
	for _, e := range es {
		if e.From == e.To {
			continue
		}
		x, y := m.split(e)
		p.ask(&s, x, y)
		if m.edgeKind(e) == kRW {
			p.askComposed(&s, e, deps0)
		}
	}
	s.Q1 = int32(len(p.Qs))
	return s
}

// askComposed asks about the induced edges rw edge e of an option makes after each dep edge
// of the same option (deps0) that enters e's reader.
func (p *pruner) askComposed(s *polygraph.Span, e deps.Edge, deps0 []deps.Edge) {
	for _, f := range deps0 {
		if f.To == e.From {
			p.ask(s, f.From, e.To)
		}
	}
}

// ask records the question whether y reaches x (then x→y closes a cycle).
func (p *pruner) ask(s *polygraph.Span, x, y int32) {
	switch {
	case x == y:
		s.Loop = true
	case p.pos[y] < p.pos[x]: // only then can y reach x (a topological order)
		p.Qs = append(p.Qs, graph.Query{From: y, To: x})
	}
}

// decideWW fixes every write-write choice with one cyclic order to the other; both
// orders cyclic is a violation.
func (p *pruner) decideWW() (*polygraph.Violation, bool, error) {
	m := p.m
	bad, changed, err := p.DecideWW(p.ctx, m.ww, p.wwOpts, m.openWW, m.fixWW)
	if bad >= 0 {
		return polygraph.WWViolation(m.ww, bad, m.wwEdges, m.cycleWith), false, nil
	}
	return nil, changed, err
}

// decideWR drops the cyclic candidates of every queried read choice and fixes a
// choice left with one committed writer; no candidate left is a violation.
func (p *pruner) decideWR() (*polygraph.Violation, bool, error) {
	m := p.m
	bad, changed, err := p.DecideWR(p.ctx, m.wr, p.wrOpts, m.committed, m.fixWR, &m.prunedWR)
	if bad >= 0 {
		return polygraph.WRViolation(m.wr, bad, m.readEdges, m.cycleWith), false, nil
	}
	return nil, changed, err
}

// fixWW orients choice ci as a before b.
func (m *model) fixWW(ci int, a, b int32) {
	c := &m.ww[ci]
	c.Fixed = 1
	if a != c.A {
		c.Fixed = 2
	}
	m.prunedWW++
	for _, e := range m.wwEdges(c, a, b, nil) {
		m.addKnown(e, true)
	}
	for _, k := range c.Keys {
		m.succ[wk{a, k}] = append(m.succ[wk{a, k}], b)
	}
}

// fixWR resolves read choice wi to its only candidate.
func (m *model) fixWR(wi int) {
	rc := &m.wr[wi]
	rc.Fixed = true
	r := &m.d.Reads[rc.Read]
	w := rc.Cands[0]
	for _, e := range m.readEdges(rc.Read, w) {
		if noGuard(e) {
			m.addKnown(e, true)
		} else {
			m.guarded = append(m.guarded, e)
		}
	}
	if w != m.d.Init {
		m.certReaders[wk{w, r.Key}] = append(m.certReaders[wk{w, r.Key}], r.Txn)
	}
}

// remaining counts the undecided choices.
func (m *model) remaining() (ww, wr int) { return polygraph.Undecided(m.ww, m.wr) }
