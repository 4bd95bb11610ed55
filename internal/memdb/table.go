package memdb

import (
	"cmp"
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
//
// A range index per column keeps predicate operations from visiting every row: buckets[c]
// maps value>>bucketShift to the rows that have (or had) a version with column c in that
// bucket. Entries are added as versions are installed and pruned lazily, when a scan finds
// that no retained version of the row is in the bucket any more. A snapshot older than
// horizon (the oldest retained version of the most recently trimmed row) might need a
// trimmed version the index no longer points to, so indexed scans at such snapshots abort.
type table struct {
	name    string
	ncols   int
	keys    []int64  // row keys, in the order rows were first written
	names   []string // their item keys
	items   []*item
	index   map[int64]int
	buckets []map[int64][]int32
	mark    []uint32 // mark[i] == gen: row i was visited by the current scan
	gen     uint32
	horizon uint64
}

// bucketShift sets the width of an index bucket: 16 values.
const bucketShift = 4

// indexRow adds row k to the buckets of row's values.
func (t *table) indexRow(k int64, row []int64) {
	if row == nil {
		return
	}
	i := int32(t.index[k])
	for c, v := range row {
		b := v >> bucketShift
		l := t.buckets[c][b]
		if n := len(l); n > 0 && l[n-1] == i {
			continue
		}
		t.buckets[c][b] = append(l, i)
	}
}

// indexed reports whether a scan of [lo, hi] uses the index (else it visits every row).
func (t *table) indexed(lo, hi int64) bool {
	return lo <= hi && uint64(hi>>bucketShift-lo>>bucketShift) < uint64(len(t.keys))
}

// inBucket reports whether a retained version of row i has column col in bucket b.
func (t *table) inBucket(i int32, col int, b int64) bool {
	vs := t.items[i].vs
	for j := len(vs) - 1; j >= 0; j-- {
		if r := vs[j].row; r != nil && r[col]>>bucketShift == b {
			return true
		}
	}
	return false
}

// candidates calls f once for every row that may have a retained version with column col
// in [lo, hi] (every row, when the range is wider than the table), stopping at the first
// error. It prunes index entries that no longer apply.
func (t *table) candidates(col int, lo, hi int64, f func(i int) error) error {
	if !t.indexed(lo, hi) {
		for i := range t.keys {
			if err := f(i); err != nil {
				return err
			}
		}
		return nil
	}
	t.nextGen()
	for b := lo >> bucketShift; b <= hi>>bucketShift; b++ {
		if err := t.visitBucket(col, b, f); err != nil {
			return err
		}
	}
	return nil
}

// nextGen starts a new generation of marks, one per row, so that a scan visits each row
// once however many buckets list it.
func (t *table) nextGen() {
	if t.gen++; t.gen == 0 {
		clear(t.mark)
		t.gen = 1
	}
	if n := len(t.keys); len(t.mark) < n {
		t.mark = append(t.mark, make([]uint32, n-len(t.mark))...)
	}
}

// visitBucket calls f for every row of bucket b of column col's index not visited yet in
// this generation, dropping the entries of rows no longer in the bucket.
func (t *table) visitBucket(col int, b int64, f func(i int) error) error {
	l, ok := t.buckets[col][b]
	if !ok {
		return nil
	}
	kept := l[:0]
	for j, i := range l {
		if !t.inBucket(i, col, b) {
			continue
		}
		kept = append(kept, i)
		if t.mark[i] == t.gen {
			continue
		}
		t.mark[i] = t.gen
		if err := f(int(i)); err != nil {
			t.buckets[col][b] = append(kept, l[j+1:]...)
			return err
		}
	}
	if len(kept) == 0 {
		delete(t.buckets[col], b)
	} else {
		t.buckets[col][b] = kept
	}
	return nil
}

// tooOld reports whether an indexed scan of [lo, hi] of t by tx might need a trimmed
// version (see [table]); db.mu is held.
func (tx *Tx) tooOld(t *table, lo, hi int64) bool {
	m, f := tx.db.opts.Mode, tx.db.opts.Faults
	if m == ReadCommitted || m == ReadUncommitted || f&FracturedRead != 0 || !t.indexed(lo, hi) {
		return false // reads see the latest version, which is never trimmed, or visit every row
	}
	return min(tx.snap[0], tx.snap[1]) < t.horizon
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
	t := &table{name: name, ncols: ncols, index: make(map[int64]int), buckets: make([]map[int64][]int32, ncols)}
	for c := range t.buckets {
		t.buckets[c] = make(map[int64][]int32)
	}
	db.tables[name] = t
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
	if tx.tooOld(t, lo, hi) {
		tx.abortLocked()
		return nil, fmt.Errorf("%w: snapshot too old for a range scan of %s", ErrConflict, t.name)
	}
	// The transaction's own rows first (its buffered writes are not in the index), then
	// the committed rows the index points to.
	own := tx.db.opts.Mode != ReadUncommitted && len(tx.rowW) > 0
	var out []Row
	if own {
		out = tx.ownRows(t, &p)
	}
	err := t.candidates(col, lo, hi, func(i int) error {
		if own {
			if _, ok := tx.rowW[rowRef{t, t.keys[i]}]; ok {
				return nil
			}
		}
		row, err := tx.rowAt(t, i)
		if err == nil && p.match(row) {
			out = append(out, Row{Key: t.keys[i], Vals: row})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Row) int { return cmp.Compare(a.Key, b.Key) })
	if tx.db.opts.Mode == Serializable {
		tx.preds = append(tx.preds, p)
	}
	return out, nil
}

// ownRows are the rows of t that tx wrote and p matches.
func (tx *Tx) ownRows(t *table, p *predRead) []Row {
	var out []Row
	for ref, j := range tx.rowW {
		if ref.t == t && p.match(tx.writes[j].row) {
			out = append(out, Row{Key: ref.k, Vals: tx.writes[j].row})
		}
	}
	return out
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
	if tx.tooOld(t, p.lo, p.hi) {
		return fmt.Errorf("%w: snapshot too old to validate a range scan of %s", ErrConflict, t.name)
	}
	return t.candidates(p.col, p.lo, p.hi, func(i int) error {
		it := t.items[i]
		n := len(it.vs)
		if n == 0 || it.vs[n-1].ts <= tx.snapOf(t.names[i]) {
			return nil
		}
		if f&LostUpdate != 0 {
			if _, own := tx.rowW[rowRef{t, t.keys[i]}]; own {
				return nil
			}
		}
		var seen []int64
		if v := tx.visible(t.names[i], it); v != nil {
			seen = v.row
		}
		if p.match(seen) || (f&Phantom == 0 && p.match(it.vs[n-1].row)) {
			return fmt.Errorf("%w: row %d of %s, read through a predicate, changed before this transaction committed", ErrConflict, t.keys[i], t.name)
		}
		return nil
	})
}
