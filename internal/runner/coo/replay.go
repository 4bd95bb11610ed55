package coo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isovet/isovet/history"
)

// DB is a server the scenarios are replayed against. It is safe for concurrent use: replays
// of different scripts (or levels) may run at the same time, each on its own table.
type DB struct {
	srv server

	pollMu   sync.Mutex
	lastPoll time.Time
}

// poll runs a lock-wait query on mon, no sooner than the server's minimum gap after the
// previous one on this server (by any replay).
func (db *DB) poll(ctx context.Context, mon conn, q string) ([]row, error) {
	db.pollMu.Lock()
	defer db.pollMu.Unlock()
	if d := time.Until(db.lastPoll.Add(db.srv.pollGap())); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	rows, err := mon.query(ctx, q)
	db.lastPoll = time.Now()
	return rows, err
}

// Open connects to the server a URL names (postgres://user@host/db or
// mysql://user:password@host:port/db; mariadb:// is an alias) and asks its version.
func Open(ctx context.Context, dsn string) (*DB, error) {
	srv, err := open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return &DB{srv: srv}, nil
}

// Name is the server's product name: "PostgreSQL", "MariaDB" or "MySQL".
func (db *DB) Name() string { return db.srv.Name() }

// Version is the server's version, e.g. "15.20".
func (db *DB) Version() string { return db.srv.Version() }

// Close releases the connection pool.
func (db *DB) Close() { db.srv.close() }

// Options configure [DB.Replay]. The zero value is usable.
type Options struct {
	// Isolation is the level every session asks for: one of [AllIsolations] (default
	// serializable).
	Isolation string
	// Table replaces the script's table name, so that replays never share a table (default
	// TablePrefix + script name + "_" + pg|my + "_" + rc|rr|ser).
	Table string
	// TablePrefix starts the default table name (default "coo_").
	TablePrefix string
	// Wait is how long a statement may run before the replay asks the server whether it
	// waits for a lock; if so it is deemed blocked and the replay goes on with the next
	// step, as the 3TS tool does (default 150ms).
	Wait time.Duration
	// FinalWait bounds the wait at the end for statements still blocked; those still
	// running then are cancelled and their connections killed (default 15s).
	FinalWait time.Duration
	// Keep leaves the table in place after the replay (it is dropped by default).
	Keep bool
	// SetupAsInitial records the setup's rows as the history's initial state instead of
	// as a loader transaction. With a loader, plain serializability may order a read-only
	// transaction before it (seeing an empty table); as the initial state the rows exist
	// before every transaction.
	SetupAsInitial bool
	Logger         *slog.Logger
	_              struct{}
}

// Result is what one replay recorded.
type Result struct {
	Script    *Script
	DB        string // "PostgreSQL"
	Version   string // "15.20"
	Isolation string // as asked, e.g. "repeatable-read"
	Table     string
	// History holds one loader transaction (session "setup") with the setup's inserts
	// (with Options.SetupAsInitial: an initial state holding its rows instead), then each
	// session's transactions in order, named T<session>.<n>.
	History                     *history.History
	Committed, Aborted, Unknown int // transactions, the loader included when there is one
	// AbortedByDB counts the aborted transactions the database aborted (the rest were
	// rolled back by the script or left open by it).
	AbortedByDB int
	// Blocked counts statements that had not completed when the replay went on; Skipped
	// counts statements not issued because their transaction had already aborted.
	Blocked, Skipped int
	// Notes says what the database did beyond answering: aborts with its error, statements
	// that blocked, duplicate keys, connections killed at the end. In step order.
	Notes   []string
	Elapsed time.Duration
	_       struct{}
}

// ErrReplay marks a replay that could not run to the end (the database answered with an
// error the replay does not expect, or a connection was lost).
var ErrReplay = errors.New("coo: replay failed")

var tableName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

var levelTags = map[string]string{"read-uncommitted": "ru", "read-committed": "rc", "repeatable-read": "rr", "serializable": "ser"}

// TableName is the table a replay of s uses by default.
func (db *DB) TableName(prefix string, s *Script, isolation string) string {
	if prefix == "" {
		prefix = "coo_"
	}
	return prefix + s.Name + "_" + db.srv.Short() + "_" + levelTags[isolation]
}

// Replay runs s once: the setup in a loader session, then every step in order, one
// connection per session, and records the history. A statement that has not completed
// after o.Wait and waits for a lock is deemed blocked, and the replay goes on with the next
// step while it waits
// (statements of the same session queue behind it); before each step it also gives the
// statements blocked earlier o.Wait to finish, so that a statement unblocked by a commit
// completes before the next step goes out. Serialization failures, deadlocks and lock wait
// timeouts abort the transaction: it is recorded as aborted, its remaining statements are
// skipped and nothing is retried. The table is dropped at the end unless o.Keep.
//
// A non-nil error with a non-nil Result means the replay stopped early; the history then
// holds what was recorded.
func (db *DB) Replay(ctx context.Context, s *Script, o Options) (*Result, error) {
	if o.Isolation == "" {
		o.Isolation = "serializable"
	}
	iso, ok := isolations[o.Isolation]
	if !ok {
		return nil, fmt.Errorf("isolation %q not known (%s)", o.Isolation, strings.Join(AllIsolations, ", "))
	}
	if o.Wait <= 0 {
		o.Wait = 150 * time.Millisecond
	}
	if o.FinalWait <= 0 {
		o.FinalWait = 15 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	table := o.Table
	if table == "" {
		table = db.TableName(o.TablePrefix, s, o.Isolation)
	}
	if !tableName.MatchString(table) {
		return nil, fmt.Errorf("table name %q: want at most 63 lower-case letters, digits and _", table)
	}
	rp := &replay{db: db, s: s, o: o, iso: iso, table: table, start: time.Now()}
	res, err := rp.run(ctx)
	if res != nil {
		res.Elapsed = time.Since(rp.start)
	}
	return res, err
}

// replay is the state of one Replay.
type replay struct {
	db    *DB
	s     *Script
	o     Options
	iso   string
	table string
	start time.Time

	loader   txnRec
	sessions []*session
	notes    []note // the main goroutine's (blocked statements)

	mu    sync.Mutex
	fatal error
}

func (rp *replay) now() int64 { return int64(time.Since(rp.start)) }

func (rp *replay) fail(err error) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if rp.fatal == nil {
		rp.fatal = err
	}
}

func (rp *replay) failed() error {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return rp.fatal
}

// txnRec is one recorded transaction.
type txnRec struct {
	name       string
	byDB       bool // the database aborted it
	begin, end int64
	outcome    history.Outcome
	ops        []opRec
}

// opRec is one recorded operation.
type opRec struct {
	kind       history.OpKind // OpRead, OpWrite, OpInsert or OpPredRead
	key        int64
	value      *int64 // nil: no row
	failed     bool
	pred       *history.Predicate
	rows       []row
	begin, end int64
}

// job is one statement handed to a session's worker.
type job struct {
	st      *Stmt
	done    chan struct{}
	blocked bool // it had not completed when its step's wait ended
}

// session is one script session: a connection and a worker goroutine that issues its
// statements in order.
type session struct {
	rp     *replay
	n      int
	c      conn
	queue  chan *job
	ctx    context.Context
	cancel context.CancelFunc
	killed atomic.Bool
	// running is the job the worker is executing (nil when idle); used at the end to find
	// connections to kill.
	running atomic.Pointer[job]

	// Owned by the worker.
	txns  []*txnRec
	cur   *txnRec
	dead  bool // the open transaction aborted; skip until COMMIT or ROLLBACK
	notes []note
	ntx   int
	skip  int
}

type note struct {
	step, session int
	text          string
}

func (rp *replay) run(ctx context.Context) (*Result, error) {
	res := &Result{Script: rp.s, DB: rp.db.Name(), Version: rp.db.Version(), Isolation: rp.o.Isolation, Table: rp.table}
	srv := rp.db.srv
	if err := srv.admin(ctx, "DROP TABLE IF EXISTS "+rp.table, "CREATE TABLE "+rp.table+" (k INT PRIMARY KEY, v INT)"); err != nil {
		return nil, fmt.Errorf("creating table %s: %w", rp.table, err)
	}
	if !rp.o.Keep {
		defer rp.dropTable(ctx)
	}
	if err := rp.setup(ctx); err != nil {
		return nil, err
	}
	if err := rp.openSessions(ctx); err != nil {
		return nil, err
	}
	// The monitor connection asks the server whether a slow statement waits for a lock, so
	// that a statement that is merely slow (a loaded machine) is not taken for blocked.
	mon, err := srv.connect(ctx, "READ COMMITTED")
	if err != nil {
		rp.closeAll()
		return nil, fmt.Errorf("opening the monitor session: %w", err)
	}
	defer mon.close()
	var wg sync.WaitGroup
	for _, se := range rp.sessions {
		wg.Go(se.work)
	}
	pending := rp.drive(ctx, mon, res)
	for _, se := range rp.sessions {
		close(se.queue)
	}
	if !waitJobs(ctx, pending, rp.o.FinalWait) {
		rp.killRunning(ctx) // still blocked: end those connections, so that the workers return
	}
	wg.Wait()
	for _, se := range rp.sessions {
		se.finish()
	}
	rp.closeAll()
	return rp.result(ctx, res)
}

// dropTable drops the replay's table, even when ctx is done; a failure is logged.
func (rp *replay) dropTable(ctx context.Context) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := rp.db.srv.admin(dctx, "DROP TABLE IF EXISTS "+rp.table); err != nil {
		rp.o.Logger.Warn("dropping the replay's table", "table", rp.table, "err", err)
	}
}

// openSessions opens a connection for each session of the script.
func (rp *replay) openSessions(ctx context.Context) error {
	for _, n := range rp.s.Sessions() {
		c, err := rp.db.srv.connect(ctx, rp.iso)
		if err != nil {
			rp.closeAll()
			return fmt.Errorf("opening session %d: %w", n, err)
		}
		sctx, cancel := context.WithCancel(ctx)
		rp.sessions = append(rp.sessions, &session{rp: rp, n: n, c: c, queue: make(chan *job, len(rp.s.Steps)), ctx: sctx, cancel: cancel})
	}
	return nil
}

// waitJobs waits up to d for every job of pending to finish; false if one has not.
func waitJobs(ctx context.Context, pending []*job, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for _, j := range pending {
		select {
		case <-j.done:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// drive sends the script's steps to their sessions in order, each once the ones before
// it have finished or are seen blocked, and returns the jobs still pending at the end.
func (rp *replay) drive(ctx context.Context, mon conn, res *Result) []*job {
	var pending []*job
	for i := range rp.s.Steps {
		st := &rp.s.Steps[i]
		if rp.failed() != nil || ctx.Err() != nil {
			break
		}
		se := rp.sessionOf(st.Session)
		j := &job{st: st, done: make(chan struct{})}
		se.queue <- j
		pending = append(pending, j)
		if !waitJobs(ctx, pending, rp.o.Wait) {
			if rp.blocked(ctx, mon, se, j) {
				j.blocked = true
				res.Blocked++
				rp.notes = append(rp.notes, note{st.Step, st.Session, fmt.Sprintf("step %d, session %d (%s): blocked: waits for a lock after %v, the replay goes on", st.Step, st.Session, st.Text, rp.o.Wait)})
			}
			rp.recheck(ctx, mon, pending, j)
		}
		pending = slices.DeleteFunc(pending, isDone)
	}
	return pending
}

// recheck asks again about each pending job but j: a statement blocked at an earlier step
// may have been released by this one and still be running. Before the next step goes
// out, each must finish or be seen waiting for a lock again, or a slow machine would
// reorder the two.
func (rp *replay) recheck(ctx context.Context, mon conn, pending []*job, j *job) {
	for _, pj := range pending {
		if pj != j && !isDone(pj) {
			rp.blocked(ctx, mon, rp.sessionOf(pj.st.Session), pj)
		}
	}
}

// isDone reports whether j has finished, without waiting.
func isDone(j *job) bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// killRunning ends the connections of the sessions whose statement is still running.
func (rp *replay) killRunning(ctx context.Context) {
	for _, se := range rp.sessions {
		if j := se.running.Load(); j == nil {
			continue
		}
		se.killed.Store(true)
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		if err := rp.db.srv.kill(kctx, se.c.id()); err != nil {
			rp.o.Logger.Warn("killing a blocked session", "session", se.n, "err", err)
		}
		cancel()
		se.cancel()
	}
}

// result builds the history into res and says why the replay failed, if it did.
func (rp *replay) result(ctx context.Context, res *Result) (*Result, error) {
	h, notes, err := rp.build(res)
	res.History, res.Notes = h, notes
	for _, se := range rp.sessions {
		res.Skipped += se.skip
	}
	if ferr := rp.failed(); ferr != nil {
		return res, fmt.Errorf("%w: %s: %w", ErrReplay, rp.s.Name, ferr)
	}
	if ctx.Err() != nil {
		return res, context.Cause(ctx)
	}
	if err != nil {
		return res, fmt.Errorf("%w: %s: building the history: %w", ErrReplay, rp.s.Name, err)
	}
	return res, nil
}

// blockedPoll is how often, and maxSlow how long at most, the replay asks whether a
// statement still running after Options.Wait waits for a lock.
const (
	blockedPoll = 10 * time.Millisecond
	maxSlow     = 5 * time.Second
)

// blocked reports whether j, still running after the step's wait, is blocked: its
// session's connection waits for a lock (j itself, or a statement j is queued behind). A
// statement that is only slow is waited for, up to maxSlow; if the server cannot say, the
// statement is taken for blocked.
func (rp *replay) blocked(ctx context.Context, mon conn, se *session, j *job) bool {
	q := rp.db.srv.lockWaitQuery(se.c.id())
	deadline := time.Now().Add(maxSlow)
	for time.Now().Before(deadline) {
		select {
		case <-j.done:
			return false
		default:
		}
		rows, err := rp.db.poll(ctx, mon, q)
		if err != nil || len(rows) == 0 {
			rp.o.Logger.Warn("asking whether a statement waits for a lock", "session", se.n, "err", err)
			return true
		}
		mon.rollback(ctx) // end the monitor's implicit transaction on MariaDB; a no-op on PostgreSQL
		if rows[0].k > 0 {
			return true
		}
		select {
		case <-j.done:
			return false
		case <-time.After(blockedPoll):
		case <-ctx.Done():
			return true
		}
	}
	return true
}

func (rp *replay) sessionOf(n int) *session {
	for _, se := range rp.sessions {
		if se.n == n {
			return se
		}
	}
	panic("coo: step for an unknown session") // Sessions() lists every step's session
}

func (rp *replay) closeAll() {
	for _, se := range rp.sessions {
		se.cancel()
		se.c.close()
	}
}

// setup runs the setup's inserts as one committed loader transaction of its own.
func (rp *replay) setup(ctx context.Context) error {
	c, err := rp.db.srv.connect(ctx, "READ COMMITTED")
	if err != nil {
		return fmt.Errorf("opening the loader session: %w", err)
	}
	defer c.close()
	t := &rp.loader
	t.name = "setup"
	t.begin = rp.now()
	if err := c.begin(ctx); err != nil {
		return fmt.Errorf("setup of %s: BEGIN: %w", rp.s.Name, err)
	}
	for i := range rp.s.Setup {
		st := &rp.s.Setup[i]
		if st.Kind != KindInsert {
			continue // DROP and CREATE ran on the replay's own table; COMMIT follows below
		}
		b := rp.now()
		if _, err := c.exec(ctx, rp.sql(st)); err != nil {
			return fmt.Errorf("setup of %s, line %d (%s): %w", rp.s.Name, st.Line, st.Text, err)
		}
		v := st.Value
		t.ops = append(t.ops, opRec{kind: history.OpInsert, key: st.Key, value: &v, begin: b, end: rp.now()})
	}
	if err := c.commit(ctx); err != nil {
		return fmt.Errorf("setup of %s: COMMIT: %w", rp.s.Name, err)
	}
	t.end = rp.now()
	t.outcome = history.OutcomeCommitted
	return nil
}

// sql renders a data statement on the replay's table. SELECTs name their columns and order
// their rows; the rows are the same as the script's SELECT * returns.
func (rp *replay) sql(st *Stmt) string {
	t := rp.table
	switch st.Kind {
	case KindInsert:
		return fmt.Sprintf("INSERT INTO %s VALUES (%d, %d)", t, st.Key, st.Value)
	case KindSelectKey:
		return fmt.Sprintf("SELECT k, v FROM %s WHERE k = %d", t, st.Key)
	case KindSelectRange:
		return fmt.Sprintf("SELECT k, v FROM %s WHERE v >= %d AND v <= %d ORDER BY k", t, st.Lo, st.Hi)
	case KindSelectAll:
		return fmt.Sprintf("SELECT k, v FROM %s ORDER BY k", t)
	case KindUpdate:
		return fmt.Sprintf("UPDATE %s SET v = %d WHERE k = %d", t, st.Value, st.Key)
	}
	panic("coo: sql for a control statement") // the caller switches on the kind
}

func (se *session) addNote(st *Stmt, format string, args ...any) {
	se.notes = append(se.notes, note{st.Step, se.n, fmt.Sprintf("step %d, session %d (%s): ", st.Step, se.n, st.Text) + fmt.Sprintf(format, args...)})
}

// work issues the session's statements in order until the queue closes.
func (se *session) work() {
	for j := range se.queue {
		se.running.Store(j)
		if se.rp.failed() == nil && se.ctx.Err() == nil {
			se.do(j.st)
		} else if j.st.Kind != KindBegin {
			se.skip++
		}
		se.running.Store(nil)
		close(j.done)
	}
}

func (se *session) now() int64 { return se.rp.now() }

// startTxn opens a transaction (explicitly, or implicitly for a statement outside one).
func (se *session) startTxn(st *Stmt) bool {
	se.ntx++
	se.cur = &txnRec{name: fmt.Sprintf("T%d.%d", se.n, se.ntx), begin: se.now()}
	se.txns = append(se.txns, se.cur)
	if err := se.c.begin(se.ctx); err != nil {
		se.endTxn(history.OutcomeAborted)
		se.onError(st, err)
		return false
	}
	return true
}

func (se *session) endTxn(oc history.Outcome) {
	se.cur.end = se.now()
	se.cur.outcome = oc
	se.cur = nil
}

// do issues one statement and records what it returned.
func (se *session) do(st *Stmt) {
	switch st.Kind {
	case KindBegin:
		if se.cur != nil || se.dead {
			se.rp.fail(fmt.Errorf("line %d: BEGIN inside an open transaction", st.Line))
			return
		}
		se.startTxn(st)
	case KindCommit, KindRollback:
		se.commitOrRollback(st)
	default:
		se.statement(st)
	}
}

// commitOrRollback issues a COMMIT or ROLLBACK. In a transaction the database killed (dead) it is
// skipped; outside any transaction it is a no-op, on the server too.
func (se *session) commitOrRollback(st *Stmt) {
	if se.dead {
		se.dead = false
		se.skip++
		return
	}
	if se.cur == nil {
		return // nothing to end: the statement is a no-op on the server too
	}
	if st.Kind == KindRollback {
		err := se.c.rollback(se.ctx)
		se.endTxn(history.OutcomeAborted)
		if err != nil {
			se.onError(st, err)
		}
		return
	}
	err := se.c.commit(se.ctx)
	switch {
	case err == nil:
		se.endTxn(history.OutcomeCommitted)
	case se.rp.db.srv.classify(err) == classAbort:
		se.c.rollback(se.ctx)
		se.cur.byDB = true
		se.endTxn(history.OutcomeAborted)
		se.addNote(st, "%s aborted at COMMIT: %v", se.txns[len(se.txns)-1].name, err)
	default:
		// The commit was sent and no answer says what became of it.
		se.endTxn(history.OutcomeUnknown)
		se.onError(st, err)
	}
}

// statement issues a read or write, in the open transaction or one it opens, and records
// it as an op; one the database refused ends the transaction (onError), a duplicate INSERT
// goes to duplicate.
func (se *session) statement(st *Stmt) {
	if se.dead {
		se.skip++
		return
	}
	if se.cur == nil && !se.startTxn(st) {
		return
	}
	o := opRec{begin: se.now()}
	err := se.issue(st, &o)
	if st.Kind == KindInsert && err != nil && se.rp.db.srv.classify(err) == classDuplicate {
		se.duplicate(st, o, err)
		return
	}
	o.end = se.now()
	if err != nil {
		se.onError(st, err)
		return
	}
	se.cur.ops = append(se.cur.ops, o)
}

// issue sends the statement st and fills in the op o records: an item read, a predicate
// read, an UPDATE (a write, or a read of nothing when no row matched) or an INSERT.
func (se *session) issue(st *Stmt, o *opRec) error {
	q := se.rp.sql(st)
	var err error
	switch st.Kind {
	case KindSelectKey:
		var rows []row
		rows, err = se.c.query(se.ctx, q)
		o.kind, o.key = history.OpRead, st.Key
		if len(rows) > 0 {
			o.value = rows[0].v
		}
	case KindSelectRange, KindSelectAll:
		o.kind = history.OpPredRead
		o.rows, err = se.c.query(se.ctx, q)
		o.pred = se.predicate(st)
	case KindUpdate:
		var n int64
		n, err = se.c.exec(se.ctx, q)
		o.key = st.Key
		if n > 0 {
			v := st.Value
			o.kind, o.value = history.OpWrite, &v
		} else {
			o.kind = history.OpRead // no row: the UPDATE read k and found nothing
		}
	case KindInsert:
		_, err = se.c.exec(se.ctx, q)
		v := st.Value
		o.kind, o.key, o.value = history.OpInsert, st.Key, &v
	}
	return err
}

// predicate is the predicate of a range SELECT (v between st.Lo and st.Hi) or of one over
// the whole table.
func (se *session) predicate(st *Stmt) *history.Predicate {
	if st.Kind == KindSelectRange {
		return &history.Predicate{Relation: se.rp.s.Table, Expr: fmt.Sprintf("v >= %d AND v <= %d", st.Lo, st.Hi), Field: history.Str("v"), Lo: st.Lo, Hi: st.Hi, IsRange: true}
	}
	return &history.Predicate{Relation: se.rp.s.Table, Expr: "true", Field: history.Str("v"), Lo: math.MinInt64, Hi: math.MaxInt64, IsRange: true}
}

// duplicate records an INSERT that failed on a duplicate key. On PostgreSQL the error
// aborts the transaction: the insert is recorded as failed (history.OpFailed) in a
// transaction recorded as aborted, which documents the attempt and can never commit. On
// MariaDB only the statement fails and the transaction goes on, so a failed insert recorded
// there would be taken as a write by a checker; instead the existing row is read with a
// locking read (InnoDB already holds the lock its duplicate check took, so this read
// neither waits nor changes what the transaction locks) and recorded as an item read of
// the version the insert collided with.
func (se *session) duplicate(st *Stmt, o opRec, dupErr error) {
	se.addNote(st, "duplicate key: %v", dupErr)
	if _, ok := se.rp.db.srv.(*myServer); !ok {
		o.failed, o.end = true, se.now()
		se.cur.ops = append(se.cur.ops, o)
		se.cur.byDB = true
		se.c.rollback(se.ctx)
		se.endTxn(history.OutcomeAborted)
		se.dead = true
		return
	}
	rows, err := se.c.query(se.ctx, fmt.Sprintf("SELECT k, v FROM %s WHERE k = %d LOCK IN SHARE MODE", se.rp.table, st.Key))
	o.end = se.now()
	if err != nil {
		se.onError(st, err)
		return
	}
	r := opRec{kind: history.OpRead, key: st.Key, begin: o.begin, end: o.end}
	if len(rows) > 0 {
		r.value = rows[0].v
	}
	se.cur.ops = append(se.cur.ops, r)
}

// onError handles a failed statement. Aborts (serialization failure, deadlock, lock wait
// timeout) end the transaction as aborted; anything else stops the replay, unless the
// replay itself killed the connection at the end.
func (se *session) onError(st *Stmt, err error) {
	name := "the transaction"
	if se.cur != nil {
		name = se.cur.name
	} else if len(se.txns) > 0 {
		name = se.txns[len(se.txns)-1].name
	}
	if se.killed.Load() {
		se.addNote(st, "still blocked at the end of the replay; the connection was killed")
		if se.cur != nil {
			se.endTxn(history.OutcomeAborted)
		}
		se.dead = true
		return
	}
	switch se.rp.db.srv.classify(err) {
	case classAbort:
		se.addNote(st, "%s aborted: %v", name, err)
		se.c.rollback(se.ctx)
		if se.cur != nil {
			se.cur.byDB = true
			se.endTxn(history.OutcomeAborted)
		}
		se.dead = true
		return
	case classLost:
		if se.cur != nil {
			se.endTxn(history.OutcomeAborted) // never committed: the connection is gone
		}
	}
	se.dead = true
	se.rp.fail(fmt.Errorf("line %d (%s), session %d: %w", st.Line, st.Text, se.n, err))
}

// finish closes a transaction the script left open: it never committed.
func (se *session) finish() {
	if se.cur != nil {
		se.notes = append(se.notes, note{math.MaxInt, se.n, fmt.Sprintf("session %d: %s still open at the end of the script; rolled back", se.n, se.cur.name)})
		se.c.rollback(context.Background())
		se.endTxn(history.OutcomeAborted)
	}
}

// build assembles the history: the loader, then each session's transactions in order.
func (rp *replay) build(res *Result) (*history.History, []string, error) {
	b := history.NewBuilder()
	if rp.o.SetupAsInitial {
		for _, o := range rp.loader.ops {
			b.SetInitialKey(b.IntKey(o.key), value(b, o.value))
		}
	} else {
		addTxn(b, b.Session(history.Str("setup")), &rp.loader, res)
	}
	notes := slices.Clone(rp.notes)
	for _, se := range rp.sessions {
		sid := b.Session(history.Int(int64(se.n)))
		for _, t := range se.txns {
			addTxn(b, sid, t, res)
		}
		notes = append(notes, se.notes...)
	}
	slices.SortStableFunc(notes, func(a, b note) int {
		return cmp.Or(cmp.Compare(a.step, b.step), cmp.Compare(a.session, b.session))
	})
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = n.text
	}
	h, err := b.Build()
	return h, out, err
}

// addTxn adds the recorded transaction t of session sid to b, with its ops and client
// interval, and counts its outcome in res.
func addTxn(b *history.Builder, sid history.SessionID, t *txnRec, res *Result) {
	b.BeginTxn(sid, history.Str(t.name), t.outcome)
	for _, o := range t.ops {
		i := addOp(b, o)
		if o.failed {
			b.SetOpFlags(i, history.OpFailed)
		}
		b.SetOpTime(i, history.Interval{Begin: o.begin, End: o.end})
	}
	cur := b.Current()
	cur.HasTime = true
	cur.Time = history.Interval{Begin: t.begin, End: max(t.end, t.begin)}
	switch t.outcome {
	case history.OutcomeCommitted:
		res.Committed++
	case history.OutcomeAborted:
		res.Aborted++
		if t.byDB {
			res.AbortedByDB++
		}
	default:
		res.Unknown++
	}
}

// addOp adds the recorded op o to b's current transaction and returns its index.
func addOp(b *history.Builder, o opRec) int32 {
	switch o.kind {
	case history.OpPredRead:
		rows := make([]history.Row, len(o.rows))
		for j, r := range o.rows {
			rows[j] = history.Row{Key: b.IntKey(r.k), Value: value(b, r.v), Match: true}
		}
		return b.PredRead(history.PredOp{Pred: *o.pred, Rows: rows})
	case history.OpRead:
		return b.Read(b.IntKey(o.key), value(b, o.value))
	case history.OpWrite:
		return b.Write(b.IntKey(o.key), value(b, o.value))
	case history.OpInsert:
		return b.Insert(b.IntKey(o.key), value(b, o.value))
	}
	return 0
}

func value(b *history.Builder, v *int64) history.Value {
	if v == nil {
		return history.Nil
	}
	return b.IntValue(*v)
}
