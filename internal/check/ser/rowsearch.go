package ser

import (
	"context"
	"slices"

	"isovet/history"
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
func (rs *replayDB) search(ctx context.Context, start []int32, rt bool) (order []int32, moves int) {
	rs.reset()
	rs.logging = true
	defer func() { rs.logging = false }()
	rs.undo = rs.undo[:0]
	rs.scanned = 0
	if len(rs.last) != len(rs.rows) {
		rs.last = make([]int32, len(rs.rows))
	}
	for k := range rs.last {
		rs.last[k] = -1
	}
	// Session order is kept: a transaction moved back takes its session's earlier
	// transactions placed after the spot with it, and one that waits takes the later ones.
	h := rs.h
	prev, next := rs.prev, rs.next
	at := make([]int32, len(h.Txns)) // position in placed, or -1
	for i := range at {
		at[i] = -1
	}
	stamp := make([]int32, len(h.Txns))
	epoch := int32(0)
	// queue holds the transactions still to place, the next one last.
	queue := make([]int32, len(start))
	for i, t := range start {
		queue[len(start)-1-i] = t
	}
	placed := make([]int32, 0, len(start))
	marks := make([]int32, 0, len(start)) // the undo log's length before each placed one
	budget := 2*len(start) + 1024         // placements
	// A serializable history's clocks misplace few transactions, each by a little; a
	// search that moves many, or one many times, is churning through a history that is
	// not (or not near its clocks' order), and gives up early.
	maxMoves := len(start)/16 + 256
	moved := make([]uint8, len(h.Txns))
	for len(queue) > 0 {
		if budget--; budget < 0 || rs.scanned > maxScanned || (budget&255 == 0 && ctx.Err() != nil) {
			return nil, moves
		}
		t := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		mark := int32(len(rs.undo))
		rs.pos = int32(len(placed))
		fail := rs.apply(t)
		if fail < 0 {
			at[t] = int32(len(placed))
			placed = append(placed, t)
			marks = append(marks, mark)
			continue
		}
		late, early, ok := rs.diagnose(t, fail, mark)
		rs.rollback(mark)
		moves++
		if moved[t]++; moves > maxMoves || moved[t] > maxMovesEach {
			return nil, moves
		}
		epoch++
		switch {
		case !ok:
			return nil, moves
		case late >= 0:
			// Place t before placed[late], after its session's earlier transactions placed
			// from there: undo from there and queue them, then t, then the rest. When t
			// also saw a state still to come (early), the next writer of that row comes
			// along from the queue, just before t, with its session's earlier transactions
			// placed from there.
			for p := prev[t]; p >= 0 && at[p] >= late; p = prev[p] {
				stamp[p] = epoch
			}
			w := int32(-1)
			if early >= 0 {
				// The writer must have its session's earlier transactions placed; those
				// from placed[late] on move back with it.
				j := rs.nextWriter(queue, early, func(u int32) (take, stop bool) {
					p := prev[u]
					return p < 0 || at[p] >= 0, false
				})
				if j < 0 {
					return nil, moves
				}
				w = queue[j]
				for p := prev[w]; p >= 0 && at[p] >= late; p = prev[p] {
					stamp[p] = epoch
				}
				if rt {
					for _, u := range queue[j+1:] {
						if h.Txns[u].Time.End < h.Txns[w].Time.Begin {
							return nil, moves
						}
					}
				}
				queue = slices.Delete(queue, j, j+1)
			}
			if rt {
				// t and the session's transactions moved with it go before the others from
				// placed[late] on: none of those may have ended before one of them began.
				begin := h.Txns[t].Time.Begin
				if w >= 0 {
					begin = max(begin, h.Txns[w].Time.Begin)
				}
				for _, u := range placed[late:] {
					if stamp[u] == epoch {
						begin = max(begin, h.Txns[u].Time.Begin)
					}
				}
				for _, u := range placed[late:] {
					if stamp[u] != epoch && h.Txns[u].Time.End < begin {
						return nil, moves
					}
				}
			}
			rs.rollback(marks[late])
			for i := len(placed) - 1; i >= int(late); i-- {
				if u := placed[i]; stamp[u] != epoch {
					queue = append(queue, u)
				}
			}
			queue = append(queue, t)
			if w >= 0 {
				queue = append(queue, w)
			}
			for i := len(placed) - 1; i >= int(late); i-- {
				if u := placed[i]; stamp[u] == epoch {
					queue = append(queue, u)
				}
			}
			for _, u := range placed[late:] {
				at[u] = -1
			}
			placed, marks = placed[:late], marks[:late]
		default:
			for s := next[t]; s >= 0; s = next[s] {
				stamp[s] = epoch
			}
			// t goes after the transactions up to the writer: with rt, none of them may have
			// begun after it ended.
			j := rs.nextWriter(queue, early, func(u int32) (take, stop bool) {
				if stamp[u] == epoch {
					return false, false // its own session's later ones go after it anyway
				}
				return true, rt && h.Txns[t].Time.End < h.Txns[u].Time.Begin
			})
			if j < 0 {
				return nil, moves
			}
			// t goes just after the writer, and its session's later transactions queued
			// before the writer go after t, in their order.
			var later []int32 // next last
			keep := queue[:j+1]
			for i := j + 1; i < len(queue); i++ {
				if u := queue[i]; stamp[u] == epoch {
					later = append(later, u)
				} else {
					keep = append(keep, u)
				}
			}
			queue = keep
			queue = slices.Insert(queue, j, t)
			queue = slices.Insert(queue, j, later...)
		}
	}
	return placed, moves
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
		if !take {
			continue
		}
		for _, o := range h.Txns[queue[j]].Ops {
			switch o.Kind {
			case history.OpWrite, history.OpInsert, history.OpDelete:
				if o.Key == k {
					return j
				}
			case history.OpPredWrite:
				for _, r := range h.Pred(o).Rows {
					if r.Match && r.Key == k {
						return j
					}
				}
			}
		}
	}
	return -1
}

// diagnose says where transaction t, whose operation fail did not see what the state
// gives it (t's operations before it applied, its writes logged from mark on), must go:
// before placed[late] (late >= 0), and/or after a later writer of key early (>= 0). ok is
// false when no move would do.
func (rs *replayDB) diagnose(t int32, fail int, mark int32) (late int32, early history.Key, ok bool) {
	h := rs.h
	nf := len(rs.fields)
	late, early = -1, -1
	// want records that key k must be in a state accept takes, which it is not now.
	want := func(k history.Key, accept func(x rowVersion) bool) bool {
		rec := rs.last[k]
		if rec >= mark {
			return false // t wrote it itself before the read
		}
		for ; rec >= 0 && rs.undo[rec].pos >= rs.pos-searchBack; rec = rs.undo[rec].prev {
			r := &rs.undo[rec]
			if r.prev >= 0 && rs.undo[r.prev].pos == r.pos {
				continue // the state before a second write of one transaction: not seen by others
			}
			if accept(r.was) {
				if late < 0 || r.pos < late {
					late = r.pos
				}
				return true
			}
		}
		early = k
		return true
	}
	o := h.Txns[t].Ops[fail]
	switch o.Kind {
	case history.OpRead:
		if !want(o.Key, func(x rowVersion) bool { return sees(t, o.Src, o.Value, x) }) {
			return -1, -1, false
		}
	case history.OpInsert:
		if !want(o.Key, func(x rowVersion) bool { return !x.live() }) {
			return -1, -1, false
		}
	case history.OpPredRead, history.OpPredWrite:
		po := h.Pred(o)
		read := o.Kind == history.OpPredRead
		f := int(rs.field[o.PredIndex()])
		a, b := rs.cols[f].between(po.Pred.Lo, po.Pred.Hi)
		in := func(img int32) bool {
			if img < 0 {
				return false
			}
			rk := int(rs.images[int(img)*nf+f])
			return a <= rk && rk < b
		}
		rs.nextEpoch()
		for _, r := range po.Rows {
			if rs.mark[r.Key] == rs.epoch {
				return -1, -1, false // listed twice: no order helps
			}
			rs.mark[r.Key] = rs.epoch
			var accept func(rowVersion) bool
			switch {
			case !r.Match:
				accept = func(x rowVersion) bool { return !in(x.img) }
			case read:
				accept = func(x rowVersion) bool { return x.v == r.Value && in(x.img) }
			default:
				accept = func(x rowVersion) bool { return in(x.img) }
			}
			if !accept(rs.rows[r.Key]) && !want(r.Key, accept) {
				return -1, -1, false
			}
		}
		rs.scanned += len(rs.rows)
		for k, x := range rs.rows {
			if rs.mark[k] != rs.epoch && in(x.img) {
				if !want(history.Key(k), func(x rowVersion) bool { return !in(x.img) }) {
					return -1, -1, false
				}
			}
		}
	default:
		return -1, -1, false
	}
	if early < 0 && late < 0 {
		return -1, -1, false
	}
	return late, early, true
}
