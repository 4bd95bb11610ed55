// Package anomaly names the anomalies isovet reports and the isolation levels it checks, as
// tables: each [Kind] has a name people search for and a one-line meaning; each [Level] lists
// the anomalies it forbids and whether it orders sessions or real time.
//
// Names follow Adya (G0, G1a, G1b, G1c, G-single, G2-item, G2) and Elle where they exist, and
// the names engineers use (lost update, write skew, long fork, ...) for the shapes those
// cycles take. Which of them a dependency cycle is, package internal/anomaly/cycle decides,
// from one table every checker shares.
package anomaly

// Kind is an anomaly kind. The zero value is invalid.
type Kind uint8

// Anomaly kinds. Keep in step with kinds.
const (
	KindInvalid Kind = iota

	// Found by the linear basic checks.
	Internal          // a read after the txn's own write does not see it
	AbortedRead       // G1a: read a value an aborted txn wrote
	IntermediateRead  // G1b: read a value its writer later overwrote in the same txn
	ThinAirRead       // read a value nobody wrote
	DuplicateWrite    // a value written twice to a key when the format assumes unique values
	DuplicateElements // a list holds the same element twice
	FutureRead        // a read sees a write of a later txn of the same session
	IncompatibleOrder // two list reads disagree on the order of a key's elements
	SessionViolation  // a session does not see its own earlier writes (strong session)

	// Cycle anomalies (Adya).
	G0      // write cycle
	G1c     // cycle of write and read dependencies
	GSingle // cycle with exactly one anti-dependency
	G2Item  // cycle with item anti-dependencies
	G2      // cycle with anti-dependencies (incl. predicate)

	// Names for the shapes engineers search for.
	LostUpdate         // two txns read the same version and both overwrite it
	WriteSkew          // two txns each read what the other writes, and both write
	ReadSkew           // a txn sees part of another txn's writes and a stale other part
	LongFork           // two readers see two independent writes in opposite orders
	FracturedRead      // a txn sees some but not all of another txn's writes
	CausalityViolation // a txn sees an effect without its cause
	StaleRead          // a read misses a write that committed before the reader began (real time)
	Phantom            // a predicate read misses a row a concurrent txn inserted or changed

	// Timestamp-based checking (Chronos/Aion).
	ExtViolation   // a read does not return the last write visible at its snapshot
	NoConflict     // two concurrent txns wrote the same key (first committer wins broken)
	TimestampOrder // timestamps contradict the session order or each other

	numKinds
)

// Info describes one anomaly kind.
type Info struct {
	Name    string // stable id, used in JSON and file names
	Title   string // what people call it
	Meaning string // one line
}

var kinds = [numKinds]Info{
	KindInvalid:        {"invalid", "invalid", "no anomaly"},
	Internal:           {"internal", "internal inconsistency", "a read after the transaction's own write does not return that write"},
	AbortedRead:        {"G1a", "aborted read (G1a)", "a committed transaction read a value written by a transaction that aborted"},
	IntermediateRead:   {"G1b", "intermediate read (G1b)", "a transaction read a value its writer later overwrote in the same transaction"},
	ThinAirRead:        {"thin-air-read", "thin-air read", "a transaction read a value that no transaction wrote"},
	DuplicateWrite:     {"duplicate-write", "duplicate written value", "the same value was written to a key more than once, so reads of it are ambiguous"},
	DuplicateElements:  {"duplicate-elements", "duplicate list elements", "a list read holds the same appended element twice"},
	FutureRead:         {"future-read", "future read", "a transaction read a value written later in its own session"},
	IncompatibleOrder:  {"incompatible-order", "incompatible version order", "two reads of a list disagree on the order of its elements"},
	SessionViolation:   {"session", "session guarantee violation", "a session did not observe its own earlier writes"},
	G0:                 {"G0", "write cycle (G0)", "transactions overwrite each other in a cycle"},
	G1c:                {"G1c", "circular information flow (G1c)", "a cycle of write and read dependencies: each transaction sees the next one's effects"},
	GSingle:            {"G-single", "single anti-dependency cycle (G-single)", "a cycle with exactly one anti-dependency: a transaction observed a state that cannot be explained by any order"},
	G2Item:             {"G2-item", "item anti-dependency cycle (G2-item)", "a cycle with two or more item anti-dependencies"},
	G2:                 {"G2", "anti-dependency cycle (G2)", "a cycle with anti-dependencies, some through predicates"},
	LostUpdate:         {"lost-update", "lost update", "two transactions read the same version of a key and both wrote it, so one update is lost"},
	WriteSkew:          {"write-skew", "write skew", "two transactions each read what the other writes, then both write: no serial order explains it"},
	ReadSkew:           {"read-skew", "read skew", "a transaction saw part of another transaction's effects and a stale version of the rest"},
	LongFork:           {"long-fork", "long fork", "two transactions observed two independent writes in opposite orders"},
	FracturedRead:      {"fractured-read", "fractured read", "a transaction saw some but not all of another transaction's writes"},
	CausalityViolation: {"causality-violation", "causality violation", "a transaction saw an effect but not the write that caused it"},
	StaleRead:          {"stale-read", "stale read", "a read missed a write that committed before the reading transaction began"},
	Phantom:            {"phantom", "phantom", "a predicate read missed a row that a concurrent transaction inserted or changed"},
	ExtViolation:       {"EXT", "external read violation (EXT)", "a read did not return the last value committed before the transaction's snapshot"},
	NoConflict:         {"NOCONFLICT", "concurrent writers (NOCONFLICT)", "two concurrent transactions both committed writes to the same key"},
	TimestampOrder:     {"timestamp-order", "timestamp order violation", "database timestamps contradict the session order"},
}

// Info returns the table entry of k.
func (k Kind) Info() Info {
	if k < numKinds {
		return kinds[k]
	}
	return kinds[KindInvalid]
}

// String returns k's stable name.
func (k Kind) String() string { return k.Info().Name }

// Kinds returns every valid kind in order.
func Kinds() []Kind {
	ks := make([]Kind, 0, numKinds-1)
	for k := Kind(1); k < numKinds; k++ {
		ks = append(ks, k)
	}
	return ks
}

// ParseKind returns the kind with the given stable name.
func ParseKind(name string) (Kind, bool) {
	for k := Kind(1); k < numKinds; k++ {
		if kinds[k].Name == name {
			return k, true
		}
	}
	return KindInvalid, false
}
