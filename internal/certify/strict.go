package certify

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/graph"
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

// Stats describes a fast-path attempt.
type Stats struct {
	// Edges and Constraints are the explicit known edges and the write-order choices the
	// attempt built; Pruned the choices pruning decided, Greedy those chosen greedily (and
	// the reads with several candidates chosen).
	Edges, Constraints, Pruned, Greedy int
	Why                                string // why it gave up ("" if it passed)
	// Rows: the pass also replayed the order on whole rows (rowReplay), deciding the
	// predicate evaluations the dependency analysis left open.
	Rows bool
}

// certifyStrict tries to prove h strict serializable, with every client interval widened by
// skew nanoseconds on each side, by the fast path alone: true comes with a serial order
// that respects real time and session order and was replayed read by read. false says only
// that no such proof was found (the history may still be strict serializable): the caller
// must then decide by other means. Every level that strict serializability implies
// (serializable, strong-session serializable and the snapshot isolation levels, whose
// axioms a serial order meets with each snapshot taken just before the transaction) may
// pass on it. It needs a client interval on every transaction, and declines otherwise.
func certifyStrict(ctx context.Context, h *history.History, skew int64) (bool, Stats, error) {
	var fs Stats
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
func strictFast(ctx context.Context, d *deps.Deps) (bool, Stats, error) {
	s := &strictPath{ctx: ctx, d: d}
	ok, err := s.run()
	return ok, s.fs, err
}

// strictPath is one attempt of the strict fast path on d. Its phases, in order, each a
// method: index the committed transactions by begin, list each key's writers, find the
// write-order choices between overlapping writers, add the known edges, close them under
// real time, prune the choices, choose the rest greedily, choose the versions of reads with
// several candidates, and certify the resulting order by replaying it. A phase that returns
// false has set fs.Why: the general pipeline decides.
type strictPath struct {
	ctx context.Context
	d   *deps.Deps
	fs  Stats

	// Dense ids for the committed transactions, in order of (widened) begin, then end: so
	// per-key writer lists come out sorted by begin, and the closure's sort finds its input
	// sorted.
	id         []int32 // per transaction: its dense id, or -1
	txn        []int32 // per dense id: the transaction
	begin, end []int64 // per dense id

	// Writers per key (wAll[wOff[k]:wOff[k+1]]), sorted by begin, with their begins and the
	// suffix minimum of their ends.
	wOff, wAll     []int32
	wBegin, sufMin []int64

	pairs    []choice           // write-order choices, merged across keys
	involved map[uint64][]int32 // (writer, key) of a writer in some choice → readers of that version
	inv      []bool             // per dense id: a writer in some choice

	edges [][2]int32 // the known edges, until the closure takes them
	multi []int32    // reads with several candidates, chosen once the write orders are fixed
	c     *graph.TimeClosure
}

// choice is a write-order choice between overlapping writers a < b (dense ids) of keys.
type choice struct {
	a, b  int32
	keys  []history.Key
	fixed bool
}

// minTime is before every client time (the initial state's end).
const minTime = -1 << 63

// wk packs a writer and a key into a map key.
func wk(w int32, k history.Key) uint64 { return uint64(w)<<32 | uint64(uint32(k)) }

// run runs the phases in order: the graph, the choices, the certificate.
func (s *strictPath) run() (bool, error) {
	if ok, err := s.graph(); !ok || err != nil {
		return false, err
	}
	if !s.choose() {
		return false, nil
	}
	return s.certify(), nil
}

// graph runs the phases that build the graph: index, writers by key, choices, known
// edges, and their closure under real time. false says a phase declined; err is ctx's
// cause when it ended.
func (s *strictPath) graph() (bool, error) {
	if !s.index() {
		return false, nil
	}
	s.writersByKey()
	s.choices()
	if !s.knownEdges() {
		return false, nil
	}
	if err := s.ctx.Err(); err != nil {
		return false, context.Cause(s.ctx)
	}
	if !s.close() {
		return false, nil
	}
	if err := s.ctx.Err(); err != nil {
		return false, context.Cause(s.ctx)
	}
	return true, nil
}

// choose runs the phases that make the choices: prune every write-order choice, choose
// the rest greedily, then the versions of reads with several candidates.
func (s *strictPath) choose() bool {
	all := make([]int32, len(s.pairs))
	for pi := range all {
		all[pi] = int32(pi)
	}
	return s.prune(all, maxPrunePasses) && s.greedy() && s.chooseReads()
}

// index gives the committed transactions dense ids in order of begin, then end. It declines
// histories out of the fast path's scope.
func (s *strictPath) index() bool {
	d := s.d
	if !d.Opts.Realtime || d.HasLists() || len(d.Findings) > 0 || len(d.Guarded) > 0 {
		s.fs.Why = "out of scope"
		return false
	}
	ns, ok := s.byBegin()
	if !ok {
		return false
	}
	s.number(ns)
	if len(ns) == 0 {
		s.fs.Why = "no committed transactions"
		return false
	}
	return true
}

// number gives the transactions of ns their dense ids, in order, with their intervals.
func (s *strictPath) number(ns []timeNode) {
	m := len(ns)
	s.id = make([]int32, s.d.N)
	for t := range s.id {
		s.id[t] = -1
	}
	s.txn = make([]int32, m)
	s.begin, s.end = make([]int64, m), make([]int64, m)
	for i, x := range ns {
		s.id[x.t], s.txn[i], s.begin[i], s.end[i] = int32(i), x.t, x.b, x.e
	}
}

// timeNode is a committed transaction t with its interval [b, e].
type timeNode struct {
	b, e int64
	t    int32
}

// byBegin returns the committed transactions in order of begin, then end; false (with
// why) when a transaction's outcome is unknown.
func (s *strictPath) byBegin() ([]timeNode, bool) {
	d := s.d
	ns := make([]timeNode, 0, d.N)
	for t := range d.N {
		switch d.Status[t] {
		case deps.Committed:
			iv := d.TimeInterval(t)
			ns = append(ns, timeNode{iv.Begin, iv.End, int32(t)})
		case deps.Maybe:
			s.fs.Why = "unknown outcomes"
			return nil, false
		}
	}
	slices.SortFunc(ns, func(x, y timeNode) int {
		return cmp.Or(cmp.Compare(x.b, y.b), cmp.Compare(x.e, y.e), cmp.Compare(x.t, y.t))
	})
	return ns, true
}

// writersByKey lists each key's writers sorted by begin, with the suffix minimum of their
// ends: the writers that began after time e and are minimal in real-time order are those
// from the first that began after e up to the suffix minimum of ends there (see
// deps.TimeSuccs).
func (s *strictPath) writersByKey() {
	d := s.d
	nk := len(d.Writers)
	s.wOff = make([]int32, nk+1)
	for k, ws := range d.Writers {
		s.wOff[k+1] = s.wOff[k] + int32(len(ws))
	}
	s.wAll = make([]int32, s.wOff[nk])
	s.wBegin = make([]int64, s.wOff[nk])
	s.sufMin = make([]int64, s.wOff[nk])
	fill := slices.Clone(s.wOff[:nk])
	for u, t := range s.txn { // in order of begin
		for _, w := range d.Writes[t] {
			s.wAll[fill[w.Key]] = int32(u)
			s.wBegin[fill[w.Key]] = s.begin[u]
			fill[w.Key]++
		}
	}
	for k := range nk {
		seg, sm := s.wAll[s.wOff[k]:s.wOff[k+1]], s.sufMin[s.wOff[k]:s.wOff[k+1]]
		for i := len(seg) - 1; i >= 0; i-- {
			sm[i] = s.end[seg[i]]
			if i+1 < len(seg) {
				sm[i] = min(sm[i], sm[i+1])
			}
		}
	}
}

// minimalAfter returns the writers of k that began after e and are minimal in real time.
func (s *strictPath) minimalAfter(k history.Key, e int64) []int32 {
	lo, hi := s.wOff[k], s.wOff[k+1]
	sb := s.wBegin[lo:hi]
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
	lim := s.sufMin[int(lo)+i]
	j = i
	for j < len(sb) && sb[j] <= lim {
		j++
	}
	return s.wAll[int(lo)+i : int(lo)+j]
}

// choices finds the write-order choices between overlapping writers, merged across keys.
func (s *strictPath) choices() {
	pairOf := make(map[uint64]int32)
	s.involved = make(map[uint64][]int32)
	s.inv = make([]bool, len(s.txn))
	for k := range len(s.d.Writers) {
		seg := s.wAll[s.wOff[k]:s.wOff[k+1]]
		for i, a := range seg {
			for _, b := range seg[i+1:] {
				if s.begin[b] > s.end[a] {
					break
				}
				x, y := min(a, b), max(a, b)
				pk := uint64(x)<<32 | uint64(y)
				pi, ok := pairOf[pk]
				if !ok {
					pi = int32(len(s.pairs))
					pairOf[pk] = pi
					s.pairs = append(s.pairs, choice{a: x, b: y})
				}
				s.pairs[pi].keys = append(s.pairs[pi].keys, history.Key(k))
				s.involved[wk(a, history.Key(k))] = nil
				s.involved[wk(b, history.Key(k))] = nil
				s.inv[a], s.inv[b] = true, true
			}
		}
	}
	s.fs.Constraints = len(s.pairs)
}

// addEdge appends u → v unless real time implies it (the closure has those for free).
func (s *strictPath) addEdge(u, v int32) {
	if s.end[u] >= s.begin[v] {
		s.edges = append(s.edges, [2]int32{u, v})
	}
}

// knownEdges adds session order, certain write-reads and the anti-dependencies that
// time-fixed write orders imply (to the real-time-minimal later writers only), and sets
// aside the reads with several candidates.
func (s *strictPath) knownEdges() bool {
	d := s.d
	s.edges = make([][2]int32, 0, len(s.txn)+2*len(d.Reads))
	if d.Opts.Session {
		s.sessionEdges()
	}
	for ri := range d.Reads {
		if !s.readEdges(int32(ri)) {
			return false
		}
	}
	s.fs.Edges = len(s.edges)
	return true
}

// sessionEdges adds each session's order between its committed transactions.
func (s *strictPath) sessionEdges() {
	for _, sess := range s.d.H.Sessions {
		prev := int32(-1)
		for _, t := range sess.Txns {
			if u := s.id[t]; u >= 0 {
				if prev >= 0 {
					s.edges = append(s.edges, [2]int32{prev, u})
				}
				prev = u
			}
		}
	}
}

// readEdges adds the edges of read ri when it has one candidate, or sets it aside when it
// has several.
func (s *strictPath) readEdges(ri int32) bool {
	d := s.d
	r := &d.Reads[ri]
	u := s.id[r.Txn]
	if u < 0 {
		return true // an excluded (aborted) reader
	}
	switch {
	case r.Op < 0:
		s.fs.Why = "synthetic reads"
		return false
	case len(r.Cands) == 0:
		s.fs.Why = "a read with no possible writer"
		return false
	case len(r.Cands) > 1:
		s.multi = append(s.multi, ri)
		return true
	}
	return s.readFrom(u, r)
}

// readFrom adds the edges of read r by u (dense id) of its one candidate's version: the
// write-read edge from the writer, and the anti-dependencies to the writers that began
// after it ended and are minimal in real time.
func (s *strictPath) readFrom(u int32, r *deps.Read) bool {
	d := s.d
	// An item read, a row a predicate read returned, or a row a predicate read missed or a
	// predicate write matched with one version in reach: all are "u read w's version of the
	// key", which is what the edges below and the replay encode.
	e := int64(minTime)
	if w := r.Cands[0]; w != d.Init {
		x := s.id[w]
		if x < 0 {
			s.fs.Why = "a read from a transaction that does not count"
			return false
		}
		s.addEdge(x, u)
		e = s.end[x]
		if s.inv[x] {
			if rs, ok := s.involved[wk(x, r.Key)]; ok {
				s.involved[wk(x, r.Key)] = append(rs, u)
			}
		}
	}
	for _, b := range s.minimalAfter(r.Key, e) {
		if b != u {
			s.addEdge(u, b)
		}
	}
	return true
}

// close builds the reachability of the known edges under real time.
func (s *strictPath) close() bool {
	c, err := graph.NewTimeClosure(s.begin, s.end, s.edges, max(maxClosureWords, closureWordsPerTxn*len(s.txn)))
	switch {
	case errors.Is(err, graph.ErrCycle):
		s.fs.Why = "cycle of known edges"
		return false
	case err != nil:
		s.fs.Why = err.Error()
		return false
	}
	s.c, s.edges = c, nil
	return true
}

// feasible reports whether option "a before b" of p closes no cycle: a → b and every other
// reader of a's version → b, on every shared key. All its edges end at b, so a cycle can use
// only one of them, and checking each against reachability is exact.
func (s *strictPath) feasible(p *choice, a, b int32) bool {
	if s.c.Reach(b, a) {
		return false
	}
	for _, k := range p.keys {
		for _, r := range s.involved[wk(a, k)] {
			if r != b && s.c.Reach(b, r) {
				return false
			}
		}
	}
	return true
}

// fix adds option "a before b" of p to the closure; false if it closed a cycle.
func (s *strictPath) fix(p *choice, a, b int32) bool {
	p.fixed = true
	if !s.c.AddEdge(a, b) {
		return false
	}
	for _, k := range p.keys {
		for _, r := range s.involved[wk(a, k)] {
			if r != b && !s.c.AddEdge(r, b) {
				return false
			}
		}
	}
	return true
}

// prune fixes the choices of list with one option left, repeating until nothing changes (at
// most passes times: each pass costs a sweep of the remaining choices, and a long chain of
// forcings could make passes quadratic, so the greedy step, which checks each choice at its
// turn, takes over); false means the fast path must give up.
func (s *strictPath) prune(list []int32, passes int) bool {
	for changed := true; changed && passes > 0; passes-- {
		changed = false
		for _, pi := range list {
			p := &s.pairs[pi]
			if p.fixed {
				continue
			}
			forced, ok := s.force(p)
			if !ok {
				return false
			}
			changed = changed || forced
		}
	}
	return true
}

// force fixes choice p if one of its options is left: forced says it did; false (with
// why) when none is left or the forced one closed a cycle.
func (s *strictPath) force(p *choice) (forced, ok bool) {
	l, r := s.feasible(p, p.a, p.b), s.feasible(p, p.b, p.a)
	switch {
	case !l && !r:
		s.fs.Why = "a write order with no option left"
		return false, false
	case !l:
		ok = s.fix(p, p.b, p.a)
	case !r:
		ok = s.fix(p, p.a, p.b)
	default:
		return false, true
	}
	if !ok {
		s.fs.Why = "a forced edge closed a cycle"
		return false, false
	}
	s.fs.Pruned++
	return true, true
}

// first returns p's writers in the greedy order: the one that ended first (then began
// first) goes first.
func (s *strictPath) first(p *choice) (int32, int32) {
	if cmp.Or(cmp.Compare(s.end[p.a], s.end[p.b]), cmp.Compare(s.begin[p.a], s.begin[p.b])) <= 0 {
		return p.a, p.b
	}
	return p.b, p.a
}

// greedy fixes the open choices in order of their first end: the writer that ended first
// goes first unless that closes a cycle. While the open choices are few, each choice is
// propagated to the rest by a pruning pass: fewer dead ends.
func (s *strictPath) greedy() bool {
	rest := s.open()
	for i, pi := range rest {
		p := &s.pairs[pi]
		if p.fixed {
			continue // forced by an earlier choice
		}
		if !s.pick(p) {
			return false
		}
		s.fs.Greedy++
		if len(rest) <= maxPropagate && !s.prune(rest[i+1:], 1) {
			return false
		}
	}
	return true
}

// open returns the choices not fixed, in order of their first end.
func (s *strictPath) open() []int32 {
	var rest []int32
	for pi := range s.pairs {
		if !s.pairs[pi].fixed {
			rest = append(rest, int32(pi))
		}
	}
	firstEnd := func(pi int32) int64 { return min(s.end[s.pairs[pi].a], s.end[s.pairs[pi].b]) }
	slices.SortFunc(rest, func(x, y int32) int { return cmp.Compare(firstEnd(x), firstEnd(y)) })
	return rest
}

// pick fixes choice p greedily: the writer that ended first goes first unless that closes
// a cycle. False (with why) at a dead end.
func (s *strictPath) pick(p *choice) bool {
	a, b := s.first(p)
	if !s.feasible(p, a, b) {
		a, b = b, a
		if !s.feasible(p, a, b) {
			s.fs.Why = "the greedy choice of write orders reached a dead end"
			return false
		}
	}
	if !s.fix(p, a, b) {
		s.fs.Why = "a chosen edge closed a cycle"
		return false
	}
	return true
}

// readChooser chooses the versions of the reads with several candidates (a predicate missed
// a row with several non-matching versions in reach, or values repeat), once every write
// order is fixed: option "u read x's version of k" is the edge x → u and u → every writer
// after x, of which the real-time-minimal later writers and x's overlapping partners
// ordered after it stand for all. Its edges all touch u and x precedes each of the writers,
// so a cycle can use only one of them, and checking each against reachability is exact.
type readChooser struct {
	*strictPath
	partners map[uint64][]int32 // (writer, key) → the writers it shares a choice with on key
	after    []int32            // successors' result
	cands    []int32
}

// chooseReads chooses a version for every read set aside with several candidates.
func (s *strictPath) chooseReads() bool {
	if len(s.multi) == 0 {
		return true
	}
	rc := &readChooser{strictPath: s, partners: make(map[uint64][]int32, len(s.involved))}
	for pi := range s.pairs {
		p := &s.pairs[pi]
		for _, k := range p.keys {
			rc.partners[wk(p.a, k)] = append(rc.partners[wk(p.a, k)], p.b)
			rc.partners[wk(p.b, k)] = append(rc.partners[wk(p.b, k)], p.a)
		}
	}
	for _, ri := range s.multi {
		if !rc.choose(&s.d.Reads[ri]) {
			return false
		}
		s.fs.Greedy++
	}
	return true
}

// successors returns the writers of k after x's version (x < 0: the initial state) that
// stand for all of them. For the initial state they are only checked, not kept in rc.after
// (tryVersion then adds no edge to them: the replay certifies the order either way, and
// adding them makes the fast path give up on more histories).
func (rc *readChooser) successors(x int32, k history.Key) []int32 {
	rc.after = rc.after[:0]
	if x < 0 {
		return append(rc.after, rc.minimalAfter(k, minTime)...)
	}
	rc.after = append(rc.after, rc.minimalAfter(k, rc.end[x])...)
	for _, b := range rc.partners[wk(x, k)] {
		if rc.c.Reach(x, b) {
			rc.after = append(rc.after, b)
		}
	}
	return rc.after
}

// endOf is x's end, or the initial state's (x < 0).
func (rc *readChooser) endOf(x int32) int64 {
	if x < 0 {
		return minTime
	}
	return rc.end[x]
}

// choose picks r's version: candidates are tried latest-ending first among those that ended
// before the reader did, then the rest.
func (rc *readChooser) choose(r *deps.Read) bool {
	u := rc.id[r.Txn]
	rc.candidates(r, u)
	for _, x := range rc.cands {
		ok, closed := rc.tryVersion(u, x, r.Key)
		if closed {
			rc.fs.Why = "a read's chosen version closed a cycle"
			return false
		}
		if ok {
			return true
		}
	}
	rc.fs.Why = "a read with several candidates had none left"
	return false
}

// candidates sets rc.cands to r's candidates (dense ids, -1 for the initial state) that
// are committed, in the order choose tries them for reader u.
func (rc *readChooser) candidates(r *deps.Read, u int32) {
	rc.cands = rc.cands[:0]
	for _, w := range r.Cands {
		x := int32(-1) // the initial state
		if w != rc.d.Init {
			if x = rc.id[w]; x < 0 {
				continue // not committed: never the version read
			}
		}
		rc.cands = append(rc.cands, x)
	}
	slices.SortFunc(rc.cands, func(x, y int32) int { return rc.tryFirst(u, x, y) })
}

// tryFirst compares candidates x and y for reader u: those that ended before u did come
// first, latest first; then the rest, earliest first.
func (rc *readChooser) tryFirst(u, x, y int32) int {
	xe, ye := rc.endOf(x), rc.endOf(y)
	xb, yb := xe <= rc.end[u], ye <= rc.end[u]
	switch {
	case xb && !yb:
		return -1
	case yb && !xb:
		return 1
	case xb:
		return cmp.Compare(ye, xe) // latest first
	}
	return cmp.Compare(xe, ye) // earliest first
}

// tryVersion makes reader u read x's version of k if that closes no cycle; closed says that
// adding its edges did close one after all (the fast path must give up).
func (rc *readChooser) tryVersion(u, x int32, k history.Key) (ok, closed bool) {
	if !rc.acyclic(u, x, k) {
		return false, false
	}
	if x >= 0 && !rc.c.AddEdge(x, u) {
		return false, false
	}
	for _, b := range rc.after {
		if b != u && !rc.c.AddEdge(u, b) {
			return false, true
		}
	}
	return true, false
}

// acyclic reports whether reader u may read x's version of k without closing a cycle: x
// is not u and u does not reach it, and no writer after x's version reaches u. It leaves
// those writers in rc.after.
func (rc *readChooser) acyclic(u, x int32, k history.Key) bool {
	if x == u || (x >= 0 && rc.c.Reach(u, x)) {
		return false
	}
	for _, b := range rc.successors(x, k) {
		if b != u && rc.c.Reach(b, u) {
			return false
		}
	}
	return true
}

// certify replays the closure's topological order as a serial order (and, when the
// dependency analysis left predicate evaluations open, on whole rows): the pass stands only
// if every read comes out as recorded.
func (s *strictPath) certify() bool {
	order := s.c.Order()
	if !replay(s.d, order, s.txn) {
		s.fs.Why = "the serial order did not replay"
		return false
	}
	if s.d.Partial {
		// Some predicate evaluations were left open (partial row images); the order decides
		// them, and the pass stands only if they all come out as recorded.
		if !rowReplay(s.d, order, s.txn) {
			s.fs.Why = "the serial order did not replay on whole rows"
			return false
		}
		s.fs.Rows = true
	}
	return true
}

// replay reports whether order (dense ids of the committed transactions txn[u], each once)
// is a serial order the strict level allows: real time and (if the level has it) session
// order are respected, and every external read reads the version of one of its candidates:
// the last version written before it (the initial state when there is none) must be one. It reads the intervals from the
// history itself, not from the fast path's arrays, so the certificate does not share their
// mistakes.
func replay(d *deps.Deps, order, txn []int32) bool {
	if len(order) != len(txn) {
		return false
	}
	at, ok := positions(d, order, txn)
	return ok && (!d.Opts.Session || keepsSessionOrder(d.H, at)) && replayReads(d, order, txn)
}

// positions returns every transaction's position in order (-1 for those that do not
// count); ok is false unless order holds each committed transaction exactly once.
func positions(d *deps.Deps, order, txn []int32) (at []int32, ok bool) {
	at = make([]int32, d.N)
	for t := range at {
		at[t] = -1
	}
	for i, u := range order {
		t := txn[u]
		if at[t] >= 0 || d.Status[t] != deps.Committed {
			return nil, false
		}
		at[t] = int32(i)
	}
	for t := range d.N {
		if d.Status[t] == deps.Committed && at[t] < 0 {
			return nil, false
		}
	}
	return at, true
}

// keepsSessionOrder reports whether the positions at keep each session's order.
func keepsSessionOrder(h *history.History, at []int32) bool {
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
	return true
}

// replayReads runs order, checking real time (no earlier transaction began after a later
// one ended) and that every read's candidates hold the last version written before it.
func replayReads(d *deps.Deps, order, txn []int32) bool {
	h := d.H
	ivs := make([]history.Interval, d.N) // read in order of id: sequential, not by order
	for t := range d.N {
		ivs[t] = d.TimeInterval(t)
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
