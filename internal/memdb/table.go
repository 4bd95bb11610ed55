package memdb

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// Tables: rows of int64 column values under an int64 primary key, read and written by
// predicate (range) operations as well as by key. Each row is an item of the store (its
// versions carry the row image; a nil image is a row that does not exist), so every mode and
// fault applies to rows as it does to registers.

// Row is one table row: its primary key and its column values.
type Row struct {
	Key  int64
	Vals []int64
}

// Errors of the table operations.
var (
	// ErrNoTable is returned for a table that was never created.
	ErrNoTable = errors.New("memdb: no such table")
	// ErrExists is returned by Insert when the row exists (a unique violation).
	ErrExists = errors.New("memdb: row exists")
)

// table indexes the rows of one table; db.mu guards it.
type table struct {
	name  string
	ncols int
	keys  []int64  // row keys, in the order rows were first written
	names []string // their item keys
	items []*item
	index map[int64]int
}

type rowRef struct {
	t *table
	k int64
}

// predRead is a range predicate a transaction read, for validation.
type predRead struct {
	t      *table
	col    int
	lo, hi int64
}

func (p *predRead) match(row []int64) bool {
	return row != nil && row[p.col] >= p.lo && row[p.col] <= p.hi
}

func (t *table) register(k int64, name string, it *item) {
	t.index[k] = len(t.keys)
	t.keys = append(t.keys, k)
	t.names = append(t.names, name)
	t.items = append(t.items, it)
}

func rowKey(t string, k int64) string { return "\x00" + t + "\x00" + strconv.FormatInt(k, 10) }

// CreateTable creates an empty table with ncols value columns. Creating a table that exists
// with the same number of columns does nothing.
func (db *DB) CreateTable(name string, ncols int) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if t := db.tables[name]; t != nil {
		if t.ncols != ncols {
			return fmt.Errorf("memdb: table %s exists with %d columns, not %d", name, t.ncols, ncols)
		}
		return nil
	}
	if db.tables == nil {
		db.tables = make(map[string]*table)
	}
	db.tables[name] = &table{name: name, ncols: ncols, index: make(map[int64]int)}
	return nil
}

// tableLocked returns the table called name; db.mu is held.
func (tx *Tx) tableLocked(name string) (*table, error) {
	t := tx.db.tables[name]
	if t == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoTable, name)
	}
	return t, nil
}

// rowAt returns the image of row i of t that tx sees (nil: no row); db.mu is held. On a
// snapshot that is too old it aborts tx.
func (tx *Tx) rowAt(t *table, i int) ([]int64, error) {
	if tx.db.opts.Mode != ReadUncommitted && tx.rowW != nil {
		if j, ok := tx.rowW[rowRef{t, t.keys[i]}]; ok {
			return tx.writes[j].row, nil
		}
	}
	it := t.items[i]
	v := tx.visible(t.names[i], it)
	if v == nil {
		if tx.trimmed(it) {
			tx.abortLocked()
			return nil, fmt.Errorf("%w: snapshot too old for row %d of %s", ErrConflict, t.keys[i], t.name)
		}
		return nil, nil
	}
	return v.row, nil
}

// scan returns the rows of t whose column col lies in [lo, hi] as tx sees them, in key
// order, and registers the predicate for validation; db.mu is held.
func (tx *Tx) scan(t *table, col int, lo, hi int64) ([]Row, error) {
	if col < 0 || col >= t.ncols {
		return nil, fmt.Errorf("memdb: table %s has no column %d", t.name, col)
	}
	p := predRead{t: t, col: col, lo: lo, hi: hi}
	var out []Row
	for i := range t.keys {
		row, err := tx.rowAt(t, i)
		if err != nil {
			return nil, err
		}
		if p.match(row) {
			out = append(out, Row{Key: t.keys[i], Vals: row})
		}
	}
	// Rows this transaction inserted that no committed transaction has written yet.
	for ref, j := range tx.rowW {
		if _, ok := t.index[ref.k]; !ok && ref.t == t && p.match(tx.writes[j].row) {
			out = append(out, Row{Key: ref.k, Vals: tx.writes[j].row})
		}
	}
	slices.SortFunc(out, func(a, b Row) int { return cmpInt(a.Key, b.Key) })
	if tx.db.opts.Mode == Serializable {
		tx.preds = append(tx.preds, p)
	}
	return out, nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Scan is a predicate read: SELECT the rows of table whose column col lies in [lo, hi], in
// key order. The rows' Vals must not be modified.
func (tx *Tx) Scan(table string, col int, lo, hi int64) ([]Row, error) {
	if tx.done {
		return nil, ErrDone
	}
	db := tx.db
	db.mu.Lock()
	defer db.mu.Unlock()
	t, err := tx.tableLocked(table)
	if err != nil {
		return nil, err
	}
	return tx.scan(t, col, lo, hi)
}

// Update is a predicate write: UPDATE every row of table whose column col lies in [lo, hi]
// to the values set returns for it (given its key and current values; the slice returned
// is kept). It returns the keys updated, in order. The rows are evaluated as a read of the
// mode would see them (read committed: the latest committed rows), then written as by Write.
func (tx *Tx) Update(table string, col int, lo, hi int64, set func(k int64, old []int64) []int64) ([]int64, error) {
	if tx.done {
		return nil, ErrDone
	}
	db := tx.db
	db.mu.Lock()
	t, err := tx.tableLocked(table)
	var rows []Row
	if err == nil {
		rows, err = tx.scan(t, col, lo, hi)
	}
	db.mu.Unlock()
	if err != nil {
		return nil, err
	}
	keys := make([]int64, len(rows))
	for i, r := range rows {
		nv := set(r.Key, r.Vals)
		if len(nv) != t.ncols {
			return nil, fmt.Errorf("memdb: update of %s sets %d columns, not %d", t.name, len(nv), t.ncols)
		}
		if err := tx.putW(write{k: rowKey(t.name, r.Key), tbl: t, rk: r.Key, row: nv}); err != nil {
			return nil, err
		}
		keys[i] = r.Key
	}
	return keys, nil
}

// rowOf returns the image of row k of t that tx sees (nil: none); db.mu is held.
func (tx *Tx) rowOf(t *table, k int64) ([]int64, error) {
	if j, ok := tx.rowW[rowRef{t, k}]; ok && tx.db.opts.Mode != ReadUncommitted {
		return tx.writes[j].row, nil
	}
	i, ok := t.index[k]
	if !ok {
		return nil, nil
	}
	return tx.rowAt(t, i)
}

// Insert inserts row k with column values vals (kept) into table; [ErrExists] if the
// transaction sees such a row.
func (tx *Tx) Insert(table string, k int64, vals []int64) error {
	if tx.done {
		return ErrDone
	}
	db := tx.db
	db.mu.Lock()
	t, err := tx.tableLocked(table)
	var old []int64
	if err == nil {
		if len(vals) != t.ncols {
			err = fmt.Errorf("memdb: insert into %s of %d columns, not %d", t.name, len(vals), t.ncols)
		} else {
			old, err = tx.rowOf(t, k)
		}
	}
	db.mu.Unlock()
	if err != nil {
		return err
	}
	if old != nil {
		return fmt.Errorf("%w: row %d of %s", ErrExists, k, table)
	}
	return tx.putW(write{k: rowKey(t.name, k), tbl: t, rk: k, row: vals})
}

// Delete deletes row k of table, reporting whether the transaction saw it.
func (tx *Tx) Delete(table string, k int64) (bool, error) {
	if tx.done {
		return false, ErrDone
	}
	db := tx.db
	db.mu.Lock()
	t, err := tx.tableLocked(table)
	var old []int64
	if err == nil {
		old, err = tx.rowOf(t, k)
	}
	db.mu.Unlock()
	if err != nil || old == nil {
		return false, err
	}
	return true, tx.putW(write{k: rowKey(t.name, k), tbl: t, rk: k})
}

// validatePred fails when a row changed since tx's snapshot in a way that matters to
// predicate p: the version tx saw matched (it was returned, and is overwritten) or the
// latest one matches (a phantom: a row moved into the range or was inserted). Under the
// phantom fault only the first is checked, so rows entering the range go unnoticed. db.mu is
// held.
func (tx *Tx) validatePred(p *predRead) error {
	f := tx.db.opts.Faults
	t := p.t
	for i, it := range t.items {
		n := len(it.vs)
		if n == 0 || it.vs[n-1].ts <= tx.snapOf(t.names[i]) {
			continue
		}
		if f&LostUpdate != 0 {
			if _, own := tx.rowW[rowRef{t, t.keys[i]}]; own {
				continue
			}
		}
		var seen []int64
		if v := tx.visible(t.names[i], it); v != nil {
			seen = v.row
		}
		if p.match(seen) || (f&Phantom == 0 && p.match(it.vs[n-1].row)) {
			return fmt.Errorf("%w: row %d of %s, read through a predicate, changed before this transaction committed", ErrConflict, t.keys[i], t.name)
		}
	}
	return nil
}
