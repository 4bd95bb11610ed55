package certify

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/hugepage"
)

// The row certificate: a serial order guessed from the history's own clocks and replayed on
// whole rows, before any dependency analysis.
//
// Proving a history serializable needs one serial order in which every read sees what a
// serial execution would give it. The dependency analysis ([deps]) finds one by resolving
// every read to its candidate writers, and for predicates that means every row a predicate
// did not return (BlindW-Pred with 1 to 1,000 rows a predicate: 5 million row reads and
// most of a 9 s check). A database that is serializable commits in an order that is almost
// always such an order already: its commit timestamps, or the times its clients saw the
// commits, with read-only transactions at their snapshot. certifyRows guesses those orders
// and replays each, a database with whole rows:
//
//   - an item read must see the value the key holds at that point (its own transaction's
//     writes included); an insert must find the row absent;
//   - a predicate read must return, with the values they hold, exactly the live rows its
//     range selects: every returned row is live, holds the value read and satisfies the
//     range, no row is returned twice, and as many live rows satisfy the range as were
//     returned (counted over every key of the history, per column: colIndex);
//   - a predicate write must have matched exactly the live rows its range selects (the
//     same test on the rows it marks as matched), and installs their new images; the rows
//     it lists unmatched (Vbox's invisible writes) change nothing.
//
// A replay that gets through is a proof: the order is a serial execution of the committed
// transactions that returns every value and row set they saw. It is a proof of plain
// serializability; of strong-session serializability too when the order keeps each
// session's order, and of strict serializability when it also keeps client real time
// (checked as [replay] does, with every transaction's interval widened by the skew).
// Aborted transactions take no part: a committed read of their writes fails the replay.
//
// It never fails a history: an order that does not replay proves nothing, and the caller's
// own pipeline decides. So that a pass means exactly what the dependency analysis would
// mean by one, it reads a read that names its writer as [deps] does, and declines whatever
// it does not model exactly: transactions of unknown outcome, operations marked failed,
// list histories, predicates that are not ranges over a named column, predicate reads
// listing unmatched rows, predicate rows naming their writer, and row images that are not
// whole (an image must set every column a predicate reads, or be a single integer, as
// [history.Predicate.Eval] reads one).

// rowCert is what [certifyRows] proved: a serial order of the committed
// transactions, taken from the order By names, replayed on whole rows.
type rowCert struct {
	// By names the order that replayed ("database commit timestamps", ...).
	By string
	// Keeps says whether the order also keeps each session's order and client real time
	// (every transaction has a client interval, widened by the skew).
	Keeps
}

// rowDB is the whole-row database the row and snapshot certificates replay a history on,
// built on first use and shared by both: building it decodes every row image (a third of a
// second on a 10,000-transaction BlindW-Pred history), and a checker that tries both
// certificates would otherwise build it twice. Not safe for concurrent use.
type rowDB struct {
	h     *history.History
	rs    *replayDB
	built bool
}

// newRowDB returns the (not yet built) row database of h.
func newRowDB(h *history.History) *rowDB { return &rowDB{h: h} }

// db builds the database on first use; ok is false when the certificates do not model h
// (see newReplayDB).
func (r *rowDB) db() (*replayDB, bool) {
	if !r.built {
		r.rs, _ = newReplayDB(r.h)
		r.built = true
	}
	return r.rs, r.rs != nil
}

// Keeps says which orders a certificate's execution keeps besides the one it proves.
type Keeps struct {
	Session, Realtime bool
}

// Proves reports whether a certificate that keeps k proves a level that needs session
// order and/or real time.
func (k Keeps) Proves(session, realtime bool) bool {
	return (!session || k.Session) && (!realtime || k.Realtime)
}

// note appends to a certificate's note what k adds: both when it keeps session order and
// real time, session when session order only.
func (k Keeps) note(s, both, session string) string {
	switch {
	case k.Session && k.Realtime:
		return s + both
	case k.Session:
		return s + session
	}
	return s
}

// Note says how the history passed, in a sentence for a report.
func (rc rowCert) Note() string {
	return rc.note("passed with a serial order taken from the "+rc.By+" and replayed on whole rows: every read saw the value, and every predicate the rows, that a serial execution in that order gives",
		"; the order keeps session order and client real time, so the history is strict-serializable too",
		"; the order keeps session order")
}

// certifyRows tries to prove h serializable by replaying orders taken from its own clocks
// (database commit timestamps, client commit times) on whole rows, before any dependency
// analysis (see rowcert.go). ok says it found one; then the history is serializable, and
// strong-session or strict serializable as the certificate says, and so snapshot isolated
// at the matching levels (each snapshot taken just before its transaction in the order).
// It never refutes: !ok proves nothing.
func certifyRows(ctx context.Context, h *history.History, skew int64) (rowCert, bool) {
	return newRowDB(h).certifyRows(ctx, skew)
}

// certifyRows is [certifyRows] on r's history and database: it tries the candidate orders
// in turn (see the comment above), repairs the first with a search when none replays as it
// is, and returns the first order that replays; ok is false when none does or the history
// is out of scope.
func (r *rowDB) certifyRows(ctx context.Context, skew int64) (rowCert, bool) {
	h := r.h
	committed, readOnly := committedReadOnly(h)
	if len(committed) == 0 {
		return rowCert{}, false // nothing to order: no order's description would be true
	}
	cands := rowCandidates(h, committed, readOnly)
	if len(cands) == 0 {
		return rowCert{}, false
	}
	rs, ok := r.db()
	if !ok {
		return rowCert{}, false
	}
	rs.sess = sessionLinks(h, nil)
	c, order, first, stop := rs.replayCandidates(ctx, cands, committed)
	if stop {
		return rowCert{}, false
	}
	if order != nil {
		return rowCertificate(h, c.by, order, skew), true
	}
	found, moves, ok := rs.repair(ctx, first, readOnly)
	if !ok {
		return rowCert{}, false
	}
	by := fmt.Sprintf("%s, with %d transactions moved where the replay showed them out of place", cands[0].by, moves)
	return rowCertificate(h, by, found, skew), true
}

// replayCandidates replays the candidate orders in turn and returns the first that
// replays, with its candidate; else the first candidate's order (for the search). stop
// says ctx ended.
func (rs *replayDB) replayCandidates(ctx context.Context, cands []rowCandidate, committed []int32) (c rowCandidate, order, first []int32, stop bool) {
	h := rs.h
	order = make([]int32, len(committed))
	keys := make([]history.Timestamp, len(h.Txns))
	ranks := make([]int, len(h.Txns))
	for _, c := range cands {
		if ctx.Err() != nil {
			return c, nil, nil, true
		}
		rs.candidateOrder(c, committed, order, keys, ranks)
		if first == nil {
			first = slices.Clone(order)
		}
		if rs.replay(ctx, order) {
			return c, order, first, false
		}
	}
	return rowCandidate{}, nil, first, false
}

// rowCertificate is the certificate of order, which replayed, taken from the order by
// names.
func rowCertificate(h *history.History, by string, order []int32, skew int64) rowCert {
	return rowCert{By: by, Keeps: Keeps{Session: keepsSessions(h, order), Realtime: keepsRealTime(h, order, skew)}}
}

// committedReadOnly returns the committed transactions, and per transaction whether it is
// read-only (only item and predicate reads).
func committedReadOnly(h *history.History) (committed []int32, readOnly []bool) {
	readOnly = make([]bool, len(h.Txns))
	for t := range h.Txns {
		if !h.Txns[t].Committed() {
			continue
		}
		committed = append(committed, int32(t))
		readOnly[t] = !slices.ContainsFunc(h.Txns[t].Ops, func(o history.Op) bool {
			return o.Kind != history.OpRead && o.Kind != history.OpPredRead
		})
	}
	return committed, readOnly
}

// rowCandidate is one candidate order: what it is ordered by, and each transaction's key
// in it (a time, then a rank among equal times).
type rowCandidate struct {
	by  string
	key func(t int32) (history.Timestamp, int)
}

// rowCandidates are the candidate orders the committed transactions' clocks give: database
// commit timestamps when every one has them, then client commit times when every one has
// a client interval; each first with read-only transactions at their start.
func rowCandidates(h *history.History, committed []int32, readOnly []bool) []rowCandidate {
	var cands []rowCandidate
	if !slices.ContainsFunc(committed, func(t int32) bool { return !h.Txns[t].HasTimestamps }) {
		db := "database commit timestamps"
		if h.DerivedTimestamps() {
			db = "database commit timestamps (derived from its snapshots)"
		}
		cands = append(cands,
			rowCandidate{db + ", read-only transactions at their start timestamps", func(t int32) (history.Timestamp, int) {
				x := &h.Txns[t]
				if readOnly[t] {
					return x.Start, 0 // a snapshot at Start sees the commits before it
				}
				return x.Commit, 1
			}},
			rowCandidate{db, func(t int32) (history.Timestamp, int) {
				return h.Txns[t].Commit, 0
			}})
	}
	if !slices.ContainsFunc(committed, func(t int32) bool { return !h.Txns[t].HasTime }) {
		cands = append(cands,
			rowCandidate{"client commit times, read-only transactions at their begin times", func(t int32) (history.Timestamp, int) {
				x := &h.Txns[t]
				if readOnly[t] {
					return history.Timestamp{Physical: x.Time.Begin}, 0
				}
				return history.Timestamp{Physical: x.Time.End}, 1
			}},
			rowCandidate{"client commit times", func(t int32) (history.Timestamp, int) {
				return history.Timestamp{Physical: h.Txns[t].Time.End}, 0
			}})
	}
	return cands
}

// candidateOrder sorts the committed transactions into order by c (keys and ranks are
// scratch, per transaction).
func (rs *replayDB) candidateOrder(c rowCandidate, committed, order []int32, keys []history.Timestamp, ranks []int) {
	for _, t := range committed {
		keys[t], ranks[t] = c.key(t)
	}
	rs.keepSessions(keys, ranks)
	copy(order, committed)
	slices.SortFunc(order, func(a, b int32) int {
		if c := keys[a].Compare(keys[b]); c != 0 {
			return c
		}
		if c := cmp.Compare(ranks[a], ranks[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
}

// keepSessions puts no transaction before its session's earlier ones (a session's
// transactions may overlap in time, and a read-only one goes by its begin): each takes at
// least its predecessor's place (keys, then ranks), and ties go by id, which follows
// session order.
func (rs *replayDB) keepSessions(keys []history.Timestamp, ranks []int) {
	for _, se := range rs.h.Sessions {
		for _, t := range se.Txns {
			if p := rs.sess.prev[t]; p >= 0 {
				if d := keys[t].Compare(keys[p]); d < 0 || d == 0 && ranks[t] < ranks[p] {
					keys[t], ranks[t] = keys[p], ranks[p]
				}
			}
		}
	}
}

// repair is what certifyRows does when no candidate replayed as it is: repair the first
// (rowsearch.go), keeping real time (for the strict levels) and, if that fails, without;
// each time as a whole and, failing that, the writing transactions first and the read-only
// ones fitted in after. Then replay what the search found from the start, which is the
// proof (searchSplit's last step is that replay); ok is false when nothing replayed.
func (rs *replayDB) repair(ctx context.Context, first []int32, readOnly []bool) (found []int32, moves int, ok bool) {
	found, moves, proved := rs.searchBoth(ctx, first, readOnly)
	if found == nil || !proved && !rs.replay(ctx, found) {
		return nil, moves, false
	}
	return found, moves, true
}

// searchBoth searches from first keeping real time (when the history has client time),
// then without; each time as a whole and, failing that, split (searchSplit). proved says
// searchSplit's sweep replayed found.
func (rs *replayDB) searchBoth(ctx context.Context, first []int32, readOnly []bool) (found []int32, moves int, proved bool) {
	for _, rt := range []bool{true, false} {
		if rt && !rs.h.HasTime() {
			continue
		}
		if found, moves = rs.search(ctx, first, rt, rs.sess); found == nil {
			found, moves = rs.searchSplit(ctx, first, readOnly, rt)
			proved = found != nil
		}
		if found != nil {
			break
		}
	}
	return found, moves, proved
}

// links are each transaction's neighbours in its session among the transactions linked
// (-1: none).
type links struct{ prev, next []int32 }

// sessionLinks links each committed transaction to its session's committed neighbours,
// passing over those skip marks (nil: none).
func sessionLinks(h *history.History, skip []bool) links {
	l := links{make([]int32, len(h.Txns)), make([]int32, len(h.Txns))}
	for i := range l.prev {
		l.prev[i], l.next[i] = -1, -1
	}
	for _, se := range h.Sessions {
		p := int32(-1)
		for _, t := range se.Txns {
			if !h.Txns[t].Committed() || skip != nil && skip[t] {
				continue
			}
			if p >= 0 {
				l.prev[t], l.next[p] = p, int32(t)
			}
			p = int32(t)
		}
	}
	return l
}

// keepsSessions reports whether order (the committed transactions) keeps each session's order.
func keepsSessions(h *history.History, order []int32) bool {
	last := make([]int32, len(h.Sessions))
	for i := range last {
		last[i] = -1
	}
	for _, t := range order {
		x := &h.Txns[t]
		if x.Seq < last[x.Session] {
			return false
		}
		last[x.Session] = x.Seq
	}
	return true
}

// keepsRealTime reports whether every transaction has a client interval and no transaction
// in order ended (widened by skew) before one placed earlier began: the rule of [replay].
func keepsRealTime(h *history.History, order []int32, skew int64) bool {
	if !h.HasTime() {
		return false
	}
	maxBegin := int64(-1 << 63)
	for _, t := range order {
		iv := h.Txns[t].Time.Widen(skew)
		if iv.End < maxBegin {
			return false
		}
		maxBegin = max(maxBegin, iv.Begin)
	}
	return true
}

// replayDB is the replaying database: the value each key holds, and for live rows the rank
// of each column predicates read, counted per column (colIndex).
type replayDB struct {
	h      *history.History
	fields []string   // the columns predicates read
	field  []int32    // per predicate (History.Preds index): its column
	cols   []colIndex // per column: its values' ranks and live-row counts
	images []int32    // per decoded image: its column ranks, len(fields) each
	slot   []int32    // per image applied, in replay order: its decoded image, or -1 (absent)
	at     []int32    // per transaction: its first entry in slot (committed only)
	init   []int32    // per key: the decoded image of its initial value, or -1 (absent)
	rows   []rowVersion
	rank   []int32  // per key and column: the live row's rank
	mark   []uint32 // per key: the predicate operation (epoch) that last listed it
	epoch  uint32
	// sess links each committed transaction to its session's committed neighbours.
	sess links

	// The search's undo log (rowsearch.go): when logging, set records what it replaced,
	// for the transaction placed at pos.
	logging bool
	pos     int32
	undo    []undoRec
	last    []int32 // per key: its newest record in undo, or -1
	scanned int     // rows the search's diagnoses looked at
}

// undoRec is what one write replaced: key k was in state was before the transaction
// placed at pos wrote it; prev is k's record before this one (-1: none).
type undoRec struct {
	k         history.Key
	was       rowVersion
	prev, pos int32
}

// colIndex numbers one column's values (rank = value - lo when the span is small, else the
// position among the sorted distinct values) and counts live rows per rank.
type colIndex struct {
	lo     int64
	sorted []int64 // nil: ranks are value - lo
	n      int
	// The live rows per rank, per 64 ranks and per 4,096 ranks. A replay changes a row
	// millions of times and asks a predicate's count thousands of times, so a change costs
	// three increments and a count a few hundred additions (a Fenwick tree's log n steps
	// each way made the changes a quarter of the replay).
	cnt, cnt64, cnt4k []int32
}

// alloc makes the counts of a column of c.n ranks.
func (c *colIndex) alloc() {
	c.cnt, c.cnt64, c.cnt4k = make([]int32, c.n), make([]int32, c.n>>6+1), make([]int32, c.n>>12+1)
}

func (c *colIndex) reset() {
	clear(c.cnt)
	clear(c.cnt64)
	clear(c.cnt4k)
}

func (c *colIndex) rankOf(v int64) int32 {
	if c.sorted == nil {
		return int32(v - c.lo)
	}
	i, _ := slices.BinarySearch(c.sorted, v)
	return int32(i)
}

// between returns the ranks [a, b) of the values in [lo, hi].
func (c *colIndex) between(lo, hi int64) (int, int) {
	if lo > hi {
		return 0, 0
	}
	if c.sorted == nil {
		a := max(lo-c.lo, 0)
		b := min(hi-c.lo+1, int64(c.n))
		if a >= b {
			return 0, 0
		}
		return int(a), int(b)
	}
	a, _ := slices.BinarySearch(c.sorted, lo)
	b, found := slices.BinarySearch(c.sorted, hi)
	if found {
		b++
	}
	return a, max(a, b)
}

func (c *colIndex) add(r int32, d int32) {
	c.cnt[r] += d
	c.cnt64[r>>6] += d
	c.cnt4k[r>>12] += d
}

// prefix returns the live rows of ranks below n.
func (c *colIndex) prefix(n int) int {
	s := 0
	for _, x := range c.cnt4k[:n>>12] {
		s += int(x)
	}
	for _, x := range c.cnt64[n>>12<<6 : n>>6] {
		s += int(x)
	}
	for _, x := range c.cnt[n>>6<<6 : n] {
		s += int(x)
	}
	return s
}

// parallelDecodeMin is the fewest images newReplayDB decodes in two halves at once (a
// variable so that tests can lower it).
var parallelDecodeMin = 1 << 16

// maxDirectSpan is the widest value span a column numbers directly (value - lo).
var maxDirectSpan uint64 = 1 << 22 // a variable so that tests can lower it

// newReplayDB checks that h is within the certificate's scope and decodes every image a
// replay can apply; ok is false when it is not.
func newReplayDB(h *history.History) (*replayDB, bool) {
	b := &replayBuilder{rs: &replayDB{h: h}}
	if !b.scanFields() || !b.countImages() || !b.decodeWrites() || !b.decodeInitial() {
		return nil, false
	}
	b.rankColumns()
	nk, nf := len(h.Keys), len(b.rs.fields)
	b.rs.rows = make([]rowVersion, nk)
	b.rs.rank = make([]int32, nk*nf)
	b.rs.mark = make([]uint32, nk)
	return b.rs, true
}

// replayBuilder is newReplayDB's state between its phases: the images decoded so far.
// Write i's image (the i-th write the replay applies) is raw[i*nf : (i+1)*nf], and
// rs.slot[i] is i, or -1 for a nil write (the row is absent); initial images follow.
type replayBuilder struct {
	rs  *replayDB
	raw []int64
	n   int // the writes the replay applies
	nf  int // len(rs.fields)
}

// scanFields numbers the columns the predicates read; false when a predicate is not a
// range over one named column.
func (b *replayBuilder) scanFields() bool {
	rs, h := b.rs, b.rs.h
	fieldID := map[string]int32{}
	rs.field = make([]int32, len(h.Preds))
	for i := range h.Preds {
		p := &h.Preds[i].Pred
		if !p.IsRange {
			return false
		}
		name, ok := p.Field.Str()
		if !ok || name == "" {
			return false
		}
		id, seen := fieldID[name]
		if !seen {
			id = int32(len(rs.fields))
			fieldID[name] = id
			rs.fields = append(rs.fields, name)
		}
		rs.field[i] = id
	}
	b.nf = len(rs.fields)
	return true
}

// countImages checks the scope (transactions committed or aborted, no failed statement,
// predicate rows listed by value, a predicate read lists only matches) and counts, per
// transaction and in the replay's order, the images it applies.
func (b *replayBuilder) countImages() bool {
	rs, h := b.rs, b.rs.h
	rs.at = make([]int32, len(h.Txns))
	n := 0
	for t := range h.Txns {
		x := &h.Txns[t]
		rs.at[t] = int32(n)
		switch x.Outcome {
		case history.OutcomeAborted:
			continue
		case history.OutcomeCommitted:
		default:
			return false
		}
		for _, o := range x.Ops {
			c, ok := imagesOf(h, o)
			if !ok {
				return false
			}
			n += c
		}
	}
	b.n = n
	return true
}

// imagesOf is the number of images committed operation o applies; ok is false when o is
// outside the certificate's scope.
func imagesOf(h *history.History, o history.Op) (n int, ok bool) {
	if o.Failed() {
		return 0, false
	}
	switch o.Kind {
	case history.OpRead, history.OpDelete:
		return 0, true
	case history.OpWrite, history.OpInsert:
		return 1, true
	case history.OpPredRead, history.OpPredWrite:
		return predImages(h, o)
	}
	return 0, false
}

// predImages is imagesOf for a predicate operation: a predicate write applies an image per
// row it matched. ok is false when a row names its writer, or a predicate read lists a row
// it did not match.
func predImages(h *history.History, o history.Op) (n int, ok bool) {
	p := h.Pred(o)
	for ri, r := range p.Rows {
		if p.Src(ri).Kind != history.SrcByValue || (o.Kind == history.OpPredRead && !r.Match) {
			return 0, false
		}
		if r.Match && o.Kind == history.OpPredWrite {
			n++
		}
	}
	return n, true
}

// decodeWrites decodes every write's image; false when one is not whole. Millions of
// images (BlindW-Pred at 1-1,000 rows a predicate: 2.5 million) are decoded in two halves
// at once.
func (b *replayBuilder) decodeWrites() bool {
	rs, n, nf := b.rs, b.n, b.nf
	rs.slot = hugepage.Make[int32](n, n)
	b.raw = hugepage.Make[int64](n*nf, (n+1)*nf)
	if n < parallelDecodeMin {
		return b.decodeTxns(0, len(rs.h.Txns))
	}
	mid, _ := slices.BinarySearch(rs.at, int32(n/2))
	var wg sync.WaitGroup
	var okA bool
	wg.Go(func() { okA = b.decodeTxns(0, mid) })
	okB := b.decodeTxns(mid, len(rs.h.Txns))
	wg.Wait()
	return okA && okB
}

// decodeTxns decodes the images of transactions [t0, t1); false when one is not whole.
func (b *replayBuilder) decodeTxns(t0, t1 int) bool {
	rs, h, raw, nf := b.rs, b.rs.h, b.raw, b.nf
	fields := rs.fields
	for t := t0; t < t1; t++ {
		x := &h.Txns[t]
		if !x.Committed() {
			continue
		}
		i := int(rs.at[t])
		put := func(v history.Value) bool {
			rs.slot[i] = -1
			if v != history.Nil {
				if !decodeImage(h.Value(v), fields, raw[i*nf:(i+1)*nf]) {
					return false
				}
				rs.slot[i] = int32(i)
			}
			i++
			return true
		}
		for _, o := range x.Ops {
			switch o.Kind {
			case history.OpWrite, history.OpInsert:
				if !put(o.Value) {
					return false
				}
			case history.OpPredWrite:
				for _, r := range h.Pred(o).Rows {
					// A matched row's new image is a row.
					if r.Match && (r.Value == history.Nil || !put(r.Value)) {
						return false
					}
				}
			}
		}
	}
	return true
}

// decodeInitial decodes every key's initial image after the writes' (many keys share one
// initial value, decoded once); false when one is not whole.
func (b *replayBuilder) decodeInitial() bool {
	rs, h, nf := b.rs, b.rs.h, b.nf
	nk := len(h.Keys)
	rs.init = make([]int32, nk)
	initSlot := map[history.Value]int32{}
	for k := range nk {
		v := h.InitialValue(history.Key(k))
		i, seen := initSlot[v]
		if !seen {
			i = -1 // nil: the row is absent
			if v != history.Nil {
				i = int32(len(b.raw) / max(nf, 1))
				b.raw = slices.Grow(b.raw, nf)[:len(b.raw)+nf] // initial images were not counted
				if !decodeImage(h.Value(v), rs.fields, b.raw[len(b.raw)-nf:]) {
					return false
				}
			}
			initSlot[v] = i
		}
		rs.init[k] = i
	}
	return true
}

// rankColumns numbers each column's values, and turns every image's values into ranks (a
// nil write's slot holds no image).
func (b *replayBuilder) rankColumns() {
	rs, raw, nf := b.rs, b.raw, b.nf
	rs.cols = make([]colIndex, nf)
	rs.images = make([]int32, len(raw))
	for f := range nf {
		b.rankColumn(f)
	}
}

// hasImage reports whether image j holds one: an initial image, or a write's that is not
// nil.
func (b *replayBuilder) hasImage(j int) bool { return j >= b.n || b.rs.slot[j] >= 0 }

// rankColumn numbers column f's values (directly over their span when it is small, else
// by sorting them), and ranks every image's value of f.
func (b *replayBuilder) rankColumn(f int) {
	rs, raw, nf := b.rs, b.raw, b.nf
	images := len(raw) / max(nf, 1)
	c := &rs.cols[f]
	lo, hi := int64(1<<63-1), int64(-1<<63)
	for j := range images {
		if b.hasImage(j) {
			lo, hi = min(lo, raw[j*nf+f]), max(hi, raw[j*nf+f])
		}
	}
	switch {
	case lo > hi: // no image
	case uint64(hi)-uint64(lo) < maxDirectSpan:
		c.lo, c.n = lo, int(hi-lo)+1
	default:
		c.sorted = b.distinct(f, images)
		c.n = len(c.sorted)
	}
	c.alloc()
	for j := range images {
		if b.hasImage(j) {
			rs.images[j*nf+f] = c.rankOf(raw[j*nf+f])
		}
	}
}

// distinct returns column f's distinct values over the images, sorted.
func (b *replayBuilder) distinct(f, images int) []int64 {
	raw, nf := b.raw, b.nf
	s := make([]int64, 0, images)
	for j := range images {
		if b.hasImage(j) {
			s = append(s, raw[j*nf+f])
		}
	}
	slices.Sort(s)
	return slices.Compact(s)
}

// decodeImage reads the columns fields of a whole row image into out: an integer (a row
// with one value column, which every field reads, as [history.Predicate.Eval] does) or a
// "col=int,col=int" image that sets every one of fields (at most 64). It reports false
// otherwise, and for anything [history.ImageInt] would not read the same way.
func decodeImage(d history.Datum, fields []string, out []int64) bool {
	if i, ok := d.Int(); ok {
		for f := range out {
			out[f] = i
		}
		return true
	}
	s, ok := d.Str()
	if !ok || len(fields) > 64 {
		return false
	}
	var found uint64
	for s != "" {
		var name, val string
		if name, val, s, ok = history.CutImageColumn(s); !ok {
			return false
		}
		for f, field := range fields {
			if found&(1<<f) != 0 || name != field {
				continue // ImageInt reads a column's first setting
			}
			n, ok := parseInt(val)
			if !ok {
				return false
			}
			found |= 1 << f
			out[f] = n
		}
	}
	return found == 1<<len(fields)-1
}

// parseInt is strconv.ParseInt(s, 10, 64), without its error value for the short decimal
// columns of row images.
func parseInt(s string) (int64, bool) {
	digits := strings.TrimLeft(s, "+-")
	if len(digits) == 0 || len(digits) > 18 || len(s)-len(digits) > 1 {
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil
	}
	var n int64
	for i := 0; i < len(digits); i++ {
		c := digits[i] - '0'
		if c > 9 {
			return 0, false
		}
		n = n*10 + int64(c)
	}
	if s[0] == '-' {
		n = -n
	}
	return n, true
}

// reset puts every key in its initial state.
func (rs *replayDB) reset() {
	nf := len(rs.fields)
	for f := range rs.cols {
		rs.cols[f].reset()
	}
	for k := range rs.rows {
		rs.rows[k].img = -1 // nothing counted yet
		rs.set(history.Key(k), rowVersion{v: rs.h.InitialValue(history.Key(k)), img: rs.init[k], wt: -1, wo: -1}, nf)
	}
}

// rowVersion is a row's state: its value v, the decoded image img (-1: absent), and the
// writer, operation wo of transaction wt (-1: the initial state).
type rowVersion struct {
	v           history.Value
	img, wt, wo int32
}

// live reports whether the row exists.
func (x rowVersion) live() bool { return x.img >= 0 }

// set installs x as key k's row, and logs what it replaced when rs.logging.
func (rs *replayDB) set(k history.Key, x rowVersion, nf int) {
	if rs.logging {
		rs.undo = append(rs.undo, undoRec{k: k, was: rs.rows[k], prev: rs.last[k], pos: rs.pos})
		rs.last[k] = int32(len(rs.undo) - 1)
	}
	at := int(k) * nf
	if rs.rows[k].live() {
		for f := range nf {
			rs.cols[f].add(rs.rank[at+f], -1)
		}
	}
	rs.rows[k] = x
	if !x.live() {
		return
	}
	copy(rs.rank[at:at+nf], rs.images[int(x.img)*nf:int(x.img)*nf+nf])
	for f := range nf {
		rs.cols[f].add(rs.rank[at+f], 1)
	}
}

// sees reports whether a read of transaction t naming source src, of value v, sees version
// x, as the dependency analysis reads a source: by value, or the named writer's last write
// of the key with that value (a transaction's own earlier write must be named as its own),
// or the initial state whatever value was recorded.
func sees(t int32, src history.Src, v history.Value, x rowVersion) bool {
	switch src.Kind {
	case history.SrcByValue:
		return x.v == v
	case history.SrcTxn:
		return x.v == v && x.wt == int32(src.Txn) && (x.wt == t || x.wo == src.Op)
	default: // SrcInit, SrcNone
		return x.wt < 0
	}
}

// nextEpoch starts a new predicate operation's marks.
func (rs *replayDB) nextEpoch() {
	rs.epoch++
	if rs.epoch == 0 { // wrapped: forget every old mark
		clear(rs.mark)
		rs.epoch = 1
	}
}

// replay runs the committed transactions in order from the initial state and reports
// whether every read saw what the serial execution gives it (see the comment at the top).
func (rs *replayDB) replay(ctx context.Context, order []int32) bool {
	rs.reset()
	rs.logging = false
	for i, t := range order {
		if i&1023 == 0 && ctx.Err() != nil {
			return false
		}
		if rs.apply(t) >= 0 {
			return false
		}
	}
	return true
}

// apply runs transaction t on the current state and returns -1, or the index of the first
// operation that did not see what the state gives it (the operations before it are applied).
func (rs *replayDB) apply(t int32) int { return rs.play(t, true) }

// install applies the writes of transaction t to the current state, in its order, without
// looking at what it read: t's final version of each row it wrote is left.
func (rs *replayDB) install(t int32) { rs.play(t, false) }

// play runs transaction t on the current state; with check, it stops at the first
// operation that does not see what the state gives it and returns its index (-1: none).
func (rs *replayDB) play(t int32, check bool) int {
	h := rs.h
	nf := len(rs.fields)
	next := rs.at[t]
	for i, o := range h.Txns[t].Ops {
		switch o.Kind {
		case history.OpRead:
			if check && !sees(t, o.Src, o.Value, rs.rows[o.Key]) {
				return i
			}
		case history.OpWrite, history.OpInsert:
			if check && o.Kind == history.OpInsert && rs.rows[o.Key].live() {
				return i
			}
			rs.set(o.Key, rowVersion{v: o.Value, img: rs.slot[next], wt: t, wo: int32(i)}, nf)
			next++
		case history.OpDelete:
			rs.set(o.Key, rowVersion{v: history.Nil, img: -1, wt: t, wo: int32(i)}, nf)
		case history.OpPredRead:
			if check && !rs.selects(o.PredIndex(), h.Pred(o), true) {
				return i
			}
		case history.OpPredWrite:
			po := h.Pred(o)
			if check && !rs.selects(o.PredIndex(), po, false) {
				return i
			}
			for _, r := range po.Rows {
				if r.Match {
					rs.set(r.Key, rowVersion{v: r.Value, img: rs.slot[next], wt: t, wo: int32(i)}, nf)
					next++
				}
			}
		}
	}
	return -1
}

// clearLog empties the undo log: no key has a record in it.
func (rs *replayDB) clearLog() {
	rs.undo = rs.undo[:0]
	if len(rs.last) != len(rs.rows) {
		rs.last = make([]int32, len(rs.rows))
	}
	for k := range rs.last {
		rs.last[k] = -1
	}
}

// selects checks that the rows predicate op po (History.Preds[pi]) lists as matched are
// exactly the live rows its range selects; values says whether they must also hold the
// values listed (a read). It leaves the keys po lists marked with rs.epoch.
func (rs *replayDB) selects(pi int, po *history.PredOp, values bool) bool {
	nf := len(rs.fields)
	f := int(rs.field[pi])
	c := &rs.cols[f]
	a, b := c.between(po.Pred.Lo, po.Pred.Hi)
	rs.nextEpoch()
	n := 0
	for _, r := range po.Rows {
		if rs.mark[r.Key] == rs.epoch {
			return false // listed twice
		}
		rs.mark[r.Key] = rs.epoch
		if !r.Match {
			continue
		}
		if x := rs.rows[r.Key]; !x.live() || (values && x.v != r.Value) {
			return false
		}
		if rk := int(rs.rank[int(r.Key)*nf+f]); rk < a || rk >= b {
			return false
		}
		n++
	}
	return c.prefix(b)-c.prefix(a) == n
}
