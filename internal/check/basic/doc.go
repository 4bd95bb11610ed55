// Package basic runs isovet's linear-time checks: anomalies that one transaction's reads
// prove by themselves, without any dependency graph. Each finding is a [report.Anomaly]
// whose kind comes from internal/anomaly and whose message names the source's
// transaction ids and original keys and values.
//
// # What it finds
//
//   - internal (anomaly.Internal): a read after the transaction's own write does not return
//     it; a list read after the transaction's own appends does not end with them; a read
//     returns a value the transaction itself writes only later.
//   - G1a (anomaly.AbortedRead): a committed transaction read a value that only aborted
//     transactions wrote. With duplicate values this is reported only when no committed or
//     unknown-outcome transaction also wrote it; with an explicit source ([history.SrcTxn])
//     it is certain.
//   - G1b (anomaly.IntermediateRead): a committed transaction read a value that its (sole)
//     writer later overwrote in the same transaction; for lists, the read list ends with an
//     element its writer followed with another append to the same key.
//   - thin-air reads (anomaly.ThinAirRead): a value (or list element) nobody wrote that is
//     not the key's initial value.
//   - duplicate list elements (anomaly.DuplicateElements).
//   - incompatible list orders (anomaly.IncompatibleOrder): two list reads of one key where
//     neither is a prefix of the other. Every read is compared with the longest read of its
//     key, which is linear and finds a pair whenever one exists.
//   - future reads (anomaly.FutureRead): a read sees the write of a later transaction of
//     its own session.
//
// Duplicate written values are not an anomaly here: they are counted and reported in a
// note, and make value-matched reads ambiguous, which the checks above treat
// conservatively (a finding is reported only if every candidate writer agrees).
//
// [InitialHint] looks at the thin-air reads once more, for a known pitfall: when every one
// reads 0 (or every one reads nil), the history most likely assumes another initial value
// than the one it was read with, and the hint names the --initial-value to try. check.Check
// adds it to a report that lists a thin-air read.
//
// # Conventions
//
//   - Only committed transactions' reads are checked: an aborted transaction's reads
//     constrain nothing, and an unknown-outcome transaction's reads are not trusted.
//   - An unknown-outcome transaction's writes count as possibly committed: if anyone read
//     them they were committed; otherwise nothing here depends on them.
//   - Explicit read sources ([history.Src]) take precedence over matching by value.
//   - A failed read ([history.Op.Failed]) is not checked. A failed write may or may not
//     have happened: its value counts as written (reading it is not a thin-air read), and
//     the transaction's later reads of that key are not checked.
//   - Predicate operations are not checked here.
//
// # Cost
//
// Two passes over the operations and one hash table of (key, value) writes: linear time,
// and memory proportional to the number of writes.
//
// # Local names
//
//	h History   t Txn / TxnID   o Op   k Key   v Value   w writer record
package basic
