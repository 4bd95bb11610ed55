package ts

import (
	"errors"
	"fmt"
	"strings"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
)

// Errors.
var (
	// ErrNoTimestamps is returned for a history whose committed transactions lack start and
	// commit timestamps.
	ErrNoTimestamps = errors.New("ts: history lacks database timestamps")
	// ErrLevel is returned for a level the timestamp checker does not check.
	ErrLevel = errors.New("ts: level not checked by timestamps")
)

// Levels are the levels the timestamp checker checks.
var Levels = []anomaly.Level{anomaly.SnapshotIsolation, anomaly.StrongSessionSI, anomaly.Serializable, anomaly.StrongSessionSerializable}

// mode is what one level asks for.
type mode struct {
	ser     bool // Aion-SER: snapshot = commit point, no NOCONFLICT
	session bool
}

func modeOf(l anomaly.Level, s SessionCheck) (mode, error) {
	var m mode
	switch l {
	case anomaly.SnapshotIsolation:
	case anomaly.StrongSessionSI:
		m.session = true
	case anomaly.Serializable:
		m.ser = true
	case anomaly.StrongSessionSerializable:
		m.ser, m.session = true, true
	default:
		return m, fmt.Errorf("%w: %s", ErrLevel, l)
	}
	switch s {
	case SessionOn:
		m.session = true
	case SessionOff:
		m.session = false
	}
	return m, nil
}

// SessionCheck says whether SESSION is checked.
type SessionCheck uint8

// Session checking. The zero value follows the level: strong-session levels check it.
const (
	SessionAuto SessionCheck = iota
	SessionOn
	SessionOff
)

// ExtKind says where the value an EXT-violating read returned came from (the artifact's
// classification).
type ExtKind uint8

// EXT sub-kinds. The zero value is used for non-EXT violations.
const (
	ExtNone        ExtKind = iota
	ExtNever               // no committed transaction wrote the value to the key
	ExtBefore              // a stale read: an older visible version (or the initial value)
	ExtUncommitted         // written by a transaction concurrent with the reader (not yet committed at its snapshot)
	ExtAfter               // written by a transaction that started after the reader's snapshot
)

var extNames = [...]string{"", "NEVER", "BEFORE", "UNCOMMITTED", "AFTER"}

func (e ExtKind) String() string {
	if int(e) < len(extNames) {
		return extNames[e]
	}
	return "invalid"
}

// Initial names the virtual initial transaction in violations.
const Initial = "⊥"

// Violation is one finding, with everything a report needs to name it.
type Violation struct {
	Kind anomaly.Kind
	Ext  ExtKind // for EXT: where the observed value came from
	// Txn is the transaction at fault: the reader (EXT, INT), the later transaction of the
	// session (SESSION), the earlier committer of a conflicting pair (NOCONFLICT), the later
	// writer of an equal commit timestamp (timestamp-order).
	Txn string
	// Other is the other transaction: the writer the reader should have seen or did see
	// (EXT: the writer of the observed value when known, else the expected one; [Initial]
	// for the initial state), the previous transaction of the session, the other writer.
	Other string
	// TxnID and OtherID are dense ids in the checked history (offline only; -1 otherwise).
	TxnID, OtherID history.TxnID
	Key            history.Datum
	HasKey         bool
	// Observed and Expected are the values read and required, rendered ("nil", "5", "[1 2]").
	Observed, Expected string
	// Writer is the transaction whose write the reader should have seen (EXT), or "".
	Writer                                       string
	TxnStart, TxnCommit, OtherStart, OtherCommit history.Timestamp
}

// ID is a stable identity for deduplication: kind, transactions and key.
func (v *Violation) ID() string {
	var b strings.Builder
	b.WriteString(v.Kind.String())
	b.WriteByte('|')
	b.WriteString(v.Txn)
	b.WriteByte('|')
	if v.Kind != anomaly.ExtViolation && v.Kind != anomaly.Internal {
		b.WriteString(v.Other)
	}
	b.WriteByte('|')
	if v.HasKey {
		b.WriteString(v.Key.GoString())
	}
	return b.String()
}

// String renders the violation in one sentence.
func (v *Violation) String() string {
	switch v.Kind {
	case anomaly.ExtViolation:
		return v.extString()
	case anomaly.Internal:
		return fmt.Sprintf("INT: %s read %v=%s after it had read or written %s", v.Txn, v.Key, v.Observed, v.Expected)
	case anomaly.NoConflict:
		return fmt.Sprintf("NOCONFLICT: %s [start %v, commit %v] and %s [start %v, commit %v] overlap and both wrote %v",
			v.Txn, v.TxnStart, v.TxnCommit, v.Other, v.OtherStart, v.OtherCommit, v.Key)
	case anomaly.SessionViolation:
		return fmt.Sprintf("SESSION: %s [start %v] follows %s [commit %v] in its session but does not start after it commits",
			v.Txn, v.TxnStart, v.Other, v.OtherCommit)
	case anomaly.TimestampOrder:
		if v.HasKey {
			return fmt.Sprintf("timestamp order: %s and %s both wrote %v with the same commit timestamp %v",
				v.Txn, v.Other, v.Key, v.TxnCommit)
		}
		return fmt.Sprintf("timestamp order: %s commits (%v) before it starts (%v)", v.Txn, v.TxnCommit, v.TxnStart)
	}
	return fmt.Sprintf("%v: %s", v.Kind, v.Txn)
}

// extString renders an EXT violation: what the reader read, the last write visible at its
// snapshot, and where the value read came from.
func (v *Violation) extString() string {
	s := fmt.Sprintf("EXT (%s): %s [start %v, commit %v] read %v=%s, but the last write visible at its snapshot is %s",
		v.Ext, v.Txn, v.TxnStart, v.TxnCommit, v.Key, v.Observed, v.Expected)
	if v.Writer != "" {
		s += " by " + v.Writer
	}
	if v.Other == Initial && v.Writer != Initial {
		s += fmt.Sprintf("; %s is the initial value", v.Observed)
	} else if v.Other != "" && v.Other != v.Writer {
		s += fmt.Sprintf("; %s was written by %s [start %v, commit %v]", v.Observed, v.Other, v.OtherStart, v.OtherCommit)
	}
	return s
}

func renderList(h func(i int) history.Datum, n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(h(i).String())
	}
	b.WriteByte(']')
	return b.String()
}

// pos is a position in the replay order: (timestamp, phase, tie-breaks).
type pos struct {
	ts history.Timestamp
	ph uint8
}

// Phases, see the package doc.
const (
	phCommit uint8 = 0
	phPoint  uint8 = 1
	phStart  uint8 = 2
)

func (a pos) cmp(b pos) int {
	if c := a.ts.Compare(b.ts); c != 0 {
		return c
	}
	return int(a.ph) - int(b.ph)
}

// positions returns the commit and snapshot positions of a transaction.
func positions(start, commit history.Timestamp, ser bool) (ck, snap pos) {
	if start.Compare(commit) == 0 {
		ck = pos{commit, phPoint}
		return ck, ck
	}
	ck = pos{commit, phCommit}
	if ser {
		return ck, ck
	}
	return ck, pos{start, phStart}
}
