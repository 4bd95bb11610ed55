package ser

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"isovet/history"
	"isovet/internal/deps"
	"isovet/internal/graph"
)

// The strict fast path: when every transaction has a client interval, real time orders most
// pairs, and Vbox's representation of time makes the check nearly linear (Vbox §3.2-3.4).
// It does not build the general pipeline's real-time chain, version nodes or per-pass
// reachability sweeps:
//
//   - nodes are the committed transactions; real-time edges are implicit (T1 → T2 iff T1's
//     widened interval ended before T2's began), so they cost nothing;
//   - explicit edges: session order, certain write-reads, and the anti-dependencies that
//     time-fixed write orders imply, only to the real-time-minimal later writers (the rest
//     follow through real time), and from readers of the initial version only to the
//     minimal writers;
//   - reachability is [graph.TimeClosure], stored only between transactions whose windows
//     overlap and updated incrementally as edges are forced;
//   - write-order choices exist only for overlapping writers of a key (merged across keys);
//     an option is ruled out when one of its edges u → v has v reaching u, and pruning
//     repeats until nothing changes. What remains is chosen greedily (the writer that
//     ended first goes first, unless that closes a cycle).
//
// It only ever proves a pass, and a pass only with a certificate: the topological order of
// the final graph is replayed as a serial order (every read sees the last write before it,
// real time and session order respected). Whenever it cannot (a cycle, a choice with no
// option left, a greedy dead end, a replay that fails, or a history outside its scope:
// transactions of unknown outcome, list-append, a predicate that is not a range), the
// general pipeline runs and decides, with its witnesses. So it is sound by the replay and complete
// by the fallback.
//
// Predicate reads come as [deps] expands them: a returned row, a missed row and a row an
// update matched are each a read of one row whose candidates are the writers of the
// versions in reach that the predicate's outcome allows. Reads with one candidate are item
// reads; reads with several are chosen greedily once the write orders are fixed, and the
// replay checks that the version each one reads is among its candidates. Evaluations the
// analysis could not decide (partial row images) are decided by replaying the order on
// whole rows ([rowReplay]).

// maxClosureWords bounds the compact closure (32 MiB, or 256 bits per transaction if more):
// one transaction spanning most of the history widens every later window, and such a
// history goes to the general pipeline, whose memory is bounded, instead.
var maxClosureWords, closureWordsPerTxn = 1 << 22, 4 // variables so tests can lower them

// maxPrunePasses bounds the pruning passes of the fast path; maxPropagate is the most open
// pairs for which each greedy choice is followed by a pruning pass over the rest.
const maxPrunePasses, maxPropagate = 32, 1024

// fastStats describes a fast-path attempt.
type fastStats struct {
	edges, constraints, pruned, greedy int
	why                                string // why it gave up ("" if it passed)
	// rows: the pass also replayed the order on whole rows (rowReplay), deciding the
	// predicate evaluations the dependency analysis left open.
	rows bool
}

// CertifyStrict tries to prove h strict serializable, with every client interval widened by
// skew nanoseconds on each side, by the fast path alone: true comes with a serial order
// that respects real time and session order and was replayed read by read. false says only
// that no such proof was found (the history may still be strict serializable): the caller
// must then decide by other means. Every level that strict serializability implies
// (serializable, strong-session serializable and the snapshot isolation levels, whose
// axioms a serial order meets with each snapshot taken just before the transaction) may
// pass on it. It needs a client interval on every transaction, and declines otherwise.
func CertifyStrict(ctx context.Context, h *history.History, skew int64) (bool, error) {
	ok, _, err := certifyStrict(ctx, h, skew)
	return ok, err
}

// certifyStrict is [CertifyStrict] with the fast path's statistics.
func certifyStrict(ctx context.Context, h *history.History, skew int64) (bool, fastStats, error) {
	var fs fastStats
	if !h.HasTime() {
		return false, fs, nil
	}
	d, err := deps.BuildContext(ctx, h, deps.Options{Session: true, Realtime: true, Skew: skew, NoEdges: true})
	if err != nil {
		if ctx.Err() != nil {
			return false, fs, context.Cause(ctx)
		}
		return false, fs, nil // the caller's own pipeline reports whatever this was
	}
	if len(d.Findings) > 0 {
		return false, fs, nil
	}
	ok, fs, err := strictFast(ctx, d)
	if err != nil {
		if ctx.Err() != nil {
			return false, fs, context.Cause(ctx)
		}
		return false, fs, nil
	}
	return ok, fs, nil
}

// strictFast tries to prove that d's history is strict serializable. It returns true with
// a replayed serial order, or false (why says where it stopped) if the general pipeline must
// decide.
func strictFast(ctx context.Context, d *deps.Deps) (bool, fastStats, error) {
	var fs fastStats
	h := d.H
	if !d.Opts.Realtime || d.HasLists() || len(d.Findings) > 0 || len(d.Guarded) > 0 {
		fs.why = "out of scope"
		return false, fs, nil
	}
	// Dense ids for the committed transactions, in order of (widened) begin, then end: so
	// per-key writer lists come out sorted by begin, and the closure's sort finds its input
	// sorted.
	type node struct {
		b, e int64
		t    int32
	}
	ns := make([]node, 0, d.N)
	for t := range d.N {
		switch d.Status[t] {
		case deps.Committed:
			iv := d.TimeInterval(t)
			ns = append(ns, node{iv.Begin, iv.End, int32(t)})
		case deps.Maybe:
			fs.why = "unknown outcomes"
			return false, fs, nil
		}
	}
	slices.SortFunc(ns, func(x, y node) int {
		return cmp.Or(cmp.Compare(x.b, y.b), cmp.Compare(x.e, y.e), cmp.Compare(x.t, y.t))
	})
	m := len(ns)
	id := make([]int32, d.N)
	for t := range id {
		id[t] = -1
	}
	txn := make([]int32, m)
	begin, end := make([]int64, m), make([]int64, m)
	for i, x := range ns {
		id[x.t], txn[i], begin[i], end[i] = int32(i), x.t, x.b, x.e
	}
	ns = nil
	if m == 0 {
		fs.why = "no committed transactions"
		return false, fs, nil
	}
	// Writers per key, sorted by begin, with the suffix minimum of their ends: the writers
	// that began after time e and are minimal in real-time order are those from the first
	// that began after e up to the suffix minimum of ends there (see deps.TimeSuccs).
	nk := len(d.Writers)
	wOff := make([]int32, nk+1)
	for k, ws := range d.Writers {
		wOff[k+1] = wOff[k] + int32(len(ws))
	}
	wAll := make([]int32, wOff[nk])
	wBegin := make([]int64, wOff[nk]) // begin of wAll[i]
	sufMin := make([]int64, wOff[nk])
	fill := slices.Clone(wOff[:nk])
	for u, t := range txn { // in order of begin
		for _, w := range d.Writes[t] {
			wAll[fill[w.Key]] = int32(u)
			wBegin[fill[w.Key]] = begin[u]
			fill[w.Key]++
		}
	}
	fill = nil
	for k := range nk {
		seg, sm := wAll[wOff[k]:wOff[k+1]], sufMin[wOff[k]:wOff[k+1]]
		for i := len(seg) - 1; i >= 0; i-- {
			sm[i] = end[seg[i]]
			if i+1 < len(seg) {
				sm[i] = min(sm[i], sm[i+1])
			}
		}
	}
	// minimalAfter returns the writers of k that began after e and are minimal in real
	// time.
	minimalAfter := func(k history.Key, e int64) []int32 {
		lo, hi := wOff[k], wOff[k+1]
		sb := wBegin[lo:hi]
		i, j := 0, len(sb) // first begin > e
		for i < j {
			h := int(uint(i+j) >> 1)
			if sb[h] <= e {
				i = h + 1
			} else {
				j = h
			}
		}
		if i >= len(sb) {
			return nil
		}
		lim := sufMin[int(lo)+i]
		j = i
		for j < len(sb) && sb[j] <= lim {
			j++
		}
		return wAll[int(lo)+i : int(lo)+j]
	}
	// Write-order choices between overlapping writers, merged across keys.
	type pair struct {
		a, b  int32 // dense ids, a < b
		keys  []history.Key
		fixed bool
	}
	var pairs []pair
	pairOf := make(map[uint64]int32)
	involved := make(map[uint64][]int32) // (writer, key) → readers of that version
	inv := make([]bool, m)               // writers in some pair
	wk := func(w int32, k history.Key) uint64 { return uint64(w)<<32 | uint64(uint32(k)) }
	for k := range nk {
		seg := wAll[wOff[k]:wOff[k+1]]
		for i, a := range seg {
			for _, b := range seg[i+1:] {
				if begin[b] > end[a] {
					break
				}
				x, y := min(a, b), max(a, b)
				pk := uint64(x)<<32 | uint64(y)
				pi, ok := pairOf[pk]
				if !ok {
					pi = int32(len(pairs))
					pairOf[pk] = pi
					pairs = append(pairs, pair{a: x, b: y})
				}
				pairs[pi].keys = append(pairs[pi].keys, history.Key(k))
				involved[wk(a, history.Key(k))] = nil
				involved[wk(b, history.Key(k))] = nil
				inv[a], inv[b] = true, true
			}
		}
	}
	pairOf = nil
	fs.constraints = len(pairs)
	// Known edges: session order, certain write-reads and the anti-dependencies that
	// time-fixed write orders imply (to the real-time-minimal later writers only).
	edges := make([][2]int32, 0, m+2*len(d.Reads))
	if d.Opts.Session {
		for _, s := range h.Sessions {
			prev := int32(-1)
			for _, t := range s.Txns {
				if u := id[t]; u >= 0 {
					if prev >= 0 {
						edges = append(edges, [2]int32{prev, u})
					}
					prev = u
				}
			}
		}
	}
	const minTime = -1 << 63
	// add appends u → v unless real time implies it (the closure has those for free).
	add := func(u, v int32) {
		if end[u] >= begin[v] {
			edges = append(edges, [2]int32{u, v})
		}
	}
	var multi []int32 // reads with several candidates: chosen once the write orders are
	for ri := range d.Reads {
		r := &d.Reads[ri]
		u := id[r.Txn]
		if u < 0 {
			continue // an excluded (aborted) reader
		}
		switch {
		case r.Op < 0:
			fs.why = "synthetic reads"
			return false, fs, nil
		case len(r.Cands) == 0:
			fs.why = "a read with no possible writer"
			return false, fs, nil
		case len(r.Cands) > 1:
			multi = append(multi, int32(ri))
			continue
		}
		// An item read, a row a predicate read returned, or a row a predicate read missed
		// or a predicate write matched with one version in reach: all are "u read w's
		// version of the key", which is what the edges below and the replay encode.
		e := int64(minTime)
		if w := r.Cands[0]; w != d.Init {
			x := id[w]
			if x < 0 {
				fs.why = "a read from a transaction that does not count"
				return false, fs, nil
			}
			add(x, u)
			e = end[x]
			if inv[x] {
				if rs, ok := involved[wk(x, r.Key)]; ok {
					involved[wk(x, r.Key)] = append(rs, u)
				}
			}
		}
		for _, b := range minimalAfter(r.Key, e) {
			if b != u {
				add(u, b)
			}
		}
	}
	fs.edges = len(edges)
	if err := ctx.Err(); err != nil {
		return false, fs, context.Cause(ctx)
	}
	c, err := graph.NewTimeClosure(begin, end, edges, max(maxClosureWords, closureWordsPerTxn*m))
	switch {
	case errors.Is(err, graph.ErrCycle):
		fs.why = "cycle of known edges"
		return false, fs, nil
	case err != nil:
		fs.why = err.Error()
		return false, fs, nil
	}
	edges = nil
	// Option "a before b": a → b and every other reader of a's version → b, on every shared
	// key. All its edges end at b, so a cycle can use only one of them, and checking each
	// against reachability is exact.
	feasible := func(p *pair, a, b int32) bool {
		if c.Reach(b, a) {
			return false
		}
		for _, k := range p.keys {
			for _, r := range involved[wk(a, k)] {
				if r != b && c.Reach(b, r) {
					return false
				}
			}
		}
		return true
	}
	fix := func(p *pair, a, b int32) bool {
		p.fixed = true
		if !c.AddEdge(a, b) {
			return false
		}
		for _, k := range p.keys {
			for _, r := range involved[wk(a, k)] {
				if r != b && !c.AddEdge(r, b) {
					return false
				}
			}
		}
		return true
	}
	// Each pass costs a sweep of the remaining pairs; a long chain of forcings could make
	// passes quadratic, so after maxPrunePasses the greedy step (which checks each pair at its
	// turn) takes over.
	all := make([]int32, len(pairs))
	for pi := range all {
		all[pi] = int32(pi)
	}
	// prune fixes the pairs of list with one option left, repeating until nothing changes (at
	// most passes times); false means the fast path must give up.
	prune := func(list []int32, passes int) bool {
		for changed := true; changed && passes > 0; passes-- {
			changed = false
			for _, pi := range list {
				p := &pairs[pi]
				if p.fixed {
					continue
				}
				l, r := feasible(p, p.a, p.b), feasible(p, p.b, p.a)
				var ok bool
				switch {
				case !l && !r:
					fs.why = "a write order with no option left"
					return false
				case !l:
					ok = fix(p, p.b, p.a)
				case !r:
					ok = fix(p, p.a, p.b)
				default:
					continue
				}
				if !ok {
					fs.why = "a forced edge closed a cycle"
					return false
				}
				fs.pruned++
				changed = true
			}
		}
		return true
	}
	if err := ctx.Err(); err != nil {
		return false, fs, context.Cause(ctx)
	}
	if !prune(all, maxPrunePasses) {
		return false, fs, nil
	}
	// Greedy: in order of the first end, the writer that ended first goes first unless that
	// closes a cycle.
	var rest []int32
	for pi := range pairs {
		if !pairs[pi].fixed {
			rest = append(rest, int32(pi))
		}
	}
	first := func(p *pair) (int32, int32) {
		if cmp.Or(cmp.Compare(end[p.a], end[p.b]), cmp.Compare(begin[p.a], begin[p.b])) <= 0 {
			return p.a, p.b
		}
		return p.b, p.a
	}
	slices.SortFunc(rest, func(x, y int32) int {
		return cmp.Compare(min(end[pairs[x].a], end[pairs[x].b]), min(end[pairs[y].a], end[pairs[y].b]))
	})
	for i, pi := range rest {
		p := &pairs[pi]
		if p.fixed {
			continue // forced by an earlier choice
		}
		a, b := first(p)
		if !feasible(p, a, b) {
			a, b = b, a
			if !feasible(p, a, b) {
				fs.why = "the greedy choice of write orders reached a dead end"
				return false, fs, nil
			}
		}
		if !fix(p, a, b) {
			fs.why = "a chosen edge closed a cycle"
			return false, fs, nil
		}
		fs.greedy++
		// Propagate the choice to the pairs still open, while that stays cheap (quadratic in
		// the open pairs): fewer dead ends.
		if len(rest) <= maxPropagate && !prune(rest[i+1:], 1) {
			return false, fs, nil
		}
	}
	// Reads with several candidates (a predicate missed a row with several non-matching
	// versions in reach, or values repeat): every write order is fixed now, so option "u
	// read x's version of k" is the edge x → u and u → every writer after x, of which the
	// real-time-minimal later writers and x's overlapping partners ordered after it stand
	// for all. Its edges all touch u and x precedes each of the writers, so a cycle can use
	// only one of them, and checking each against reachability is exact. Candidates are
	// tried latest-ending first among those that ended before u did, then the rest.
	if len(multi) > 0 {
		partners := make(map[uint64][]int32, len(involved))
		for pi := range pairs {
			p := &pairs[pi]
			for _, k := range p.keys {
				partners[wk(p.a, k)] = append(partners[wk(p.a, k)], p.b)
				partners[wk(p.b, k)] = append(partners[wk(p.b, k)], p.a)
			}
		}
		var after []int32
		successors := func(x int32, k history.Key) []int32 {
			after = after[:0]
			if x < 0 {
				return append(after, minimalAfter(k, minTime)...)
			}
			after = append(after, minimalAfter(k, end[x])...)
			for _, b := range partners[wk(x, k)] {
				if c.Reach(x, b) {
					after = append(after, b)
				}
			}
			return after
		}
		endOf := func(x int32) int64 {
			if x < 0 {
				return minTime // the initial state
			}
			return end[x]
		}
		var cands []int32
		for _, ri := range multi {
			r := &d.Reads[ri]
			u := id[r.Txn]
			cands = cands[:0]
			for _, w := range r.Cands {
				x := int32(-1) // the initial state
				if w != d.Init {
					if x = id[w]; x < 0 {
						continue // not committed: never the version read
					}
				}
				cands = append(cands, x)
			}
			slices.SortFunc(cands, func(x, y int32) int {
				xe, ye := endOf(x), endOf(y)
				xb, yb := xe <= end[u], ye <= end[u]
				switch {
				case xb && !yb:
					return -1
				case yb && !xb:
					return 1
				case xb:
					return cmp.Compare(ye, xe) // latest first
				}
				return cmp.Compare(xe, ye) // earliest first
			})
			chosen := false
			for _, x := range cands {
				if x == u || (x >= 0 && c.Reach(u, x)) {
					continue
				}
				ok := true
				for _, b := range successors(x, r.Key) {
					if b != u && c.Reach(b, u) {
						ok = false
						break
					}
				}
				if !ok {
					continue
				}
				if x >= 0 && !c.AddEdge(x, u) {
					continue
				}
				for _, b := range after {
					if b != u && !c.AddEdge(u, b) {
						fs.why = "a read's chosen version closed a cycle"
						return false, fs, nil
					}
				}
				chosen = true
				break
			}
			if !chosen {
				fs.why = "a read with several candidates had none left"
				return false, fs, nil
			}
			fs.greedy++
		}
	}
	order := c.Order()
	if !replay(d, order, txn) {
		fs.why = "the serial order did not replay"
		return false, fs, nil
	}
	if d.Partial {
		// Some predicate evaluations were left open (partial row images); the order decides
		// them, and the pass stands only if they all come out as recorded.
		if !rowReplay(d, order, txn) {
			fs.why = "the serial order did not replay on whole rows"
			return false, fs, nil
		}
		fs.rows = true
	}
	return true, fs, nil
}

// replay reports whether order (dense ids of the committed transactions txn[u], each once)
// is a serial order the strict level allows: real time and (if the level has it) session
// order are respected, and every external read reads the version of one of its candidates:
// the last version written before it (the initial state when there is none) must be one. It reads the intervals from the
// history itself, not from the fast path's arrays, so the certificate does not share their
// mistakes.
func replay(d *deps.Deps, order, txn []int32) bool {
	h := d.H
	if len(order) != len(txn) {
		return false
	}
	ivs := make([]history.Interval, d.N) // read in order of id: sequential, not by order
	for t := range d.N {
		ivs[t] = d.TimeInterval(t)
	}
	at := make([]int32, d.N)
	for t := range at {
		at[t] = -1
	}
	for i, u := range order {
		t := txn[u]
		if at[t] >= 0 || d.Status[t] != deps.Committed {
			return false
		}
		at[t] = int32(i)
	}
	for t := range d.N {
		if d.Status[t] == deps.Committed && at[t] < 0 {
			return false
		}
	}
	if d.Opts.Session {
		for _, s := range h.Sessions {
			prev := int32(-1)
			for _, t := range s.Txns {
				if i := at[t]; i >= 0 {
					if i < prev {
						return false
					}
					prev = i
				}
			}
		}
	}
	maxBegin := int64(-1 << 63)
	last := make([]int32, len(h.Keys))
	for k := range last {
		last[k] = d.Init
	}
	for _, u := range order {
		t := txn[u]
		if ivs[t].End < maxBegin {
			return false // an earlier transaction began after t ended
		}
		maxBegin = max(maxBegin, ivs[t].Begin)
		for _, ri := range d.ReadsOf[t] {
			r := &d.Reads[ri]
			if !slices.Contains(r.Cands, last[r.Key]) {
				return false
			}
		}
		for _, w := range d.Writes[t] {
			last[w.Key] = t
		}
	}
	return true
}
