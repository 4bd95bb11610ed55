// Package history is isovet's model of a transaction history: what clients (or the database)
// recorded, in the shape every checker reads.
//
// # Model
//
// A [History] holds sessions, each an ordered list of transactions; a transaction ([Txn]) holds
// operations ([Op]) in program order. Every transaction keeps the identifier its source gave it
// ([Txn.Source]) so reports can name the database's own ids, and its [Outcome]: committed,
// aborted, or unknown (a Jepsen :info: it may or may not have committed).
//
// Keys and values are interned to dense integers ([Key], [Value]) for the checkers; the
// originals ([Datum]) are kept in [History.Keys] and [History.Values] for reports. Value 0 is
// [Nil], the absent value (Elle's nil, a read that found nothing). Values are a [Datums] table
// without Go pointers (read them with [History.Value]), so that the millions a large history
// has cost the garbage collector nothing.
//
// Operations are item reads and writes, list appends and list reads, predicate reads and
// writes, inserts and deletes. A read may carry an explicit source ([Src]) when the format
// names the writer (Cobra and Vbox logs do); otherwise the writer is found by value.
//
// The initial state is a virtual transaction that wrote [History.InitialValue] to every key
// (Nil unless the source says otherwise, e.g. 0 for dbcop).
//
// Time comes in two kinds, both optional: the client's wall-clock [Interval] per transaction
// and per operation (ns, closed [Begin, End]), and the database's own start and commit
// [Timestamp]s (hybrid logical clocks).
//
// # Building
//
// Readers stream into a [Builder], which interns as it goes, and call [Builder.Build] at the
// end; Build resolves nothing by itself but checks structure with [Validate]. A new value
// takes the next [Value] id, so ids follow the order values are first interned. For
// millions of string values, [Builder.GrowValues] sizes the value table once and
// [Builder.BytesValues] interns a batch of strings with their index lookups overlapped,
// giving exactly the ids of [Builder.BytesValue] one at a time.
//
// # Local names
//
//	h History   t Txn / TxnID   o Op   k Key   v Value   s Session / SessionID   d Datum
package history
