package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/workload"
)

// RunOptions configure [Run]. The zero value is usable.
type RunOptions struct {
	// Out receives the history as native JSONL while the run goes (nil: not written).
	Out io.Writer
	// Sidecar receives, at the end of the run, one JSON line per transaction the database
	// gave an id or a commit time (nil: not written): {"txn":N,"db_id":"...",
	// "commit_time_ns":T}, N indexing the history's transactions. Commit times of drivers
	// that are a [CommitTimer] are read in bulk when the sessions have stopped.
	Sidecar io.Writer
	// MaxRetries bounds how often one template is retried after aborts (default 50).
	MaxRetries int
	// Progress is called by one goroutine at a time (the sessions, as they record), at most
	// every ProgressEvery (default 100ms) of the run's time and once at the end, with the
	// transactions recorded so far (committed, aborted and unknown), how many of them
	// aborted, the templates in the workload, and the time since the run began.
	Progress      func(done, aborted, total int, elapsed time.Duration)
	ProgressEvery time.Duration
	// Sink, when set, receives every transaction as it is recorded (see [Sink]); it is
	// opened before the workload starts.
	Sink   Sink
	Logger *slog.Logger
	_      struct{}
}

// Result is what a run recorded.
type Result struct {
	History                     *history.History
	Committed, Aborted, Unknown int
	// GaveUp counts templates abandoned after MaxRetries aborts.
	GaveUp  int
	Elapsed time.Duration
}

// record is one finished attempt, as the recorder sends it to the writer.
type record struct {
	txn  native.Txn
	info Info
}

// Run executes w against db: Prepare, then one goroutine per session. It returns the
// recorded history even when it stops on an error (the error says why); the history on Out
// is complete up to the last recorded transaction.
func Run(ctx context.Context, db DB, w *workload.Workload, o RunOptions) (*Result, error) {
	o.ensureDefaults()
	log := o.Logger
	schema := schemaOf(w)
	if err := db.Prepare(ctx, schema); err != nil {
		return nil, fmt.Errorf("preparing the database: %w", err)
	}
	// Open every session first, so that an unreachable server fails before anything runs.
	// A row workload's loader gets a session of its own, the last.
	nsess := len(w.Sessions)
	if len(w.Load) > 0 {
		nsess++
	}
	sessions, err := openSessions(ctx, db, nsess)
	if err != nil {
		return nil, err
	}

	wr := newWriter(o, w, schema)
	if err := wr.header(); err != nil {
		return nil, err
	}
	start := time.Now()
	wr.start = start

	parent := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var tags atomic.Int64
	newExec := func(i int, sd history.Datum) *executor {
		e := &executor{db: db, sess: sessions[i], id: i, sd: sd, start: start, tags: &tags, wr: wr, maxRetries: o.MaxRetries, log: log, table: w.Table}
		if schema.Table != nil {
			e.cols = schema.Table.Cols
		}
		e.watch(ctx)
		return e
	}
	if len(w.Load) > 0 {
		// The loader runs to the end before the sessions start, so every loader
		// transaction precedes every other in real time.
		e := newExec(len(sessions)-1, LoadSession)
		if err := e.load(ctx, w.Load); err != nil {
			cancel(fmt.Errorf("loading the table: %w", err))
		}
		e.close()
	}
	gaveUp := runSessions(ctx, cancel, w, sessions, newExec)
	// Commit times are asked for with the caller's context: after a session failed (which
	// cancelled ctx) the times of what was recorded are still worth having.
	ct, _ := db.(CommitTimer)
	werr := wr.finish(parent, ct, log)
	res := &Result{Committed: wr.committed, Aborted: wr.aborted, Unknown: wr.unknown, GaveUp: int(gaveUp), Elapsed: time.Since(start)}
	h, berr := wr.b.Build()
	res.History = h
	log.Info("run finished", "txns", wr.done, "committed", res.Committed, "aborted", res.Aborted, "unknown", res.Unknown, "elapsed", res.Elapsed)
	// Our own deferred cancel has not run yet: a cause is a session's error or the caller's
	// cancellation, and either stopped the run.
	cause := context.Cause(ctx)
	if cause != nil && parent.Err() != nil {
		cause = fmt.Errorf("the run was cancelled: %w", cause)
	}
	return res, errors.Join(cause, werr, berr)
}

// runSessions runs each session's templates on a goroutine of its own, with the executor
// newExec makes, and waits for them all; a session's error cancels ctx with it as the cause.
// It returns how many templates the sessions gave up on.
func runSessions(ctx context.Context, cancel context.CancelCauseFunc, w *workload.Workload, sessions []Session, newExec func(int, history.Datum) *executor) int64 {
	var wg sync.WaitGroup
	var gaveUp atomic.Int64
	for i, txns := range w.Sessions {
		if ctx.Err() != nil {
			sessions[i].Close()
			continue
		}
		wg.Go(func() {
			e := newExec(i, history.Int(int64(i)))
			defer e.close()
			n, err := e.session(ctx, txns)
			gaveUp.Add(n)
			if err != nil {
				cancel(fmt.Errorf("session %d: %w", i, err))
			}
		})
	}
	wg.Wait()
	return gaveUp.Load()
}

// session runs a session's templates txns in order until ctx ends or one fails, and returns
// how many it gave up on.
func (e *executor) session(ctx context.Context, txns []workload.Txn) (gaveUp int64, err error) {
	for _, t := range txns {
		if ctx.Err() != nil {
			return gaveUp, nil
		}
		ok, err := e.do(ctx, &t)
		if err != nil {
			return gaveUp, err
		}
		if !ok {
			gaveUp++
		}
	}
	return gaveUp, nil
}

// pauser is a session that wants a pause between transactions (memdb's).
type pauser interface{ pause() }

// LoadSession is the session datum of a row workload's loader transactions.
var LoadSession = history.Str("load")

// executor runs one session's templates.
type executor struct {
	db         DB
	sess       Session
	id         int
	sd         history.Datum // the session as recorded
	table      *workload.Table
	cols       []string // the table's columns, the tag column last
	start      time.Time
	tags       *atomic.Int64
	wr         *writer
	maxRetries int
	log        *slog.Logger
	reads      []int64
	found      [][]int64 // per op of the current attempt: the keys a predicate read returned
	rec        record    // the current attempt's record

	// qctx is the context statements get: the run's, or for an [Interrupter] session one
	// that is never cancelled, since stop calls Interrupt when the run's is.
	qctx context.Context
	stop func() bool
	mu   sync.Mutex // guards sess against interrupt
}

// watch sets up cancellation: an [Interrupter] session is interrupted once when ctx is
// cancelled, and its statements get a context without cancellation.
func (e *executor) watch(ctx context.Context) {
	e.qctx = ctx
	if _, ok := e.sess.(Interrupter); ok {
		e.qctx = context.WithoutCancel(ctx)
		e.stop = context.AfterFunc(ctx, e.interrupt)
	}
}

func (e *executor) interrupt() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if in, ok := e.sess.(Interrupter); ok {
		in.Interrupt()
	}
}

// close stops watching and closes the session.
func (e *executor) close() {
	if e.stop != nil {
		e.stop()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sess.Close()
}

func (e *executor) now() int64 { return int64(time.Since(e.start)) }

// do runs template t until it commits, its outcome is unknown, or it has been retried
// maxRetries times (ok false). A non-nil error stops the run.
func (e *executor) do(ctx context.Context, t *workload.Txn) (ok bool, err error) {
	for try := range e.maxRetries + 1 {
		if try >= 2 && !backOff(ctx, try) {
			return false, nil
		}
		outcome, err := e.attempt(e.qctx, t)
		switch {
		case err == nil:
			return true, nil
		case outcome == history.OutcomeAborted && errors.Is(err, ErrAborted):
			e.log.Debug("transaction aborted, retrying", "session", e.id, "txn", t.Name, "err", err)
			continue
		case outcome == history.OutcomeUnknown && errors.Is(err, ErrUnknownOutcome):
			// The connection is gone: open a new one and go on with the next template.
			if rerr := e.reconnect(ctx, err); rerr != nil {
				return false, rerr
			}
			return true, nil
		default:
			return false, err
		}
	}
	return false, nil
}

// backOff waits a random while that grows with try, the attempt about to start, so that
// sessions contending after repeated aborts spread out (SQLite's BUSY_SNAPSHOT, for one, is
// returned at once). It returns false if ctx ended first.
func backOff(ctx context.Context, try int) bool {
	d := time.Duration(rand.Int64N(int64(min(try*try, 400)))+1) * 25 * time.Microsecond
	select {
	case <-time.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}

// reconnect replaces the session, whose connection was lost with the error lost, by a new
// one; a session that ctx cancelled while it connected is interrupted.
func (e *executor) reconnect(ctx context.Context, lost error) error {
	e.mu.Lock()
	e.sess.Close()
	e.mu.Unlock()
	s, err := e.db.Session(ctx)
	if err != nil {
		return fmt.Errorf("reconnecting after %w: %w", lost, err)
	}
	e.mu.Lock()
	e.sess = s
	if in, ok := s.(Interrupter); ok && ctx.Err() != nil {
		in.Interrupt() // cancelled while connecting: interrupt missed this session
	}
	e.mu.Unlock()
	return nil
}

// attempt runs t once as a new transaction and records it. ctx is the statements' context.
func (e *executor) attempt(ctx context.Context, t *workload.Txn) (history.Outcome, error) {
	// The record and its ops are reused from attempt to attempt: the writer copies what it
	// keeps before record returns, and allocating them per transaction was most of what the
	// runner added to the garbage collector's work on a server.
	e.rec = record{txn: native.Txn{Session: e.sd, Ops: e.rec.txn.Ops[:0]}}
	if p, ok := e.sess.(pauser); ok {
		p.pause()
	}
	e.rec.txn.HasTime = true
	e.rec.txn.Time.Begin = e.now()
	tx, err := e.sess.Begin(ctx)
	if err != nil {
		// Nothing ran: record nothing unless the driver says the begin itself aborted.
		return history.OutcomeAborted, fmt.Errorf("begin: %w", err)
	}
	e.reads = e.reads[:0]
	e.found = e.found[:0]
	for i := 0; i < len(t.Ops); {
		n, err := e.runOp(ctx, tx, t, i)
		if err != nil {
			// The commit was never sent, so the transaction did not commit.
			tx.Rollback(context.WithoutCancel(ctx))
			e.finish(history.OutcomeAborted, tx)
			op := &t.Ops[i]
			return history.OutcomeAborted, fmt.Errorf("%s %s: %w", op.Kind, op.Key, err)
		}
		i += n
	}
	return e.commit(ctx, tx)
}

// runOp runs op i of t in tx and records it, with the value it read or wrote (in reads) and
// the keys a predicate read returned (in found). It returns how many of t's ops it ran:
// more than one for a batch of inserts, whose other ops read nothing.
func (e *executor) runOp(ctx context.Context, tx Tx, t *workload.Txn, i int) (int, error) {
	op := &t.Ops[i]
	var v int64
	var err error
	var found []int64
	n := 1
	switch op.Kind {
	case workload.OpPredRead, workload.OpPredWrite, workload.OpInsert, workload.OpDelete:
		n, v, found, err = e.rowOp(ctx, tx, t, i, &e.rec.txn)
		for range n - 1 {
			e.reads = append(e.reads, 0)
			e.found = append(e.found, nil)
		}
	default:
		v, err = e.itemOp(ctx, tx, op)
	}
	e.reads = append(e.reads, v)
	e.found = append(e.found, found)
	return max(n, 1), err
}

// itemOp runs the key-value op: a read, write, append or list read; it returns the value
// read or written.
func (e *executor) itemOp(ctx context.Context, tx Tx, op *workload.Op) (v int64, err error) {
	rec := &e.rec.txn
	switch op.Kind {
	case workload.OpRead:
		v, err = tx.Read(ctx, op.Key)
		if err == nil {
			rec.Ops = append(rec.Ops, native.Op{Kind: history.OpRead, Key: history.Str(op.Key), Value: history.Int(v)})
		}
	case workload.OpWrite:
		v = op.Value(e.reads, e.tags.Add(1))
		err = tx.Write(ctx, op.Key, v)
		// A failed write may still have taken effect in an aborted transaction; record it
		// so that readers of it are caught (G1a) rather than reported as thin-air reads.
		rec.Ops = append(rec.Ops, native.Op{Kind: history.OpWrite, Key: history.Str(op.Key), Value: history.Int(v)})
	case workload.OpAppend:
		v = op.Value(e.reads, e.tags.Add(1))
		err = tx.Append(ctx, op.Key, v)
		rec.Ops = append(rec.Ops, native.Op{Kind: history.OpAppend, Key: history.Str(op.Key), Value: history.Int(v)})
	case workload.OpReadList:
		var l []int64
		l, err = tx.ReadList(ctx, op.Key)
		if err == nil {
			ds := make([]history.Datum, len(l))
			for j, x := range l {
				ds[j] = history.Int(x)
			}
			rec.Ops = append(rec.Ops, native.Op{Kind: history.OpListRead, Key: history.Str(op.Key), List: ds})
		}
	}
	return v, err
}

// commit commits tx and records the transaction with the outcome the commit gave: an
// abort the driver recognized, or unknown when it failed in another way (the run stops).
func (e *executor) commit(ctx context.Context, tx Tx) (history.Outcome, error) {
	err := tx.Commit(ctx)
	switch {
	case err == nil:
		e.finish(history.OutcomeCommitted, tx)
		return history.OutcomeCommitted, nil
	case errors.Is(err, ErrAborted):
		tx.Rollback(context.WithoutCancel(ctx))
		e.finish(history.OutcomeAborted, tx)
		return history.OutcomeAborted, fmt.Errorf("commit: %w", err)
	default:
		// The commit was sent and failed in a way the driver could not classify: it may or
		// may not have committed, and the run stops.
		e.finish(history.OutcomeUnknown, tx)
		return history.OutcomeUnknown, fmt.Errorf("commit: %w", err)
	}
}

// finish ends the current attempt's record with outcome oc and what the driver's
// transaction tells of itself (an [Informer]: its id, timestamps, snapshot), and hands it
// to the writer.
func (e *executor) finish(oc history.Outcome, tx Tx) {
	rec := &e.rec
	rec.txn.Time.End = e.now()
	rec.txn.Outcome = oc
	if in, ok := tx.(Informer); ok {
		rec.info = in.Info()
		rec.txn.ID = rec.info.ID
		if rec.info.HasTimestamps {
			rec.txn.Start, rec.txn.Commit, rec.txn.HasTimestamps = rec.info.Start, rec.info.Commit, true
		}
		rec.txn.Snapshot, rec.txn.HasSnapshot = rec.info.Snapshot, rec.info.HasSnapshot
	}
	e.wr.record(rec)
}

// ensureDefaults fills in the defaults of the zero fields of o.
func (o *RunOptions) ensureDefaults() {
	if o.MaxRetries <= 0 {
		o.MaxRetries = 50
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 100 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// schemaOf is the schema the database is prepared with for w.
func schemaOf(w *workload.Workload) Schema {
	schema := Schema{Keys: w.Keys, Lists: w.Lists, Initial: map[string]int64{}}
	for k, p := range w.Initial {
		schema.Initial[k] = workload.Encode(p, 0)
	}
	if t := w.Table; t != nil {
		schema.Table = &TableSchema{Name: t.Name, Cols: append(slices.Clone(t.Cols), t.TagCol), TagCol: len(t.Cols)}
	}
	return schema
}

// openSessions opens n sessions of db; on error, it closes those it opened.
func openSessions(ctx context.Context, db DB, n int) ([]Session, error) {
	sessions := make([]Session, n)
	for i := range sessions {
		s, err := db.Session(ctx)
		if err != nil {
			for _, s := range sessions[:i] {
				s.Close()
			}
			return nil, fmt.Errorf("opening session %d: %w", i, err)
		}
		sessions[i] = s
	}
	return sessions, nil
}

// load runs the loader's transactions in order, stopping at the first that fails or gives
// up.
func (e *executor) load(ctx context.Context, txns []workload.Txn) error {
	for _, t := range txns {
		ok, err := e.do(ctx, &t)
		if err == nil && !ok {
			err = fmt.Errorf("gave up after %d aborts", e.maxRetries)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
