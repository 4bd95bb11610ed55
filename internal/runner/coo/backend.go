package coo

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	driver "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/isovet/isovet/internal/runner/mysql"
)

// Isolation levels, in isovet's words (as `isovet run --isolation` takes them).
var isolations = map[string]string{
	"read-uncommitted": "READ UNCOMMITTED",
	"read-committed":   "READ COMMITTED",
	"repeatable-read":  "REPEATABLE READ",
	"serializable":     "SERIALIZABLE",
}

// Isolations are the levels a suite replays at by default, weakest first.
var Isolations = []string{"read-committed", "repeatable-read", "serializable"}

// AllIsolations are the levels a replay may ask for: [Isolations] and read-uncommitted
// (PostgreSQL runs it as READ COMMITTED; MariaDB's lets dirty reads through).
var AllIsolations = []string{"read-uncommitted", "read-committed", "repeatable-read", "serializable"}

// row is one (k, v) row a SELECT returned; v is nil for NULL.
type row struct {
	k int64
	v *int64
}

// server is a database the replays connect to.
type server interface {
	// connect opens one session's connection at the given SQL isolation level.
	connect(ctx context.Context, iso string) (conn, error)
	// admin runs statements on a short-lived connection whose lock waits are bounded, so
	// that a DROP behind an abandoned transaction fails rather than hangs.
	admin(ctx context.Context, stmts ...string) error
	// kill ends the server process of a connection by its id.
	kill(ctx context.Context, id int64) error
	classify(err error) errClass
	// lockWaitQuery is a query, to run on a monitor connection, whose one row's first
	// column is non-zero when the connection with the given id waits for a lock.
	lockWaitQuery(id int64) string
	// pollGap is the least time between two lock-wait queries for their answers to be
	// fresh.
	pollGap() time.Duration
	// Name and Version describe the server: "PostgreSQL", "15.20".
	Name() string
	Version() string
	// Short is the table-name tag: "pg" or "my".
	Short() string
	close()
}

// conn is one session's connection.
type conn interface {
	begin(ctx context.Context) error
	exec(ctx context.Context, q string) (affected int64, err error)
	query(ctx context.Context, q string) ([]row, error)
	// commit reports an aborted commit (PostgreSQL answering ROLLBACK) as errAborted.
	commit(ctx context.Context) error
	rollback(ctx context.Context) error
	id() int64
	close()
}

// errClass is what an error from the database means for the replay.
type errClass uint8

const (
	classOther     errClass = iota // anything else: the replay stops
	classAbort                     // serialization failure, deadlock, lock wait timeout: the transaction is aborted
	classDuplicate                 // a duplicate primary key on INSERT
	classLost                      // no answer from the server: the connection is gone
)

// errAborted is what commit returns when the server rolled back instead.
var errAborted = errors.New("the server rolled the transaction back at COMMIT")

// open connects to the server a URL names: postgres://, postgresql://, mysql:// or
// mariadb://.
func open(ctx context.Context, dsn string) (server, error) {
	scheme, _, _ := strings.Cut(dsn, "://")
	switch scheme {
	case "postgres", "postgresql":
		return openPG(ctx, dsn)
	case "mysql", "mariadb":
		return openMy(ctx, dsn)
	}
	return nil, fmt.Errorf("database %q: want a postgres:// or mysql:// URL", dsn)
}

// PostgreSQL.

type pgServer struct {
	cfg     *pgx.ConnConfig
	version string
}

func openPG(ctx context.Context, dsn string) (*pgServer, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol // one round trip per statement
	s := &pgServer{cfg: cfg}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connecting to %s:%d as %s: %w", cfg.Host, cfg.Port, cfg.User, err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	if err := c.QueryRow(ctx, "SHOW server_version").Scan(&s.version); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if f := strings.Fields(s.version); len(f) > 0 {
		s.version = f[0] // "15.20 (Debian 15.20-0+deb12u1)" -> "15.20"
	}
	return s, nil
}

func (s *pgServer) Name() string    { return "PostgreSQL" }
func (s *pgServer) Version() string { return s.version }
func (s *pgServer) Short() string   { return "pg" }
func (s *pgServer) close()          {}

func (s *pgServer) connect(ctx context.Context, iso string) (conn, error) {
	c, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connecting: %w", err)
	}
	// Deadlocks are found after deadlock_timeout (1 s by default); the scripts are short,
	// so look sooner. Only a superuser may set it; without, the default stands.
	c.Exec(ctx, "SET deadlock_timeout = '100ms'")
	return &pgConn{c: c, beginStmt: "BEGIN ISOLATION LEVEL " + iso}, nil
}

func (s *pgServer) admin(ctx context.Context, stmts ...string) error {
	c, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return fmt.Errorf("postgres: connecting: %w", err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	if _, err := c.Exec(ctx, "SET lock_timeout = '10s'"); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	for _, q := range stmts {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("postgres: %s: %w", q, err)
		}
	}
	return nil
}

func (s *pgServer) kill(ctx context.Context, id int64) error {
	return s.admin(ctx, fmt.Sprintf("SELECT pg_terminate_backend(%d)", id))
}

func (s *pgServer) lockWaitQuery(id int64) string {
	return fmt.Sprintf("SELECT count(*), NULL::bigint FROM pg_stat_activity WHERE pid = %d AND wait_event_type = 'Lock'", id)
}

// pollGap: pg_stat_activity is read afresh by every query outside a transaction.
func (s *pgServer) pollGap() time.Duration { return 0 }

func (s *pgServer) classify(err error) errClass {
	if errors.Is(err, errAborted) {
		return classAbort
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "40001", "40P01", "55P03": // serialization failure, deadlock, lock not available
			return classAbort
		case "23505":
			return classDuplicate
		}
		return classOther
	}
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return classLost
	}
	return classOther
}

type pgConn struct {
	c         *pgx.Conn
	beginStmt string
}

func (c *pgConn) begin(ctx context.Context) error {
	_, err := c.c.Exec(ctx, c.beginStmt)
	return err
}

func (c *pgConn) exec(ctx context.Context, q string) (int64, error) {
	tag, err := c.c.Exec(ctx, q)
	return tag.RowsAffected(), err
}

func (c *pgConn) query(ctx context.Context, q string) ([]row, error) {
	rows, err := c.c.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	var out []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.k, &r.v); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (c *pgConn) commit(ctx context.Context) error {
	tag, err := c.c.Exec(ctx, "COMMIT")
	if err == nil && tag.String() == "ROLLBACK" {
		return errAborted
	}
	return err
}

func (c *pgConn) rollback(ctx context.Context) error {
	_, err := c.c.Exec(ctx, "ROLLBACK")
	return err
}

func (c *pgConn) id() int64 { return int64(c.c.PgConn().PID()) }
func (c *pgConn) close()    { c.c.Close(context.Background()) }

// MariaDB and MySQL.

type myServer struct {
	db      *sql.DB
	version string
	name    string
}

func openMy(ctx context.Context, dsn string) (*myServer, error) {
	cfg, err := mysql.Config(dsn)
	if err != nil {
		return nil, err
	}
	// UPDATE reports the rows it matched, not only those it changed: an UPDATE that sets
	// a row's v to the value it has already wrote that row.
	cfg.ClientFoundRows = true
	cn, err := driver.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	s := &myServer{db: sql.OpenDB(cn), name: "MySQL"}
	if err := s.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&s.version); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("mysql: connecting to %s as %s: %w", cfg.Addr, cfg.User, err)
	}
	if i := strings.Index(strings.ToLower(s.version), "-mariadb"); i >= 0 {
		s.name, s.version = "MariaDB", s.version[:i] // "10.11.19-MariaDB-0+deb12u1" -> "10.11.19"
	}
	return s, nil
}

func (s *myServer) Name() string    { return s.name }
func (s *myServer) Version() string { return s.version }
func (s *myServer) Short() string   { return "my" }
func (s *myServer) close()          { s.db.Close() }

func (s *myServer) connect(ctx context.Context, iso string) (conn, error) {
	c, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("mysql: connecting: %w", err)
	}
	mc := &myConn{c: c}
	for _, q := range []string{
		"SET SESSION TRANSACTION ISOLATION LEVEL " + iso,
		"SET SESSION autocommit = 0",
		"SET SESSION innodb_lock_wait_timeout = 10",
	} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			c.Close()
			return nil, fmt.Errorf("mysql: %s: %w", q, err)
		}
	}
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&mc.pid); err != nil {
		c.Close()
		return nil, fmt.Errorf("mysql: %w", err)
	}
	return mc, nil
}

func (s *myServer) admin(ctx context.Context, stmts ...string) error {
	c, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("mysql: connecting: %w", err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "SET SESSION lock_wait_timeout = 10"); err != nil {
		return fmt.Errorf("mysql: %w", err)
	}
	for _, q := range stmts {
		if _, err := c.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("mysql: %s: %w", q, err)
		}
	}
	return nil
}

func (s *myServer) kill(ctx context.Context, id int64) error {
	return s.admin(ctx, fmt.Sprintf("KILL %d", id))
}

func (s *myServer) lockWaitQuery(id int64) string {
	return fmt.Sprintf("SELECT count(*), NULL FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = %d AND trx_state = 'LOCK WAIT'", id)
}

// pollGap: InnoDB refreshes the information_schema copy of its transactions only when it
// was last read more than 100 ms ago, and every read counts; polling faster (from any
// client) keeps an old answer forever.
func (s *myServer) pollGap() time.Duration { return 110 * time.Millisecond }

func (s *myServer) classify(err error) errClass {
	var me *driver.MySQLError
	switch {
	case mysql.Retryable(err):
		return classAbort
	case errors.As(err, &me):
		if me.Number == 1062 {
			return classDuplicate
		}
		return classOther
	case err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded):
		return classLost
	}
	return classOther
}

type myConn struct {
	c   *sql.Conn
	pid int64
}

func (c *myConn) begin(ctx context.Context) error {
	_, err := c.c.ExecContext(ctx, "START TRANSACTION")
	return err
}

func (c *myConn) exec(ctx context.Context, q string) (int64, error) {
	res, err := c.c.ExecContext(ctx, q)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (c *myConn) query(ctx context.Context, q string) ([]row, error) {
	rows, err := c.c.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []row
	for rows.Next() {
		var r row
		var v sql.NullInt64
		if err := rows.Scan(&r.k, &v); err != nil {
			return nil, err
		}
		if v.Valid {
			r.v = &v.Int64
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (c *myConn) commit(ctx context.Context) error {
	_, err := c.c.ExecContext(ctx, "COMMIT")
	return err
}

func (c *myConn) rollback(ctx context.Context) error {
	_, err := c.c.ExecContext(ctx, "ROLLBACK")
	return err
}

func (c *myConn) id() int64 { return c.pid }

// close discards the connection rather than returning it to the pool: its session
// settings are the replay's.
func (c *myConn) close() {
	c.c.Raw(func(any) error { return sqldriver.ErrBadConn })
	c.c.Close()
}
