package anomaly

import (
	"fmt"
	"strings"
)

// Level is an isolation level isovet can check. The zero value is invalid.
type Level uint8

// Levels, weakest first. Keep in step with levels.
const (
	LevelInvalid Level = iota
	ReadCommitted
	ReadAtomic
	Causal
	SnapshotIsolation
	StrongSessionSI
	StrongSI
	Serializable
	StrongSessionSerializable
	StrictSerializable
	numLevels
)

// LevelInfo describes a level.
type LevelInfo struct {
	Name string // as given to --level; Elle's name where Elle has one
	// Aliases are other names accepted: short forms, Adya's names, and a database's name
	// where it means exactly this level on every database that uses it.
	Aliases []string
	Summary string
	// Session: the session order constrains the serialization (strong session variants).
	// Realtime: client real-time order constrains it (strict / strong variants).
	Session, Realtime bool
	// Forbids lists the anomaly kinds a history at this level must not contain.
	Forbids []Kind
}

var basicForbidden = []Kind{Internal, AbortedRead, IntermediateRead, ThinAirRead, DuplicateElements, IncompatibleOrder}

var siForbidden = append(append([]Kind{}, basicForbidden...), G0, G1c, GSingle, LostUpdate, ReadSkew, LongFork, FracturedRead, CausalityViolation, ExtViolation, NoConflict)

var serForbidden = append(append([]Kind{}, siForbidden...), G2Item, G2, WriteSkew, Phantom)

var levels = [numLevels]LevelInfo{
	LevelInvalid:              {Name: "invalid"},
	ReadCommitted:             {Name: "read-committed", Aliases: []string{"rc", "pl-2"}, Summary: "no aborted, intermediate or thin-air reads; no write or read-dependency cycles", Forbids: append(append([]Kind{}, basicForbidden...), G0, G1c)},
	ReadAtomic:                {Name: "read-atomic", Aliases: []string{"ra"}, Summary: "read committed, and a transaction sees all or none of another's writes", Forbids: append(append([]Kind{}, basicForbidden...), G0, G1c, FracturedRead)},
	Causal:                    {Name: "causal", Aliases: []string{"tcc", "causal-consistency"}, Summary: "transactional causal consistency: read atomic, and effects are seen with their causes", Session: true, Forbids: append(append([]Kind{}, basicForbidden...), G0, G1c, FracturedRead, CausalityViolation, FutureRead)},
	SnapshotIsolation:         {Name: "snapshot-isolation", Aliases: []string{"si", "pl-si", "snapshot"}, Summary: "Adya SI: each transaction reads a snapshot and no two concurrent transactions write the same key", Forbids: siForbidden},
	StrongSessionSI:           {Name: "strong-session-snapshot-isolation", Aliases: []string{"strong-session-si", "session-si"}, Summary: "snapshot isolation in which each session sees its own earlier transactions (PolySI's SI)", Session: true, Forbids: append(append([]Kind{}, siForbidden...), SessionViolation, FutureRead)},
	StrongSI:                  {Name: "strong-snapshot-isolation", Aliases: []string{"strong-si"}, Summary: "snapshot isolation whose snapshots respect real time (needs client intervals)", Session: true, Realtime: true, Forbids: append(append([]Kind{}, siForbidden...), SessionViolation, FutureRead, StaleRead)},
	Serializable:              {Name: "serializable", Aliases: []string{"ser", "pl-3"}, Summary: "some serial order of the committed transactions explains every read (no session order)", Forbids: serForbidden},
	StrongSessionSerializable: {Name: "strong-session-serializable", Aliases: []string{"session-serializable"}, Summary: "serializable with each session's order kept (what Cobra, PolySI and VeriStrong call SER)", Session: true, Forbids: append(append([]Kind{}, serForbidden...), SessionViolation, FutureRead)},
	StrictSerializable:        {Name: "strict-serializable", Aliases: []string{"strict-ser", "linearizable", "pl-ss"}, Summary: "serializable in an order that respects client real time (needs client intervals)", Session: true, Realtime: true, Forbids: append(append([]Kind{}, serForbidden...), SessionViolation, FutureRead, StaleRead)},
}

// Info returns the table entry of l.
func (l Level) Info() LevelInfo {
	if l < numLevels {
		return levels[l]
	}
	return levels[LevelInvalid]
}

// String returns l's name.
func (l Level) String() string { return l.Info().Name }

// RealtimeCounterpart returns the level that adds client real-time order to l, for a level
// that ignores it and has one: strict-serializable for serializable and
// strong-session-serializable, strong-snapshot-isolation for snapshot-isolation and
// strong-session-snapshot-isolation.
func (l Level) RealtimeCounterpart() (Level, bool) {
	switch l {
	case Serializable, StrongSessionSerializable:
		return StrictSerializable, true
	case SnapshotIsolation, StrongSessionSI:
		return StrongSI, true
	}
	return LevelInvalid, false
}

// Levels returns every valid level, weakest first.
func Levels() []Level {
	ls := make([]Level, 0, numLevels-1)
	for l := Level(1); l < numLevels; l++ {
		ls = append(ls, l)
	}
	return ls
}

// ParseLevel returns the level with the given name or alias. Case, and underscores or
// spaces in place of hyphens, do not matter: "Serializable", "SNAPSHOT_ISOLATION" and
// "read committed" are accepted. A name that means different levels on different databases
// (see [DatabaseName]) is not a level: ParseLevel returns false for it.
func ParseLevel(name string) (Level, bool) {
	name = normalizeLevelName(name)
	for l := Level(1); l < numLevels; l++ {
		if levels[l].Name == name {
			return l, true
		}
		for _, a := range levels[l].Aliases {
			if a == name {
				return l, true
			}
		}
	}
	return LevelInvalid, false
}

// normalizeLevelName lower-cases name, trims it and writes underscores and spaces as
// hyphens.
func normalizeLevelName(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	return strings.NewReplacer("_", "-", " ", "-").Replace(name)
}

// DatabaseName is a level name that databases use for different levels, so isovet accepts
// it for none of them: each Reading says what it means somewhere and what to check there.
type DatabaseName struct {
	Name     string // as a user would write it (--level repeatable-read)
	Readings []Reading
}

// Reading is what a [DatabaseName] means on one database or in one definition.
type Reading struct {
	Where string // a database or a paper
	Means string
	Check string // the level to pass to isovet, or "" when none fits
}

// databaseNames are the ambiguous names, with their readings.
var databaseNames = []DatabaseName{
	{Name: "repeatable-read", Readings: []Reading{
		{Where: "on PostgreSQL", Means: "snapshot isolation", Check: "snapshot-isolation"},
		{Where: "on MySQL/InnoDB", Means: "weaker than snapshot isolation (reads see a snapshot, locking reads and writes the latest version, so lost updates and read skew occur)", Check: "read-committed"},
		{Where: "in the SQL standard and Adya's PL-2.99", Means: "serializable but for phantoms (G2-item forbidden, predicate anomalies allowed), a level isovet lacks, but the same as serializable on key-value histories, which have no predicate reads", Check: "serializable"},
	}},
	{Name: "read-uncommitted", Readings: []Reading{
		{Where: "on PostgreSQL", Means: "read committed (PostgreSQL runs READ UNCOMMITTED as READ COMMITTED)", Check: "read-committed"},
		{Where: "in the SQL standard, on MySQL/InnoDB and in Adya's PL-1", Means: "weaker than any isovet level, forbidding only write cycles (G0), which read-committed reports among the anomalies it adds", Check: "read-committed"},
	}},
}

// LookupDatabaseName returns the entry of a name databases use for different levels,
// normalized as [ParseLevel] does.
func LookupDatabaseName(name string) (DatabaseName, bool) {
	name = normalizeLevelName(name)
	for _, d := range databaseNames {
		if d.Name == name {
			return d, true
		}
	}
	return DatabaseName{}, false
}

// String says what d means on each database and which level to check there, on one line.
func (d DatabaseName) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q means different levels on different databases, so isovet does not pick one:", d.Name)
	for i, r := range d.Readings {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s it is %s", r.Where, r.Means)
		if r.Check != "" {
			fmt.Fprintf(&b, ": check --level %s", r.Check)
		}
	}
	return b.String()
}

// Forbids reports whether level l forbids anomaly kind k.
func (l Level) Forbids(k Kind) bool {
	for _, f := range l.Info().Forbids {
		if f == k {
			return true
		}
	}
	return false
}

// implied lists, for each level, the weaker levels it implies: every history that satisfies
// the level satisfies them. The serializability levels imply the snapshot isolation levels
// with the same session and real-time order (a serial order is a commit order in which each
// snapshot is taken just before its commit); levels without session order do not imply
// causal consistency, which keeps it.
var implied = [numLevels][]Level{
	ReadAtomic:                {ReadCommitted},
	Causal:                    {ReadAtomic, ReadCommitted},
	SnapshotIsolation:         {ReadAtomic, ReadCommitted},
	StrongSessionSI:           {SnapshotIsolation, Causal, ReadAtomic, ReadCommitted},
	StrongSI:                  {StrongSessionSI, SnapshotIsolation, Causal, ReadAtomic, ReadCommitted},
	Serializable:              {SnapshotIsolation, ReadAtomic, ReadCommitted},
	StrongSessionSerializable: {Serializable, StrongSessionSI, SnapshotIsolation, Causal, ReadAtomic, ReadCommitted},
	StrictSerializable:        {StrongSessionSerializable, Serializable, StrongSI, StrongSessionSI, SnapshotIsolation, Causal, ReadAtomic, ReadCommitted},
}

// Implies reports whether every history that satisfies l satisfies m (l is m, or stronger).
func (l Level) Implies(m Level) bool {
	if l == m {
		return l != LevelInvalid
	}
	if l >= numLevels {
		return false
	}
	for _, x := range implied[l] {
		if x == m {
			return true
		}
	}
	return false
}
