package format

import (
	"fmt"
	"strings"

	"github.com/isovet/isovet/history"
)

// Feature is something a history can say that a format may be unable to hold: writing the
// history in a format that lacks a feature the history uses would change what it means.
// Each writable format lists the features it holds ([Format.Holds]); [Losses] finds what a
// history uses that a format lacks.
type Feature uint8

// Features. The zero value is invalid.
const (
	FeatInvalid Feature = iota
	// Sources: reads that name their writer where value matching would not find that
	// writer alone (the value is written by more than one transaction, or by none).
	Sources
	// Predicates: predicate reads and writes.
	Predicates
	// InsertDelete: inserts and deletes.
	InsertDelete
	// Registers: item reads and writes.
	Registers
	// Lists: list appends and list reads.
	Lists
	// Mixed: item and list operations in one history.
	Mixed
	// NonInteger: keys or values that are not integers (strings, nil).
	NonInteger
	// FailedOps: operations the source marked as failed ([history.OpFailed]).
	FailedOps
	// Aborted: transactions that aborted.
	Aborted
	// AbortedMany: sessions with more than one aborted transaction.
	AbortedMany
	// Unknown: transactions whose outcome is unknown.
	Unknown
	// UnknownThenMore: sessions that go on after a transaction of unknown outcome.
	UnknownThenMore
	// UnknownEnd: transactions of unknown outcome whose client interval ends before the
	// history's last client time.
	UnknownEnd
	// UnknownNilRead: reads of nil in transactions of unknown outcome.
	UnknownNilRead
	// ClientTime: the client's interval per transaction.
	ClientTime
	// OpTime: the client's interval per operation.
	OpTime
	// Timestamps: the database's start and commit timestamps.
	Timestamps
	// Snapshots: the database's snapshot per transaction.
	Snapshots
	// Initial: one initial value for every key other than the one the format's reader
	// assumes ([Format.Initial]), where some read sees either.
	Initial
	// InitialPerKey: initial values given key by key, where some read sees one (or the
	// format's initial value).
	InitialPerKey
	// SharedSessionIDs: distinct sessions with the same source id.
	SharedSessionIDs
	// EmptyTxns: transactions without operations.
	EmptyTxns
	// Placeholders: transactions that stand for writers no log holds
	// ([history.PlaceholderSession]); they are known by their session's id.
	Placeholders
	numFeatures
)

// FeatureInfo describes a feature: its name, what [Loss.Count] counts, what is lost when a
// format cannot hold it, and what `isovet convert --lossy` does about it.
type FeatureInfo struct {
	Name string
	Unit string // what Loss.Count counts ("reads", "transactions", ...)
	What string // the loss, after the count: "12 reads name a writer ..."
	// Drop says what convert --lossy writes instead; "" when nothing can be written in its
	// place (the format cannot express the history at all).
	Drop string
	// Under lists broader features: when the format lacks one of them too, that loss
	// already covers this one, which is not reported.
	Under []Feature
}

var features = [numFeatures]FeatureInfo{
	FeatInvalid: {Name: "invalid"},
	Sources: {Name: "read-sources", Unit: "reads",
		What: "name their writer, which value matching cannot recover (the value is written by more than one transaction, or by none)",
		Drop: "the reads are matched to writers by value"},
	Predicates:   {Name: "predicates", Unit: "operations", What: "are predicate reads or writes", Drop: "left out"},
	InsertDelete: {Name: "insert-delete", Unit: "operations", What: "are inserts or deletes", Drop: "left out"},
	Registers:    {Name: "registers", Unit: "operations", What: "are item reads or writes"},
	Lists:        {Name: "lists", Unit: "operations", What: "are list appends or list reads"},
	Mixed:        {Name: "mixed-workloads", Unit: "operations", What: "are of the rarer workload in a history that mixes item and list operations", Under: []Feature{Registers, Lists}},
	NonInteger:   {Name: "non-integers", Unit: "operations", What: "have a key or value that is not an integer"},
	FailedOps: {Name: "failed-ops", Unit: "operations", What: "are marked as failed",
		Drop: "left out (a failed statement did not take effect); a transaction logged as committed that held one stays committed, as --failed-statements=skipped reads it, though the database may have rolled it back"},
	Aborted:     {Name: "aborted", Unit: "transactions", What: "aborted", Drop: "left out"},
	AbortedMany: {Name: "aborted-per-session", Unit: "sessions", What: "hold more than one aborted transaction", Drop: "each session's aborted transactions merged into one", Under: []Feature{Aborted}},
	Unknown:     {Name: "unknown-outcome", Unit: "transactions", What: "have an unknown outcome", Drop: "left out"},
	UnknownThenMore: {Name: "unknown-then-more", Unit: "sessions",
		What: "go on after a transaction of unknown outcome (the format ends a session there, losing the session order after it)",
		Drop: "written; the rest of each such session reads back as a new session", Under: []Feature{Unknown}},
	UnknownEnd: {Name: "unknown-end", Unit: "transactions",
		What: "of unknown outcome end before the history's last client time (the format reads them as lasting to the end)",
		Drop: "written; their intervals read back as lasting to the end of the history", Under: []Feature{Unknown, ClientTime}},
	UnknownNilRead: {Name: "unknown-nil-reads", Unit: "reads",
		What: "of nil in transactions of unknown outcome (the format cannot tell them from reads with no result)",
		Drop: "left out", Under: []Feature{Unknown}},
	ClientTime: {Name: "client-time", Unit: "transactions", What: "carry a client time interval", Drop: "left out"},
	OpTime:     {Name: "op-time", Unit: "transactions", What: "carry a client time interval per operation", Drop: "left out"},
	Timestamps: {Name: "db-timestamps", Unit: "transactions", What: "carry database start and commit timestamps", Drop: "left out"},
	Snapshots:  {Name: "snapshots", Unit: "transactions", What: "carry a database snapshot", Drop: "left out (timestamps derived from them are kept where the format holds timestamps)"},
	Initial: {Name: "initial-value", Unit: "reads",
		What: "see the initial value or the format's, and the format cannot state the history's initial value",
		Drop: "not written: check the output with --initial-value"},
	InitialPerKey: {Name: "initial-per-key", Unit: "reads",
		What: "see the initial value of a key that has its own, or the format's, and the format cannot state initial values key by key",
		Drop: "not written: reading the output assumes one initial value for every key"},
	SharedSessionIDs: {Name: "shared-session-ids", Unit: "sessions",
		What: "share their source id with an earlier session (the format merges them)",
		Drop: "written; sessions with the same id read back as one"},
	EmptyTxns: {Name: "empty-transactions", Unit: "transactions", What: "have no operations", Drop: "left out"},
	Placeholders: {Name: "placeholders", Unit: "transactions",
		What: "stand for writers that no log holds (session " + history.PlaceholderSession + "), which checkers must not pass a history on",
		Drop: "left out (the reads that name them find no writer)"},
}

// Info returns the table entry of f.
func (f Feature) Info() FeatureInfo {
	if f < numFeatures {
		return features[f]
	}
	return features[FeatInvalid]
}

func (f Feature) String() string { return f.Info().Name }

// AllFeatures returns every feature, in table order.
func AllFeatures() []Feature {
	fs := make([]Feature, 0, numFeatures-1)
	for f := FeatInvalid + 1; f < numFeatures; f++ {
		fs = append(fs, f)
	}
	return fs
}

// Features is a set of features.
type Features uint64

// Holding returns the set of fs.
func Holding(fs ...Feature) Features {
	var s Features
	for _, f := range fs {
		s |= 1 << f
	}
	return s
}

// Everything is the set of every feature.
var Everything = Holding(AllFeatures()...)

// Has reports whether f is in s.
func (s Features) Has(f Feature) bool { return s&(1<<f) != 0 }

// Loss is one feature a history uses that a format cannot hold.
type Loss struct {
	Feature Feature
	Count   int           // how many (FeatureInfo.Unit)
	Txn     history.TxnID // an example transaction (-1: none)
	Example string        // the example, in words
}

// Droppable reports whether convert --lossy can write the history without the feature.
func (l Loss) Droppable() bool { return l.Feature.Info().Drop != "" }

// String says the loss in one line: "3 reads name their writer ... (e.g. ...)".
func (l Loss) String() string {
	in := l.Feature.Info()
	s := fmt.Sprintf("%s: %d %s %s", in.Name, l.Count, in.Unit, in.What)
	if l.Example != "" {
		s += " (e.g. " + l.Example + ")"
	}
	return s
}

// Undroppable returns the first loss in ls that convert --lossy cannot drop.
func Undroppable(ls []Loss) (Loss, bool) {
	for _, l := range ls {
		if !l.Droppable() {
			return l, true
		}
	}
	return Loss{}, false
}

// Describe says the losses in ls, one per line, each starting with "  - ".
func Describe(ls []Loss) string {
	var b strings.Builder
	for i, l := range ls {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("  - ")
		b.WriteString(l.String())
	}
	return b.String()
}
