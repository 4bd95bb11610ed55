// Package mysql is the MySQL and MariaDB driver of the workload runner
// (go-sql-driver/mysql). It registers the mysql:// and mariadb:// schemes with
// [runner.Register]; URLs look like mysql://user:password@host:3306/database.
//
// Each session is one dedicated connection with autocommit off and the session's isolation
// level set once (SET SESSION TRANSACTION ISOLATION LEVEL ...); a transaction is START
// TRANSACTION, one statement per operation on an InnoDB table of (k, v, l) rows, then
// COMMIT. Reads are plain SELECTs, so at REPEATABLE READ they are InnoDB's consistent
// (snapshot) reads while writes lock and read the latest row: the combination that lets
// two read-modify-write transactions both commit, a lost update.
//
// Errors: 1213 (deadlock), 1205 (lock wait timeout), 1020 (record changed since last read,
// MariaDB's innodb_snapshot_isolation) and SQLSTATE 40001 abort the transaction and the
// runner retries it; a COMMIT that fails without a server answer has an unknown outcome.
//
// Sessions are [runner.Interrupter]s: the runner passes statements a context that is never
// cancelled, so the driver hands its per-connection watcher goroutine nothing per
// statement, and a cancelled run interrupts each session once: the session closes its
// socket (it dialled it itself, so it holds the net.Conn), which fails the statement in
// progress and every later one at once, and then kills its server thread from another
// connection (KILL id): the server does not notice a closed socket while a statement
// waits for a lock, and would keep the thread and its transaction until the lock wait
// timed out. A killed thread is gone at once; InnoDB cancels its lock wait at once too
// when it can, but with other clients busy on the server the transaction was seen to wait
// on, without its thread, up to the timeout (10 s in sessions).
package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/isovet/isovet/internal/runner"
)

func init() {
	runner.Register("mysql", Open)
	runner.Register("mariadb", Open)
}

// DB is a MySQL or MariaDB database under test.
type DB struct {
	db    *sql.DB        // Open's check, Prepare, Cleanup and Interrupt's KILL
	cfg   *driver.Config // each session dials its own connection with it
	log   *slog.Logger
	iso   string
	table string
	rows  *runner.Tables // the row table, once Prepare created it
}

// Config converts a mysql:// URL to the driver's configuration. Besides the URL form
// (mysql://user:password@host:3306/database?param=value), the driver's own DSN after the
// scheme is taken as it is (mysql://user:password@tcp(host:3306)/database), since users of
// go-sql-driver write that.
func Config(dsn string) (*driver.Config, error) {
	if _, rest, ok := strings.Cut(dsn, "://"); ok && isDriverDSN(rest) {
		cfg, err := driver.ParseDSN(rest)
		if err != nil {
			return nil, fmt.Errorf("mysql: parsing %q as a driver DSN (user:password@tcp(host:port)/database): %w", dsn, err)
		}
		return settle(cfg), nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("mysql: parsing the URL (want mysql://user:password@host:port/database): %w", err)
	}
	cfg, err := driver.ParseDSN(userPrefix(u.User) + "tcp(" + hostPort(u.Host) + ")/" + strings.TrimPrefix(u.Path, "/") + "?" + u.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	return settle(cfg), nil
}

// isDriverDSN says whether rest, what follows mysql://, is written in the driver's own DSN
// form: a tcp(...) or unix(...) address.
func isDriverDSN(rest string) bool {
	return strings.Contains(rest, "@tcp(") || strings.HasPrefix(rest, "tcp(") || strings.Contains(rest, "unix(")
}

// hostPort is the URL's host with MySQL's port 3306 unless it names one; 127.0.0.1 if
// empty.
func hostPort(host string) string {
	if host == "" {
		host = "127.0.0.1"
	}
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "3306")
	}
	return host
}

// userPrefix is the "user:password@" that begins a driver DSN, or "" without a user.
func userPrefix(ui *url.Userinfo) string {
	if ui == nil {
		return ""
	}
	user := ui.Username()
	if p, ok := ui.Password(); ok {
		user += ":" + p
	}
	return user + "@"
}

// settle sets what isovet needs of every connection: a connect timeout unless the URL gives
// one, and parameters interpolated on the client (one round trip per statement).
func settle(cfg *driver.Config) *driver.Config {
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	cfg.InterpolateParams = true
	return cfg
}

// Open connects once to check the server.
func Open(ctx context.Context, dsn string, o runner.OpenOptions) (runner.DB, runner.Target, error) {
	iso, err := runner.MySQLIsolation.Lookup(o.Isolation)
	if err != nil {
		return nil, runner.Target{}, fmt.Errorf("mysql: %w", err)
	}
	table, err := o.TableName()
	if err != nil {
		return nil, runner.Target{}, fmt.Errorf("mysql: %w", err)
	}
	cfg, err := Config(dsn)
	if err != nil {
		return nil, runner.Target{}, err
	}
	conn, err := driver.NewConnector(cfg)
	if err != nil {
		return nil, runner.Target{}, fmt.Errorf("mysql: %w", err)
	}
	sdb := sql.OpenDB(conn)
	var version string
	if err := sdb.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		sdb.Close()
		return nil, runner.Target{}, fmt.Errorf("mysql: connecting to %s as %s: %w", cfg.Addr, cfg.User, err)
	}
	name := "MySQL"
	if strings.Contains(strings.ToLower(version), "mariadb") {
		name = "MariaDB"
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	db := &DB{db: sdb, cfg: cfg, log: log, iso: iso.SQL, table: table}
	return db, runner.Target{Claim: iso.Claim, Description: fmt.Sprintf("%s %s at %s, %s", name, version, cfg.Addr, iso.Describe())}, nil
}

// Prepare creates the table if needed, empties it and loads every key.
func (db *DB) Prepare(ctx context.Context, s runner.Schema) error {
	for _, q := range []string{
		"CREATE TABLE IF NOT EXISTS " + db.table + " (k VARCHAR(191) PRIMARY KEY, v BIGINT NOT NULL DEFAULT 0, l MEDIUMTEXT NOT NULL) ENGINE=InnoDB",
		"TRUNCATE TABLE " + db.table,
	} {
		if _, err := db.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("mysql: preparing table %s: %w", db.table, err)
		}
	}
	keys, vals := s.InitialRows()
	for len(keys) > 0 {
		n := min(len(keys), 500)
		var b strings.Builder
		args := make([]any, 0, 2*n)
		b.WriteString("INSERT INTO " + db.table + " (k, v, l) VALUES ")
		for i, k := range keys[:n] {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("(?, ?, '')")
			args = append(args, k, vals[i])
		}
		if _, err := db.db.ExecContext(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("mysql: loading keys into %s: %w", db.table, err)
		}
		keys, vals = keys[n:], vals[n:]
	}
	return db.prepareRows(ctx, s)
}

// prepareRows creates (or empties) the row table of a row workload.
func (db *DB) prepareRows(ctx context.Context, s runner.Schema) error {
	if s.Table == nil {
		return nil
	}
	rt, err := runner.NewTables(db.table, s.Table, "BIGINT")
	if err != nil {
		return fmt.Errorf("mysql: %w", err)
	}
	for _, q := range append(rt.Create(true, " ENGINE=InnoDB"), "TRUNCATE TABLE "+rt.Name) {
		if _, err := db.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("mysql: preparing table %s: %w", rt.Name, err)
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

// Close closes the connection pool.
func (db *DB) Close() error { return db.db.Close() }

// Session dials a connection of its own (one database/sql pool per session, holding that
// one connection, so that the session knows its socket) and sets its isolation level.
func (db *DB) Session(ctx context.Context) (runner.Session, error) {
	t := db.table
	s := &session{rows: db.rows, side: db.db, log: db.log, sql: runner.SQLStmts{Driver: "mysql", Classify: classify,
		Read:   "SELECT v FROM " + t + " WHERE k = ?",
		Write:  "INSERT INTO " + t + " (k, v, l) VALUES (?, ?, '') ON DUPLICATE KEY UPDATE v = VALUES(v)",
		Append: "INSERT INTO " + t + " (k, v, l) VALUES (?, 0, ?) ON DUPLICATE KEY UPDATE l = CONCAT(l, VALUES(l))",
		List:   "SELECT l FROM " + t + " WHERE k = ?",
	}}
	cfg := db.cfg.Clone()
	cfg.DialFunc = s.dial
	cfg.Logger = quietLogger{s, cfg.Logger}
	conn, err := driver.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	s.pool = sql.OpenDB(conn)
	s.pool.SetMaxOpenConns(1)
	c, err := s.pool.Conn(ctx)
	if err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("mysql: connecting: %w", err)
	}
	s.c = c
	var id uint64
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		s.Close()
		return nil, fmt.Errorf("mysql: SELECT CONNECTION_ID(): %w", err)
	}
	for _, q := range []string{
		"SET SESSION TRANSACTION ISOLATION LEVEL " + db.iso,
		"SET SESSION autocommit = 0",
		"SET SESSION innodb_lock_wait_timeout = 10",
	} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			s.Close()
			return nil, fmt.Errorf("mysql: %s: %w", q, err)
		}
	}
	s.mu.Lock()
	s.id = id
	s.mu.Unlock()
	return s, nil
}

type session struct {
	pool *sql.DB // this session's own, of one connection
	c    *sql.Conn
	side *sql.DB // the DB's pool, for KILL
	log  *slog.Logger
	rows *runner.Tables
	sql  runner.SQLStmts

	mu          sync.Mutex
	nc          net.Conn // the socket, once dialled
	id          uint64   // the server's connection id, 0 until known
	closed      bool
	interrupted bool
}

// dial is the session's DialFunc: a plain TCP dial (as the driver's own) that keeps the
// socket for Interrupt.
func (s *session) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.interrupted || s.nc != nil {
		// Interrupted while connecting, or a second dial (the pool holds one connection
		// and the session never asks for another): refuse it.
		nc.Close()
		return nil, errors.New("mysql: session interrupted or already connected")
	}
	s.nc = nc
	return nc, nil
}

// quietLogger is the driver's logger for a session: after Interrupt closed the socket the
// driver would log the closed connection's errors, which are expected.
type quietLogger struct {
	s    *session
	next driver.Logger
}

func (l quietLogger) Print(v ...any) {
	l.s.mu.Lock()
	quiet := l.s.interrupted
	l.s.mu.Unlock()
	if !quiet && l.next != nil {
		l.next.Print(v...)
	}
}

func (s *session) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	if s.c != nil {
		s.c.ExecContext(context.Background(), "ROLLBACK")
		s.c.Close()
	}
	return s.pool.Close()
}

// Interrupt makes the statement in progress, and every later one, fail at once: it closes
// the session's socket. It then kills the session's server thread from the DB's pool (KILL
// id, at most 2 s), so that the server ends it and rolls back its transaction now rather
// than when a lock wait times out (see the package comment). Safe to call from any goroutine, more than once, and after
// Close (which leaves the thread nothing to kill).
func (s *session) Interrupt() {
	s.mu.Lock()
	first := !s.interrupted
	s.interrupted = true
	nc, id, closed := s.nc, s.id, s.closed
	s.mu.Unlock()
	if nc != nil {
		nc.Close()
	}
	if !first || closed || id == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := s.side.ExecContext(ctx, "KILL "+strconv.FormatUint(id, 10)); err != nil {
		// The thread may have ended already (unknown thread id); otherwise its locks are
		// held until it ends.
		s.log.Warn("mysql: killing the interrupted session's server thread", "connection_id", id, "err", err)
		return
	}
	s.log.Debug("mysql: killed the interrupted session's server thread", "connection_id", id)
}

func (s *session) Begin(ctx context.Context) (runner.Tx, error) {
	if _, err := s.c.ExecContext(ctx, "START TRANSACTION"); err != nil {
		return nil, classify(err)
	}
	return &tx{ConnTx: runner.ConnTx{Conn: s.c, Rows: s.rows, SQL: &s.sql}}, nil
}

// tx runs the operations the database/sql drivers share ([runner.ConnTx]); Commit and
// PredWrite are MySQL's own.
type tx struct{ runner.ConnTx }

var (
	_ runner.Tx      = (*tx)(nil)
	_ runner.TableTx = (*tx)(nil)
)

// Retryable reports whether err is a MySQL error that aborted the transaction.
func Retryable(err error) bool {
	var me *driver.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	switch me.Number {
	case 1213, 1205, 1020:
		return true
	}
	return string(me.SQLState[:]) == "40001"
}

func classify(err error) error {
	if err == nil {
		return nil
	}
	if Retryable(err) {
		return fmt.Errorf("%w: mysql: %w", runner.ErrAborted, err)
	}
	return fmt.Errorf("mysql: %w", err)
}

func (t *tx) Commit(ctx context.Context) error {
	_, err := t.Conn.ExecContext(ctx, "COMMIT")
	if err == nil {
		return nil
	}
	var me *driver.MySQLError
	if !errors.As(err, &me) {
		return fmt.Errorf("%w: mysql: %w", runner.ErrUnknownOutcome, err)
	}
	return classify(err)
}

// PredWrite runs UPDATE rows SET ... WHERE col BETWEEN ? AND ?. MySQL and MariaDB have no
// UPDATE ... RETURNING, so it then reads the keys of the rows that carry this update's
// fresh tag (SELECT k FROM rows WHERE w = tag): no other transaction has written that tag,
// so the SELECT sees exactly the rows this statement updated, the transaction's own writes.
func (t *tx) PredWrite(ctx context.Context, p runner.Range, set []runner.Assign) ([]int64, error) {
	rt := t.Rows
	q, args, err := t.Update(p, set)
	if err != nil {
		return nil, err
	}
	if _, err := t.Conn.ExecContext(ctx, q, args...); err != nil {
		return nil, classify(err)
	}
	rs, err := t.Conn.QueryContext(ctx, "SELECT k FROM "+rt.Name+" WHERE "+rt.Cols[rt.TagCol]+" = ?", set[rt.TagCol].Add)
	if err != nil {
		return nil, classify(err)
	}
	defer rs.Close()
	keys, err := runner.ScanKeys(rs)
	return keys, classify(err)
}
