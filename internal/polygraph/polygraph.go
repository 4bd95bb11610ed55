// Package polygraph builds the hyper-polygraph of a history (VeriStrong, Cai et al., PVLDB
// 2026, Def. 3.1), prunes it to a fixpoint (Alg. 5 / Fig. 18, with Vbox's time-fixed write
// orders as known edges) and encodes what remains for the CDCL solver with the acyclicity
// theory (internal/sat, internal/sat/acyclic).
//
// # Constraints
//
//   - WW: one choice per unordered pair of writers sharing a key, merged across the keys they
//     share (the artifact's merge; sound because opposite orders on two keys form a 2-cycle).
//     Pairs whose order real time fixes (strict level, both committed) get none, and so
//     does a key no read may read (see unread).
//   - WR: one choice per read that has several candidate writers (values repeat), or whose
//     reader or only writer is of unknown outcome.
//   - Unknown outcome: a transaction of unknown outcome that someone may read from is a
//     Boolean choice c(T); everything it takes part in is guarded by c(T), and reading from
//     it implies c(T).
//
// Choosing an orientation A→B of a WW pair adds A→B and the anti-dependencies R→B of every
// reader R of A's version of a shared key, except R = B (the read-modify-write self-loop of
// the digest's erratum). Choosing a writer w for a read adds w→R and R→B for every B ordered
// after w on that key.
//
// # Pruning
//
// Each pass computes reachability of the known graph once ([graph.ReachBatch], bounded
// memory), then eliminates every choice whose edges would close a cycle, fixing constraints
// left with one option (WW-INTRO, WR-INTRO), until nothing changes. A constraint left with no
// option, or a cycle among known edges, is a violation whose witness is that cycle.
//
// # Shared with snapshot isolation
//
// internal/check/si runs the same stages on its own graph (the split graph of the induced
// SI graph) and takes from here what does not depend on the graph: the constraints (WW, WR,
// Option, Alternative, Violation), pruning's passes and decisions (decide.go), the read
// clauses, conjunctions, theory and minimal core of an encoding (theory.go), and a
// witness's combinations of options (witness.go: Enumerate, Selection); both search a
// witness's cycle with graph.ShortestPathWith.
//
// # Local names
//
//	p *Polygraph   d *deps.Deps   c WW constraint   rc WR constraint   ri read index
package polygraph

import (
	"context"
	"slices"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/graph"
	"github.com/isovet/isovet/internal/report"
)

// WW is a write-order choice between writers A < B of the keys Keys, or between two blocks
// of versions of one key (Ends set): a block is a chain of read-modify-write transactions,
// each of which read its predecessor's version, so it is contiguous in every version order,
// and ordering two blocks orders the last of one before the first of the other.
type WW struct {
	A, B int32 // the transactions (for blocks: the first of each block)
	Keys []history.Key
	// Ends, for block pairs (one key), holds {AFirst, ALast, BFirst, BLast}; nil for a pair
	// of single transactions.
	Ends [][4]int32
	// Fixed: 0 undecided, 1 A before B, 2 B before A.
	Fixed int8
}

// sideEnds returns, for key index i, the last transaction of the block placed first and the
// first transaction of the block placed second, when a's block goes first.
func (c *WW) sideEnds(a int32, i int) (from, to int32) {
	if c.Ends == nil {
		if a == c.A {
			return c.A, c.B
		}
		return c.B, c.A
	}
	e := c.Ends[i]
	if a == c.A {
		return e[1], e[2]
	}
	return e[3], e[0]
}

// WR is a write-read choice: the read D.Reads[Read] reads from one of Cands.
type WR struct {
	Read  int32
	Cands []int32 // alive candidates
	Fixed bool    // resolved to Cands[0] and moved into the known graph
}

type wk struct {
	w int32
	k history.Key
}

// Polygraph is the hyper-polygraph of a history. It is not safe for concurrent use.
type Polygraph struct {
	D  *deps.Deps
	G  *graph.Digraph // the known graph
	WW []WW
	WR []WR

	// rsn holds the reason of every known edge, parallel to G's adjacency lists: rsn[u][i]
	// is the reason of G.Out(u)[i], an index into D.Known when below len(D.Known), else
	// into extra (edges the polygraph derived: chains, version nodes, pruning). The known
	// graph may hold an edge more than once; graph algorithms tolerate it, and a reason
	// per adjacency entry costs 4 bytes instead of a map entry per edge.
	rsn     [][]int32
	extra   []deps.Edge
	fixedBy map[uint64]bool // known edges added by pruning

	// The tables below are indexed by write: the write of key k by transaction w has index
	// wbase[w] + its position in D.Writes[w] (see wid). Dense tables instead of maps keyed
	// by (w,k): a predicate history has millions of such pairs, and the maps' hashing and
	// cache misses were most of Build's time (BlindW-Pred R=1000: 10 s of 26).
	wbase []int32
	// wmore: indexes of pairs (w,k) that are not writes in D.Writes (none are expected;
	// kept so that an unexpected candidate is still handled exactly).
	wmore map[wk]int32
	// certReaders: committed readers known to read w's version of k that also write k
	// (read-modify-writes); other certain readers point to the version node instead.
	certReaders [][]int32
	// ver: the version node ν(w,k) of writers whose version of k may be read (0: none).
	// Readers of the version point to it; it points to every writer ordered after w on k.
	// A version that is no side of a write-order constraint and has at most one later
	// writer after Build gets no node (see versions): its readers point to that writer
	// directly. Such a node would be most of the graph on predicate histories (BlindW-Pred
	// R=1000: 2.46 million version nodes beside 23,690 transactions) and only relay one
	// edge.
	ver []int32
	// cand: the write is a candidate source of some read (its version may be read).
	cand []bool
	// nuReaders: the other certain readers (they reach later writers through ν, or
	// directly without one); the solver encoding expands ν back into direct edges.
	nuReaders [][]int32
	// slot: scratch of buildKey, per transaction (see there).
	slot []int32
	// succ: writers ordered after w on k by pruning (time-fixed ones are in deps).
	succ [][]int32
	// rmw: per write, the version its writer read before overwriting it (see rmwSources).
	rmw []int32
	// work is the reduced working graph of later pruning passes and inWork its nodes (see
	// passGraph); nil outside Prune.
	work       *graph.Digraph
	inWork     []bool
	workBuilds int
	// pairOf indexes WW by (A,B).
	pairOf map[uint64]int32
	// wrOf: per read, its WR constraint or -1.
	wrOf []int32

	// Stats.
	Passes, PrunedWW, PrunedWR int
}

func pairKey(a, b int32) uint64 {
	if a > b {
		a, b = b, a
	}
	return uint64(a)<<32 | uint64(uint32(b))
}

func edgeKey(u, v int32) uint64 { return uint64(u)<<32 | uint64(uint32(v)) }

// Build constructs the hyper-polygraph from the known dependencies; see [BuildContext].
func Build(d *deps.Deps) *Polygraph {
	p, _ := BuildContext(context.Background(), d)
	return p
}

// BuildContext constructs the hyper-polygraph from the known dependencies. The pairs of
// writers of one key are quadratic in the writers, so it polls ctx as it goes (every 1024
// reads and every 1024 pairs) and returns nil and context.Cause(ctx) once ctx is done.
func BuildContext(ctx context.Context, d *deps.Deps) (*Polygraph, error) {
	p := newPolygraph(d)
	if err := p.readConstraints(ctx); err != nil {
		return nil, err
	}
	p.rmwSources()
	chainEdges, err := p.keyConstraints(ctx)
	if err != nil {
		return nil, err
	}
	p.knownGraph(p.versions(chainEdges))
	p.dedup()
	p.rmw, p.slot = nil, nil
	return p, nil
}

// newPolygraph returns the empty polygraph of d, its per-write tables allocated.
func newPolygraph(d *deps.Deps) *Polygraph {
	p := &Polygraph{
		D:       d,
		fixedBy: make(map[uint64]bool),
		pairOf:  make(map[uint64]int32),
		wrOf:    make([]int32, len(d.Reads)),
	}
	p.wbase = make([]int32, len(d.Writes)+1)
	for t, ws := range d.Writes {
		p.wbase[t+1] = p.wbase[t] + int32(len(ws))
	}
	nw := p.wbase[len(d.Writes)]
	p.ver = make([]int32, nw)
	p.cand = make([]bool, nw)
	p.certReaders = make([][]int32, nw)
	p.nuReaders = make([][]int32, nw)
	p.succ = make([][]int32, nw)
	return p
}

// readConstraints registers the readers of certain reads and makes the rest WR
// constraints, polling ctx every 1024 reads.
func (p *Polygraph) readConstraints(ctx context.Context) error {
	d := p.D
	for ri := range d.Reads {
		if ri&1023 == 0 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		r := &d.Reads[ri]
		p.wrOf[ri] = -1
		st := d.Status[r.Txn]
		if st == deps.Excluded || len(r.Cands) == 0 {
			continue
		}
		p.markCandidates(r)
		if st == deps.Committed && len(r.Cands) == 1 && (r.Cands[0] == d.Init || d.Status[r.Cands[0]] == deps.Committed) {
			p.certRead(int32(ri), r.Cands[0])
			continue
		}
		p.wrOf[ri] = int32(len(p.WR))
		p.WR = append(p.WR, WR{Read: int32(ri), Cands: slices.Clone(r.Cands)})
	}
	return nil
}

// markCandidates marks the writes read r may read as candidate sources.
func (p *Polygraph) markCandidates(r *deps.Read) {
	for _, w := range r.Cands {
		if w != p.D.Init {
			p.cand[p.wid(w, r.Key)] = true
		}
	}
}

// keyConstraints creates every key's write-order constraints (see buildKey) and returns
// the known edges of their chains.
func (p *Polygraph) keyConstraints(ctx context.Context) ([]deps.Edge, error) {
	kw := p.keyWrites()
	var chainEdges []deps.Edge
	var work int
	for k := range p.D.Writers {
		var err error
		if chainEdges, err = p.buildKey(ctx, history.Key(k), kw[k], chainEdges, &work); err != nil {
			return nil, err
		}
	}
	return chainEdges, nil
}

// knownGraph builds the known graph: deps' known edges, then the polygraph's own.
func (p *Polygraph) knownGraph(chainEdges []deps.Edge) {
	d := p.D
	p.G = graph.New(len(d.Nodes))
	p.rsn = make([][]int32, len(d.Nodes))
	for i, e := range d.Known {
		p.link(e.From, e.To, int32(i))
	}
	p.extra = slices.Grow(p.extra, len(chainEdges))
	for _, e := range chainEdges {
		if e.From != e.To {
			p.extra = append(p.extra, e)
			p.link(e.From, e.To, int32(len(d.Known)+len(p.extra)-1))
		}
	}
}

// dedup drops repeated edges from the known graph, keeping each edge's first occurrence
// (so Why gives the same reason). A reader of many rows of one writer has one write-read
// edge per row: on predicate histories more than half of the known edges were repeats
// (BlindW-Pred R=100 strict: 712,000 of 1.29 million), and pruning's reachability sweeps
// cost in proportion to the edges.
func (p *Polygraph) dedup() {
	n := p.G.N()
	seen := make([]int32, n) // seen[v] = u+1: u→v kept already
	g := graph.New(n)
	for u := range n {
		out, rs := p.G.Out(int32(u)), p.rsn[u]
		keep := rs[:0]
		for j, v := range out {
			if seen[v] == int32(u)+1 {
				continue
			}
			seen[v] = int32(u) + 1
			g.AddEdge(int32(u), v)
			keep = append(keep, rs[j])
		}
		p.rsn[u] = slices.Clip(keep)
	}
	p.G = g
}

// wid returns the index of w's write of k in the per-write tables. A pair that is not a
// write of D.Writes gets an index of its own on first use.
func (p *Polygraph) wid(w int32, k history.Key) int32 {
	if w >= 0 && int(w) < len(p.wbase)-1 {
		ws := p.D.Writes[w]
		lo, hi := 0, len(ws)
		for lo < hi {
			h := int(uint(lo+hi) >> 1)
			if ws[h].Key < k {
				lo = h + 1
			} else {
				hi = h
			}
		}
		if lo < len(ws) && ws[lo].Key == k {
			return p.wbase[w] + int32(lo)
		}
	}
	if i, ok := p.wmore[wk{w, k}]; ok {
		return i
	}
	if p.wmore == nil {
		p.wmore = make(map[wk]int32)
	}
	i := int32(len(p.ver))
	p.wmore[wk{w, k}] = i
	p.ver = append(p.ver, 0)
	p.cand = append(p.cand, false)
	p.certReaders = append(p.certReaders, nil)
	p.nuReaders = append(p.nuReaders, nil)
	p.succ = append(p.succ, nil)
	if p.rmw != nil {
		p.rmw = append(p.rmw, -1)
	}
	return i
}

// link adds u→v to the known graph with reason r (see Polygraph.rsn).
func (p *Polygraph) link(u, v, r int32) {
	if u == v {
		return
	}
	// Virtual nodes may be created lazily by deps (init-version nodes).
	for p.G.N() < len(p.D.Nodes) {
		p.G.AddNode()
		p.rsn = append(p.rsn, nil)
	}
	p.G.AddEdge(u, v)
	p.rsn[u] = append(p.rsn[u], r)
}

// certRead records that read ri certainly reads from w: a reader that also writes the key is
// a read-modify-write reader, kept by name; any other points to ν(w,k) by a known edge.
func (p *Polygraph) certRead(ri int32, w int32) {
	r := &p.D.Reads[ri]
	if w == p.D.Init {
		return
	}
	i := p.wid(w, r.Key)
	if _, writes := p.D.WriteOf(r.Txn, r.Key); writes {
		p.certReaders[i] = append(p.certReaders[i], r.Txn)
		return
	}
	p.nuReaders[i] = append(p.nuReaders[i], r.Txn)
}

// versions runs at the end of Build, when the later writers of every version known then
// are in succ. It creates the version node ν(w,k) of each version that may be read and
// either is the earlier side of a write-order constraint (pruning and encoding add edges
// from it) or has several later writers, and adds the edges of its certain readers to it
// and from it to those writers. A version without a node has at most one later writer
// now and gains none later (succ grows only in fixWW, from constraint sides), so its
// readers' direct edges to it, which fromVersionX and readEdgesX give whenever a version
// has no node, are exactly what the node would relay.
func (p *Polygraph) versions(dst []deps.Edge) []deps.Edge {
	d := p.D
	need := make([]bool, len(p.ver))
	for ci := range p.WW {
		c := &p.WW[ci]
		for i, k := range c.Keys {
			for _, a := range [2]int32{c.A, c.B} {
				from, _ := c.sideEnds(a, i)
				need[p.wid(from, k)] = true
			}
		}
	}
	need = append(need, make([]bool, len(p.ver)-len(need))...) // wid may have grown the tables
	for t := range d.Writes {
		for j := range d.Writes[t] {
			p.version(p.wbase[t]+int32(j), int32(t), need, &dst)
		}
	}
	for x, i := range p.wmore {
		p.version(i, x.w, need, &dst)
	}
	return dst
}

// version creates ν for write i of w if versions says so (see there).
func (p *Polygraph) version(i, w int32, need []bool, dst *[]deps.Edge) {
	if !p.cand[i] || p.ver[i] != 0 || (!need[i] && len(p.succ[i]) <= 1) {
		return
	}
	d := p.D
	k := p.keyOf(i, w)
	v := d.AddVersionNode(w, k)
	p.ver[i] = v
	wa, _ := d.WriteOf(w, k)
	for _, t := range p.nuReaders[i] {
		*dst = append(*dst, deps.Edge{From: t, To: v, Rel: report.RW, Key: k, Value: p.readValue(t, k, w, wa.Value), Via: w, Guards: [3]int32{-1, -1, -1}})
	}
	for _, b := range p.succ[i] {
		wb, _ := d.WriteOf(b, k)
		*dst = append(*dst, deps.Edge{From: v, To: b, Rel: report.RW, Key: k, Value: wa.Value, Value2: wb.Value, Via: w, Guards: [3]int32{-1, -1, -1}})
	}
}

// readValue returns the value t read of k from w (def if no such read is found): the
// readers of a version are kept by transaction, and only the few that get a version node
// need their reads' values.
func (p *Polygraph) readValue(t int32, k history.Key, w int32, def history.Value) history.Value {
	for _, ri := range p.D.ReadsOf[t] {
		if r := &p.D.Reads[ri]; r.Key == k && slices.Contains(r.Cands, w) {
			return r.Value
		}
	}
	return def
}

// keyOf returns the key of write i of w.
func (p *Polygraph) keyOf(i, w int32) history.Key {
	if w >= 0 && int(w) < len(p.wbase)-1 && i >= p.wbase[w] && i < p.wbase[w+1] {
		return p.D.Writes[w][i-p.wbase[w]].Key
	}
	for x, j := range p.wmore {
		if j == i {
			return x.k
		}
	}
	return -1 // not reached: every index comes from wid
}

// fromVersionX returns the edges by which the readers of from's version of k anti-depend on
// to, when from's version directly precedes (or precedes) to's: ν(from,k)→to (or, when the
// version has no node, the certain readers' direct edges) and the read-modify-write
// readers' direct edges. With expand, readers get direct edges instead of ν's (the
// solver's theory is faster without the extra nodes).
func (p *Polygraph) fromVersionX(from, to int32, k history.Key, dst []deps.Edge, expand bool) []deps.Edge {
	wa, _ := p.D.WriteOf(from, k)
	wb, _ := p.D.WriteOf(to, k)
	return p.fromVersionAt(from, to, k, p.wid(from, k), wa.Value, wb.Value, dst, expand)
}

// fromVersionAt is fromVersionX given from's write index i and both values.
func (p *Polygraph) fromVersionAt(from, to int32, k history.Key, i int32, va, vb history.Value, dst []deps.Edge, expand bool) []deps.Edge {
	if v := p.ver[i]; expand || v == 0 {
		for _, r := range p.nuReaders[i] {
			if r != to {
				dst = append(dst, deps.Edge{From: r, To: to, Rel: report.RW, Key: k, Value: va, Value2: vb, Via: from, Guards: [3]int32{-1, -1, -1}})
			}
		}
	} else {
		dst = append(dst, deps.Edge{From: v, To: to, Rel: report.RW, Key: k, Value: va, Value2: vb, Via: from, Guards: [3]int32{-1, -1, -1}})
	}
	for _, r := range p.certReaders[i] {
		if r != to {
			dst = append(dst, deps.Edge{From: r, To: to, Rel: report.RW, Key: k, Value: va, Value2: vb, Via: from, Guards: [3]int32{-1, -1, -1}})
		}
	}
	return dst
}

// writeAt returns w's write of k, whose write index is i.
func (p *Polygraph) writeAt(w, i int32, k history.Key) deps.Write {
	if w >= 0 && int(w) < len(p.wbase)-1 && i >= p.wbase[w] && i < p.wbase[w+1] {
		return p.D.Writes[w][i-p.wbase[w]]
	}
	wr, _ := p.D.WriteOf(w, k)
	return wr
}

// rmwSources fills rmw: for each write of k by a committed w, the version w read before
// overwriting it, when every external read of k by w is certain and from the same writer (or
// Init); else -1. One pass over each transaction's reads and writes (a predicate update of
// 500 rows has 500 of each): a table from key to the transaction's write of it, set and
// cleared per transaction.
func (p *Polygraph) rmwSources() {
	d := p.D
	p.rmw = make([]int32, len(p.ver))
	for i := range p.rmw {
		p.rmw[i] = -1
	}
	var slot []int32 // key -> write index + 1 of the current transaction
	for t, ws := range d.Writes {
		if d.Status[t] != deps.Committed || len(ws) == 0 {
			continue
		}
		if k := int(ws[len(ws)-1].Key); k >= len(slot) { // Writes are sorted by key
			slot = slices.Grow(slot, k+1-len(slot))[:k+1]
		}
		p.rmwTxn(int32(t), ws, slot)
	}
}

// rmwSources' marks of a write while its transaction's reads are looked at.
const rmwUnset = -2

// rmwTxn fills rmw for the writes ws of committed transaction t, with slot (zero, and
// left zero) long enough for its keys.
func (p *Polygraph) rmwTxn(t int32, ws []deps.Write, slot []int32) {
	base := p.wbase[t]
	for i, w := range ws {
		slot[w.Key] = base + int32(i) + 1
		p.rmw[base+int32(i)] = rmwUnset
	}
	p.rmwReads(t, slot)
	for i, w := range ws {
		slot[w.Key] = 0
		if p.rmw[base+int32(i)] == rmwUnset {
			p.rmw[base+int32(i)] = -1
		}
	}
}

// rmwReads narrows the sources of t's writes (slot: key -> write index + 1) by t's reads
// of their keys: one certain source, the same for every such read, or none (-1).
func (p *Polygraph) rmwReads(t int32, slot []int32) {
	d := p.D
	for _, ri := range d.ReadsOf[t] {
		r := &d.Reads[ri]
		if int(r.Key) >= len(slot) || r.Key < 0 || slot[r.Key] == 0 {
			continue
		}
		i := slot[r.Key] - 1
		switch src := p.rmw[i]; {
		case src == -1:
		case p.wrOf[ri] >= 0 || len(r.Cands) != 1 || (src >= 0 && src != r.Cands[0]):
			p.rmw[i] = -1
		default:
			p.rmw[i] = r.Cands[0]
		}
	}
}

// keyWrites returns, per key k, the write indexes (see wid) of D.Writers[k]'s transactions,
// in the same order; nil for a key where they do not line up (wid then finds them).
func (p *Polygraph) keyWrites() [][]int32 {
	d := p.D
	nk := len(d.Writers)
	off := make([]int32, nk+1)
	for k, ws := range d.Writers {
		off[k+1] = off[k] + int32(len(ws))
	}
	flat := make([]int32, off[nk])
	fill := slices.Clone(off[:nk])
	for t, ws := range d.Writes {
		for i, w := range ws {
			k := w.Key
			if k >= 0 && int(k) < nk && fill[k] < off[k+1] && d.Writers[k][fill[k]-off[k]] == int32(t) {
				flat[fill[k]] = p.wbase[t] + int32(i)
				fill[k]++
			}
		}
	}
	kw := make([][]int32, nk)
	for k := range nk {
		if fill[k] == off[k+1] {
			kw[k] = flat[off[k]:off[k+1]:off[k+1]]
		}
	}
	return kw
}

// buildKey creates the write-order constraints of key k. Committed read-modify-write
// transactions that read a version nobody else read-modified form chains: each directly
// follows the version it read (any writer in between would make its read stale, a cycle), so
// a chain is a contiguous block of the version order, fixed by known edges. A block whose
// first transaction read the initial version comes first. Pairs of single transactions get
// the usual pair constraints (merged across keys); pairs involving a longer block get a
// block constraint.
//
// wids, if not nil, holds the write indexes of k's writers (see keyWrites). work counts
// the pairs made so far, across keys; ctx is polled every 1024 of them.
func (p *Polygraph) buildKey(ctx context.Context, k history.Key, wids []int32, known []deps.Edge, work *int) ([]deps.Edge, error) {
	ws := p.D.Writers[k]
	if len(ws) == 0 || p.unread(k, ws, wids) {
		return known, nil
	}
	b := &keyBuilder{p: p, d: p.D, k: k, ws: ws, wids: wids, n: len(ws), known: known}
	b.numberSlots()
	defer func() {
		for _, w := range ws {
			p.slot[w] = 0
		}
	}()
	b.chainLinks()
	b.chainBlocks()
	if err := b.pairs(ctx, work); err != nil {
		return nil, err
	}
	return b.known, nil
}

// unread reports whether no read may read the version of any writer ws of key k (wids:
// their write indexes, or nil): no read names one as a candidate, so k's version order
// is that of its writes alone. Such a key constrains nothing, and buildKey gives it no
// write-order constraint: whatever acyclic graph the other constraints allow, order k's
// writers as a topological order of that graph orders them; this adds write-write edges
// along the order and no anti-dependency (an anti-dependency on k goes from a reader of
// one writer's version, and there is none; a reader of k's initial version anti-depends
// on every writer whatever the order, an edge deps adds itself). The graph stays acyclic.
// The argument holds at every level this package checks (serializable,
// strong-session, strict: each is the acyclicity of this graph with its known orders),
// and for predicate and list reads too, whose possible sources are candidates like any
// read's. It does not hold at snapshot isolation (concurrent writers of one key are a
// violation there, read or not), which builds its own pairs (internal/check/si).
// Without it, n blind writes of one key made n²/2 constraints: 3,000 took 1 GB.
func (p *Polygraph) unread(k history.Key, ws, wids []int32) bool {
	for j, w := range ws {
		var i int32
		if wids != nil {
			i = wids[j]
		} else {
			i = p.wid(w, k)
		}
		if p.cand[i] {
			return false
		}
	}
	return true
}

// block is a chain of read-modify-writes of one key, a contiguous block of its version
// order, from first to last; initRoot if first read the initial version.
type block struct {
	first, last int32
	initRoot    bool
}

// keyBuilder is the state of [Polygraph.buildKey] for one key.
type keyBuilder struct {
	p     *Polygraph
	d     *deps.Deps
	k     history.Key
	ws    []int32 // k's writers
	wids  []int32 // their write indexes
	n     int     // len(ws)
	known []deps.Edge
	// Versions are numbered by slot: j for ws[j], n for Init, and further slots (nv on)
	// for any other source (not expected: a source is a committed writer of k).
	nv    int32
	other map[int32]int32
	// pred[j]: the slot of the version ws[j] read-modified, or -1; succs: per slot, how
	// many writers read-modified it; next: per slot, such a writer's position (the unique
	// read-modify-write successor when succs is 1), or -1.
	pred, succs, next []int32
	blocks            []block
}

// numberSlots fills in the write indexes if needed and numbers each writer's version.
func (b *keyBuilder) numberSlots() {
	p := b.p
	if b.wids == nil {
		b.wids = make([]int32, b.n)
		for j, w := range b.ws {
			b.wids[j] = p.wid(w, b.k)
		}
	}
	if len(p.slot) < b.d.N {
		p.slot = make([]int32, b.d.N)
	}
	for j, w := range b.ws {
		p.slot[w] = int32(j) + 1
	}
	b.nv = int32(b.n) + 1
}

// slotOf is the slot of version v (written by transaction v, or Init).
func (b *keyBuilder) slotOf(v int32) int32 {
	if v == b.d.Init {
		return int32(b.n)
	}
	if v >= 0 && int(v) < len(b.p.slot) && b.p.slot[v] > 0 {
		return b.p.slot[v] - 1
	}
	if b.other == nil {
		b.other = make(map[int32]int32)
	}
	s, ok := b.other[v]
	if !ok {
		s = b.nv
		b.nv++
		b.other[v] = s
	}
	return s
}

// rmwOf is the version committed writer ws[j] read-modified, if it is a committed one (or
// Init) other than its own, else -1.
func (b *keyBuilder) rmwOf(j int) int32 {
	d, w := b.d, b.ws[j]
	if d.Status[w] != deps.Committed {
		return -1
	}
	if v := b.p.rmw[b.wids[j]]; v >= 0 && v != w && (v == d.Init || d.Status[v] == deps.Committed) {
		return b.slotOf(v)
	}
	return -1
}

// chainLinks computes pred, succs and next.
func (b *keyBuilder) chainLinks() {
	b.pred = make([]int32, b.n)
	for j := range b.ws {
		b.pred[j] = b.rmwOf(j)
	}
	b.succs = make([]int32, b.nv)
	b.next = make([]int32, b.nv)
	for i := range b.next {
		b.next[i] = -1
	}
	for j, v := range b.pred {
		if v >= 0 {
			b.succs[v]++
			b.next[v] = int32(j)
		}
	}
}

// inChain reports whether ws[j] is the unique read-modify-write successor of its version.
func (b *keyBuilder) inChain(j int) bool {
	return b.pred[j] >= 0 && b.succs[b.pred[j]] == 1
}

// chainBlocks makes the blocks: chains start at writers that are not a chained successor
// (or succeed Init). Writers on a cycle of read-modify-writes start no block; they stay
// single (their write-read edges already form a cycle of known edges).
func (b *keyBuilder) chainBlocks() {
	covered := make([]bool, b.n)
	for j, w := range b.ws {
		if b.inChain(j) && b.pred[j] != int32(b.n) {
			continue
		}
		last := b.followChain(int32(j), covered)
		b.blocks = append(b.blocks, block{first: w, last: b.ws[last], initRoot: b.inChain(j)})
	}
	for j, w := range b.ws {
		if !covered[j] {
			b.blocks = append(b.blocks, block{first: w, last: w})
		}
	}
}

// followChain walks the chain from position last, adding its known edges, and returns the
// position of its end.
func (b *keyBuilder) followChain(last int32, covered []bool) int32 {
	p, ws, k := b.p, b.ws, b.k
	for {
		x := b.next[last]
		if x < 0 || b.succs[last] != 1 {
			break
		}
		// Known edges inside the chain: last→x (ww) and every other reader of last's
		// version anti-depends on x.
		wl, wx := ws[last], ws[x]
		wa, wn := p.writeAt(wl, b.wids[last], k), p.writeAt(wx, b.wids[x], k)
		b.known = append(b.known, deps.Edge{From: wl, To: wx, Rel: report.WW, Key: k, Value: wa.Value, Value2: wn.Value, Via: -1, Guards: [3]int32{-1, -1, -1}})
		b.known = p.fromVersionAt(wl, wx, k, b.wids[last], wa.Value, wn.Value, b.known, false)
		p.succ[b.wids[last]] = append(p.succ[b.wids[last]], wx)
		covered[last] = true
		last = x
	}
	covered[last] = true
	return last
}

// pairs orders every two blocks: a pair constraint for two single writers, else a block
// constraint, or known edges when a block must come first.
func (b *keyBuilder) pairs(ctx context.Context, work *int) error {
	p := b.p
	for i := range b.blocks {
		for j := i + 1; j < len(b.blocks); j++ {
			// Also before p.WW grows: on a key of many writers that copy is the longest
			// step between two polls.
			if *work++; (*work&1023 == 0 || len(p.WW) == cap(p.WW)) && ctx.Err() != nil {
				return context.Cause(ctx)
			}
			x, y := b.blocks[i], b.blocks[j]
			if x.single() && y.single() {
				b.singlePair(x.first, y.first)
			} else {
				b.blockPair(x, y)
			}
		}
	}
	return nil
}

// single reports whether a block is one writer that did not read the initial version.
func (x block) single() bool { return x.first == x.last && !x.initRoot }

// singlePair adds key k to the pair constraint of writers a and b, unless their order is
// known.
func (b *keyBuilder) singlePair(a, c int32) {
	p := b.p
	if b.d.Before(a, c) || b.d.Before(c, a) {
		return
	}
	pk := pairKey(a, c)
	ci, ok := p.pairOf[pk]
	if !ok {
		ci = int32(len(p.WW))
		p.pairOf[pk] = ci
		p.WW = append(p.WW, WW{A: min(a, c), B: max(a, c)})
	}
	p.WW[ci].Keys = append(p.WW[ci].Keys, b.k)
}

// blockPair orders blocks x and y: a block rooted at Init comes first (both rooted: both
// orders, a cycle pruning reports), else a block constraint.
func (b *keyBuilder) blockPair(x, y block) {
	p, k := b.p, b.k
	c := WW{A: x.first, B: y.first, Keys: []history.Key{k}, Ends: [][4]int32{{x.first, x.last, y.first, y.last}}}
	switch {
	case x.initRoot && y.initRoot:
		b.known = p.orientEdges(&c, c.A, c.B, b.known)
		b.known = p.orientEdges(&c, c.B, c.A, b.known)
	case x.initRoot:
		b.known = p.orientEdges(&c, c.A, c.B, b.known)
		b.firstBlock(&c, c.A)
	case y.initRoot:
		b.known = p.orientEdges(&c, c.B, c.A, b.known)
		b.firstBlock(&c, c.B)
	default:
		p.WW = append(p.WW, c)
	}
}

// firstBlock records that the block of c starting at a directly precedes the other.
func (b *keyBuilder) firstBlock(c *WW, a int32) {
	from, to := c.sideEnds(a, 0)
	i := b.p.wid(from, b.k)
	b.p.succ[i] = append(b.p.succ[i], to)
}

// addForced adds an edge pruning forced, remembering that it was forced, unless it is
// known already.
func (p *Polygraph) addForced(e deps.Edge) {
	if e.From == e.To {
		return
	}
	if _, ok := p.Why(e.From, e.To); ok {
		return
	}
	p.fixedBy[edgeKey(e.From, e.To)] = true
	p.extra = append(p.extra, e)
	p.link(e.From, e.To, int32(len(p.D.Known)+len(p.extra)-1))
	if p.work != nil {
		if int(e.From) < len(p.inWork) && int(e.To) < len(p.inWork) && p.inWork[e.From] && p.inWork[e.To] {
			p.work.AddEdge(e.From, e.To)
		} else {
			p.work, p.inWork = nil, nil
		}
	}
}

// Why returns the reason of known edge u→v.
func (p *Polygraph) Why(u, v int32) (deps.Edge, bool) {
	if int(u) >= p.G.N() {
		return deps.Edge{}, false
	}
	for i, w := range p.G.Out(u) {
		if w == v {
			r := p.rsn[u][i]
			if int(r) < len(p.D.Known) {
				return p.D.Known[r], true
			}
			return p.extra[int(r)-len(p.D.Known)], true
		}
	}
	return deps.Edge{}, false
}

// committed reports whether node t is a committed transaction (or Init).
func (p *Polygraph) committed(t int32) bool {
	return t == p.D.Init || (t < int32(p.D.N) && p.D.Status[t] == deps.Committed)
}

// orientEdges returns the edges that WW constraint c adds when a's side goes first, with
// known (certain) readers only.
func (p *Polygraph) orientEdges(c *WW, a, b int32, dst []deps.Edge) []deps.Edge {
	return p.orientEdgesX(c, a, b, dst, false)
}

// orientEdgesX is orientEdges, with ν expanded when expand is set.
func (p *Polygraph) orientEdgesX(c *WW, a, b int32, dst []deps.Edge, expand bool) []deps.Edge {
	for i, k := range c.Keys {
		from, to := c.sideEnds(a, i)
		wa, _ := p.D.WriteOf(from, k)
		wb, _ := p.D.WriteOf(to, k)
		dst = append(dst, deps.Edge{From: from, To: to, Rel: report.WW, Key: k, Value: wa.Value, Value2: wb.Value, Via: -1, Guards: [3]int32{-1, -1, -1}})
		dst = p.fromVersionX(from, to, k, dst, expand)
	}
	return dst
}

// readEdges returns the edges a read adds if it reads from w, given what is known.
func (p *Polygraph) readEdges(ri int32, w int32) []deps.Edge {
	return p.readEdgesX(ri, w, false)
}

// readEdgesX is readEdges, with ν expanded into direct edges to the known later writers
// when expand is set.
func (p *Polygraph) readEdgesX(ri int32, w int32, expand bool) []deps.Edge {
	r := &p.D.Reads[ri]
	es := p.D.ReadFrom(int(ri), w)
	for p.G.N() < len(p.D.Nodes) {
		p.G.AddNode()
		p.rsn = append(p.rsn, nil)
	}
	if w == p.D.Init {
		return es
	}
	i := p.wid(w, r.Key)
	if _, writes := p.D.WriteOf(r.Txn, r.Key); p.ver[i] != 0 && !writes && !expand {
		return append(es, deps.Edge{From: r.Txn, To: p.ver[i], Rel: report.RW, Key: r.Key, Value: r.Value, Via: w, Guards: [3]int32{-1, -1, -1}})
	}
	for _, b := range p.succ[i] {
		if b != r.Txn {
			wb, _ := p.D.WriteOf(b, r.Key)
			es = append(es, deps.Edge{From: r.Txn, To: b, Rel: report.RW, Key: r.Key, Value: r.Value, Value2: wb.Value, Via: w, Guards: [3]int32{-1, -1, -1}})
		}
	}
	return es
}

// Violation is a contradiction found while building or pruning: every option of a
// constraint closes a cycle of known edges (or the known edges alone are cyclic).
type Violation struct {
	// Cycles holds one cycle per option that was ruled out (one cycle when the known graph
	// itself is cyclic). Each is a list of typed edges, From of the first = To of the last.
	Cycles [][]deps.Edge
	// Options names what each cycle assumed ("T1 before T2", "T3 read x from T1"), parallel
	// to Cycles; "" for a cycle of known edges.
	Options []Option
}

// Alternatives are the violation's cycles as alternatives of one option each, the form a
// witness explains.
func (v *Violation) Alternatives() []Alternative {
	alts := make([]Alternative, 0, len(v.Cycles))
	for i := range v.Cycles {
		alts = append(alts, Alternative{Options: []Option{v.Options[i]}, Cycle: v.Cycles[i]})
	}
	return alts
}

// Option is one alternative of a constraint.
type Option struct {
	WW     int32 // WW constraint index, or -1
	First  int32 // WW: the writer placed first
	WR     int32 // WR constraint index, or -1
	Writer int32 // WR: the candidate writer
}

// Prune removes infeasible options to a fixpoint. It returns a violation, or nil. ctx is
// polled between passes, every 1024 constraints and between blocks of reachability; on
// cancellation it returns context.Cause(ctx) (a violation found before stands: it is
// returned only once proved).
//
// Each pass collects one reachability query per edge of each option (an edge u→v asks
// reach(v, u)), answers them in one batch, and removes the options that close a cycle.
func (p *Polygraph) Prune(ctx context.Context) (*Violation, error) {
	defer func() { p.work, p.inWork = nil, nil }()
	pr := &pruner{p: p, ctx: ctx}
	return Fixpoint(ctx, &p.Passes, pr.pass)
}

// pruner is the state of [Polygraph.Prune]'s passes.
type pruner struct {
	p   *Polygraph
	ctx context.Context
	buf []deps.Edge
	// Per pass: the queries and their answers, and each option's span of them.
	Answers
	wwOpts [][2]Span
	wrOpts [][]Span
}

// undecidedWW reports whether pair c is still open between committed transactions.
func (p *Polygraph) undecidedWW(c *WW) bool {
	return c.Fixed == 0 && p.committed(c.A) && p.committed(c.B)
}

// pass runs one pruning pass: the violation it proves, or whether it fixed anything.
func (pr *pruner) pass() (*Violation, bool, error) {
	p := pr.p
	var nodes int32
	for {
		nodes = int32(p.G.N())
		if err := pr.collect(nodes); err != nil {
			return nil, false, err
		}
		// Init-version nodes created while collecting are not in the queries; collect
		// again if the graph grew.
		if p.G.N() == int(nodes) {
			break
		}
	}
	g, order, pos, loop, err := p.passGraph(pr.ctx, pr.Qs)
	if err != nil {
		return nil, false, err
	}
	if loop {
		return &Violation{Cycles: [][]deps.Edge{p.knownCycle(graph.FindCycle(p.G))}, Options: []Option{{WW: -1, WR: -1}}}, false, nil
	}
	if pr.Ans, err = graph.ReachBatch(pr.ctx, g, order, pos, pr.Qs); err != nil {
		return nil, false, err
	}
	return pr.apply()
}

// apply decides the pairs, then the reads, by the answers: the violation one proves, or
// whether any changed.
func (pr *pruner) apply() (*Violation, bool, error) {
	v, changedWW, err := pr.applyWW()
	if v != nil || err != nil {
		return v, false, err
	}
	v, changedWR, err := pr.applyWR()
	return v, changedWW || changedWR, err
}

// collect gathers the queries of every open option of committed transactions, among the
// first nodes of the graph.
func (pr *pruner) collect(nodes int32) error {
	qs, err := pr.collectWW(nil)
	if err == nil {
		qs, err = pr.collectWR(qs, nodes)
	}
	pr.Qs = qs
	return err
}

// collectWW appends to qs the queries of both orientations of every undecided pair.
func (pr *pruner) collectWW(qs []graph.Query) ([]graph.Query, error) {
	p := pr.p
	buf := pr.buf
	defer func() { pr.buf = buf }()
	pr.wwOpts = make([][2]Span, len(p.WW))
	for ci := range p.WW {
		if err := polled(pr.ctx, ci); err != nil {
			return qs, err
		}
		c := &p.WW[ci]
		if !p.undecidedWW(c) {
			continue
		}
		for side, ab := range [2][2]int32{{c.A, c.B}, {c.B, c.A}} {
			q0 := int32(len(qs))
			buf = p.orientEdges(c, ab[0], ab[1], buf[:0])
			for _, e := range buf {
				qs = append(qs, graph.Query{From: e.To, To: e.From})
			}
			pr.wwOpts[ci][side] = Span{Q0: q0, Q1: int32(len(qs))}
		}
	}
	return qs, nil
}

// collectWR appends to qs the queries of every candidate of the undecided reads of
// committed readers (edges among the first nodes only).
func (pr *pruner) collectWR(qs []graph.Query, nodes int32) ([]graph.Query, error) {
	p, d := pr.p, pr.p.D
	pr.wrOpts = make([][]Span, len(p.WR))
	for wi := range p.WR {
		if err := polled(pr.ctx, wi); err != nil {
			return qs, err
		}
		rc := &p.WR[wi]
		if rc.Fixed || d.Status[d.Reads[rc.Read].Txn] != deps.Committed {
			continue
		}
		pr.wrOpts[wi] = make([]Span, len(rc.Cands))
		for j, w := range rc.Cands {
			q0 := int32(len(qs))
			for _, e := range p.readEdges(rc.Read, w) {
				if e.To < nodes && e.From < nodes {
					qs = append(qs, graph.Query{From: e.To, To: e.From})
				}
			}
			pr.wrOpts[wi][j] = Span{Q0: q0, Q1: int32(len(qs))}
		}
	}
	return qs, nil
}

// applyWW fixes each pair with one cyclic orientation; both cyclic is a violation.
func (pr *pruner) applyWW() (*Violation, bool, error) {
	p := pr.p
	bad, changed, err := pr.DecideWW(pr.ctx, p.WW, pr.wwOpts, p.undecidedWW, p.fixWW)
	if bad >= 0 {
		return WWViolation(p.WW, bad, p.orientEdges, p.cycleWith), false, nil
	}
	return nil, changed, err
}

// applyWR drops each read's cyclic candidates, fixing a read left with one committed
// candidate; a read left with none is a violation.
func (pr *pruner) applyWR() (*Violation, bool, error) {
	p := pr.p
	bad, changed, err := pr.DecideWR(pr.ctx, p.WR, pr.wrOpts, p.committed, p.fixWR, &p.PrunedWR)
	if bad >= 0 {
		return WRViolation(p.WR, bad, p.readEdges, p.cycleWith), false, nil
	}
	return nil, changed, err
}

// maxWorkTerminals bounds the nodes of the reduced working graph of later pruning passes
// (its construction needs T²/8 bytes: at most 32 MiB, briefly).
var maxWorkTerminals = 16384 // a variable so tests can turn the working graph off

// passGraph returns the graph a pruning pass answers its queries qs on, with a topological
// order and positions, or cyclic true if the known graph has a cycle.
//
// The first pass uses the known graph itself. Later passes ask about the few constraints
// left, and re-sweeping the whole known graph for them each pass cost most of the pruning
// time (HD-10k: ten passes over 750,000 edges, the last seven fixing a handful of
// constraints each). So from the second pass on, the known graph is reduced once to
// reachability among the nodes the queries touch ([graph.ReduceAmong]), and later passes
// use that working graph, to which edges forced by pruning are added as well. Reachability
// among its nodes stays equal to the known graph's: every path of the known graph between
// two of them splits at the forced edges into paths that existed when it was reduced. A
// forced edge or a query with an end outside it drops the working graph (it is built again
// at the next pass). A cycle of the known graph goes through a forced edge, whose ends are
// in the working graph, so the working graph has a cycle too; it is reported from the known
// graph.
func (p *Polygraph) passGraph(ctx context.Context, qs []graph.Query) (*graph.Digraph, []int32, []int32, bool, error) {
	if p.keepWork(qs) {
		return topoOf(p.work)
	}
	order, ok := graph.Topo(p.G)
	if !ok {
		return nil, nil, nil, true, nil
	}
	pos := graph.Positions(order)
	if p.Passes == 1 || len(qs) == 0 {
		return p.G, order, pos, false, nil
	}
	if built, err := p.buildWork(ctx, order, pos, qs); !built || err != nil {
		return p.G, order, pos, false, err
	}
	return topoOf(p.work) // acyclic: a reduction of an acyclic graph
}

// topoOf returns g with a topological order and positions, or cyclic true.
func topoOf(g *graph.Digraph) (*graph.Digraph, []int32, []int32, bool, error) {
	order, ok := graph.Topo(g)
	if !ok {
		return nil, nil, nil, true, nil
	}
	return g, order, graph.Positions(order), false, nil
}

// keepWork reports whether the working graph can answer the queries qs: it exists, the
// known graph has gained no node since, and it holds both ends of every query. Otherwise
// it drops it.
func (p *Polygraph) keepWork(qs []graph.Query) bool {
	if p.work == nil {
		return false
	}
	if p.work.N() == p.G.N() && p.holds(qs) {
		return true
	}
	p.work, p.inWork = nil, nil
	return false
}

// holds reports whether the working graph holds both ends of every query.
func (p *Polygraph) holds(qs []graph.Query) bool {
	for _, q := range qs {
		if !p.inWork[q.From] || !p.inWork[q.To] {
			return false
		}
	}
	return true
}

// buildWork builds the working graph: the known graph (acyclic, in order with positions
// pos) reduced to reachability among the ends of the queries qs. built is false when there
// are too many of them.
func (p *Polygraph) buildWork(ctx context.Context, order, pos []int32, qs []graph.Query) (built bool, err error) {
	in, terms := queryEnds(p.G.N(), qs)
	if len(terms) > maxWorkTerminals {
		return false, nil
	}
	red, ok, err := graph.ReduceAmong(ctx, p.G, order, pos, terms)
	if err != nil || !ok {
		return false, err
	}
	w := graph.New(p.G.N())
	for _, e := range red {
		w.AddEdge(e[0], e[1])
	}
	p.work, p.inWork = w, in
	p.workBuilds++
	return true, nil
}

// queryEnds returns the nodes (of n) the queries qs touch, as a set and in first-seen order.
func queryEnds(n int, qs []graph.Query) (in []bool, terms []int32) {
	in = make([]bool, n)
	for _, q := range qs {
		for _, u := range [2]int32{q.From, q.To} {
			if !in[u] {
				in[u] = true
				terms = append(terms, u)
			}
		}
	}
	return in, terms
}

// fixWW orients constraint ci as a before b and adds its edges.
func (p *Polygraph) fixWW(ci int, a, b int32) {
	c := &p.WW[ci]
	if a == c.A {
		c.Fixed = 1
	} else {
		c.Fixed = 2
	}
	p.PrunedWW++
	for _, e := range p.orientEdges(c, a, b, nil) {
		p.addForced(e)
	}
	for i, k := range c.Keys {
		from, to := c.sideEnds(a, i)
		i := p.wid(from, k)
		p.succ[i] = append(p.succ[i], to)
	}
}

// fixWR resolves WR constraint wi to its only candidate and adds its edges.
func (p *Polygraph) fixWR(wi int) {
	rc := &p.WR[wi]
	rc.Fixed = true
	r := &p.D.Reads[rc.Read]
	w := rc.Cands[0]
	for _, e := range p.readEdges(rc.Read, w) {
		p.addForced(e)
	}
	if _, writes := p.D.WriteOf(r.Txn, r.Key); writes && w != p.D.Init {
		i := p.wid(w, r.Key)
		p.certReaders[i] = append(p.certReaders[i], r.Txn)
	} else if w != p.D.Init {
		i := p.wid(w, r.Key)
		p.nuReaders[i] = append(p.nuReaders[i], r.Txn)
	}
	// Readers of w's version now anti-depend on writers already ordered after w: done by
	// readEdges through succ. Writers in undecided pairs with w pick the reader up through
	// certReaders when they are oriented or encoded.
}

// cycleWith returns the shortest cycle closed by one of the edges es in the known graph
// (plus es), as typed edges. It returns nil if none closes a cycle.
func (p *Polygraph) cycleWith(es []deps.Edge) []deps.Edge {
	var best []deps.Edge
	for _, e := range es {
		path := graph.ShortestPath(p.G, e.To, e.From, nil)
		if path == nil {
			continue
		}
		cyc := []deps.Edge{e}
		for i := 0; i+1 < len(path); i++ {
			r, _ := p.Why(path[i], path[i+1])
			cyc = append(cyc, r)
		}
		if best == nil || len(cyc) < len(best) {
			best = cyc
		}
	}
	return best
}

// knownCycle turns a node cycle of the known graph into typed edges.
func (p *Polygraph) knownCycle(nodes []int32) []deps.Edge {
	var cyc []deps.Edge
	for i, u := range nodes {
		v := nodes[(i+1)%len(nodes)]
		r, _ := p.Why(u, v)
		cyc = append(cyc, r)
	}
	return cyc
}

// Remaining reports the undecided constraints after pruning.
func (p *Polygraph) Remaining() (ww, wr int) { return Undecided(p.WW, p.WR) }

// Undecided counts the constraints not fixed.
func Undecided(cs []WW, rs []WR) (ww, wr int) {
	for i := range cs {
		if cs[i].Fixed == 0 {
			ww++
		}
	}
	for i := range rs {
		if !rs[i].Fixed {
			wr++
		}
	}
	return ww, wr
}
