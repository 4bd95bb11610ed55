package pg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/runner"
	"github.com/isovet/isovet/internal/runner/runnertest"
	"github.com/isovet/isovet/internal/workload"
)

// requireCommitTS fails (under ISOVET_REQUIRE_SERVICES=1) or skips when the server does not
// track commit timestamps.
func requireCommitTS(t *testing.T, d string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var track string
	if err := c.QueryRow(ctx, "SHOW track_commit_timestamp").Scan(&track); err != nil {
		t.Fatal(err)
	}
	if track != "on" {
		msg := "track_commit_timestamp is off on the PostgreSQL server (ALTER SYSTEM SET track_commit_timestamp = on, then restart)"
		if os.Getenv("ISOVET_REQUIRE_SERVICES") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// TestCommitTimesInBulk: the commit times read in bulk at the end of the run (in chunks of 7
// ids here, so that several chunks and a partial one are exercised) are exactly what the
// per-transaction query the driver used to send after each COMMIT answers for the same xid;
// the sidecar has one line per transaction with a database id, in history order, with the
// id the history records; committed ones have their time, the others none; and the history
// streamed to Out is the history returned.
func TestCommitTimesInBulk(t *testing.T) {
	t.Parallel()
	d := dsn(t)
	requireCommitTS(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db, _, err := Open(ctx, d, runner.OpenOptions{Isolation: "serializable", Table: runnertest.Table(t)})
	if err != nil {
		t.Fatal(err)
	}
	db.(*DB).chunk = 7
	defer db.Close()
	defer db.(runner.Cleaner).Cleanup(context.Background())
	// Few keys and four sessions at SERIALIZABLE: some transactions abort.
	w, err := workload.Generate("rw-register", workload.Options{Seed: 3, Sessions: 4, TxnsPerSess: 25, Keys: 8, OpsPerTxn: 3})
	if err != nil {
		t.Fatal(err)
	}
	var out, side bytes.Buffer
	res, err := runner.Run(ctx, db, w, runner.RunOptions{Out: &out, Sidecar: &side})
	if err != nil {
		t.Fatal(err)
	}
	h := res.History

	// The streamed history is the one returned.
	b := history.NewBuilder()
	if err := native.NewDecoder().Decode(bytes.NewReader(out.Bytes()), "history.jsonl", b); err != nil {
		t.Fatal(err)
	}
	disk, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if len(disk.Txns) != len(h.Txns) {
		t.Fatalf("history on Out has %d transactions, the result %d", len(disk.Txns), len(h.Txns))
	}
	for i := range h.Txns {
		a, b := &h.Txns[i], &disk.Txns[i]
		if a.Outcome != b.Outcome || a.Source.String() != b.Source.String() || len(a.Ops) != len(b.Ops) || a.Time != b.Time {
			t.Fatalf("txn %d differs between Out and the result: %+v vs %+v", i, *a, *b)
		}
	}

	type line struct {
		Txn        int    `json:"txn"`
		DBID       string `json:"db_id"`
		CommitTime int64  `json:"commit_time_ns"`
	}
	var lines []line
	for l := range strings.SplitSeq(strings.TrimSpace(side.String()), "\n") {
		var x line
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("sidecar line %q: %v", l, err)
		}
		lines = append(lines, x)
	}
	var withID []int
	for i := range h.Txns {
		if !h.Txns[i].Source.IsNil() {
			withID = append(withID, i)
		}
	}
	if len(lines) != len(withID) {
		t.Fatalf("%d sidecar lines, %d transactions with a database id", len(lines), len(withID))
	}
	c, err := pgx.Connect(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	committed, aborted := 0, 0
	for j, l := range lines {
		tx := &h.Txns[withID[j]]
		if l.Txn != withID[j] || l.DBID != tx.Source.String() {
			t.Fatalf("sidecar line %d is %+v, want txn %d with id %s", j, l, withID[j], tx.Source)
		}
		if !tx.Committed() {
			aborted++
			if l.CommitTime != 0 {
				t.Errorf("txn %d did not commit but has commit time %d", l.Txn, l.CommitTime)
			}
			continue
		}
		committed++
		xid, err := strconv.ParseInt(l.DBID, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		// The query the driver sent after every COMMIT before commit times were read in bulk.
		var ts *time.Time
		if err := c.QueryRow(ctx, "SELECT pg_xact_commit_timestamp(($1::bigint % 4294967296)::text::xid)", xid).Scan(&ts); err != nil {
			t.Fatal(err)
		}
		if ts == nil || ts.UnixNano() != l.CommitTime {
			t.Fatalf("txn %d (xid %d): bulk commit time %d, per-transaction query %v", l.Txn, xid, l.CommitTime, ts)
		}
	}
	if committed < 50 {
		t.Fatalf("only %d committed transactions with ids", committed)
	}
	// Every committed transaction that wrote has an id and every read-only one none, and
	// the id is the xid of the row versions it left: each row's xmin is the id of the
	// transaction that wrote the value the row holds.
	writer := map[[2]string]*history.Txn{}
	for i := range h.Txns {
		tx := &h.Txns[i]
		if !tx.Committed() {
			continue
		}
		if hasWrite(*tx) == tx.Source.IsNil() {
			t.Fatalf("committed txn %d: writes %v but id %v", i, hasWrite(*tx), tx.Source)
		}
		for _, o := range tx.Ops {
			if o.Kind == history.OpWrite {
				writer[[2]string{h.Key(o.Key).String(), h.Value(o.Value).String()}] = tx
			}
		}
	}
	rows, err := c.Query(ctx, "SELECT k, v::text, xmin::text::bigint FROM "+runnertest.Table(t))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for rows.Next() {
		var k, v string
		var xmin int64
		if err := rows.Scan(&k, &v, &xmin); err != nil {
			t.Fatal(err)
		}
		tx := writer[[2]string{k, v}]
		if tx == nil {
			continue // never written: the loaded row
		}
		x, _ := tx.Source.Int()
		if x%(1<<32) != xmin {
			t.Fatalf("row %s=%s: xmin %d, but its writer recorded id %d", k, v, xmin, x)
		}
		checked++
	}
	if rows.Err() != nil || checked == 0 {
		t.Fatalf("checked %d rows' xmin (%v)", checked, rows.Err())
	}
	t.Logf("%d committed and %d other transactions with ids; %d aborted in all", committed, aborted, res.Aborted)
}

// TestRowWorkloadIDs: transactions whose writes are row operations (predicate writes,
// inserts, deletes) get their id from the query sent with COMMIT: every committed
// transaction that inserted (the loader's) has one, every committed read-only one none, and
// predicate writes that updated rows have one.
func TestRowWorkloadIDs(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db, _, err := Open(ctx, dsn(t), runner.OpenOptions{Isolation: "serializable", Table: runnertest.Table(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	defer db.(runner.Cleaner).Cleanup(context.Background())
	w, err := workload.Generate("blindw-pred", workload.Options{Seed: 1, Sessions: 3, TxnsPerSess: 10, Keys: 30})
	if err != nil {
		t.Fatal(err)
	}
	res, err := runner.Run(ctx, db, w, runner.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := res.History
	inserters, predWriters := 0, 0
	for i := range h.Txns {
		tx := &h.Txns[i]
		if !tx.Committed() {
			continue
		}
		readOnly, inserts := true, false
		for _, o := range tx.Ops {
			readOnly = readOnly && o.Kind.IsRead()
			inserts = inserts || o.Kind == history.OpInsert
		}
		switch {
		case readOnly && !tx.Source.IsNil():
			t.Fatalf("committed read-only txn %d has id %v", i, tx.Source)
		case inserts && tx.Source.IsNil():
			t.Fatalf("committed txn %d inserted rows but has no id", i)
		case inserts:
			inserters++
		case !readOnly && !tx.Source.IsNil():
			predWriters++
		}
	}
	if inserters == 0 || predWriters == 0 {
		t.Fatalf("%d inserting and %d predicate-writing transactions with ids, want some of each", inserters, predWriters)
	}
}

// TestInterruptBlockedStatement: cancelling a run stops a session that waits inside a
// statement (a row lock held by another connection), although the runner passes statements
// a context that is never cancelled: it interrupts the session's connection. The run returns
// the cancellation and a history in which the interrupted transactions did not commit.
func TestInterruptBlockedStatement(t *testing.T) {
	t.Parallel()
	d := dsn(t)
	ctx := context.Background()
	db, _, err := Open(ctx, d, runner.OpenOptions{Isolation: "read-committed", Table: runnertest.Table(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	defer db.(runner.Cleaner).Cleanup(context.Background())
	w, err := workload.Generate("rw-register", workload.Options{Seed: 1, Sessions: 3, TxnsPerSess: 50, Keys: 4, OpsPerTxn: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Prepare first, so the blocker can lock every row before the run starts; Run prepares
	// again (TRUNCATE would wait for the lock), so it gets a DB whose Prepare is done.
	if err := db.Prepare(ctx, runner.Schema{Keys: w.Keys}); err != nil {
		t.Fatal(err)
	}
	blocker, err := pgx.Connect(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Close(ctx)
	if _, err := blocker.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := blocker.Exec(ctx, "UPDATE "+runnertest.Table(t)+" SET v = v"); err != nil {
		t.Fatal(err)
	}
	// Release the locks in any case after 30 s (closing the blocker's socket ends its
	// transaction), so that a runner that cannot be interrupted
	// fails the test below instead of hanging it.
	release := time.AfterFunc(30*time.Second, func() { blocker.PgConn().Conn().Close() })
	defer release.Stop()

	rctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	res, err := runner.Run(rctx, prepared{db.(*DB)}, w, runner.RunOptions{})
	took := time.Since(start)
	if took > 10*time.Second {
		t.Fatalf("Run took %v after the cancel at 500ms: the blocked sessions were not interrupted", took)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v, want the cancellation", err)
	}
	if res == nil {
		t.Fatal("no result")
	}
	for i := range res.History.Txns {
		tx := &res.History.Txns[i]
		if hasWrite(*tx) && tx.Committed() {
			t.Fatalf("txn %d wrote a locked row and committed", i)
		}
	}
	if len(res.History.Txns) == 0 {
		t.Fatal("the interrupted transactions were not recorded")
	}
	blocker.Exec(ctx, "ROLLBACK")
}

// prepared is a DB whose Prepare has been done already.
type prepared struct{ *DB }

func (prepared) Prepare(context.Context, runner.Schema) error { return nil }

var _ runner.DB = prepared{}
