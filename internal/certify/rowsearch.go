package certify

import (
	"cmp"
	"context"
	"slices"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/hugepage"
)

// The row certificate's search. A database's clocks give a serial order only up to the
// transactions whose commits overlap: under PostgreSQL's serializable snapshot isolation a
// transaction that read a row before another changed it may commit after it, and a client
// learns of a commit some time after it happened. When no candidate order replays as it is,
// search repairs the first one where the replay shows a transaction out of place:
//
//   - a transaction that saw a state some transaction placed shortly before it (at most
//     searchBack places back) has since overwritten is moved back, before the first
//     transaction that overwrote it (what was placed from there is undone and placed again
//     after it);
//   - a transaction that saw a state no placed transaction has made yet waits until the
//     next transaction in the queue that writes the row has been placed.
//
// A transaction that saw both (some rows as they were before transactions placed since,
// others as a queued transaction will leave them) is moved back with the next writer of a
// row it waits for placed just before it. "Saw a state" is per row: the value an item read
// returned, whether a row a predicate selected (or did not) was live and in its range,
// whether an insert found the row absent. Rows a transaction wrote itself before the
// failing read, a move that would break real time (when it is kept) and too many moves end
// the search with nothing proved, and so do more moves than a sixteenth of the
// transactions (plus 256) or more than 8 of one.
//
// The search only proposes an order: certifyRows replays what it finds from the initial
// state, and that replay is the proof. So the search may be as heuristic as it likes
// without putting a verdict at risk.

// searchWindow is how far ahead in the queue a waiting transaction looks for the next
// writer of the row it waits for; searchBack is how far back one may be moved (the
// clocks misplace transactions by the few whose commits overlap, so a state seen further
// back is taken as one still to come).
const searchWindow, searchBack = 256, 64

// maxMovesEach bounds how often one transaction may be moved.
const maxMovesEach = 8

// maxScanned bounds the rows a search looks at to find those a predicate should not have
// selected (every row, once per predicate that failed).
const maxScanned = 1 << 26

// search looks for an order of the committed transactions, starting from start, that
// replays; it returns nil when it gives up. It leaves the state as the search left it.
// With rt, it keeps client real time too: a transaction is moved back only past
// transactions that did not end before it began, and waits only for a writer that did not
// begin after it ended (every transaction must have a client interval).
func (rs *replayDB) search(ctx context.Context, start []int32, rt bool, sess links) (order []int32, moves int) {
	rs.startLogging()
	defer func() { rs.logging = false }()
	s := newRowSearch(rs, start, rt, sess)
	budget := 2*len(start) + 1024 // placements
	// A serializable history's clocks misplace few transactions, each by a little; a
	// search that moves many, or one many times, is churning through a history that is
	// not (or not near its clocks' order), and gives up early.
	maxMoves := len(start)/16 + 256
	for len(s.queue) > 0 {
		if budget--; budget < 0 || rs.scanned > maxScanned || (budget&255 == 0 && ctx.Err() != nil) {
			return nil, s.moves
		}
		t := s.queue[len(s.queue)-1]
		s.queue = s.queue[:len(s.queue)-1]
		mark := int32(len(rs.undo))
		rs.pos = int32(len(s.placed))
		fail := rs.apply(t)
		if fail < 0 {
			s.at[t] = int32(len(s.placed))
			s.placed = append(s.placed, t)
			s.marks = append(s.marks, mark)
			continue
		}
		if !s.relocate(t, fail, mark, maxMoves) {
			return nil, s.moves
		}
	}
	return s.placed, s.moves
}

// startLogging resets the state and starts the undo log for a search.
func (rs *replayDB) startLogging() {
	rs.reset()
	rs.logging = true
	// Every write is logged once per placement: room for all of them and a quarter more
	// placed again, made once (growing a log of millions by appending copies it over and
	// over, into fresh pages each time).
	if want := len(rs.slot) + len(rs.slot)/4 + 1024; cap(rs.undo) < want {
		rs.undo = hugepage.Make[undoRec](0, want)
	}
	rs.clearLog()
	rs.scanned = 0
}

// relocate takes back transaction t, whose operation fail did not see what the state gives
// it (its writes logged from mark on), and moves it where the diagnosis says: back before
// the transaction whose write it missed, or after the next writer it waits for. False says
// the search gives up (no move would do, or more than maxMoves moves, or t moved too often).
func (s *rowSearch) relocate(t int32, fail int, mark int32, maxMoves int) bool {
	rs := s.rs
	var tooOld int32 = -1 // with rt, states overwritten up to a transaction that ended before t began
	if s.rt {
		tooOld = rs.endedBefore(s.placed, rs.h.Txns[t].Time.Begin)
	}
	late, early, ok := rs.diagnose(t, fail, mark, tooOld)
	rs.rollback(mark)
	s.moves++
	if s.moved[t]++; s.moves > maxMoves || s.moved[t] > maxMovesEach {
		return false
	}
	s.epoch++
	switch {
	case !ok:
		return false
	case late >= 0:
		return s.moveBack(t, late, early)
	default:
		return s.wait(t, early)
	}
}

// rowSearch is search's state. Session order is kept: a transaction moved back takes its
// session's earlier transactions placed after the spot with it, and one that waits takes
// the later ones.
type rowSearch struct {
	rs         *replayDB
	h          *history.History
	rt         bool
	prev, next []int32 // per transaction: its session's neighbours
	at         []int32 // per transaction: its position in placed, or -1
	stamp      []int32 // per transaction: the epoch (move) that takes it along
	epoch      int32
	queue      []int32 // the transactions still to place, the next one last
	placed     []int32
	marks      []int32 // the undo log's length before each placed one
	moves      int
	moved      []uint8 // per transaction: how often it was moved
}

func newRowSearch(rs *replayDB, start []int32, rt bool, sess links) *rowSearch {
	n := len(rs.h.Txns)
	s := &rowSearch{
		rs: rs, h: rs.h, rt: rt, prev: sess.prev, next: sess.next,
		at:     make([]int32, n),
		stamp:  make([]int32, n),
		queue:  make([]int32, len(start)),
		placed: make([]int32, 0, len(start)),
		marks:  make([]int32, 0, len(start)),
		moved:  make([]uint8, n),
	}
	for i := range s.at {
		s.at[i] = -1
	}
	for i, t := range start {
		s.queue[len(start)-1-i] = t
	}
	return s
}

// moveBack places t before placed[late], after its session's earlier transactions placed
// from there: it undoes from there and queues them, then t, then the rest. When t also
// saw a state still to come (early >= 0), the next writer of that row comes along from the
// queue, just before t, with its session's earlier transactions placed from there. False
// when no such move is allowed.
func (s *rowSearch) moveBack(t, late int32, early history.Key) bool {
	s.stampEarlier(t, late)
	w := int32(-1)
	if early >= 0 {
		if w = s.takeWriter(late, early); w < 0 {
			return false
		}
	}
	if s.rt && !s.stampEndedBefore(t, w, late) {
		return false
	}
	s.rs.rollback(s.marks[late])
	s.requeue(t, w, late)
	return true
}

// requeue takes back the transactions placed from placed[late] on and queues them so that
// t (and writer w, if >= 0) comes before those not stamped with the epoch and after those
// stamped (its session's earlier ones, and what real time takes along).
func (s *rowSearch) requeue(t, w, late int32) {
	placed := s.placed
	for i := len(placed) - 1; i >= int(late); i-- {
		if u := placed[i]; s.stamp[u] != s.epoch {
			s.queue = append(s.queue, u)
		}
	}
	s.queue = append(s.queue, t)
	if w >= 0 {
		s.queue = append(s.queue, w)
	}
	for i := len(placed) - 1; i >= int(late); i-- {
		if u := placed[i]; s.stamp[u] == s.epoch {
			s.queue = append(s.queue, u)
		}
	}
	for _, u := range placed[late:] {
		s.at[u] = -1
	}
	s.placed, s.marks = placed[:late], s.marks[:late]
}

// stampEarlier takes along u's session's earlier transactions placed from placed[late] on.
func (s *rowSearch) stampEarlier(u, late int32) {
	for p := s.prev[u]; p >= 0 && s.at[p] >= late; p = s.prev[p] {
		s.stamp[p] = s.epoch
	}
}

// takeWriter removes from the queue, and returns, the next writer of key early whose
// session's earlier transactions are placed, taking along those placed from placed[late]
// on; -1 when there is none or, with rt, a transaction queued before it ended before it
// began.
func (s *rowSearch) takeWriter(late int32, early history.Key) int32 {
	j := s.rs.nextWriter(s.queue, early, func(u int32) (take, stop bool) {
		p := s.prev[u]
		return p < 0 || s.at[p] >= 0, false
	})
	if j < 0 {
		return -1
	}
	w := s.queue[j]
	s.stampEarlier(w, late)
	if s.rt {
		for _, u := range s.queue[j+1:] {
			if s.h.Txns[u].Time.End < s.h.Txns[w].Time.Begin {
				return -1
			}
		}
	}
	s.queue = slices.Delete(s.queue, j, j+1)
	return w
}

// stampEndedBefore keeps real time for a move of t (and writer w, if >= 0) before
// placed[late]: t and the transactions moved with it go before the others from
// placed[late] on, so any of those that ended before one of them began comes along too,
// with its session's earlier transactions placed from there (placed keeps real time, so
// looking from the last back finds them all). The transaction whose state t did not see
// cannot come along: false then.
func (s *rowSearch) stampEndedBefore(t, w, late int32) bool {
	txns := s.h.Txns
	begin := txns[t].Time.Begin
	if w >= 0 {
		begin = max(begin, txns[w].Time.Begin)
	}
	for i := len(s.placed) - 1; i >= int(late); i-- {
		u := s.placed[i]
		if s.stamp[u] != s.epoch && txns[u].Time.End >= begin {
			continue
		}
		if i == int(late) {
			return false
		}
		for p := u; p >= 0 && s.at[p] >= late; p = s.prev[p] {
			s.stamp[p] = s.epoch
		}
		begin = max(begin, txns[u].Time.Begin)
	}
	return true
}

// wait queues t just after the next writer of key early, and its session's later
// transactions queued before the writer after t, in their order; with rt, none of the
// transactions up to the writer may have begun after t ended. False when there is no such
// writer.
func (s *rowSearch) wait(t int32, early history.Key) bool {
	for u := s.next[t]; u >= 0; u = s.next[u] {
		s.stamp[u] = s.epoch
	}
	j := s.rs.nextWriter(s.queue, early, func(u int32) (take, stop bool) {
		if s.stamp[u] == s.epoch {
			return false, false // its own session's later ones go after it anyway
		}
		return true, s.rt && s.h.Txns[t].Time.End < s.h.Txns[u].Time.Begin
	})
	if j < 0 {
		return false
	}
	var later []int32 // next last
	keep := s.queue[:j+1]
	for i := j + 1; i < len(s.queue); i++ {
		if u := s.queue[i]; s.stamp[u] == s.epoch {
			later = append(later, u)
		} else {
			keep = append(keep, u)
		}
	}
	s.queue = keep
	s.queue = slices.Insert(s.queue, j, t)
	s.queue = slices.Insert(s.queue, j, later...)
	return true
}

// rollback undoes the logged writes back to the log's length mark.
func (rs *replayDB) rollback(mark int32) {
	nf := len(rs.fields)
	rs.logging = false
	for i := len(rs.undo) - 1; i >= int(mark); i-- {
		r := &rs.undo[i]
		rs.set(r.k, r.was, nf)
		rs.last[r.k] = r.prev
	}
	rs.undo = rs.undo[:mark]
	rs.logging = true
}

// nextWriter returns the index in queue (the next one last) of the first of the next
// searchWindow transactions that writes key k, or -1. check says of each transaction on
// the way whether it may be the writer (take), and whether to stop before it.
func (rs *replayDB) nextWriter(queue []int32, k history.Key, check func(int32) (take, stop bool)) int {
	h := rs.h
	for j := len(queue) - 1; j >= 0 && j >= len(queue)-searchWindow; j-- {
		take, stop := check(queue[j])
		if stop {
			return -1
		}
		if take && writes(h, queue[j], k) {
			return j
		}
	}
	return -1
}

// writes reports whether transaction t of h writes key k.
func writes(h *history.History, t int32, k history.Key) bool {
	for _, o := range h.Txns[t].Ops {
		switch o.Kind {
		case history.OpWrite, history.OpInsert, history.OpDelete:
			if o.Key == k {
				return true
			}
		case history.OpPredWrite:
			for _, r := range h.Pred(o).Rows {
				if r.Match && r.Key == k {
					return true
				}
			}
		}
	}
	return false
}

// endedBefore returns the last position in placed (which keeps real time) of a transaction
// that ended before time begin, or -1. A transaction beginning at begin goes after that
// one, so it cannot have seen a state that one overwrote; the search also takes what is
// placed before it as settled, and looks for the state seen after it (a heuristic: the
// replay of what the search finds is the proof).
func (rs *replayDB) endedBefore(placed []int32, begin int64) int32 {
	// diagnose looks no further back than searchBack places.
	for i := len(placed) - 1; i >= 0 && i >= len(placed)-searchBack-1; i-- {
		if rs.h.Txns[placed[i]].Time.End < begin {
			return int32(i)
		}
	}
	return -1
}

// diagnose says where transaction t, whose operation fail did not see what the state
// gives it (t's operations before it applied, its writes logged from mark on), must go:
// before placed[late] (late >= 0), and/or after a later writer of key early (>= 0). ok is
// false when no move would do. States overwritten at or before position tooOld are not
// taken for the one t saw (see endedBefore).
func (rs *replayDB) diagnose(t int32, fail int, mark int32, tooOld int32) (late int32, early history.Key, ok bool) {
	d := diagnosis{rs: rs, mark: mark, tooOld: tooOld, late: -1, early: -1}
	o := rs.h.Txns[t].Ops[fail]
	switch o.Kind {
	case history.OpRead:
		ok = d.want(o.Key, func(x rowVersion) bool { return sees(t, o.Src, o.Value, x) })
	case history.OpInsert:
		ok = d.want(o.Key, func(x rowVersion) bool { return !x.live() })
	case history.OpPredRead, history.OpPredWrite:
		ok = d.predicate(o)
	}
	if !ok || d.early < 0 && d.late < 0 {
		return -1, -1, false
	}
	return d.late, d.early, true
}

// diagnosis is what diagnose has found so far: the earliest position late a transaction
// must go before, and the key early whose next writer it must go after (-1: none).
type diagnosis struct {
	rs     *replayDB
	mark   int32 // the undo log's length before the transaction's writes
	tooOld int32
	late   int32
	early  history.Key
}

// want records that key k must be in a state accept takes, which it is not now; false
// when the transaction wrote k itself before the read.
func (d *diagnosis) want(k history.Key, accept func(x rowVersion) bool) bool {
	rs := d.rs
	rec := rs.last[k]
	if rec >= d.mark {
		return false // t wrote it itself before the read
	}
	for ; rec >= 0 && rs.undo[rec].pos >= rs.pos-searchBack && rs.undo[rec].pos > d.tooOld; rec = rs.undo[rec].prev {
		r := &rs.undo[rec]
		if r.prev >= 0 && rs.undo[r.prev].pos == r.pos {
			continue // the state before a second write of one transaction: not seen by others
		}
		if accept(r.was) {
			if d.late < 0 || r.pos < d.late {
				d.late = r.pos
			}
			return true
		}
	}
	d.early = k
	return true
}

// predicate records the states predicate operation o's rows must be in: each row it lists
// as it lists it, and every other row it does not select out of its range. False when no
// move would do.
func (d *diagnosis) predicate(o history.Op) bool {
	rs := d.rs
	po := rs.h.Pred(o)
	f := int(rs.field[o.PredIndex()])
	a, b := rs.cols[f].between(po.Pred.Lo, po.Pred.Hi)
	r := inRange{nf: len(rs.fields), f: f, a: a, b: b, images: rs.images}
	rs.nextEpoch()
	return d.listed(po, o.Kind == history.OpPredRead, r) && d.unlisted(r)
}

// inRange says whether a row image's value of column f ranks in [a, b): whether a range
// predicate selects it.
type inRange struct {
	nf, f, a, b int
	images      []int32
}

func (r inRange) in(img int32) bool {
	if img < 0 {
		return false
	}
	rk := int(r.images[int(img)*r.nf+r.f])
	return r.a <= rk && rk < r.b
}

// listed records the states of the rows predicate operation po lists (read: a predicate
// read, whose rows hold the values listed), marking each with the epoch. False when a row
// is listed twice, or no move would do.
func (d *diagnosis) listed(po *history.PredOp, read bool, rg inRange) bool {
	rs := d.rs
	for _, r := range po.Rows {
		if rs.mark[r.Key] == rs.epoch {
			return false // listed twice: no order helps
		}
		rs.mark[r.Key] = rs.epoch
		var accept func(rowVersion) bool
		switch {
		case !r.Match:
			accept = func(x rowVersion) bool { return !rg.in(x.img) }
		case read:
			accept = func(x rowVersion) bool { return x.v == r.Value && rg.in(x.img) }
		default:
			accept = func(x rowVersion) bool { return rg.in(x.img) }
		}
		if !accept(rs.rows[r.Key]) && !d.want(r.Key, accept) {
			return false
		}
	}
	return true
}

// unlisted records that every row the operation did not list (not marked with the epoch)
// must be in a state its range does not select.
func (d *diagnosis) unlisted(rg inRange) bool {
	rs := d.rs
	rs.scanned += len(rs.rows)
	for k, x := range rs.rows {
		if rs.mark[k] != rs.epoch && rg.in(x.img) {
			if !d.want(history.Key(k), func(x rowVersion) bool { return !rg.in(x.img) }) {
				return false
			}
		}
	}
	return true
}

// searchSplit is the search for histories whose read-only transactions the clocks place
// badly (a long read-only transaction under snapshot isolation saw the state at its first
// statement, anywhere in its client interval). A read-only transaction changes no state,
// so it can be placed once the others have an order: searchSplit searches an order of the
// transactions that write (start without the read-only ones, session order kept among
// them), then replays it and gives each read-only transaction the first state in its
// window whose rows its reads saw. The window runs from after its session's previous
// writing transaction (and the session's previous read-only one) to before its session's
// next writing transaction; with rt, it also starts after every writing transaction that
// ended before it began and ends before every one that began after it ended. It returns
// nil when the search fails or a read-only transaction finds no state in its window.
//
// The sweep that fits the read-only transactions in is itself a replay of the order it
// returns: from the initial state, every transaction in that order, each seeing what the
// state gives it (a read-only transaction tried at a state that does not give it changes
// nothing). So an order it returns is proved as replay would prove it.
func (rs *replayDB) searchSplit(ctx context.Context, start []int32, readOnly []bool, rt bool) (order []int32, moves int) {
	h := rs.h
	upd, ro := splitReadOnly(start, readOnly)
	if len(ro) == 0 || len(upd) == 0 {
		return nil, 0
	}
	// The search keeps session order among the writing transactions.
	found, moves := rs.search(ctx, upd, rt, sessionLinks(h, readOnly))
	if found == nil {
		return nil, moves
	}
	s := &roSweep{rs: rs, h: h, readOnly: readOnly, found: found, ro: ro}
	s.sessionWindows()
	if rt && !s.realTimeWindows() {
		return nil, moves
	}
	if !s.sweep(ctx, rt, len(start)) {
		return nil, moves
	}
	return s.order, moves
}

// splitReadOnly splits start, keeping its order, into the transactions that write (upd)
// and the read-only ones (ro).
func splitReadOnly(start []int32, readOnly []bool) (upd, ro []int32) {
	for _, t := range start {
		if readOnly[t] {
			ro = append(ro, t)
		} else {
			upd = append(upd, t)
		}
	}
	return upd, ro
}

// roSweep is searchSplit's fitting of the read-only transactions ro into the writing
// transactions' order found.
type roSweep struct {
	rs       *replayDB
	h        *history.History
	readOnly []bool
	found    []int32
	ro       []int32
	lo, hi   []int32 // per read-only transaction: its window of states (state p: after found[:p])
	placedAt []int32 // per read-only transaction: the state it was placed at, -1 if not
	order    []int32
	active   []int32 // read-only transactions in their window, not placed
}

// sessionWindows sets each read-only transaction's window [lo, hi] from its session: after
// its session's previous writing transaction, before its next one.
func (s *roSweep) sessionWindows() {
	h := s.h
	pos := make([]int32, len(h.Txns))
	for p, t := range s.found {
		pos[t] = int32(p)
	}
	s.lo, s.hi = make([]int32, len(h.Txns)), make([]int32, len(h.Txns))
	for i := range h.Sessions {
		s.sessionWindow(&h.Sessions[i], pos)
	}
}

// sessionWindow sets the windows of session se's read-only transactions (pos: each writing
// transaction's position in found).
func (s *roSweep) sessionWindow(se *history.Session, pos []int32) {
	h := s.h
	low := int32(0)
	var waiting []int32 // read-only transactions since the last writing one
	for _, t := range se.Txns {
		if !h.Txns[t].Committed() {
			continue
		}
		if s.readOnly[t] {
			s.lo[t] = low
			waiting = append(waiting, int32(t))
			continue
		}
		for _, r := range waiting {
			s.hi[r] = pos[t]
		}
		waiting = waiting[:0]
		low = pos[t] + 1
	}
	for _, r := range waiting {
		s.hi[r] = int32(len(s.found))
	}
}

// realTimeWindows narrows each window to the states after every writing transaction that
// ended before r began, and before every one that began after r ended: the first state p
// whose transactions from p on all ended after r began, and the first p whose transaction
// began after r ended (the suffix minimum of ends and the prefix maximum of begins are
// sorted). False when a window is left empty.
func (s *roSweep) realTimeWindows() bool {
	h, found := s.h, s.found
	m := int32(len(found))
	sufEnd, preBegin := make([]int64, m+1), make([]int64, m)
	sufEnd[m] = 1<<63 - 1
	for p := m - 1; p >= 0; p-- {
		sufEnd[p] = min(sufEnd[p+1], h.Txns[found[p]].Time.End)
	}
	for p := range m {
		preBegin[p] = h.Txns[found[p]].Time.Begin
		if p > 0 {
			preBegin[p] = max(preBegin[p], preBegin[p-1])
		}
	}
	for _, r := range s.ro {
		b, e := h.Txns[r].Time.Begin, h.Txns[r].Time.End
		first, _ := slices.BinarySearch(sufEnd, b)     // the first p with sufEnd[p] >= b
		after, _ := slices.BinarySearch(preBegin, e+1) // the first p with preBegin[p] > e
		s.lo[r], s.hi[r] = max(s.lo[r], int32(first)), min(s.hi[r], int32(after))
		if s.lo[r] > s.hi[r] {
			return false
		}
	}
	return true
}

// sweep replays the states once, from the first; a read-only transaction is tried at each
// state of its window, from its start, once its session's previous one is placed. False
// when one finds no state in its window or the writing transactions' order does not
// replay.
func (s *roSweep) sweep(ctx context.Context, rt bool, n int) bool {
	rs, ro, found := s.rs, s.ro, s.found
	m := int32(len(found))
	s.start(n)
	due := 0 // ro[due:] have not reached their window
	for p := int32(0); p <= m; p++ {
		if p&1023 == 0 && ctx.Err() != nil {
			return false
		}
		due = s.admit(p, due)
		here := len(s.order)
		if !s.placeAt(p) {
			return false
		}
		if rt {
			s.byBegin(s.order[here:])
		}
		if p == m {
			break
		}
		if rs.apply(found[p]) >= 0 {
			return false // the search's order replays without the read-only ones
		}
		s.order = append(s.order, found[p])
	}
	return len(s.active) == 0 && due == len(ro)
}

// admit makes active the read-only transactions from ro[due:] (sorted by the start of their
// window) whose window starts by state p, and returns the new due.
func (s *roSweep) admit(p int32, due int) int {
	for due < len(s.ro) && s.lo[s.ro[due]] <= p {
		s.active = append(s.active, s.ro[due])
		due++
	}
	return due
}

// start sorts the read-only transactions by the start of their window and resets the
// state and the order (of n transactions) for the sweep.
func (s *roSweep) start(n int) {
	slices.SortStableFunc(s.ro, func(a, b int32) int { return cmp.Compare(s.lo[a], s.lo[b]) })
	s.placedAt = make([]int32, len(s.h.Txns))
	for _, r := range s.ro {
		s.placedAt[r] = -1
	}
	s.rs.reset()
	s.rs.logging = false
	s.order = make([]int32, 0, n)
}

// byBegin orders read-only transactions placed at one state, which may go in any order, by
// begin time, so that one that ended before another began comes first (session order
// agrees).
func (s *roSweep) byBegin(here []int32) {
	h := s.h
	slices.SortStableFunc(here, func(a, b int32) int {
		return cmp.Compare(h.Txns[a].Time.Begin, h.Txns[b].Time.Begin)
	})
}

// placeAt places the active read-only transactions that state p satisfies; a placement
// may let a session's next read-only transaction try, so it goes round until nothing
// changes. False when one's window closes at p.
func (s *roSweep) placeAt(p int32) bool {
	for changed := true; changed; {
		changed = false
		keep := s.active[:0]
		for _, r := range s.active {
			placed, ok := s.place(r, p)
			if !ok {
				return false
			}
			if placed {
				changed = true
				continue
			}
			keep = append(keep, r)
		}
		s.active = keep
	}
	return true
}

// place places read-only transaction r at state p if its session's previous one is placed
// and p gives it what it read; false when its window closes at p.
func (s *roSweep) place(r, p int32) (placed, ok bool) {
	if q := s.sessPrevRO(r); q >= 0 && s.placedAt[q] < 0 {
		// Its window must not close before its session's previous one found a state.
		return false, s.hi[r] > p
	}
	if s.rs.apply(r) < 0 {
		s.placedAt[r] = p
		s.order = append(s.order, r)
		return true, true
	}
	return false, s.hi[r] > p // else no state in its window
}

// sessPrevRO is r's session's previous read-only transaction, or -1.
func (s *roSweep) sessPrevRO(r int32) int32 {
	if p := s.rs.sess.prev[r]; p >= 0 && s.readOnly[p] {
		return p
	}
	return -1
}
