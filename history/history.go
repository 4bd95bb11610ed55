package history

import (
	"iter"
	"slices"
	"strconv"
)

// TxnID is a transaction's dense index in [History.Txns].
type TxnID int32

// SessionID is a session's dense index in [History.Sessions].
type SessionID int32

// Key is an interned key: an index into [History.Keys].
type Key int32

// Value is an interned value: an index into [History.Values]. [Nil] (0) is the absent value.
type Value int32

// Nil is the absent value: Elle's nil, a read of a key nobody has written.
const Nil Value = 0

// Outcome is what became of a transaction.
type Outcome uint8

// Outcomes. The zero value is OutcomeUnknown: it may or may not have committed (Jepsen :info),
// which is the only sound default.
const (
	OutcomeUnknown Outcome = iota
	OutcomeCommitted
	OutcomeAborted
)

func (o Outcome) String() string {
	switch o {
	case OutcomeCommitted:
		return "committed"
	case OutcomeAborted:
		return "aborted"
	default:
		return "unknown"
	}
}

// OpKind is the kind of an operation.
type OpKind uint8

// Operation kinds. The zero value is invalid.
const (
	OpInvalid   OpKind = iota
	OpRead             // read(Key) = Value
	OpWrite            // write(Key, Value)
	OpAppend           // append Value to the list at Key
	OpListRead         // read(Key) = the list [History.List]
	OpPredRead         // predicate read: [History.Preds] entry
	OpPredWrite        // UPDATE/DELETE ... WHERE: [History.Preds] entry
	OpInsert           // insert(Key, Value): the row is born
	OpDelete           // delete(Key): the row dies
)

var opKindNames = [...]string{"invalid", "read", "write", "append", "list-read", "pred-read", "pred-write", "insert", "delete"}

func (k OpKind) String() string {
	if int(k) < len(opKindNames) {
		return opKindNames[k]
	}
	return "invalid"
}

// IsWrite reports whether the kind installs a version of Key (write, append, insert, delete).
func (k OpKind) IsWrite() bool {
	return k == OpWrite || k == OpAppend || k == OpInsert || k == OpDelete
}

// IsRead reports whether the kind observes state (item, list or predicate read).
func (k OpKind) IsRead() bool { return k == OpRead || k == OpListRead || k == OpPredRead }

// OpFlags are per-operation flags.
type OpFlags uint8

// Operation flags.
const (
	// OpFailed marks an operation the source recorded as failed (dbcop keeps a success flag
	// per event). Whether its effect happened is for the checker to decide and report.
	OpFailed OpFlags = 1 << iota
)

// SrcKind says how a read's source is known.
type SrcKind uint8

// Source kinds.
const (
	SrcByValue SrcKind = iota // not given: the writer is found by value
	SrcInit                   // the initial state
	SrcTxn                    // the write op Src.Op of transaction Src.Txn
	SrcNone                   // the source says the read found nothing (Cobra NULL)
)

// Src is a read's explicit source, when the format names the writer.
type Src struct {
	Kind SrcKind
	Txn  TxnID
	Op   int32
}

// Op is one operation. It is a small value type (32 bytes); list contents and predicate
// details live in side tables of the [History].
type Op struct {
	Kind  OpKind
	Flags OpFlags
	Key   Key   // not used by predicate ops
	Value Value // read or written value; for OpDelete, Nil
	// aux and auxLen address History.lists (OpListRead) or History.Preds (predicate ops: aux
	// is the index, auxLen unused).
	aux, auxLen int32
	// Src is the explicit source of an OpRead, if the format named one.
	Src Src
}

// Failed reports whether the source marked the operation as failed.
func (o Op) Failed() bool { return o.Flags&OpFailed != 0 }

// Txn is one transaction. Ops is a view into an arena owned by the History: do not append.
type Txn struct {
	ID      TxnID
	Session SessionID
	Seq     int32 // position within the session
	Outcome Outcome
	// HasTime says whether Time is valid; HasTimestamps whether Start and Commit are.
	HasTime, HasTimestamps bool
	// Ended says, of a transaction of unknown outcome, that it is known to have ended (committed
	// or rolled back) by Time.End: its log says it ended and only its outcome is in doubt
	// ([ResolveFailed]). Without it an unknown outcome may have committed at any later time.
	Ended bool

	Source Datum // the identifier the source gave it (nil: none; reports use "T<ID>")
	Ops    []Op

	// Time is the client's wall-clock interval, valid if HasTime.
	Time Interval
	// OpTimes holds one interval per op when the source recorded them (Vbox), else nil.
	OpTimes []Interval

	// Start and Commit are the database's timestamps, valid if HasTimestamps.
	Start, Commit Timestamp
}

// HasFailedOp reports whether one of the transaction's operations is marked failed.
func (t *Txn) HasFailedOp() bool { return slices.ContainsFunc(t.Ops, Op.Failed) }

// Committed reports whether the transaction is known to have committed.
func (t *Txn) Committed() bool { return t.Outcome == OutcomeCommitted }

// Session is one client session (a Jepsen process, a Cobra or Vbox log file).
type Session struct {
	ID     SessionID
	Source Datum // the source's session / process / client id
	Txns   []TxnID
}

// Predicate describes a predicate as the source stated it.
type Predicate struct {
	Relation string // table or relation name ("" when the source has one relation)
	Expr     string // the predicate as text, e.g. "v = 2" or "field 3 in [10, 20]"
	// Field, Lo and Hi describe a range predicate Lo <= Field <= Hi when IsRange.
	Field   Datum
	Lo, Hi  int64
	IsRange bool
}

// Row is one row a predicate operation saw or changed. It is 12 bytes: a history of
// millions of predicate rows keeps the rare explicit sources aside, in [PredOp.Srcs].
type Row struct {
	Key   Key
	Value Value // the value seen (predicate read) or written (predicate write)
	// Match is whether the predicate held on the version this row was evaluated on. Predicate
	// reads list visible rows (Match true); predicate writes list every row they evaluated,
	// recording the would-be new version even when Match is false (Vbox's invisible writes).
	Match bool
}

// PredOp is the payload of a predicate read or write.
type PredOp struct {
	Pred Predicate
	Rows []Row
	// Srcs holds the explicit source of each row (Srcs[i] for Rows[i]) when the format named
	// the writer of some row's version; otherwise it is nil and every row's writer is found
	// by value. Read it with [PredOp.Src].
	Srcs []Src
}

// Src returns the explicit source of row i (the zero Src, SrcByValue, when none was named).
func (p *PredOp) Src(i int) Src {
	if p.Srcs == nil {
		return Src{}
	}
	return p.Srcs[i]
}

// SetSrc names the writer of row i's version, allocating Srcs on the first call. It is for
// readers that learn sources after the rows, before the history is built.
func (p *PredOp) SetSrc(i int, s Src) {
	if p.Srcs == nil {
		if s == (Src{}) {
			return
		}
		p.Srcs = make([]Src, len(p.Rows))
	}
	p.Srcs[i] = s
}

// History is a recorded transaction history. It is immutable once built; its methods are
// safe for concurrent use.
type History struct {
	Txns     []Txn
	Sessions []Session
	Keys     []Datum  // original of each Key
	Values   Datums   // original of each Value ([History.Value]); value Nil is the nil datum
	Preds    []PredOp // payloads of predicate ops

	// Initial is the value every key holds before any transaction ([Nil] unless the source
	// says otherwise); InitialByKey overrides it per key.
	Initial      Value
	InitialByKey map[Key]Value

	// Snapshots holds the database snapshot of each transaction whose source recorded one
	// (nil: none). [Builder.Build] derives start and commit timestamps from them
	// ([DeriveTimestamps]) when the source gave no timestamps; SnapshotErr says why it
	// could not (nil: derived, or no snapshots).
	Snapshots   map[TxnID]Snapshot
	SnapshotErr error

	// Notes say what the reader decided that the source does not state (for example which
	// transaction it took as the initial state), one sentence each. Reports show them first.
	Notes []string

	lists      []Value
	timeOrigin int64 // the earliest client begin time ([History.TimeOrigin])
}

// TimeOrigin returns the earliest client begin time of the history's transactions (0 when
// none has a client interval): reports show client times as durations since it.
func (h *History) TimeOrigin() int64 { return h.timeOrigin }

// InitialValue returns the value k holds in the initial state.
func (h *History) InitialValue(k Key) Value {
	if v, ok := h.InitialByKey[k]; ok {
		return v
	}
	return h.Initial
}

// List returns the values of an OpListRead. The slice is owned by the history.
func (h *History) List(o Op) []Value { return h.lists[o.aux : o.aux+o.auxLen : o.aux+o.auxLen] }

// Pred returns the payload of a predicate op.
func (h *History) Pred(o Op) *PredOp { return &h.Preds[o.aux] }

// PredIndex returns the index in [History.Preds] of predicate op o's payload, for side
// tables indexed like Preds.
func (o Op) PredIndex() int { return int(o.aux) }

// Txn returns the transaction with dense id t.
func (h *History) Txn(t TxnID) *Txn { return &h.Txns[t] }

// All iterates over every transaction in id order.
func (h *History) All() iter.Seq2[TxnID, *Txn] {
	return func(yield func(TxnID, *Txn) bool) {
		for i := range h.Txns {
			if !yield(TxnID(i), &h.Txns[i]) {
				return
			}
		}
	}
}

// Key returns the original of k.
func (h *History) Key(k Key) Datum { return h.Keys[k] }

// Value returns the original of v.
func (h *History) Value(v Value) Datum { return h.Values.At(int(v)) }

// KV renders key k holding value v as reports write it ([KV]).
func (h *History) KV(k Key, v Value) string { return KV(h.Key(k), h.Value(v)) }

// Name returns how reports name t: its source id when it has one, else "T<id>".
func (h *History) Name(t TxnID) string {
	if d := h.Txns[t].Source; !d.IsNil() {
		return TxnName(d)
	}
	return "T" + strconv.Itoa(int(t))
}

// TxnName is how reports name a transaction whose source id is d: a number as "T7" (a bare
// number would read like a key or a value), anything else as it stands.
func TxnName(d Datum) string {
	if i, ok := d.Int(); ok {
		return "T" + strconv.FormatInt(i, 10)
	}
	return d.String()
}

// HasTime reports whether every transaction carries a client interval.
func (h *History) HasTime() bool {
	return len(h.Txns) > 0 && !slices.ContainsFunc(h.Txns, func(t Txn) bool { return !t.HasTime })
}

// HasTimestamps reports whether every transaction carries database timestamps.
func (h *History) HasTimestamps() bool {
	return len(h.Txns) > 0 && !slices.ContainsFunc(h.Txns, func(t Txn) bool { return !t.HasTimestamps })
}

// AnyCommitted reports whether some transaction of h committed.
func (h *History) AnyCommitted() bool {
	return slices.ContainsFunc(h.Txns, func(t Txn) bool { return t.Committed() })
}

// SessionOrdered reports whether some session holds two committed transactions, so that
// session order constrains something.
func (h *History) SessionOrdered() bool {
	for _, s := range h.Sessions {
		n := 0
		for _, t := range s.Txns {
			if h.Txns[t].Committed() {
				if n++; n == 2 {
					return true
				}
			}
		}
	}
	return false
}

// PlaceholderSession is the source id of the session in which readers put placeholder
// transactions: writers that reads name but that no log holds (a Cobra or Vbox directory
// missing a file). Their writes are inferred from the reads that name them; checkers must
// not pass a history on their account.
const PlaceholderSession = "missing-writers"

// Placeholders returns the placeholder transactions of h (see [PlaceholderSession]).
func (h *History) Placeholders() []TxnID {
	for _, s := range h.Sessions {
		if str, ok := s.Source.Str(); ok && str == PlaceholderSession {
			return s.Txns
		}
	}
	return nil
}
