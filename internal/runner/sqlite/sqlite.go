// Package sqlite is the SQLite driver of the workload runner (modernc.org/sqlite: embedded,
// no cgo). It registers the sqlite:// scheme with [runner.Register]: sqlite://FILE, where
// FILE is a path (sqlite://run.db, sqlite:///tmp/run.db).
//
// SQLite transactions are serializable. The driver opens the file in WAL mode (readers read
// a snapshot while one writer writes), one connection per session with a busy timeout, and
// runs BEGIN DEFERRED ... COMMIT on a table of (k, v, l) rows. A transaction that read a
// snapshot and then cannot write because another writer committed since gets SQLITE_BUSY
// (BUSY_SNAPSHOT); that aborts it and the runner retries it, as a serialization failure.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"

	"github.com/isovet/isovet/internal/runner"
)

func init() { runner.Register("sqlite", Open) }

// DB is an SQLite database file under test.
type DB struct {
	db    *sql.DB
	file  string
	table string
	rows  *runner.Tables // the row table, once Prepare created it
}

// Open opens (creating if needed) the database file.
func Open(ctx context.Context, dsn string, o runner.OpenOptions) (runner.DB, runner.Target, error) {
	iso, err := runner.SQLiteIsolation.Lookup(o.Isolation)
	if err != nil {
		return nil, runner.Target{}, fmt.Errorf("sqlite: %w", err)
	}
	file := strings.TrimPrefix(dsn, "sqlite://")
	file, _, _ = strings.Cut(file, "?")
	if file == "" {
		return nil, runner.Target{}, errors.New("sqlite: want sqlite://FILE")
	}
	table, err := o.TableName()
	if err != nil {
		return nil, runner.Target{}, fmt.Errorf("sqlite: %w", err)
	}
	// _txlock=deferred: BEGIN DEFERRED; pragmas run on every new connection.
	sdb, err := sql.Open("sqlite", "file:"+file+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return nil, runner.Target{}, fmt.Errorf("sqlite: opening %s: %w", file, err)
	}
	var version string
	if err := sdb.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&version); err != nil {
		sdb.Close()
		return nil, runner.Target{}, fmt.Errorf("sqlite: opening %s: %w", file, err)
	}
	return &DB{db: sdb, file: file, table: table}, runner.Target{Claim: iso.Claim, Description: fmt.Sprintf("SQLite %s, file %s (serializable)", version, file)}, nil
}

// Prepare creates the table if needed, empties it and loads every key.
func (db *DB) Prepare(ctx context.Context, s runner.Schema) error {
	tx, err := db.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	defer tx.Rollback()
	for _, q := range []string{
		"CREATE TABLE IF NOT EXISTS " + db.table + " (k TEXT PRIMARY KEY, v INTEGER NOT NULL DEFAULT 0, l TEXT NOT NULL DEFAULT '')",
		"DELETE FROM " + db.table,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("sqlite: preparing table %s: %w", db.table, err)
		}
	}
	if err := db.loadKeys(ctx, tx, s); err != nil {
		return err
	}
	if s.Table != nil {
		if err := db.prepareRows(ctx, tx, s.Table); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: loading keys: %w", err)
	}
	return nil
}

// loadKeys inserts every key of s with its initial value (a list key's is 0).
func (db *DB) loadKeys(ctx context.Context, tx *sql.Tx, s runner.Schema) error {
	ins, err := tx.PrepareContext(ctx, "INSERT INTO "+db.table+" (k, v, l) VALUES (?, ?, '')")
	if err != nil {
		return fmt.Errorf("sqlite: loading keys: %w", err)
	}
	defer ins.Close()
	keys, vals := s.InitialRows()
	for i, k := range keys {
		if _, err := ins.ExecContext(ctx, k, vals[i]); err != nil {
			return fmt.Errorf("sqlite: loading keys into %s: %w", db.table, err)
		}
	}
	return nil
}

// prepareRows creates the row table of a row workload if needed and empties it.
func (db *DB) prepareRows(ctx context.Context, tx *sql.Tx, ts *runner.TableSchema) error {
	rt, err := runner.NewTables(db.table, ts, "INTEGER")
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	for _, q := range append(rt.Create(false, ""), "DELETE FROM "+rt.Name) {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("sqlite: preparing table %s: %w", rt.Name, err)
		}
	}
	db.rows = rt
	return nil
}

// Cleanup drops the table.
func (db *DB) Cleanup(ctx context.Context) error {
	_, err := db.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+db.table)
	if db.rows != nil && err == nil {
		_, err = db.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+db.rows.Name)
	}
	return err
}

// Close closes the database.
func (db *DB) Close() error { return db.db.Close() }

// Session takes a dedicated connection.
func (db *DB) Session(ctx context.Context) (runner.Session, error) {
	c, err := db.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	t := db.table
	return &session{c: c, rows: db.rows, sql: runner.SQLStmts{Driver: "sqlite", Classify: classify,
		Read:   "SELECT v FROM " + t + " WHERE k = ?",
		Write:  "INSERT INTO " + t + " (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v",
		Append: "INSERT INTO " + t + " (k, l) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET l = l || excluded.l",
		List:   "SELECT l FROM " + t + " WHERE k = ?",
	}}, nil
}

type session struct {
	c    *sql.Conn
	rows *runner.Tables
	sql  runner.SQLStmts
}

func (s *session) Close() error { return s.c.Close() }

func (s *session) Begin(ctx context.Context) (runner.Tx, error) {
	if _, err := s.c.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		return nil, classify(err)
	}
	return &tx{ConnTx: runner.ConnTx{Conn: s.c, Rows: s.rows, SQL: &s.sql}}, nil
}

// tx runs the operations the database/sql drivers share ([runner.ConnTx]); Commit and
// PredWrite are SQLite's own.
type tx struct{ runner.ConnTx }

var (
	_ runner.Tx      = (*tx)(nil)
	_ runner.TableTx = (*tx)(nil)
)

// Retryable reports whether err is SQLite's busy or locked error (primary codes 5 and 6,
// with their extended codes such as BUSY_SNAPSHOT).
func Retryable(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case 5, 6:
		return true
	}
	return false
}

func classify(err error) error {
	if err == nil {
		return nil
	}
	if Retryable(err) {
		return fmt.Errorf("%w: sqlite: %w", runner.ErrAborted, err)
	}
	return fmt.Errorf("sqlite: %w", err)
}

// Commit commits. SQLite commits a local file: an error other than busy is reported as an
// error (the run stops), since no connection can be lost half-way.
func (t *tx) Commit(ctx context.Context) error {
	_, err := t.Conn.ExecContext(ctx, "COMMIT")
	return classify(err)
}

// PredWrite runs UPDATE rows SET ... WHERE col BETWEEN ? AND ? RETURNING k.
func (t *tx) PredWrite(ctx context.Context, p runner.Range, set []runner.Assign) ([]int64, error) {
	q, args, err := t.Update(p, set)
	if err != nil {
		return nil, err
	}
	rs, err := t.Conn.QueryContext(ctx, q+" RETURNING k", args...)
	if err != nil {
		return nil, classify(err)
	}
	defer rs.Close()
	keys, err := runner.ScanKeys(rs)
	return keys, classify(err)
}
