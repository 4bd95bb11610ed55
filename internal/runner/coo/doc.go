// Package coo replays the Coo/3TS anomaly scenarios (the step-session-SQL scripts Vbox
// publishes in data/coo_origin) against PostgreSQL and MariaDB at READ COMMITTED,
// REPEATABLE READ and SERIALIZABLE, records what the clients saw as a history, and checks
// it: the engine of `isovet coo`.
//
// # Scripts
//
// A script is lines `STEP-SESSION-SQL;`. Step 0 is the setup (DROP TABLE, CREATE TABLE,
// INSERTs, COMMIT); the other lines are the scenario's interleaving. [Parse] accepts exactly
// the SQL the scripts use (see the grammar in sql.go) and reports anything else as a
// [*ParseError] with file, line and column; it never panics (FuzzParse). The public files
// have CRLF line ends in places, no final newline, a doubled semicolon and, in
// iat_dda_write_skew, two steps numbered out of order: statements are issued in file
// order, and the oddity is listed in [Script.Warnings].
//
// # Replay
//
// [DB.Replay] runs one script on a table of its own ([DB.TableName]: the script's t1
// becomes coo_<script>_<pg|my>_<rc|rr|ser>, so concurrent replays and other tests never
// share a table; only that table is dropped). The setup's inserts are one committed
// loader transaction in a session of its own. Each script session gets one connection at
// the requested isolation and a worker goroutine that issues its statements in order.
// Statements go out in step order; one that has not completed after [Options.Wait] (150ms)
// and that the server reports waiting for a lock (pg_stat_activity, InnoDB's
// information_schema.innodb_trx) is deemed blocked, and the replay goes on with the next
// step while it waits, as the 3TS tool does. Asking the server keeps a statement that is
// merely slow on a loaded machine from being taken for blocked, which would reorder the
// scenario. Serialization failures, deadlocks and lock wait timeouts abort the
// transaction: it is recorded as aborted, the rest of it is skipped, nothing is retried. At
// the end the replay waits for every session ([Options.FinalWait]); a statement still
// blocked then is cancelled and its connection killed.
//
// # Recording
//
// Keys are the rows' primary keys and values the int column v; nil means no row.
//
//	SELECT * FROM t WHERE k=n                   read(n) = v, or nil if no row
//	UPDATE t SET v=x WHERE k=n                  write(n, x) if a row matched, else read(n) = nil
//	INSERT INTO t VALUES (k, v)                 insert(k, v); a duplicate key: see below
//	SELECT * FROM t WHERE v >= lo AND v <= hi   predicate read "v >= lo AND v <= hi", every row returned
//	SELECT * FROM t [ORDER BY k]                predicate read "true" over v in [MinInt64, MaxInt64]
//
// A duplicate-key INSERT aborts the whole transaction on PostgreSQL: it is recorded as a
// failed insert ([history.OpFailed]) in an aborted transaction. On MariaDB only the
// statement fails; the existing row is then read with a locking read (the duplicate check
// already holds that lock) and recorded as an item read, since a failed insert in a
// committed transaction would be taken as a write. Every transaction and operation carries
// its client interval from the monotonic clock (ns since the replay began).
//
// # Suite
//
// [RunSuite] replays every script at every level on every database (databases
// concurrently, a few replays per database at a time) and checks each history at the
// levels in [Levels] that have a complete checker. [WriteMarkdown] renders the table
// docs/coo.md shows.
package coo
