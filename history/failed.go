package history

import (
	"errors"
	"fmt"
	"slices"
)

// FailedReading says what became of a transaction that the source logged as committed
// although one of its statements failed ([OpFailed]). A failed statement never takes
// effect; the question is the rest of its transaction. Recorders disagree: on the
// PostgreSQL wire protocol (PostgreSQL, CockroachDB) a COMMIT after an error is a rollback,
// while MySQL and Galera roll back only the statement and commit the others. A recorder that
// logs such a transaction as committed has a bug; the reading decides how it is checked.
type FailedReading uint8

// Readings. The zero value, FailedUncertain, is the only one sound for every database.
const (
	// FailedUncertain: the transaction either committed without its failed statements or
	// rolled back; it is checked as exactly that choice (an unknown outcome whose reads
	// count only if it committed).
	FailedUncertain FailedReading = iota
	// FailedRolledBack: the transaction rolled back (PostgreSQL, CockroachDB).
	FailedRolledBack
	// FailedSkipped: the transaction committed without its failed statements (MySQL,
	// MariaDB, Galera).
	FailedSkipped
)

var failedReadingNames = [...]string{"uncertain", "rolled-back", "skipped"}

func (r FailedReading) String() string {
	if int(r) < len(failedReadingNames) {
		return failedReadingNames[r]
	}
	return "invalid"
}

// ParseFailedReading parses a reading's name ("uncertain", "rolled-back", "skipped").
func ParseFailedReading(s string) (FailedReading, bool) {
	i := slices.Index(failedReadingNames[:], s)
	return FailedReading(max(i, 0)), i >= 0
}

// FailedReadings returns the readings' names, the default first.
func FailedReadings() []string { return slices.Clone(failedReadingNames[:]) }

// Failed is what [ResolveFailed] did to a history.
type Failed struct {
	Reading FailedReading
	// Committed lists the transactions the source logged as committed that contain a failed
	// statement, in id order: a defect of the recording, checked as Reading says.
	Committed []TxnID
	// Ops counts the failed statements dropped, in every transaction.
	Ops int
}

// ErrFailedSource is wrapped by [ResolveFailed] when a read names a failed write as the
// writer of the version it saw: the write did not take effect, so the source contradicts
// itself.
var ErrFailedSource = errors.New("history: a read names a failed write as its source")

// ResolveFailed returns h as it is checked under reading r: every failed statement is
// removed (it did not take effect), and each transaction logged as committed that contains
// one becomes of unknown outcome (FailedUncertain), aborted (FailedRolledBack) or stays
// committed (FailedSkipped). Transactions keep their ids; explicit sources are renumbered to
// the operations that remain. When h has no failed statement it is returned as it is. h is
// not modified: the result shares what did not change.
func ResolveFailed(h *History, r FailedReading) (*History, Failed, error) {
	rs := &failedResolver{h: h, res: Failed{Reading: r}, keep: make(map[TxnID][]int32)}
	rs.mapOps()
	if rs.res.Ops == 0 {
		return h, rs.res, nil
	}
	nh := *h
	nh.Txns = slices.Clone(h.Txns)
	for i := range nh.Txns {
		rs.resolveTxn(&nh.Txns[i])
	}
	rs.resolvePreds(&nh)
	if len(rs.errs) > 0 {
		return nil, rs.res, errors.Join(rs.errs...)
	}
	if h.DerivedTimestamps() && len(rs.res.Committed) > 0 && r != FailedSkipped {
		// The commits the snapshots were ordered by have changed: derive them again.
		for i := range nh.Txns {
			nh.Txns[i].HasTimestamps = false
			nh.Txns[i].Start, nh.Txns[i].Commit = Timestamp{}, Timestamp{}
		}
		_, nh.SnapshotErr = DeriveTimestamps(&nh)
	}
	return &nh, rs.res, nil
}

// failedResolver is the state of one [ResolveFailed].
type failedResolver struct {
	h   *History
	res Failed
	// keep[t] maps t's operation indices to those of the resolved transaction (-1:
	// dropped), for the transactions that lose an operation.
	keep map[TxnID][]int32
	errs []error // reads of failed writes, the first 10
}

// mapOps counts the failed statements and fills keep.
func (rs *failedResolver) mapOps() {
	for i := range rs.h.Txns {
		t := &rs.h.Txns[i]
		n := 0
		for _, o := range t.Ops {
			if o.Failed() {
				n++
			}
		}
		if n == 0 {
			continue
		}
		rs.res.Ops += n
		if t.Outcome == OutcomeCommitted {
			rs.res.Committed = append(rs.res.Committed, t.ID)
		}
		rs.keep[t.ID] = keptIndexes(t.Ops)
	}
}

// keptIndexes maps each of ops to its index among the ops that did not fail (-1: failed).
func keptIndexes(ops []Op) []int32 {
	m := make([]int32, len(ops))
	j := int32(0)
	for oi, o := range ops {
		m[oi] = -1
		if !o.Failed() {
			m[oi] = j
			j++
		}
	}
	return m
}

// renumber returns source s, read by reader, renumbered to the operations that remain;
// a source naming a failed write is noted as an error.
func (rs *failedResolver) renumber(reader TxnID, s Src) Src {
	m, ok := rs.keep[s.Txn]
	if s.Kind != SrcTxn || !ok || s.Op < 0 || int(s.Op) >= len(m) {
		return s
	}
	if m[s.Op] < 0 {
		if len(rs.errs) < 10 {
			rs.errs = append(rs.errs, fmt.Errorf("%w: %s read the version %s wrote in its operation %d, which the source marks failed", ErrFailedSource, rs.h.Name(reader), rs.h.Name(s.Txn), s.Op))
		}
		return s
	}
	s.Op = m[s.Op]
	return s
}

// resolveTxn drops t's failed operations, renumbers the sources of its reads, and gives
// a committed transaction that lost one the outcome the reading says.
func (rs *failedResolver) resolveTxn(t *Txn) {
	m, dropped := rs.keep[t.ID]
	if !dropped && !namesChanged(rs.h, t, rs.keep) {
		return
	}
	rs.keepOps(t, m)
	if !dropped || t.Outcome != OutcomeCommitted {
		return
	}
	switch rs.res.Reading {
	case FailedUncertain:
		// The source saw it end: only whether it committed is in doubt.
		t.Outcome, t.Ended = OutcomeUnknown, true
	case FailedRolledBack:
		t.Outcome = OutcomeAborted
	}
}

// keepOps keeps the ops of t that m keeps (all when m is nil) with their intervals, and
// renumbers the sources of its reads.
func (rs *failedResolver) keepOps(t *Txn, m []int32) {
	ops := make([]Op, 0, len(t.Ops))
	var times []Interval
	for oi, o := range t.Ops {
		if m != nil && m[oi] < 0 {
			continue
		}
		if o.Kind == OpRead {
			o.Src = rs.renumber(t.ID, o.Src)
		}
		ops = append(ops, o)
		if t.OpTimes != nil {
			times = append(times, t.OpTimes[oi])
		}
	}
	t.Ops, t.OpTimes = ops, times
}

// resolvePreds renumbers the sources of predicate rows in nh, which may name their
// writers too, copying a payload only when one of its sources changes.
func (rs *failedResolver) resolvePreds(nh *History) {
	h := rs.h
	for pi := range h.Preds {
		p := &h.Preds[pi]
		for ri := range p.Srcs {
			if _, ok := rs.keep[p.Srcs[ri].Txn]; !ok || p.Srcs[ri].Kind != SrcTxn {
				continue
			}
			if nh.Preds == nil || &nh.Preds[0] == &h.Preds[0] {
				nh.Preds = slices.Clone(h.Preds)
			}
			np := &nh.Preds[pi]
			if len(np.Srcs) > 0 && &np.Srcs[0] == &p.Srcs[0] {
				np.Srcs = slices.Clone(p.Srcs)
			}
			np.Srcs[ri] = rs.renumber(predReader(h, pi), p.Srcs[ri])
		}
	}
}

// namesChanged reports whether one of t's reads names an operation of a transaction that
// loses one.
func namesChanged(h *History, t *Txn, keep map[TxnID][]int32) bool {
	for _, o := range t.Ops {
		if o.Kind == OpRead && o.Src.Kind == SrcTxn {
			if _, ok := keep[o.Src.Txn]; ok {
				return true
			}
		}
	}
	return false
}

// predReader returns the transaction whose operation carries predicate payload pi.
func predReader(h *History, pi int) TxnID {
	for i := range h.Txns {
		for _, o := range h.Txns[i].Ops {
			if (o.Kind == OpPredRead || o.Kind == OpPredWrite) && o.PredIndex() == pi {
				return h.Txns[i].ID
			}
		}
	}
	return -1
}
