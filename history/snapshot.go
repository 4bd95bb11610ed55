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
		return sn, fmt.Errorf("snapshot %q: expected xmin:xmax:xip,xip,...", s)
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
		for f := range strings.SplitSeq(parts[2], ",") {
			x, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				return sn, fmt.Errorf("snapshot %q: in-progress id %q: expected an unsigned integer", s, f)
			}
			if x < sn.Xmin || x >= sn.Xmax {
				return sn, fmt.Errorf("snapshot %q: in-progress id %d is outside [xmin, xmax)", s, x)
			}
			if n := len(sn.Xip); n > 0 && sn.Xip[n-1] >= x {
				return sn, fmt.Errorf("snapshot %q: in-progress ids are not ascending", s)
			}
			sn.Xip = append(sn.Xip, x)
		}
	}
	return sn, nil
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
	if len(h.Snapshots) == 0 {
		return 0, fmt.Errorf("%w: the history has none", ErrSnapshots)
	}
	for t := range h.Txns {
		if h.Txns[t].HasTimestamps {
			return 0, fmt.Errorf("%w: the history gives timestamps itself (%s has them)", ErrSnapshots, h.Name(TxnID(t)))
		}
	}
	// The committed writers, by id.
	byXID := make(map[uint64]TxnID)
	xidOf := make([]uint64, len(h.Txns)) // committed writers' ids; 0: not one
	var xids []uint64
	for t := range h.Txns {
		x := &h.Txns[t]
		if x.Outcome != OutcomeCommitted {
			continue
		}
		if _, ok := h.Snapshots[TxnID(t)]; !ok {
			return 0, fmt.Errorf("%w: committed transaction %s has no snapshot", ErrSnapshots, h.Name(TxnID(t)))
		}
		id, ok := x.Source.Int()
		if !ok || id <= 0 {
			if wrote(h, x) {
				return 0, fmt.Errorf("%w: committed transaction %s wrote but has no positive integer id", ErrSnapshots, h.Name(TxnID(t)))
			}
			continue
		}
		if u, dup := byXID[uint64(id)]; dup {
			return 0, fmt.Errorf("%w: committed transactions %s and %s have the same id", ErrSnapshots, h.Name(u), h.Name(TxnID(t)))
		}
		byXID[uint64(id)] = TxnID(t)
		xidOf[TxnID(t)] = uint64(id)
		xids = append(xids, uint64(id))
	}
	slices.Sort(xids)

	// sees reports whether snapshot holder s sees committed writer w (never itself).
	sees := func(s, w TxnID) bool {
		return s != w && h.Snapshots[s].Sees(xidOf[w])
	}
	type holder struct {
		t     TxnID
		count int // committed writers it sees
	}
	var chain []holder
	for t := range h.Txns {
		tid := TxnID(t)
		sn, ok := h.Snapshots[tid]
		if !ok || h.Txns[t].Outcome == OutcomeUnknown {
			continue
		}
		n, _ := slices.BinarySearch(xids, sn.Xmax) // writers below xmax
		for _, x := range sn.Xip {
			if _, ok := byXID[x]; ok {
				n--
			}
		}
		if own := xidOf[tid]; own != 0 && sn.Sees(own) {
			n-- // a transaction's own id is not among what its snapshot sees
		}
		chain = append(chain, holder{tid, n})
	}
	slices.SortStableFunc(chain, func(a, b holder) int { return cmp.Compare(a.count, b.count) })

	// Each snapshot must see every writer the one before it sees.
	for i := 1; i < len(chain); i++ {
		a, b := chain[i-1].t, chain[i].t
		sa, sb := h.Snapshots[a], h.Snapshots[b]
		lost := TxnID(-1)
		if xidOf[b] != 0 && sees(a, b) {
			lost = b
		}
		for _, x := range sb.Xip {
			if w, ok := byXID[x]; ok && lost < 0 && sees(a, w) {
				lost = w
			}
		}
		if sb.Xmax < sa.Xmax && lost < 0 {
			lo, _ := slices.BinarySearch(xids, sb.Xmax)
			for _, x := range xids[lo:] {
				if x >= sa.Xmax {
					break
				}
				if w := byXID[x]; w != b && sees(a, w) {
					lost = w
					break
				}
			}
		}
		if lost >= 0 {
			return 0, fmt.Errorf("%w: the snapshots are not nested: %s's snapshot %s sees the commit of %s (id %d), which %s's snapshot %s, seeing as many or more committed writers, does not",
				ErrSnapshots, h.Name(a), sa, h.Name(lost), xidOf[lost], h.Name(b), sb)
		}
	}

	// Each writer's commit goes just before the first snapshot that sees it. The commits
	// that land between the same two snapshots may come in any order as far as the
	// snapshots say; they take the order of their client end times when the source has
	// them all (a database acknowledges commits in about the order it makes them), else of
	// ids.
	at := make([][]TxnID, len(chain)+1)
	for _, x := range xids {
		w := byXID[x]
		i, _ := slices.BinarySearchFunc(chain, true, func(c holder, _ bool) int {
			if sees(c.t, w) {
				return 1
			}
			return -1
		})
		at[i] = append(at[i], w)
	}
	for _, ws := range at {
		if !slices.ContainsFunc(ws, func(w TxnID) bool { return !h.Txns[w].HasTime }) {
			slices.SortStableFunc(ws, func(a, b TxnID) int { return cmp.Compare(h.Txns[a].Time.End, h.Txns[b].Time.End) })
		}
	}
	var pos int64
	start := make([]int64, len(h.Txns)) // positions from 1; 0: none
	commit := make([]int64, len(h.Txns))
	for i := range at {
		for _, w := range at[i] {
			pos++
			commit[w] = pos
		}
		if i < len(chain) {
			pos++
			start[chain[i].t] = pos
		}
	}
	for w, c := range commit {
		if c != 0 && c < start[w] {
			// Unreachable when the chain holds: a writer's own snapshot never sees it.
			return 0, fmt.Errorf("%w: %s would commit before its own snapshot", ErrSnapshots, h.Name(TxnID(w)))
		}
	}
	n := 0
	for t, s := range start {
		if s == 0 {
			continue
		}
		x := &h.Txns[t]
		x.Start = Timestamp{Physical: s}
		x.Commit = x.Start
		if c := commit[t]; c != 0 {
			x.Commit = Timestamp{Physical: c}
		}
		x.HasTimestamps = true
		n++
	}
	return n, nil
}

// wrote reports whether t changed something: a write, append, insert or delete, or a
// predicate write that updated a row.
func wrote(h *History, t *Txn) bool {
	return slices.ContainsFunc(t.Ops, func(o Op) bool {
		return o.Kind.IsWrite() || o.Kind == OpPredWrite && slices.ContainsFunc(h.Pred(o).Rows, func(r Row) bool { return r.Match })
	})
}
