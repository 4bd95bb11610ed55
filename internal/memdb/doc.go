// Package memdb is isovet's embedded reference database: an in-process multi-version
// key-value store with selectable isolation and faults that can be switched on. It is the
// default target of `isovet run` and the test oracle for every checker: a clean mode must
// pass its own level, and each fault must be caught, with the anomaly named below.
//
// # Data model
//
// Keys are strings. A key holds either a register (an int64; a key never written reads as
// 0, or as its initial value) or a list of int64 elements (never written: empty). Every
// committed write installs a new version stamped with the logical commit timestamp; the
// store keeps the recent versions of each key (older ones are trimmed; a transaction whose
// snapshot needs a trimmed version aborts with [ErrConflict]).
//
// Tables ([DB.CreateTable]) hold rows: an int64 primary key and a fixed number of int64
// columns. Each row is stored as an item whose versions carry the row image (a nil image
// is a row that does not exist: not yet inserted, or deleted), so every mode and fault
// treats rows as it treats registers. [Tx.Scan] is a predicate read (the rows whose column
// lies in a range, as the transaction sees them), [Tx.Update] a predicate write (evaluate
// like Scan, then write each matching row), [Tx.Insert] and [Tx.Delete] write one row. In
// serializable mode a transaction also records every predicate it evaluated, and
// validation fails when a row changed since the snapshot such that the predicate's answer
// is stale: the version seen matched (the row was returned and is overwritten) or the
// latest version matches (a phantom: a row inserted into, or moved into, the range).
//
// Time is logical: a counter advanced by each commit. The package never reads the clock.
// [Tx.Timestamps] returns a transaction's start (snapshot) and commit timestamps, which the
// runner records so that the timestamp checker (Chronos) can check memdb histories.
//
// # Modes
//
//	serializable          snapshot reads, first-committer-wins on writes, and commit-time
//	                      validation that nothing the transaction read has been overwritten
//	                      since its snapshot (backward-validating optimistic concurrency
//	                      control). Deviation: the issue asks for SSI or strict two-phase
//	                      locking; validation forbids every anomaly either forbids (the
//	                      commit order is a serial order, in real time), at the cost of more
//	                      aborts.
//	snapshot-isolation    snapshot reads at begin; first committer wins on write-write
//	                      conflicts.
//	read-committed        each read sees the latest committed version; writes are buffered
//	                      and installed atomically at commit, with no conflict checks.
//	read-uncommitted      writes are installed at once and visible to everyone before commit;
//	                      a key written by an active transaction is locked against other
//	                      writers (no-wait: the second writer aborts), so there are no dirty
//	                      writes. isovet has no read-uncommitted level to check it against.
//
// Aborts caused by the mode (first committer wins, failed validation, lock conflicts) return
// [ErrConflict], the equivalent of SQLSTATE 40001: the runner retries the work as a new
// transaction.
//
// # Faults
//
// Each fault breaks a clean mode in one documented way, so that a checker must report the
// anomaly in the right column:
//
//	fault              modes      what memdb does wrong                    anomaly it must cause
//	lost-update        si, ser    skips first-committer-wins (and, in      lost-update (SI, SER)
//	                              serializable mode, validation of keys
//	                              the transaction also writes)
//	stale-read         si, ser    takes the snapshot 1 to 8 commits in     stale-read (strict-
//	                              the past (and validates against it;      serializable)
//	                              read-only transactions commit
//	                              unvalidated)
//	fractured-read     si         every read takes a fresh snapshot        fractured-read / read
//	                              (read committed reads inside SI)         skew (SI, SER)
//	long-fork          si         keys are split in two halves; each       long-fork (SI, SER)
//	                              transaction sees one half a few commits
//	                              in the past (parallel snapshots)
//	aborted-read       all        aborts one transaction in eight at       G1a aborted read (read
//	                              commit, but installs its writes anyway   committed and above)
//	intermediate-read  all        installs a transaction's writes of a     G1b intermediate read
//	                              key in reverse order, so the first,      (read committed and
//	                              overwritten value is the one others see  above)
//	phantom            ser        predicate validation checks only the     phantom: predicate
//	                              rows a predicate returned, not rows      write skew, a G2 cycle
//	                              that entered its range since the         through a predicate
//	                              snapshot (inserts, updates into the      anti-dependency
//	                              range)                                   (serializable)
//
// The stale-read fault never takes a snapshot older than the timestamp given to
// [DB.BeginAfter]: a client that passes its session's last commit
// timestamp (the runner does) keeps read-your-writes, so the anomaly is a stale read of
// other sessions' writes, caught through real time, not a session-order violation.
//
// Rows keep only the versions a current or future snapshot can read (older ones are
// dropped as new versions are installed), and a range index per column lets predicate
// operations visit only the rows whose values may lie in range.
//
// # Concurrency
//
// A [DB] and its transactions are safe for concurrent use; one mutex serialises every
// operation, which keeps the semantics obvious and still runs well over 100,000 small
// transactions per second. A [Tx] is meant to be used by one goroutine.
//
// # Local names
//
// db DB, tx Tx, k key, it item (a key's version chain), v version, ts timestamp.
package memdb
