package history

// Summary counts what a history holds; `isovet stat` prints it.
type Summary struct {
	Sessions  int
	Txns      int
	Committed int
	Aborted   int
	Unknown   int
	Ops       int
	OpsByKind map[OpKind]int
	FailedOps int
	// FailedCommitted counts the transactions logged as committed that contain a failed
	// operation: a defect of the recording ([ResolveFailed]).
	FailedCommitted int
	Keys            int
	Values          int // distinct values, excluding nil
	// UniqueWrites reports whether every (key, value) pair is written at most once, as
	// checkers that match reads to writes by value assume. DuplicateWrites counts the writes
	// that repeat an earlier (key, value) pair.
	UniqueWrites    bool
	DuplicateWrites int
	// ExplicitSources counts reads whose writer the format named.
	ExplicitSources int
	// Timed and Timestamped count transactions with client intervals and with database
	// timestamps; OpTimed counts those with per-op intervals.
	Timed, Timestamped, OpTimed int
	// Snapshots counts transactions with a database snapshot; SnapshotErr says why they
	// gave no timestamps ("": they did, or there are none).
	Snapshots   int
	SnapshotErr string
	// Initial is the initial value every key holds (nil unless the source gave one).
	Initial Datum
}

// Summarize counts h.
func Summarize(h *History) Summary {
	s := Summary{
		Sessions:  len(h.Sessions),
		Txns:      len(h.Txns),
		OpsByKind: make(map[OpKind]int),
		Keys:      len(h.Keys),
		Values:    h.Values.Len() - 1,
		Initial:   h.Value(h.Initial),
		Snapshots: len(h.Snapshots),
	}
	if h.SnapshotErr != nil {
		s.SnapshotErr = h.SnapshotErr.Error()
	}
	ws := newWriteSet(h.Values.Len())
	for i := range h.Txns {
		t := &h.Txns[i]
		s.countTxn(t)
		s.countOps(t, ws)
	}
	s.UniqueWrites = s.DuplicateWrites == 0
	return s
}

// countTxn counts t's outcome and times.
func (s *Summary) countTxn(t *Txn) {
	switch t.Outcome {
	case OutcomeCommitted:
		s.Committed++
	case OutcomeAborted:
		s.Aborted++
	default:
		s.Unknown++
	}
	if t.HasTime {
		s.Timed++
	}
	if t.HasTimestamps {
		s.Timestamped++
	}
	if t.OpTimes != nil {
		s.OpTimed++
	}
}

// countOps counts t's ops: by kind, failed, with explicit sources, and the writes that
// repeat one ws has seen.
func (s *Summary) countOps(t *Txn, ws *writeSet) {
	s.Ops += len(t.Ops)
	flagged := false
	for _, o := range t.Ops {
		s.OpsByKind[o.Kind]++
		if o.Failed() {
			s.FailedOps++
			if !flagged && t.Outcome == OutcomeCommitted {
				flagged = true
				s.FailedCommitted++
			}
		}
		if o.Src.Kind != SrcByValue {
			s.ExplicitSources++
		}
		if (o.Kind == OpWrite || o.Kind == OpAppend || o.Kind == OpInsert) && !ws.add(o.Key, o.Value) {
			s.DuplicateWrites++
		}
	}
}

// writeSet is the set of (key, value) pairs written so far. Most values are written to one
// key only: firstKey[v] is the first key written with v (-1: none), and pairs of a value
// with a second key go to a map.
type writeSet struct {
	firstKey []Key
	more     map[writePair]struct{}
}

type writePair struct {
	k Key
	v Value
}

func newWriteSet(values int) *writeSet {
	ws := &writeSet{firstKey: make([]Key, values), more: make(map[writePair]struct{})}
	for i := range ws.firstKey {
		ws.firstKey[i] = -1
	}
	return ws
}

// add adds the pair (k, v) and reports whether it is new: a write duplicates an earlier one
// when both write the same value to the same key.
func (ws *writeSet) add(k Key, v Value) bool {
	switch first := &ws.firstKey[v]; {
	case *first == -1:
		*first = k
	case *first == k:
		return false
	default:
		p := writePair{k, v}
		if _, dup := ws.more[p]; dup {
			return false
		}
		ws.more[p] = struct{}{}
	}
	return true
}
