package examples_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/record"
	"github.com/isovet/isovet/render"
)

// TestDepositsSerializable runs two deposits into one account concurrently, each a
// read-modify-write transaction (SELECT the balance, UPDATE it to balance + amount),
// records what each saw and did, and checks that the history is serializable. At READ
// COMMITTED PostgreSQL lets the second deposit overwrite the first, and the test fails with
// the lost update explained.
func TestDepositsSerializable(t *testing.T) {
	db := openPostgres(t)
	for _, level := range []sql.IsolationLevel{sql.LevelRepeatableRead, sql.LevelSerializable} {
		t.Run(level.String(), func(t *testing.T) {
			h := deposits(t, db, level)
			rep, err := check.Check(t.Context(), h, check.Serializable, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != check.Pass {
				var b strings.Builder
				render.Text(&b, rep)
				t.Fatalf("PostgreSQL at %s:\n%s", level, b.String())
			}
		})
	}
}

// deposits creates an account holding 0 and deposits 1 and 10 into it from two clients at
// once, at level. Both clients read the balance before either writes it, so the two
// transactions overlap. It returns the recorded history.
func deposits(t *testing.T, db *sql.DB, level sql.IsolationLevel) *history.History {
	table := fmt.Sprintf("accounts_%d", os.Getpid())
	mustExec(t, db, "DROP TABLE IF EXISTS "+table)
	mustExec(t, db, "CREATE TABLE "+table+" (id text PRIMARY KEY, balance bigint NOT NULL)")
	t.Cleanup(func() { db.Exec("DROP TABLE " + table) })
	mustExec(t, db, "INSERT INTO "+table+" VALUES ('x', 0)")

	rec := record.New(record.Options{})
	rec.Init("x", 0)
	var bothRead, clients sync.WaitGroup
	bothRead.Add(2)
	for i, amount := range []int64{1, 10} { // distinct amounts: every balance written is new
		clients.Go(func() {
			err := deposit(t.Context(), db, level, table, rec.Begin(fmt.Sprint("client", i+1)), amount, &bothRead)
			if err != nil {
				t.Logf("client%d: %v", i+1, err)
			}
		})
	}
	clients.Wait()
	h, err := rec.History()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// deposit adds amount to account x in one transaction at level, recording it in rec. It
// calls bothRead.Done once it has read (or failed to), and waits for the other client to
// have read too before it writes.
func deposit(ctx context.Context, db *sql.DB, level sql.IsolationLevel, table string, rec *record.Txn, amount int64, bothRead *sync.WaitGroup) (err error) {
	var once sync.Once
	haveRead := func() { once.Do(bothRead.Done) }
	defer haveRead()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: level})
	if err != nil {
		rec.Abort()
		return err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
			rec.Abort()
		}
	}()
	var balance int64
	if err := tx.QueryRowContext(ctx, "SELECT balance FROM "+table+" WHERE id = 'x'").Scan(&balance); err != nil {
		return err
	}
	rec.Read("x", balance)
	haveRead()
	bothRead.Wait()
	if _, err := tx.ExecContext(ctx, "UPDATE "+table+" SET balance = $1 WHERE id = 'x'", balance+amount); err != nil {
		return err
	}
	rec.Write("x", balance+amount)
	return commit(tx, rec)
}

// commit commits tx and records its outcome: committed, aborted when the server refused the
// commit, unknown when its answer was lost (the transaction may have committed).
func commit(tx *sql.Tx, rec *record.Txn) error {
	err := tx.Commit()
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		rec.Commit()
	case errors.As(err, &pgErr):
		rec.Abort()
	default:
		rec.Unknown()
	}
	return err
}

// openPostgres connects to PostgreSQL at ISOVET_PG_DSN, or at 127.0.0.1:5432 (user
// postgres, database test). It skips the test when the server does not answer, and fails
// it instead when ISOVET_REQUIRE_SERVICES=1.
func openPostgres(t *testing.T) *sql.DB {
	t.Helper()
	dsn := os.Getenv("ISOVET_PG_DSN")
	if dsn == "" {
		dsn = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		if os.Getenv("ISOVET_REQUIRE_SERVICES") == "1" {
			t.Fatalf("PostgreSQL is required (ISOVET_REQUIRE_SERVICES=1) but not reachable at %s: %v", dsn, err)
		}
		t.Skipf("PostgreSQL not reachable at %s (set ISOVET_PG_DSN): %v", dsn, err)
	}
	return db
}

func mustExec(t *testing.T, db *sql.DB, query string) {
	t.Helper()
	if _, err := db.ExecContext(t.Context(), query); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}
