package history

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Snapshot is a database's MVCC snapshot in PostgreSQL's form (pg_current_snapshot, and
// InnoDB's read views have the same shape): every transaction id below Xmin had ended,
// none from Xmax on had begun, and of the ids in between those in Xip were in progress.
// A committed transaction is visible to the snapshot exactly when its id is below Xmax
// and not in Xip ([Snapshot.Sees]).
//
// A source that records each transaction's snapshot and id (the transaction's
// [Txn.Source], an integer) but no timestamps gives the history what a timestamp does:
// [Builder.Build] turns the snapshots into start and commit timestamps
// ([DeriveTimestamps]) that order every commit before exactly the snapshots that saw it.
type Snapshot struct {
	Xmin, Xmax uint64
	Xip        []uint64 // ascending, each in [Xmin, Xmax)
}

// ParseSnapshot parses PostgreSQL's text form "xmin:xmax:xip,xip,...", e.g. "10:20:10,14"
// or "12:12:".
func ParseSnapshot(s string) (Snapshot, error) {
	var sn Snapshot
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return sn, fmt.Errorf("snapshot %q: expected xmin:xmax:xip (xip a comma-separated list, maybe empty)", s)
	}
	var err error
	if sn.Xmin, err = strconv.ParseUint(parts[0], 10, 64); err != nil {
		return sn, fmt.Errorf("snapshot %q: xmin: expected an unsigned integer", s)
	}
	if sn.Xmax, err = strconv.ParseUint(parts[1], 10, 64); err != nil {
		return sn, fmt.Errorf("snapshot %q: xmax: expected an unsigned integer", s)
	}
	if sn.Xmax < sn.Xmin {
		return sn, fmt.Errorf("snapshot %q: xmax %d is below xmin %d", s, sn.Xmax, sn.Xmin)
	}
	if parts[2] != "" {
		sn.Xip, err = parseXip(s, parts[2], sn.Xmin, sn.Xmax)
	}
	return sn, err
}

// parseXip parses the in-progress ids xip of snapshot s, which must be ascending, in
// [xmin, xmax).
func parseXip(s, xip string, xmin, xmax uint64) ([]uint64, error) {
	var ids []uint64
	for f := range strings.SplitSeq(xip, ",") {
		x, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return ids, fmt.Errorf("snapshot %q: in-progress id %q: expected an unsigned integer", s, f)
		}
		if x < xmin || x >= xmax {
			return ids, fmt.Errorf("snapshot %q: in-progress id %d is outside [xmin, xmax)", s, x)
		}
		if n := len(ids); n > 0 && ids[n-1] >= x {
			return ids, fmt.Errorf("snapshot %q: in-progress ids are not ascending", s)
		}
		ids = append(ids, x)
	}
	return ids, nil
}

// String renders s in PostgreSQL's text form.
func (s Snapshot) String() string {
	b := strconv.AppendUint(nil, s.Xmin, 10)
	b = append(b, ':')
	b = strconv.AppendUint(b, s.Xmax, 10)
	b = append(b, ':')
	for i, x := range s.Xip {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, x, 10)
	}
	return string(b)
}

// Sees reports whether a transaction with id xid, if it committed, is visible to s.
func (s Snapshot) Sees(xid uint64) bool {
	if xid >= s.Xmax {
		return false
	}
	_, in := slices.BinarySearch(s.Xip, xid)
	return !in
}

// DerivedTimestamps reports whether h's timestamps were derived from its snapshots
// ([DeriveTimestamps] in [Builder.Build]) rather than given by the source.
func (h *History) DerivedTimestamps() bool { return len(h.Snapshots) > 0 && h.SnapshotErr == nil }

// ErrSnapshots is wrapped by [DeriveTimestamps] when the snapshots cannot be ordered.
var ErrSnapshots = errors.New("history: snapshots do not give timestamps")

// DeriveTimestamps gives the transactions of h start and commit timestamps from their
// snapshots ([History.Snapshots]) and ids, when no transaction has timestamps already.
//
// The snapshots a database takes over time see more and more commits: their visible sets
// are nested. DeriveTimestamps sorts the snapshots by how many of the history's committed
// writers they see, checks that each sees every writer the one before it sees (else the
// snapshots contradict each other and nothing is derived), and places each writer's
// commit just before the first snapshot that sees it (after every snapshot, if none
// does; commits between the same two snapshots in the order of their client end times
// when all are known, else of ids). The positions in that sequence are the timestamps: each
// snapshot sees exactly the commits with a smaller timestamp than its start, as the
// database said.
//
// Every committed transaction needs a snapshot, and every committed transaction that
// wrote needs an integer id ([Txn.Source]); a committed transaction without an id is
// read-only and takes its snapshot's point as both timestamps, as does an aborted one with
// a snapshot. Transactions of unknown outcome get none. It returns the number of
// transactions given timestamps, or an error wrapping [ErrSnapshots] that says which
// transactions or snapshots stood in the way; h is then unchanged.
func DeriveTimestamps(h *History) (int, error) {
	if err := checkDerivable(h); err != nil {
		return 0, err
	}
	d := &tsDeriver{h: h}
	if err := d.collectWriters(); err != nil {
		return 0, err
	}
	d.buildChain()
	if err := d.checkNested(); err != nil {
		return 0, err
	}
	d.placeCommits()
	if err := d.number(); err != nil {
		return 0, err
	}
	return d.assign(), nil
}

// checkDerivable says why h's timestamps cannot come from its snapshots: it has none, or
// it gives timestamps itself.
func checkDerivable(h *History) error {
	if len(h.Snapshots) == 0 {
		return fmt.Errorf("%w: the history has none", ErrSnapshots)
	}
	for t := range h.Txns {
		if h.Txns[t].HasTimestamps {
			return fmt.Errorf("%w: the history gives timestamps itself (%s has them)", ErrSnapshots, h.Name(TxnID(t)))
		}
	}
	return nil
}

// tsDeriver holds the state of one [DeriveTimestamps], built up phase by phase.
type tsDeriver struct {
	h *History

	// collectWriters: the committed writers.
	byXID map[uint64]TxnID // by id
	xidOf []uint64         // committed writers' ids; 0: not one
	xids  []uint64         // sorted

	// buildChain: the snapshot holders, by how many committed writers they see.
	chain []snapHolder

	// placeCommits: at[i] are the writers committing just before chain[i] (after all,
	// for i == len(chain)).
	at [][]TxnID

	// number: positions from 1; 0: none.
	start, commit []int64
}

// snapHolder is a transaction with a snapshot and the number of committed writers the
// snapshot sees.
type snapHolder struct {
	t     TxnID
	count int
}

// collectWriters indexes the committed writers by id, and checks every committed
// transaction has a snapshot and every committed writer a unique positive id.
func (d *tsDeriver) collectWriters() error {
	h := d.h
	d.byXID = make(map[uint64]TxnID)
	d.xidOf = make([]uint64, len(h.Txns))
	for t := range h.Txns {
		x := &h.Txns[t]
		if x.Outcome != OutcomeCommitted {
			continue
		}
		if _, ok := h.Snapshots[TxnID(t)]; !ok {
			return fmt.Errorf("%w: committed transaction %s has no snapshot", ErrSnapshots, h.Name(TxnID(t)))
		}
		id, ok := x.Source.Int()
		if !ok || id <= 0 {
			if wrote(h, x) {
				return fmt.Errorf("%w: committed transaction %s wrote but has no positive integer id", ErrSnapshots, h.Name(TxnID(t)))
			}
			continue
		}
		if u, dup := d.byXID[uint64(id)]; dup {
			return fmt.Errorf("%w: committed transactions %s and %s have the same id", ErrSnapshots, h.Name(u), h.Name(TxnID(t)))
		}
		d.byXID[uint64(id)] = TxnID(t)
		d.xidOf[TxnID(t)] = uint64(id)
		d.xids = append(d.xids, uint64(id))
	}
	slices.Sort(d.xids)
	return nil
}

// seer returns sees(s, w), which reports whether snapshot holder s sees committed writer
// w (never itself). It is a closure over locals so that the compiler inlines it in the
// loops that call it most.
func (d *tsDeriver) seer() func(s, w TxnID) bool {
	snaps, xidOf := d.h.Snapshots, d.xidOf
	return func(s, w TxnID) bool { return s != w && snaps[s].Sees(xidOf[w]) }
}

// buildChain lists the transactions with a snapshot and a known outcome, stably sorted
// by how many committed writers their snapshots see.
func (d *tsDeriver) buildChain() {
	for t := range d.h.Txns {
		tid := TxnID(t)
		sn, ok := d.h.Snapshots[tid]
		if !ok || d.h.Txns[t].Outcome == OutcomeUnknown {
			continue
		}
		d.chain = append(d.chain, snapHolder{tid, d.seenCount(tid, sn)})
	}
	slices.SortStableFunc(d.chain, func(a, b snapHolder) int { return cmp.Compare(a.count, b.count) })
}

// seenCount is the number of committed writers other than t that t's snapshot sn sees.
func (d *tsDeriver) seenCount(t TxnID, sn Snapshot) int {
	n, _ := slices.BinarySearch(d.xids, sn.Xmax) // writers below xmax
	for _, x := range sn.Xip {
		if _, ok := d.byXID[x]; ok {
			n--
		}
	}
	if own := d.xidOf[t]; own != 0 && sn.Sees(own) {
		n-- // a transaction's own id is not among what its snapshot sees
	}
	return n
}

// checkNested checks that each snapshot of the chain sees every writer the one before it
// sees.
func (d *tsDeriver) checkNested() error {
	for i := 1; i < len(d.chain); i++ {
		a, b := d.chain[i-1].t, d.chain[i].t
		if lost := d.lostWriter(a, b); lost >= 0 {
			h := d.h
			return fmt.Errorf("%w: the snapshots are not nested: %s's snapshot %s sees the commit of %s (id %d), which %s's snapshot %s, seeing as many or more committed writers, does not",
				ErrSnapshots, h.Name(a), h.Snapshots[a], h.Name(lost), d.xidOf[lost], h.Name(b), h.Snapshots[b])
		}
	}
	return nil
}

// lostWriter returns a committed writer a's snapshot sees and b's does not, or -1. Only
// b itself, b's in-progress ids and the ids between b's xmax and a's can be one.
func (d *tsDeriver) lostWriter(a, b TxnID) TxnID {
	sees := d.seer()
	if d.xidOf[b] != 0 && sees(a, b) {
		return b
	}
	sa, sb := d.h.Snapshots[a], d.h.Snapshots[b]
	for _, x := range sb.Xip {
		if w, ok := d.byXID[x]; ok && sees(a, w) {
			return w
		}
	}
	if sb.Xmax >= sa.Xmax {
		return -1
	}
	lo, _ := slices.BinarySearch(d.xids, sb.Xmax)
	for _, x := range d.xids[lo:] {
		if x >= sa.Xmax {
			break
		}
		if w := d.byXID[x]; w != b && sees(a, w) {
			return w
		}
	}
	return -1
}

// placeCommits puts each writer's commit just before the first snapshot that sees it. The
// commits that land between the same two snapshots may come in any order as far as the
// snapshots say; they take the order of their client end times when the source has them
// all (a database acknowledges commits in about the order it makes them), else of ids.
func (d *tsDeriver) placeCommits() {
	d.at = make([][]TxnID, len(d.chain)+1)
	sees := d.seer()
	for _, x := range d.xids {
		w := d.byXID[x]
		i, _ := slices.BinarySearchFunc(d.chain, true, func(c snapHolder, _ bool) int {
			if sees(c.t, w) {
				return 1
			}
			return -1
		})
		d.at[i] = append(d.at[i], w)
	}
	txns := d.h.Txns
	for _, ws := range d.at {
		if !slices.ContainsFunc(ws, func(w TxnID) bool { return !txns[w].HasTime }) {
			slices.SortStableFunc(ws, func(a, b TxnID) int { return cmp.Compare(txns[a].Time.End, txns[b].Time.End) })
		}
	}
}

// number gives the commits and snapshots their positions in the sequence placeCommits
// built, and checks no writer commits before its own snapshot.
func (d *tsDeriver) number() error {
	var pos int64
	d.start = make([]int64, len(d.h.Txns))
	d.commit = make([]int64, len(d.h.Txns))
	for i := range d.at {
		for _, w := range d.at[i] {
			pos++
			d.commit[w] = pos
		}
		if i < len(d.chain) {
			pos++
			d.start[d.chain[i].t] = pos
		}
	}
	for w, c := range d.commit {
		if c != 0 && c < d.start[w] {
			// Unreachable when the chain holds: a writer's own snapshot never sees it.
			return fmt.Errorf("%w: %s would commit before its own snapshot", ErrSnapshots, d.h.Name(TxnID(w)))
		}
	}
	return nil
}

// assign writes the positions into h as timestamps and returns how many transactions
// got them.
func (d *tsDeriver) assign() int {
	n := 0
	for t, s := range d.start {
		if s == 0 {
			continue
		}
		x := &d.h.Txns[t]
		x.Start = Timestamp{Physical: s}
		x.Commit = x.Start
		if c := d.commit[t]; c != 0 {
			x.Commit = Timestamp{Physical: c}
		}
		x.HasTimestamps = true
		n++
	}
	return n
}

// wrote reports whether t changed something: a write, append, insert or delete, or a
// predicate write that updated a row.
func wrote(h *History, t *Txn) bool {
	return slices.ContainsFunc(t.Ops, func(o Op) bool {
		return o.Kind.IsWrite() || o.Kind == OpPredWrite && slices.ContainsFunc(h.Pred(o).Rows, func(r Row) bool { return r.Match })
	})
}
