package runner

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// What the SQL drivers (pg, mysql, sqlite) share: naming their table (their isolation
// tables are in isolation.go), parsing list columns, and, for the database/sql drivers
// (mysql, sqlite), the statements of a transaction ([ConnTx]).

var tableName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// TableName returns the table a SQL driver creates: o.Table, or "isovet_kv". The name is
// spliced into statements, so it must be a plain lower-case identifier.
func (o OpenOptions) TableName() (string, error) {
	t := o.Table
	if t == "" {
		t = "isovet_kv"
	}
	if !tableName.MatchString(t) {
		return "", fmt.Errorf("table name %q: want lower-case letters, digits and _", t)
	}
	return t, nil
}

// ParseList parses the ",1,2,3" text the SQL drivers keep a list in (each append adds
// ",v").
func ParseList(l string) ([]int64, error) {
	var out []int64
	for f := range strings.SplitSeq(l, ",") {
		if f == "" {
			continue
		}
		x, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("list element %q: %w", f, err)
		}
		out = append(out, x)
	}
	return out, nil
}

// SQLStmts are a database/sql driver's statements for [ConnTx], with "?" placeholders.
type SQLStmts struct {
	Driver string // names the driver in errors ("mysql")
	// Read selects v for k; Write sets k to v; Append appends ","+v to k's list (args k,
	// ",v"); List selects k's list.
	Read, Write, Append, List string
	// Classify wraps a driver error with the runner's classes ([ErrAborted]) and the
	// driver's name; nil stays nil.
	Classify func(error) error
}

// ConnTx is the part of a [Tx] and [TableTx] that the database/sql drivers run alike, one
// statement per operation on the session's connection: every method but Commit and
// PredWrite. Rows is the row table, for row workloads.
type ConnTx struct {
	Conn *sql.Conn
	Rows *Tables
	SQL  *SQLStmts
}

// Read runs SQL.Read; a missing key reads 0.
func (t *ConnTx) Read(ctx context.Context, k string) (int64, error) {
	var v int64
	err := t.Conn.QueryRowContext(ctx, t.SQL.Read, k).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return v, t.SQL.Classify(err)
}

// Write runs SQL.Write.
func (t *ConnTx) Write(ctx context.Context, k string, v int64) error {
	_, err := t.Conn.ExecContext(ctx, t.SQL.Write, k, v)
	return t.SQL.Classify(err)
}

// Append runs SQL.Append with ",v".
func (t *ConnTx) Append(ctx context.Context, k string, v int64) error {
	_, err := t.Conn.ExecContext(ctx, t.SQL.Append, k, ","+strconv.FormatInt(v, 10))
	return t.SQL.Classify(err)
}

// ReadList runs SQL.List and parses the list; a missing key is an empty list.
func (t *ConnTx) ReadList(ctx context.Context, k string) ([]int64, error) {
	var l string
	err := t.Conn.QueryRowContext(ctx, t.SQL.List, k).Scan(&l)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, t.SQL.Classify(err)
	}
	out, err := ParseList(l)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.SQL.Driver, err)
	}
	return out, nil
}

// Rollback runs ROLLBACK.
func (t *ConnTx) Rollback(ctx context.Context) error {
	_, err := t.Conn.ExecContext(ctx, "ROLLBACK")
	return err
}

func question(int) string { return "?" }

// PredRead runs SELECT k, cols FROM rows WHERE col BETWEEN ? AND ?.
func (t *ConnTx) PredRead(ctx context.Context, p Range) ([]Row, error) {
	q, err := t.Rows.Select(p, question)
	if err != nil {
		return nil, err
	}
	rs, err := t.Conn.QueryContext(ctx, q, p.Lo, p.Hi)
	if err != nil {
		return nil, t.SQL.Classify(err)
	}
	defer rs.Close()
	out, err := t.Rows.ScanRows(rs)
	return out, t.SQL.Classify(err)
}

// Insert inserts the rows, up to 500 per statement.
func (t *ConnTx) Insert(ctx context.Context, rows []Row) error {
	return t.Rows.InsertBatches(rows, func(q string, args []any) error {
		_, err := t.Conn.ExecContext(ctx, q, args...)
		return t.SQL.Classify(err)
	})
}

// Delete runs DELETE FROM rows WHERE k = ?.
func (t *ConnTx) Delete(ctx context.Context, k int64) (bool, error) {
	res, err := t.Conn.ExecContext(ctx, "DELETE FROM "+t.Rows.Name+" WHERE k = ?", k)
	if err != nil {
		return false, t.SQL.Classify(err)
	}
	n, err := res.RowsAffected()
	return n > 0, t.SQL.Classify(err)
}

// Update returns the predicate write's UPDATE statement and arguments ("?" placeholders),
// for the drivers' PredWrite.
func (t *ConnTx) Update(p Range, set []Assign) (string, []any, error) {
	return t.Rows.Update(p, set, question)
}
