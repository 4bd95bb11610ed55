package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/workload"
)

// TableSchema describes a table of rows: an int64 primary key k and int64 columns.
type TableSchema struct {
	// Name is the relation's name in the history; SQL drivers name the table they create
	// after their own table (OpenOptions.Table) and this name, e.g. isovet_kv_t.
	Name string
	// Cols are the non-key columns, in the order of [Row.Vals]. TagCol indexes the column
	// every write sets to a fresh number, which makes row images unique; drivers that cannot
	// return the rows an UPDATE changed find them by it.
	Cols   []string
	TagCol int
}

// Range is the predicate Lo <= Cols[Col] <= Hi.
type Range struct {
	Col    int
	Lo, Hi int64
}

// Row is a table row: its key and every non-key column, in [TableSchema.Cols] order.
type Row struct {
	Key  int64
	Vals []int64
}

// Assign is the new value of a column in a predicate write: (k*Mul + Add) mod Mod for the
// row with key k, or Add when Mod is 0. SQL drivers write it as an expression of k, so the
// new image of every row updated is known from its key alone.
type Assign struct{ Mul, Add, Mod int64 }

// Value returns the value a gives the row with key k.
func (a Assign) Value(k int64) int64 {
	if a.Mod == 0 {
		return a.Add
	}
	v := (k*a.Mul + a.Add) % a.Mod
	if v < 0 {
		v += a.Mod
	}
	return v
}

// TableTx is implemented by the transactions of drivers that support row workloads
// (predicate reads and writes, inserts and deletes on the [Schema] table).
type TableTx interface {
	// PredRead returns every row that satisfies p (SELECT k, cols WHERE col BETWEEN lo
	// AND hi), in any order.
	PredRead(ctx context.Context, p Range) ([]Row, error)
	// PredWrite sets every column of the rows that satisfy p (UPDATE ... SET col = expr,
	// ... WHERE col BETWEEN lo AND hi; set has one Assign per column) and returns the keys
	// of the rows it updated.
	PredWrite(ctx context.Context, p Range, set []Assign) ([]int64, error)
	// Insert inserts the rows (in one statement where the database allows).
	Insert(ctx context.Context, rows []Row) error
	// Delete deletes row k, reporting whether a row was deleted.
	Delete(ctx context.Context, k int64) (bool, error)
}

// SetClause renders set as the SET list of an UPDATE over cols, with placeholders made by
// ph from argument positions starting at 1 + len(args), and returns the arguments
// appended to args. SQL drivers share it.
func SetClause(cols []string, set []Assign, args []any, ph func(i int) string) (string, []any) {
	var b []byte
	for i, a := range set {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, cols[i]...)
		b = append(b, " = "...)
		if a.Mod == 0 {
			args = append(args, a.Add)
			b = append(b, ph(len(args))...)
			continue
		}
		args = append(args, a.Mul, a.Add, a.Mod)
		b = append(b, "(k * "...)
		b = append(b, ph(len(args)-2)...)
		b = append(b, " + "...)
		b = append(b, ph(len(args)-1)...)
		b = append(b, ") % "...)
		b = append(b, ph(len(args))...)
	}
	return string(b), args
}

// Image renders a row's non-key columns as the history records a row version:
// "v1=12,v2=40,w=7".
func Image(cols []string, vals []int64) string {
	b := make([]byte, 0, 12*len(vals))
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, cols[i]...)
		b = append(b, '=')
		b = strconv.AppendInt(b, v, 10)
	}
	return string(b)
}

// errNoTables is returned when a row workload meets a driver without [TableTx].
var errNoTables = errors.New("the driver does not support row workloads (predicate reads and writes, inserts, deletes)")

// predicate returns how the history records the range r.
func (e *executor) predicate(r workload.Range) history.Predicate {
	col := e.table.Cols[r.Col]
	return history.Predicate{
		Relation: e.table.Name,
		Expr:     col + " BETWEEN " + strconv.FormatInt(r.Lo, 10) + " AND " + strconv.FormatInt(r.Hi, 10),
		Field:    history.Str(col), Lo: r.Lo, Hi: r.Hi, IsRange: true,
	}
}

// rowOp runs the row operation t.Ops[i] (with the unconditional inserts right after it, as
// one batch) and records it in rec. It returns how many ops it covered, the value e.reads
// keeps for it (the number of rows a predicate read or write found) and the keys it found,
// in order. A conditional insert or delete whose condition does not hold runs nothing and
// records nothing.
func (e *executor) rowOp(ctx context.Context, tx Tx, t *workload.Txn, i int, rec *native.Txn) (n int, v int64, found []int64, err error) {
	tt, ok := tx.(TableTx)
	if !ok || e.table == nil {
		return 1, 0, nil, errNoTables
	}
	op := &t.Ops[i]
	switch op.Kind {
	case workload.OpPredRead:
		return e.rowPredRead(ctx, tt, op.Row, rec)
	case workload.OpPredWrite:
		return e.rowPredWrite(ctx, tt, op.Row, rec)
	case workload.OpInsert:
		return e.rowInsert(ctx, tt, t, i, rec)
	case workload.OpDelete:
		return e.rowDelete(ctx, tt, op, rec)
	}
	return 1, 0, nil, fmt.Errorf("not a row operation: %v", op.Kind)
}

// rowPredRead runs and records a predicate read, for rowOp.
func (e *executor) rowPredRead(ctx context.Context, tt TableTx, ro *workload.RowOp, rec *native.Txn) (int, int64, []int64, error) {
	cols := e.cols
	rows, err := tt.PredRead(ctx, Range{Col: ro.Range.Col, Lo: ro.Range.Lo, Hi: ro.Range.Hi})
	if err != nil {
		return 1, 0, nil, err
	}
	slices.SortFunc(rows, func(a, b Row) int { return cmp.Compare(a.Key, b.Key) })
	p := &native.Pred{Pred: e.predicate(ro.Range), Rows: make([]native.Row, len(rows))}
	found := make([]int64, len(rows))
	for j, r := range rows {
		if len(r.Vals) != len(cols) {
			return 1, 0, nil, fmt.Errorf("a predicate read returned %d columns, want %d", len(r.Vals), len(cols))
		}
		p.Rows[j] = native.Row{Key: history.Int(r.Key), Value: history.Str(Image(cols, r.Vals)), Match: true}
		found[j] = r.Key
	}
	rec.Ops = append(rec.Ops, native.Op{Kind: history.OpPredRead, Pred: p})
	return 1, int64(len(rows)), found, nil
}

// rowPredWrite runs and records a predicate write, for rowOp.
func (e *executor) rowPredWrite(ctx context.Context, tt TableTx, ro *workload.RowOp, rec *native.Txn) (int, int64, []int64, error) {
	cols := e.cols
	set := make([]Assign, len(cols))
	for c, a := range ro.Set {
		set[c] = Assign{Mul: a.Mul, Add: a.Add, Mod: e.table.Domain}
	}
	set[len(cols)-1] = Assign{Add: e.tags.Add(1)}
	keys, err := tt.PredWrite(ctx, Range{Col: ro.Range.Col, Lo: ro.Range.Lo, Hi: ro.Range.Hi}, set)
	if err != nil {
		// Which rows it changed is unknown; the transaction will not commit.
		return 1, 0, nil, err
	}
	slices.Sort(keys)
	p := &native.Pred{Pred: e.predicate(ro.Range), Rows: make([]native.Row, len(keys))}
	vals := make([]int64, len(cols))
	for j, k := range keys {
		for c := range set {
			vals[c] = set[c].Value(k)
		}
		p.Rows[j] = native.Row{Key: history.Int(k), Value: history.Str(Image(cols, vals)), Match: true}
	}
	rec.Ops = append(rec.Ops, native.Op{Kind: history.OpPredWrite, Pred: p})
	return 1, int64(len(keys)), keys, nil
}

// rowInsert runs and records the insert t.Ops[i], with the unconditional inserts right
// after it as one batch, for rowOp; a conditional insert whose condition does not hold
// runs nothing.
func (e *executor) rowInsert(ctx context.Context, tt TableTx, t *workload.Txn, i int, rec *native.Txn) (int, int64, []int64, error) {
	op := &t.Ops[i]
	if op.From >= 0 && e.reads[op.From] >= int64(op.Row.Cond) {
		return 1, 0, nil, nil
	}
	n := 1
	for op.From < 0 && i+n < len(t.Ops) && t.Ops[i+n].Kind == workload.OpInsert && t.Ops[i+n].From < 0 {
		n++
	}
	rows := make([]Row, n)
	for j := range rows {
		o := t.Ops[i+j].Row
		rows[j] = Row{Key: o.Key, Vals: append(slices.Clip(o.Vals), e.tags.Add(1))}
	}
	err := tt.Insert(ctx, rows)
	// Recorded even when it failed, as item writes are: it may have taken effect in a
	// transaction that then aborted.
	for _, r := range rows {
		rec.Ops = append(rec.Ops, native.Op{Kind: history.OpInsert, Key: history.Int(r.Key), Value: history.Str(Image(e.cols, r.Vals))})
	}
	return n, 0, nil, err
}

// rowDelete runs and records a delete of one of the keys an earlier predicate read found,
// for rowOp; one whose condition does not hold runs nothing.
func (e *executor) rowDelete(ctx context.Context, tt TableTx, op *workload.Op, rec *native.Txn) (int, int64, []int64, error) {
	if op.From < 0 {
		return 1, 0, nil, errors.New("a delete needs an earlier predicate read")
	}
	ro := op.Row
	ks := e.found[op.From]
	if e.reads[op.From] < int64(ro.Cond) || len(ks) == 0 {
		return 1, 0, nil, nil
	}
	k := ks[ro.Pick%len(ks)]
	ok, err := tt.Delete(ctx, k)
	if ok || err != nil {
		rec.Ops = append(rec.Ops, native.Op{Kind: history.OpDelete, Key: history.Int(k)})
	}
	return 1, 0, nil, err
}

// Tables holds what the SQL drivers share about a row table: its SQL name and columns, and
// the statements over it.
type Tables struct {
	Name   string // the SQL table: the driver's table name, "_", the relation
	Cols   []string
	TagCol int
	typ    string
}

var sqlName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// NewTables names the SQL table for s after the driver's table base (base_relation) and
// checks every name; typ is the SQL type of every column (bigint, INTEGER).
func NewTables(base string, s *TableSchema, typ string) (*Tables, error) {
	t := &Tables{Name: base + "_" + s.Name, Cols: s.Cols, TagCol: s.TagCol, typ: typ}
	if !sqlName.MatchString(t.Name) {
		return nil, fmt.Errorf("row table name %q: want lower-case letters, digits and _ (at most 63)", t.Name)
	}
	for _, c := range s.Cols {
		if !sqlName.MatchString(c) || c == "k" {
			return nil, fmt.Errorf("row table %s: column %q: want lower-case letters, digits and _, and not k (the key)", t.Name, c)
		}
	}
	for _, c := range s.Cols {
		if !sqlName.MatchString(t.Name + "_" + c) {
			return nil, fmt.Errorf("row table %s: index name %s_%s is too long", t.Name, t.Name, c)
		}
	}
	if s.TagCol < 0 || s.TagCol >= len(s.Cols) {
		return nil, fmt.Errorf("row table %s: tag column %d out of range", t.Name, s.TagCol)
	}
	return t, nil
}

// Create returns the statements that create the table and an index on every column, if
// missing. With inline the indexes are part of CREATE TABLE (MySQL has no CREATE INDEX IF
// NOT EXISTS); suffix ends CREATE TABLE (ENGINE=InnoDB).
func (t *Tables) Create(inline bool, suffix string) []string {
	var b strings.Builder
	b.WriteString("CREATE TABLE IF NOT EXISTS " + t.Name + " (k " + t.typ + " PRIMARY KEY")
	for _, c := range t.Cols {
		b.WriteString(", " + c + " " + t.typ + " NOT NULL")
	}
	if inline {
		for _, c := range t.Cols {
			b.WriteString(", INDEX " + t.Name + "_" + c + " (" + c + ")")
		}
	}
	b.WriteString(")" + suffix)
	stmts := []string{b.String()}
	if !inline {
		for _, c := range t.Cols {
			stmts = append(stmts, "CREATE INDEX IF NOT EXISTS "+t.Name+"_"+c+" ON "+t.Name+" ("+c+")")
		}
	}
	return stmts
}

func (t *Tables) col(p Range) (string, error) {
	if p.Col < 0 || p.Col >= len(t.Cols) {
		return "", fmt.Errorf("row table %s has no column %d", t.Name, p.Col)
	}
	return t.Cols[p.Col], nil
}

// Select returns SELECT k, cols FROM table WHERE col BETWEEN ph(1) AND ph(2); the
// arguments are p.Lo and p.Hi.
func (t *Tables) Select(p Range, ph func(int) string) (string, error) {
	c, err := t.col(p)
	if err != nil {
		return "", err
	}
	return "SELECT k, " + strings.Join(t.Cols, ", ") + " FROM " + t.Name + " WHERE " + c + " BETWEEN " + ph(1) + " AND " + ph(2), nil
}

// Update returns UPDATE table SET ... WHERE col BETWEEN lo AND hi and its arguments.
func (t *Tables) Update(p Range, set []Assign, ph func(int) string) (string, []any, error) {
	c, err := t.col(p)
	if err != nil {
		return "", nil, err
	}
	if len(set) != len(t.Cols) {
		return "", nil, fmt.Errorf("row table %s: an update sets %d columns, not %d", t.Name, len(set), len(t.Cols))
	}
	sets, args := SetClause(t.Cols, set, nil, ph)
	args = append(args, p.Lo, p.Hi)
	return "UPDATE " + t.Name + " SET " + sets + " WHERE " + c + " BETWEEN " + ph(len(args)-1) + " AND " + ph(len(args)), args, nil
}

// RowsScanner is what the drivers' result sets (database/sql and pgx) have in common.
type RowsScanner interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// ScanRows reads the rows of a [Tables.Select] result: the key, then every column. Errors
// are the driver's, for it to classify; the caller closes rs.
func (t *Tables) ScanRows(rs RowsScanner) ([]Row, error) {
	var out []Row
	dest := make([]any, 1+len(t.Cols))
	for rs.Next() {
		r := Row{Vals: make([]int64, len(t.Cols))}
		dest[0] = &r.Key
		for i := range r.Vals {
			dest[1+i] = &r.Vals[i]
		}
		if err := rs.Scan(dest...); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

// ScanKeys reads a result of one column of keys (UPDATE ... RETURNING k, or a SELECT k).
// Errors are the driver's; the caller closes rs.
func ScanKeys(rs RowsScanner) ([]int64, error) {
	var keys []int64
	for rs.Next() {
		var k int64
		if err := rs.Scan(&k); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, rs.Err()
}

// InsertBatches calls exec with INSERT statements ("?" placeholders) that insert rows, up
// to 500 a statement, stopping at the first error.
func (t *Tables) InsertBatches(rows []Row, exec func(q string, args []any) error) error {
	head := "INSERT INTO " + t.Name + " (k, " + strings.Join(t.Cols, ", ") + ") VALUES "
	one := "(?" + strings.Repeat(", ?", len(t.Cols)) + ")"
	for len(rows) > 0 {
		n := min(len(rows), 500)
		var b strings.Builder
		b.WriteString(head)
		args := make([]any, 0, n*(1+len(t.Cols)))
		for i, r := range rows[:n] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(one)
			args = append(args, r.Key)
			for _, v := range r.Vals {
				args = append(args, v)
			}
		}
		if err := exec(b.String(), args); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}
