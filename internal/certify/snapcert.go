package certify

import (
	"cmp"
	"context"
	"math/bits"
	"slices"

	"github.com/isovet/isovet/history"
)

// The snapshot certificate: snapshot isolation proved by replaying the execution the
// history's own clocks describe, on whole rows, before any dependency analysis.
//
// A history that is snapshot isolated but not serializable (a write skew, a phantom that
// SI allows) has no serial order, so the row certificate cannot pass it, and the general
// SI pipeline must then resolve every row a predicate did not return: on a memdb
// BlindW-Pred history of 831 transactions with a phantom, 2.1 million constraints and
// 105 s of pruning. But a database that gives snapshot isolation ran an execution that
// proves it, and its clocks usually say which: each transaction read the snapshot of its
// start and installed its writes at its commit. So the certificate takes a snapshot point
// and a commit point for every committed transaction, from the database's start and
// commit timestamps or from the client's begin and end times, and replays the events in
// order on the row database of the row certificate (replayDB):
//
//   - at its snapshot point a transaction runs whole on the state there, as apply does for
//     the row certificate (every item read sees the value, every predicate read exactly
//     the rows, every predicate write matches exactly the rows, its own writes seen by its
//     later operations); its writes are then taken back and kept aside;
//   - at its commit point its final version of each row it wrote is installed, unless
//     another transaction installed a version of that row after its snapshot point (two
//     concurrent writers of one row: first-committer-wins does not hold for these points).
//
// A replay that gets through is the proof: those points form an execution in which every
// transaction read a snapshot of the transactions committed before it, and no two
// concurrent ones wrote the same row, i.e. a snapshot-isolated execution (Adya's SI, which
// the si checker's plain level is) that returns everything the history recorded. When each
// transaction's snapshot point also comes after its session predecessor's commit point,
// the execution is strong-session SI; when it comes after the commit point of every
// transaction that ended (client time, widened by the skew) before it began, strong SI.
// A replay that fails proves nothing (the clocks may not be the execution's, or the
// history may not be SI), and the caller's pipeline decides. It declines what the row
// certificate declines (replayDB).
//
// Ties: at one time, commit points go before snapshot points (a transaction that
// committed at t is visible to a snapshot at t, as in Chronos, Def. 6), and a transaction
// whose snapshot and commit coincide takes its snapshot right before its own commit.

// snapCert is what [certifySnapshots] proved: snapshot and commit points of the
// committed transactions, taken from the clocks By names, replayed on whole rows.
type snapCert struct {
	// By names the clocks the points came from.
	By string
	// Keeps says whether each snapshot also follows the commit of the transaction's session
	// predecessor, and of every transaction that ended before it began.
	Keeps
}

// Note says how the history passed, in a sentence for a report.
func (sc snapCert) Note() string {
	return sc.note("passed with snapshots and commits taken from the "+sc.By+", replayed on whole rows: every transaction read, and every predicate selected, what the snapshot of the transactions committed before it gives, and no two concurrent transactions wrote one row",
		"; the snapshots also follow session order and client real time",
		"; the snapshots also follow session order")
}

// certifySnapshots tries to prove r's history snapshot isolated by replaying the execution
// its clocks describe (see snapcert.go). ok says it found one; then the history is snapshot
// isolated, and strong-session or strong SI as the certificate says. It never refutes: !ok
// proves nothing.
func (r *rowDB) certifySnapshots(ctx context.Context, skew int64) (snapCert, bool) {
	h := r.h
	committed, dbts, client := snapClocks(h)
	if len(committed) == 0 || !dbts && !client {
		return snapCert{}, false
	}
	rs, ok := r.db()
	if !ok {
		return snapCert{}, false
	}
	sess := sessionLinks(h, nil)
	keys := writeKeys(h)
	for _, c := range snapCandidates(h, dbts, client) {
		if !c.ok || ctx.Err() != nil {
			continue
		}
		ev := snapEvents(committed, c.pts)
		snapAt, commitAt, ok := rs.replaySnapshots(ctx, ev, keys, c.move)
		if !ok {
			continue
		}
		return snapCert{By: c.by, Keeps: snapKeeps(h, committed, sess, snapAt, commitAt, skew)}, true
	}
	return snapCert{}, false
}

// snapKeeps says which orders the snapshots (snapAt) and commits (commitAt) of the
// committed transactions keep: session order when each snapshot follows the session
// predecessor's commit, real time when it follows every commit that ended before it began.
func snapKeeps(h *history.History, committed []int32, sess links, snapAt, commitAt []int32, skew int64) Keeps {
	var k Keeps
	k.Session = !slices.ContainsFunc(committed, func(t int32) bool {
		p := sess.prev[t]
		return p >= 0 && commitAt[p] > snapAt[t]
	})
	k.Realtime = h.HasTime() && snapshotsKeepRealTime(h, committed, snapAt, commitAt, skew)
	return k
}

// snapClocks returns h's committed transactions, and whether every one has database start
// and commit timestamps (dbts), and a client interval (client), in order.
func snapClocks(h *history.History) (committed []int32, dbts, client bool) {
	dbts, client = true, true
	for t := range h.Txns {
		x := &h.Txns[t]
		if !x.Committed() {
			continue
		}
		committed = append(committed, int32(t))
		dbts = dbts && x.HasTimestamps && x.Start.Compare(x.Commit) <= 0
		client = client && x.HasTime && x.Time.Begin <= x.Time.End
	}
	return committed, dbts, client
}

// snapCandidate is a source of snapshot and commit points the certificate tries.
type snapCandidate struct {
	by   string
	ok   bool
	move bool // snapshots may move later within their transaction (see replaySnapshots)
	pts  func(t int32) (snap, commit history.Timestamp)
}

// snapCandidates are the sources of points, in the order tried: the database's start and
// commit timestamps (when dbts), then the client times (when client).
func snapCandidates(h *history.History, dbts, client bool) []snapCandidate {
	dbName := "database start and commit timestamps"
	if h.DerivedTimestamps() {
		dbName += " (derived from its snapshots)"
	}
	return []snapCandidate{
		{dbName, dbts, false, func(t int32) (history.Timestamp, history.Timestamp) {
			return h.Txns[t].Start, h.Txns[t].Commit
		}},
		{"client times (each snapshot at its transaction's begin or at the first later commit where it replays, each commit at its end or earlier where a snapshot needs it)", client, true, func(t int32) (history.Timestamp, history.Timestamp) {
			iv := h.Txns[t].Time
			return history.Timestamp{Physical: iv.Begin}, history.Timestamp{Physical: iv.End}
		}},
	}
}

// snapEvent is a transaction's snapshot or commit point.
type snapEvent struct {
	at     history.Timestamp
	phase  int8 // at one time: 0 commits, 1 point transactions (snapshot, then commit), 2 snapshots
	commit bool
	t      int32
}

// snapEvents returns the snapshot and commit points of the committed transactions in replay
// order (see the ties above).
func snapEvents(committed []int32, pts func(t int32) (snap, commit history.Timestamp)) []snapEvent {
	ev := make([]snapEvent, 0, 2*len(committed))
	for _, t := range committed {
		s, c := pts(t)
		if s.Compare(c) == 0 {
			ev = append(ev, snapEvent{at: s, phase: 1, t: t}, snapEvent{at: c, phase: 1, commit: true, t: t})
			continue
		}
		ev = append(ev, snapEvent{at: s, phase: 2, t: t}, snapEvent{at: c, phase: 0, commit: true, t: t})
	}
	slices.SortFunc(ev, replayOrder)
	return ev
}

// replayOrder orders events by time, then phase (see the ties above), then transaction;
// a point transaction's snapshot comes before its commit.
func replayOrder(a, b snapEvent) int {
	if c := a.at.Compare(b.at); c != 0 {
		return c
	}
	if c := cmp.Compare(a.phase, b.phase); c != 0 {
		return c
	}
	if c := cmp.Compare(a.t, b.t); c != 0 {
		return c
	}
	if a.commit == b.commit {
		return 0
	}
	if b.commit { // a point transaction's snapshot, then its commit
		return -1
	}
	return 1
}

// replaySnapshots replays the events from the initial state and reports whether every
// transaction saw, at its snapshot point, what the state there gives it, and no row got
// two versions from concurrent transactions (see the comment at the top). It returns the
// event index of each transaction's snapshot and commit: a snapshot at index i comes after
// the commit at i, except a transaction's own (snapshot just before its commit). keys are
// the keys each transaction writes (writeKeys).
//
// With move, a snapshot may move later, within the transaction's interval: client times
// bound a snapshot only by the transaction's begin and commit, and a database takes it at
// the first statement, not when the client began. A transaction whose operations do not
// replay at its snapshot point, or whose writes a later commit conflicts with, is tried
// again right after each later commit and, last, just before its own commit; it takes the
// first point where it replays with no conflicting commit after it. If even the last point
// does not replay, open transactions that replay may commit early, there (one at a time,
// the soonest to end first, until it replays; never two writing one row): a client sees
// its commit acknowledged some time after the server made it. Writes are fixed by the
// history, so only the reads decide where a transaction replays, and any points that
// replay, with no conflicting commit between a transaction's snapshot and its commit,
// within its interval, give a snapshot-isolated execution; so the choice is free.
func (rs *replayDB) replaySnapshots(ctx context.Context, ev []snapEvent, keys [][]history.Key, move bool) (snapAt, commitAt []int32, ok bool) {
	rs.reset()
	rs.clearLog()
	defer func() { rs.logging, rs.undo = false, rs.undo[:0] }()
	s := newSnapReplay(rs, ev, keys, move)
	for i, e := range ev {
		if i&1023 == 0 && ctx.Err() != nil {
			return nil, nil, false
		}
		var ok bool
		if e.commit {
			ok = s.end(e.t, int32(i))
		} else {
			ok = s.begin(e.t, int32(i))
		}
		if !ok {
			return nil, nil, false
		}
	}
	return s.snapAt, s.commitAt, true
}

// snapReplay is replaySnapshots' state. Open transactions (between their two points) hold
// a slot; conflicts are found through a bitmask of slots per key: the open transactions
// that write it.
type snapReplay struct {
	rs       *replayDB
	keys     [][]history.Key
	move     bool
	words    int // bitmask words per key
	slot     []int32
	free     []int32
	nslots   int32
	writers  []uint64 // per key: the slots of open transactions writing it
	bySlot   []int32  // per slot: its transaction
	valid    []bool   // replayed at snapAt, and no conflicting commit since
	invalid  []int32  // open transactions not valid, to try again
	conflict []uint64
	snapAt   []int32
	commitAt []int32
	commitEv []int32 // per transaction: the index of its commit event
	opens    []int32 // the open transactions
	done     []bool  // committed early
	touched  []int32 // per key: the stamp of the early commit that last wrote it
	stamp    int32
}

func newSnapReplay(rs *replayDB, ev []snapEvent, keys [][]history.Key, move bool) *snapReplay {
	words, open := 1, 0
	for _, e := range ev {
		if e.commit {
			open--
		} else {
			open++
			words = max(words, (open+63)/64)
		}
	}
	n := len(rs.h.Txns)
	s := &snapReplay{
		rs: rs, keys: keys, move: move, words: words,
		slot:     make([]int32, n),
		writers:  make([]uint64, len(rs.rows)*words),
		bySlot:   make([]int32, 64*words),
		valid:    make([]bool, n),
		conflict: make([]uint64, words),
		snapAt:   make([]int32, n),
		commitAt: make([]int32, n),
		commitEv: make([]int32, n),
		done:     make([]bool, n),
		touched:  make([]int32, len(rs.rows)),
	}
	for i, e := range ev {
		if e.commit {
			s.commitEv[e.t] = int32(i)
		}
	}
	return s
}

// try runs t on the current state and reports whether it replayed; the state is left as
// it was.
func (s *snapReplay) try(t int32) bool {
	rs := s.rs
	rs.logging = true
	mark := int32(len(rs.undo))
	ok := rs.apply(t) < 0
	rs.rollback(mark)
	rs.logging = false
	return ok
}

// retry tries the invalid open transactions again at the current state (index i).
func (s *snapReplay) retry(i int32) {
	s.invalid = slices.DeleteFunc(s.invalid, func(t int32) bool {
		if s.try(t) {
			s.valid[t], s.snapAt[t] = true, i
			return true
		}
		return false
	})
}

// begin opens t at index i: it takes a slot, is marked as writing its keys, and takes its
// snapshot there if it replays; false, and the replay fails, when it does not and a
// snapshot may not move.
func (s *snapReplay) begin(t, i int32) bool {
	s.opens = append(s.opens, t)
	if len(s.free) > 0 {
		s.slot[t], s.free = s.free[len(s.free)-1], s.free[:len(s.free)-1]
	} else {
		s.slot[t] = s.nslots
		s.nslots++
	}
	s.bySlot[s.slot[t]] = t
	w, bit := int(s.slot[t])/64, uint64(1)<<(s.slot[t]%64)
	for _, k := range s.keys[t] {
		s.writers[int(k)*s.words+w] |= bit
	}
	// (Committing others early here too made PostgreSQL histories fail sooner: a
	// snapshot that does not replay at its begin more often needs a later point.)
	s.snapAt[t], s.valid[t] = i, s.try(t)
	if !s.valid[t] {
		if !s.move {
			return false
		}
		s.invalid = append(s.invalid, t)
	}
	return true
}

// end commits t at index i (unless it was committed early); false, and the replay fails,
// when it has no snapshot that replays or a concurrent transaction installed a version of
// a row first.
func (s *snapReplay) end(t, i int32) bool {
	if s.done[t] {
		return true // committed early (below)
	}
	if !s.valid[t] && !s.lastPoint(t, i) {
		return false
	}
	if !s.commit(t, i) {
		return false // a concurrent transaction installed a version of a row first
	}
	if len(s.invalid) > 0 {
		s.retry(i)
	}
	return true
}

// lastPoint tries t, which has no valid snapshot, at the last point left: just before its
// own commit (index i). Failing that, commits the client had not seen acknowledged yet may
// have been made already: it commits open transactions early, the soonest to end first,
// until t replays. False when t does not replay there.
func (s *snapReplay) lastPoint(t, i int32) bool {
	if !s.move {
		return false
	}
	if !s.try(t) && !s.early(t, i) {
		return false
	}
	s.invalid = slices.DeleteFunc(s.invalid, func(u int32) bool { return u == t })
	s.valid[t], s.snapAt[t] = true, i
	return true
}

// commit installs t's writes at index i, closes t, and marks every open transaction
// writing a key t wrote as no longer valid; it returns false, and the replay fails, if
// t itself is not valid, or without move if another open transaction writes its keys.
func (s *snapReplay) commit(t, i int32) bool {
	if !s.valid[t] {
		return false // never without a snapshot that replays with no conflicting commit since
	}
	s.rs.install(t)
	s.commitAt[t] = i
	s.opens = slices.DeleteFunc(s.opens, func(u int32) bool { return u == t })
	words := s.words
	w, bit := int(s.slot[t])/64, uint64(1)<<(s.slot[t]%64)
	clear(s.conflict)
	for _, k := range s.keys[t] {
		s.writers[int(k)*words+w] &^= bit
		for j := range words {
			s.conflict[j] |= s.writers[int(k)*words+j]
		}
	}
	s.free = append(s.free, s.slot[t])
	return s.invalidate()
}

// invalidate marks every valid open transaction in s.conflict's slots as no longer valid;
// false, without move, when there is one.
func (s *snapReplay) invalidate() bool {
	for j, m := range s.conflict {
		for m != 0 {
			u := s.bySlot[j*64+bits.TrailingZeros64(m)]
			m &= m - 1
			if s.valid[u] {
				if !s.move {
					return false
				}
				s.valid[u] = false
				s.invalid = append(s.invalid, u)
			}
		}
	}
	return true
}

// early makes t replay at the current state (index i) by committing open transactions
// early, if it can: a commit the client had not seen acknowledged yet may have been made
// already. It tries the open valid ones, the soonest to end first, skipping any that
// writes a row an earlier one of them wrote (they would be concurrent writers), and
// commits them one at a time until t replays; the state and every record are as before
// when t does not replay with all of them.
func (s *snapReplay) early(t, i int32) bool {
	if !s.move {
		return false
	}
	took, found := s.earlyCommits(t)
	if !found {
		return false
	}
	for _, u := range took {
		if !s.commit(u, i) {
			return false // (the skip above keeps every one valid)
		}
		s.done[u] = true
	}
	return true
}

// earlyCommits finds the open valid transactions to commit early for t to replay (see
// early), installing them one at a time on a logged state it then rolls back: took are
// those it installed, found says t replayed after the last.
func (s *snapReplay) earlyCommits(t int32) (took []int32, found bool) {
	rs := s.rs
	cands := slices.DeleteFunc(slices.Clone(s.opens), func(u int32) bool { return u == t || !s.valid[u] })
	slices.SortFunc(cands, func(a, b int32) int { return cmp.Compare(s.commitEv[a], s.commitEv[b]) })
	s.stamp++
	mark := int32(len(rs.undo))
	for _, u := range cands {
		if slices.ContainsFunc(s.keys[u], func(k history.Key) bool { return s.touched[k] == s.stamp }) {
			continue
		}
		for _, k := range s.keys[u] {
			s.touched[k] = s.stamp
		}
		rs.logging = true
		rs.install(u)
		took = append(took, u)
		if found = s.try(t); found {
			break
		}
	}
	rs.logging = true
	rs.rollback(mark)
	rs.logging = false
	return took, found
}

// writeKeys returns, per committed transaction, the keys it writes (item writes, inserts,
// deletes and the rows its predicate writes matched), each once.
func writeKeys(h *history.History) [][]history.Key {
	out := make([][]history.Key, len(h.Txns))
	for t := range h.Txns {
		x := &h.Txns[t]
		if !x.Committed() {
			continue
		}
		out[t] = txnWriteKeys(h, x)
	}
	return out
}

// txnWriteKeys returns the keys transaction x of h writes, sorted, each once.
func txnWriteKeys(h *history.History, x *history.Txn) []history.Key {
	var ks []history.Key
	for _, o := range x.Ops {
		switch o.Kind {
		case history.OpWrite, history.OpInsert, history.OpDelete:
			ks = append(ks, o.Key)
		case history.OpPredWrite:
			for _, r := range h.Pred(o).Rows {
				if r.Match {
					ks = append(ks, r.Key)
				}
			}
		}
	}
	slices.Sort(ks)
	return slices.Compact(ks)
}

// snapshotsKeepRealTime reports whether every transaction's snapshot point comes after the
// commit point of every transaction that ended before it began (client intervals widened by
// skew, as keepsRealTime reads them).
func snapshotsKeepRealTime(h *history.History, committed []int32, snapAt, commitAt []int32, skew int64) bool {
	byEnd := slices.Clone(committed)
	end := func(t int32) int64 { return h.Txns[t].Time.Widen(skew).End }
	slices.SortFunc(byEnd, func(a, b int32) int { return cmp.Compare(end(a), end(b)) })
	// latest[i]: the latest commit point among byEnd[:i+1].
	latest := make([]int32, len(byEnd))
	for i, t := range byEnd {
		latest[i] = commitAt[t]
		if i > 0 {
			latest[i] = max(latest[i], latest[i-1])
		}
	}
	for _, t := range committed {
		begin := h.Txns[t].Time.Widen(skew).Begin
		// byEnd[:n] ended before t began.
		n, _ := slices.BinarySearchFunc(byEnd, begin, func(u int32, b int64) int {
			if end(u) < b {
				return -1
			}
			return 1
		})
		if n > 0 && latest[n-1] > snapAt[t] {
			return false
		}
	}
	return true
}
