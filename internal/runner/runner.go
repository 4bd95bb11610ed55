// Package runner drives a workload through a database and records what the clients saw as a
// history, then checks it: the engine of `isovet run`.
//
// # Pieces
//
//   - [DB], [Session] and [Tx] are the tiny interface every target implements: register
//     reads and writes and list appends and reads on string keys. Drivers live in
//     subpackages (pg, mysql, sqlite) and register themselves with [Register]; the embedded
//     reference database memdb is built in. Import isovet/internal/runner/all to link every
//     driver.
//   - [Run] executes a [workload.Workload]: one goroutine per session, each on its own
//     connection. It records every attempt as a transaction with its client interval from
//     the monotonic clock ([history.Interval], ns since the run began, closed), its
//     outcome, and database ids and timestamps when the driver has them ([Info]).
//   - Errors are classified by the drivers: a serialization failure or deadlock wraps
//     [ErrAborted], the attempt is recorded as aborted and the template is retried as a new
//     transaction; a connection lost during commit wraps [ErrUnknownOutcome] and the attempt
//     is recorded with outcome unknown. Any other error stops the run.
//   - The history is streamed to native JSONL (format/native) as it runs: the session that
//     finishes a transaction records it and writes it to the file at once (transactions that
//     finish meanwhile are batched into the next write), so a crash loses nothing already
//     recorded. The sidecar of database ids and commit times is written at the end, once
//     the commit times have been read in bulk ([CommitTimer]).
//   - [RunCommand] is `isovet run` minus flag parsing.
//
// Only this package and its subpackages do IO and read the clock; workload and memdb are
// pure.
package runner

import (
	"context"
	"errors"

	"github.com/isovet/isovet/history"
)

// DB is a database under test.
type DB interface {
	// Prepare creates (or empties) the store the workload uses: register keys with their
	// initial values (absent: 0) and list keys (empty).
	Prepare(ctx context.Context, s Schema) error
	// Session opens a client session: one connection, used by one goroutine.
	Session(ctx context.Context) (Session, error)
	// Close releases the database; it drops nothing (see [Cleaner]).
	Close() error
}

// Cleaner is implemented by drivers that can drop what Prepare created.
type Cleaner interface {
	Cleanup(ctx context.Context) error
}

// Schema is what a workload needs from the store.
type Schema struct {
	Keys    []string         // register keys
	Initial map[string]int64 // initial register values; absent keys start at 0
	Lists   []string         // list keys
	// Table, when set, is a table of rows the driver creates empty (row workloads); the
	// runner fills it with logged loader transactions.
	Table *TableSchema
}

// InitialRows are the rows a driver loads: every register key with its initial value, then
// every list key (with 0 and an empty list).
func (s Schema) InitialRows() (keys []string, vals []int64) {
	keys = make([]string, 0, len(s.Keys)+len(s.Lists))
	vals = make([]int64, 0, cap(keys))
	for _, k := range s.Keys {
		keys = append(keys, k)
		vals = append(vals, s.Initial[k])
	}
	for _, k := range s.Lists {
		keys = append(keys, k)
		vals = append(vals, 0)
	}
	return keys, vals
}

// Session is one client connection.
type Session interface {
	Begin(ctx context.Context) (Tx, error)
	Close() error
}

// Tx is one transaction. Methods return errors wrapping [ErrAborted] or
// [ErrUnknownOutcome] when the driver recognises those cases.
type Tx interface {
	Read(ctx context.Context, key string) (int64, error) // 0 when the key holds nothing
	Write(ctx context.Context, key string, v int64) error
	Append(ctx context.Context, key string, v int64) error
	ReadList(ctx context.Context, key string) ([]int64, error) // nil when empty
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// Info is what a database tells about a finished transaction. Drivers whose Tx implements
// [Informer] fill it in.
type Info struct {
	// ID is the database's transaction id (PostgreSQL's xid), nil if none.
	ID history.Datum
	// Start and Commit are the database's snapshot and commit timestamps, when it exposes
	// both (memdb). HasTimestamps says they are valid.
	Start, Commit history.Timestamp
	HasTimestamps bool
	// Snapshot is the database's MVCC snapshot of the transaction (PostgreSQL at
	// REPEATABLE READ and SERIALIZABLE), valid if HasSnapshot. Written to the history with
	// the transaction's ID, it gives the history timestamps ([history.DeriveTimestamps]).
	Snapshot    history.Snapshot
	HasSnapshot bool
	// CommitTime is a commit timestamp alone (PostgreSQL with track_commit_timestamp),
	// in ns since the Unix epoch; 0 if unknown. It goes to the sidecar file, not the
	// history, since the timestamp checker needs start timestamps too.
	CommitTime int64
}

// Informer is implemented by a Tx that reports [Info] after Commit or Rollback returns.
type Informer interface {
	Info() Info
}

// CommitTimer is implemented by a DB that can tell, after the run, when transactions
// committed: for each id (as [Info.ID] reported it) the commit time in ns since the Unix
// epoch, 0 if unknown, in the order asked. The runner asks once the sessions have stopped,
// for every committed transaction with an id, in chunks, and writes the times to the sidecar
// ([RunOptions.Sidecar]); asking in bulk instead of once per transaction keeps the round
// trip out of the transactions' path.
type CommitTimer interface {
	CommitTimes(ctx context.Context, ids []history.Datum) ([]int64, error)
}

// Interrupter is implemented by a Session that can be stopped in the middle of a statement
// from another goroutine (for instance by setting a past deadline on its connection); the
// statement then fails, and so does every later one. The runner calls Interrupt when the
// run is cancelled, and for such sessions passes statements a context that is never
// cancelled: drivers then need not watch a context on every statement (pgx registers and
// removes a cancellation callback per query, and the sessions of a run shared the run's
// context and its lock).
type Interrupter interface {
	Interrupt()
}

// Error classes.
var (
	// ErrAborted marks a transaction the database aborted to keep its guarantees
	// (serialization failure, deadlock, first-committer-wins): it did not commit, and the
	// work may be retried as a new transaction.
	ErrAborted = errors.New("runner: transaction aborted by the database")
	// ErrUnknownOutcome marks a commit whose result is unknown (the connection was lost
	// while committing): the transaction may or may not have committed.
	ErrUnknownOutcome = errors.New("runner: commit outcome unknown")
)
