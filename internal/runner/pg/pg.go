// Package pg is the PostgreSQL driver of the workload runner (jackc/pgx). It registers the
// postgres:// and postgresql:// schemes with [runner.Register].
//
// Each session is one connection. A transaction is BEGIN ISOLATION LEVEL ... (isovet's
// serializable, repeatable-read or snapshot-isolation, and read-committed map to
// PostgreSQL's levels, [runner.PostgresIsolation]; its REPEATABLE READ is snapshot
// isolation; read-uncommitted is refused, PostgreSQL runs it as READ COMMITTED), then one statement per operation on a table of
// (k text primary key, v bigint, l text) rows, then COMMIT.
//
// Errors: SQLSTATE 40001 (serialization failure), 40P01 (deadlock) and 23505 (a unique
// violation two concurrent inserts can cause) abort the transaction and the runner retries
// it; a COMMIT that fails without a server answer (the connection broke) has an unknown
// outcome.
//
// The driver records each transaction's xid as its source id (read-only transactions have
// none): the first register write or list append of a transaction returns it (RETURNING
// pg_current_xact_id(), no extra statement), and a transaction whose first write was a row
// operation asks pg_current_xact_id_if_assigned() in the COMMIT round trip ("SELECT ...;
// COMMIT" as one simple-protocol query). At REPEATABLE READ and SERIALIZABLE it also records
// each transaction's snapshot (pg_current_snapshot(), sent with BEGIN), which gives the
// history start and commit timestamps ([history.DeriveTimestamps]): the timestamp checker
// and the certificates then know which commits each transaction saw, exactly
// (isovet_snapshot=off in the URL turns that off). With track_commit_timestamp on, the DB
// is a [runner.CommitTimer]: the runner asks for the commit times of all committed
// transactions in bulk at the end of the run (pg_xact_commit_timestamp over an array of
// ids), and they go to the run's sidecar file. isovet_txid=off in the URL turns ids,
// snapshots and commit times off.
//
// Sessions are [runner.Interrupter]s: the runner passes statements a context that is never
// cancelled, so pgx watches no context per query, and interrupts a session by setting a
// past deadline on its connection.
package pg

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/runner"
)

func init() {
	runner.Register("postgres", Open)
	runner.Register("postgresql", Open)
}

// DB is a PostgreSQL database under test.
type DB struct {
	cfg      *pgx.ConnConfig
	begin    string
	table    string
	txid     bool
	snap     bool // record each transaction's snapshot (REPEATABLE READ, SERIALIZABLE)
	commitTS bool
	rows     *runner.Tables // the row table, once Prepare created it
	chunk    int            // ids per commit-time query (0: 10,000); tests make it small

	mu   sync.Mutex
	side *pgx.Conn // CommitTimes' connection, opened at its first call, closed by Close
}

// Open connects once to check the server and the isolation level.
func Open(ctx context.Context, dsn string, o runner.OpenOptions) (runner.DB, runner.Target, error) {
	iso, err := runner.PostgresIsolation.Lookup(o.Isolation)
	if err != nil {
		return nil, runner.Target{}, fmt.Errorf("postgres: %w", err)
	}
	stmt := iso.SQL
	table, err := o.TableName()
	if err != nil {
		return nil, runner.Target{}, fmt.Errorf("postgres: %w", err)
	}
	// Below REPEATABLE READ each statement takes its own snapshot: the transaction has none.
	snap := stmt == "REPEATABLE READ" || stmt == "SERIALIZABLE"
	db := &DB{begin: "BEGIN ISOLATION LEVEL " + stmt, table: table, txid: true, snap: snap}
	cfg, err := pgx.ParseConfig(db.ownOptions(dsn))
	if err != nil {
		return nil, runner.Target{}, fmt.Errorf("postgres: %w", err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	db.cfg = cfg
	version, err := db.probe(ctx)
	if err != nil {
		return nil, runner.Target{}, err
	}
	desc := fmt.Sprintf("PostgreSQL %s at %s:%d, %s", version, cfg.Host, cfg.Port, iso.Describe())
	return db, runner.Target{Claim: iso.Claim, Description: desc}, nil
}

// ownOptions reads isovet's own options off dsn's query (isovet_txid=off: record no
// transaction ids, and so no snapshots; isovet_snapshot=off: no snapshots) and returns dsn
// without them.
func (db *DB) ownOptions(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	q := u.Query()
	if q.Get("isovet_txid") == "off" {
		db.txid, db.snap = false, false
	}
	if q.Get("isovet_snapshot") == "off" {
		db.snap = false
	}
	q.Del("isovet_txid")
	q.Del("isovet_snapshot")
	u.RawQuery = q.Encode()
	return u.String()
}

// probe connects once, returns the server's version and records whether it tracks commit
// timestamps (which are asked for only when transaction ids are recorded).
func (db *DB) probe(ctx context.Context) (string, error) {
	cfg := db.cfg
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return "", fmt.Errorf("postgres: connecting to %s:%d as %s: %w", cfg.Host, cfg.Port, cfg.User, err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	var version, track string
	if err := c.QueryRow(ctx, "SHOW server_version").Scan(&version); err != nil {
		return "", fmt.Errorf("postgres: %w", err)
	}
	if err := c.QueryRow(ctx, "SHOW track_commit_timestamp").Scan(&track); err == nil && track == "on" {
		db.commitTS = db.txid
	}
	return version, nil
}

func (db *DB) connect(ctx context.Context) (*pgx.Conn, error) {
	c, err := pgx.ConnectConfig(ctx, db.cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connecting to %s:%d: %w", db.cfg.Host, db.cfg.Port, err)
	}
	return c, nil
}

// Prepare creates the table if needed, empties it and loads every key.
func (db *DB) Prepare(ctx context.Context, s runner.Schema) error {
	c, err := db.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	stmts := []string{
		"CREATE TABLE IF NOT EXISTS " + db.table + " (k text PRIMARY KEY, v bigint NOT NULL DEFAULT 0, l text NOT NULL DEFAULT '')",
		"TRUNCATE " + db.table,
	}
	for _, q := range stmts {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("postgres: preparing table %s: %w", db.table, err)
		}
	}
	keys, vals := s.InitialRows()
	if _, err := c.Exec(ctx, "INSERT INTO "+db.table+" (k, v) SELECT * FROM unnest($1::text[], $2::bigint[])", keys, vals); err != nil {
		return fmt.Errorf("postgres: loading %d keys into %s: %w", len(keys), db.table, err)
	}
	if s.Table == nil {
		return nil
	}
	return db.prepareRows(ctx, c, s.Table)
}

// prepareRows creates the row table of a row workload if needed and empties it.
func (db *DB) prepareRows(ctx context.Context, c *pgx.Conn, ts *runner.TableSchema) error {
	rt, err := runner.NewTables(db.table, ts, "bigint")
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	for _, q := range append(rt.Create(false, ""), "TRUNCATE "+rt.Name) {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("postgres: preparing table %s: %w", rt.Name, err)
		}
	}
	db.rows = rt
	return nil
}

// Cleanup drops the table.
func (db *DB) Cleanup(ctx context.Context) error {
	c, err := db.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	_, err = c.Exec(ctx, "DROP TABLE IF EXISTS "+db.table)
	if db.rows != nil && err == nil {
		_, err = c.Exec(ctx, "DROP TABLE IF EXISTS "+db.rows.Name)
	}
	return err
}

// Close closes the connection CommitTimes opened, if any; sessions own theirs.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.side == nil {
		return nil
	}
	err := db.side.Close(context.Background())
	db.side = nil
	return err
}

// Session opens a connection.
func (db *DB) Session(ctx context.Context) (runner.Session, error) {
	c, err := db.connect(ctx)
	if err != nil {
		return nil, err
	}
	return db.newSession(c), nil
}

// CommitTimes returns the commit time of each transaction id (ns since the Unix epoch; 0 for
// an id without one), from pg_xact_commit_timestamp on one connection, one query per
// chunk of ids. Without track_commit_timestamp (or with isovet_txid=off) it returns
// nothing.
func (db *DB) CommitTimes(ctx context.Context, ids []history.Datum) ([]int64, error) {
	if !db.commitTS || len(ids) == 0 {
		return make([]int64, len(ids)), nil
	}
	xs := make([]int64, len(ids))
	for i, d := range ids {
		x, ok := d.Int()
		if !ok {
			return nil, fmt.Errorf("postgres: transaction id %v is not an integer", d)
		}
		xs[i] = x
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.side == nil {
		c, err := db.connect(ctx)
		if err != nil {
			return nil, err
		}
		db.side = c
	}
	out, err := db.commitTimes(ctx, db.side, xs)
	if err != nil {
		// Do not reuse a connection that may be broken.
		db.side.Close(context.WithoutCancel(ctx))
		db.side = nil
	}
	return out, err
}

func (db *DB) commitTimes(ctx context.Context, c *pgx.Conn, xs []int64) ([]int64, error) {
	n0 := len(xs)
	chunk := db.chunk
	if chunk <= 0 {
		chunk = 10_000
	}
	out := make([]int64, 0, len(xs))
	for len(xs) > 0 {
		n := min(chunk, len(xs))
		// The expression is the one that used to be asked per transaction: the xid8 taken
		// modulo 2^32 is the xid pg_xact_commit_timestamp wants.
		rows, err := c.Query(ctx, "SELECT pg_xact_commit_timestamp((x % 4294967296)::text::xid) FROM unnest($1::bigint[]) WITH ORDINALITY AS u(x, i) ORDER BY i", xs[:n])
		if err != nil {
			return nil, fmt.Errorf("postgres: reading commit times: %w", err)
		}
		for rows.Next() {
			var ts *time.Time
			if err := rows.Scan(&ts); err != nil {
				rows.Close()
				return nil, fmt.Errorf("postgres: reading commit times: %w", err)
			}
			var ns int64
			if ts != nil {
				ns = ts.UnixNano()
			}
			out = append(out, ns)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("postgres: reading commit times: %w", err)
		}
		xs = xs[n:]
	}
	if len(out) != n0 {
		return nil, fmt.Errorf("postgres: asked for %d commit times, got %d", n0, len(out))
	}
	return out, nil
}

// newSession returns a session on connection c.
func (db *DB) newSession(c *pgx.Conn) *session {
	t := db.table
	s := &session{db: db, c: c,
		qRead:   "SELECT v FROM " + t + " WHERE k = $1",
		qWrite:  "UPDATE " + t + " SET v = $2 WHERE k = $1",
		qInsert: "INSERT INTO " + t + " (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = excluded.v",
		qAppend: "INSERT INTO " + t + " (k, l) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET l = " + t + ".l || excluded.l",
		qList:   "SELECT l FROM " + t + " WHERE k = $1",
	}
	// A row the statement changed has the transaction's xid assigned: RETURNING reads it.
	const ret = " RETURNING pg_current_xact_id()::text::bigint"
	s.qWriteID, s.qInsertID, s.qAppendID = s.qWrite+ret, s.qInsert+ret, s.qAppend+ret
	return s
}

type session struct {
	db                                     *DB
	c                                      *pgx.Conn
	qRead, qWrite, qInsert, qAppend, qList string
	qWriteID, qInsertID, qAppendID         string // the same, returning the xid
	tx                                     tx     // the open transaction: one at a time
}

func (s *session) Close() error { return s.c.Close(context.Background()) }

// Interrupt makes the statement in progress, and every later one, fail at once: a past
// deadline on the connection. It is safe to call from any goroutine (net.Conn's deadlines
// are), also after Close.
func (s *session) Interrupt() {
	if nc := s.c.PgConn().Conn(); nc != nil {
		nc.SetDeadline(time.Unix(1, 0))
	}
}

func (s *session) Begin(ctx context.Context) (runner.Tx, error) {
	s.tx = tx{s: s}
	if !s.db.snap {
		if _, err := s.c.Exec(ctx, s.db.begin); err != nil {
			return nil, classify(err)
		}
		return &s.tx, nil
	}
	// The transaction's snapshot is taken by its first statement: BEGIN and the query that
	// reports it go as one simple-protocol query string, one round trip.
	res, err := s.c.PgConn().Exec(ctx, s.db.begin+"; SELECT pg_current_snapshot()::text").ReadAll()
	if err == nil && (len(res) != 2 || len(res[1].Rows) != 1 || len(res[1].Rows[0]) != 1) {
		err = fmt.Errorf("unexpected answer to BEGIN and the snapshot query: %d results", len(res))
	}
	var sn history.Snapshot
	if err == nil {
		sn, err = history.ParseSnapshot(string(res[1].Rows[0][0]))
	}
	if err != nil {
		// BEGIN may have opened the transaction before the query failed: close it, or the
		// session's next BEGIN would fail in it.
		s.c.Exec(ctx, "ROLLBACK")
		return nil, classify(err)
	}
	s.tx.info.Snapshot, s.tx.info.HasSnapshot = sn, true
	return &s.tx, nil
}

type tx struct {
	s    *session
	info runner.Info
	// xid is the transaction's id once a write returned it (hasXID). unsure says a row
	// operation may have assigned one without returning it: COMMIT then asks.
	xid            int64
	hasXID, unsure bool
}

// wantXID says whether the next write should return the transaction id.
func (t *tx) wantXID() bool { return t.s.db.txid && !t.hasXID }

// mayAssign notes a statement that may have assigned an xid without returning it.
func (t *tx) mayAssign() {
	if t.s.db.txid && !t.hasXID {
		t.unsure = true
	}
}

// classify wraps err with the runner's error classes.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "40001", "40P01", "23505":
			return fmt.Errorf("%w: postgres SQLSTATE %s: %s", runner.ErrAborted, pe.Code, pe.Message)
		}
	}
	return fmt.Errorf("postgres: %w", err)
}

func (t *tx) Read(ctx context.Context, k string) (int64, error) {
	var v int64
	err := t.s.c.QueryRow(ctx, t.s.qRead, k).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return v, classify(err)
}

func (t *tx) Write(ctx context.Context, k string, v int64) error {
	if t.wantXID() {
		// An UPDATE that matched no row assigned nothing and returns nothing: insert.
		err := t.s.c.QueryRow(ctx, t.s.qWriteID, k, v).Scan(&t.xid)
		if errors.Is(err, pgx.ErrNoRows) {
			err = t.s.c.QueryRow(ctx, t.s.qInsertID, k, v).Scan(&t.xid)
		}
		t.hasXID = err == nil
		return classify(err)
	}
	tag, err := t.s.c.Exec(ctx, t.s.qWrite, k, v)
	if err == nil && tag.RowsAffected() == 0 {
		_, err = t.s.c.Exec(ctx, t.s.qInsert, k, v)
	}
	return classify(err)
}

func (t *tx) Append(ctx context.Context, k string, v int64) error {
	if t.wantXID() {
		err := t.s.c.QueryRow(ctx, t.s.qAppendID, k, ","+strconv.FormatInt(v, 10)).Scan(&t.xid)
		t.hasXID = err == nil
		return classify(err)
	}
	_, err := t.s.c.Exec(ctx, t.s.qAppend, k, ","+strconv.FormatInt(v, 10))
	return classify(err)
}

func (t *tx) ReadList(ctx context.Context, k string) ([]int64, error) {
	var l string
	err := t.s.c.QueryRow(ctx, t.s.qList, k).Scan(&l)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, classify(err)
	}
	return runner.ParseList(l)
}

// Commit commits. The transaction id is known when a write returned it, and there is none
// when nothing was written; otherwise (a row operation wrote first) the id query and COMMIT
// go to the server as one simple-protocol query string ("SELECT ...; COMMIT"), one round
// trip: the server runs them in order inside the open transaction and stops at the first
// error, so an error from either means the transaction did not commit, unless no answer
// came at all.
func (t *tx) Commit(ctx context.Context) error {
	if t.s.db.txid && !t.hasXID && t.unsure {
		return t.commitAskingXID(ctx)
	}
	tag, err := t.s.c.Exec(ctx, "COMMIT")
	if err == nil && t.hasXID {
		t.info.ID = history.Int(t.xid)
	}
	return commitResult(tag, err)
}

// commitAskingXID sends the transaction id query and COMMIT as one query string, sets the
// id the first returned, and returns the outcome of the COMMIT.
func (t *tx) commitAskingXID(ctx context.Context) error {
	res, err := t.s.c.PgConn().Exec(ctx, "SELECT pg_current_xact_id_if_assigned()::text::bigint; COMMIT").ReadAll()
	if err == nil && (len(res) != 2 || len(res[0].Rows) != 1 || len(res[0].Rows[0]) != 1) {
		err = fmt.Errorf("unexpected answer to the transaction id query and COMMIT: %d results", len(res))
	}
	if err != nil {
		return commitResult(pgconn.CommandTag{}, err)
	}
	if v := res[0].Rows[0][0]; v != nil {
		x, perr := strconv.ParseInt(string(v), 10, 64)
		if perr != nil {
			return fmt.Errorf("postgres: transaction id %q: %w", v, perr)
		}
		t.info.ID = history.Int(x)
	}
	return commitResult(res[1].CommandTag, nil)
}

// commitResult is the outcome of a COMMIT the server answered with tag, or that failed with
// err: committed (nil), aborted (the server's error, classified, or a ROLLBACK tag), or
// unknown when no answer came.
func commitResult(tag pgconn.CommandTag, err error) error {
	if err != nil {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			// No answer from the server: the commit may or may not have happened.
			return fmt.Errorf("%w: postgres: %w", runner.ErrUnknownOutcome, err)
		}
		return classify(err)
	}
	if tag.String() == "ROLLBACK" {
		return fmt.Errorf("%w: postgres rolled the transaction back at COMMIT", runner.ErrAborted)
	}
	return nil
}

func (t *tx) Rollback(ctx context.Context) error {
	_, err := t.s.c.Exec(ctx, "ROLLBACK")
	return err
}

// PredRead runs SELECT k, cols FROM rows WHERE col BETWEEN lo AND hi.
func (t *tx) PredRead(ctx context.Context, p runner.Range) ([]runner.Row, error) {
	rt := t.s.db.rows
	q, err := rt.Select(p, dollar)
	if err != nil {
		return nil, err
	}
	rs, err := t.s.c.Query(ctx, q, p.Lo, p.Hi)
	if err != nil {
		return nil, classify(err)
	}
	defer rs.Close()
	out, err := rt.ScanRows(rs)
	return out, classify(err)
}

// PredWrite runs UPDATE rows SET ... WHERE col BETWEEN lo AND hi RETURNING k.
func (t *tx) PredWrite(ctx context.Context, p runner.Range, set []runner.Assign) ([]int64, error) {
	t.mayAssign()
	q, args, err := t.s.db.rows.Update(p, set, dollar)
	if err != nil {
		return nil, err
	}
	rs, err := t.s.c.Query(ctx, q+" RETURNING k", args...)
	if err != nil {
		return nil, classify(err)
	}
	defer rs.Close()
	keys, err := runner.ScanKeys(rs)
	return keys, classify(err)
}

// Insert inserts the rows in one statement (unnest of one array per column).
func (t *tx) Insert(ctx context.Context, rows []runner.Row) error {
	t.mayAssign()
	rt := t.s.db.rows
	cols := make([][]int64, 1+len(rt.Cols))
	for _, r := range rows {
		cols[0] = append(cols[0], r.Key)
		for i, v := range r.Vals {
			cols[1+i] = append(cols[1+i], v)
		}
	}
	args := make([]any, len(cols))
	var b strings.Builder
	b.WriteString("INSERT INTO " + rt.Name + " (k, " + strings.Join(rt.Cols, ", ") + ") SELECT * FROM unnest(")
	for i := range cols {
		args[i] = cols[i]
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(dollar(i+1) + "::bigint[]")
	}
	b.WriteString(")")
	_, err := t.s.c.Exec(ctx, b.String(), args...)
	return classify(err)
}

// Delete runs DELETE FROM rows WHERE k = $1.
func (t *tx) Delete(ctx context.Context, k int64) (bool, error) {
	t.mayAssign()
	tag, err := t.s.c.Exec(ctx, "DELETE FROM "+t.s.db.rows.Name+" WHERE k = $1", k)
	if err != nil {
		return false, classify(err)
	}
	return tag.RowsAffected() > 0, nil
}

func dollar(i int) string { return "$" + strconv.Itoa(i) }

// Info reports the transaction id; commit times are read in bulk ([DB.CommitTimes]).
func (t *tx) Info() runner.Info { return t.info }
