package memdb

import (
	"errors"
	"slices"
	"testing"
)

// newTable returns a database in mode m with faults f and a table t of rows 0..2 whose
// first column is 0, 10 and 20.
func newTable(t *testing.T, m Mode, f Fault) *DB {
	t.Helper()
	db := New(Options{Mode: m, Faults: f})
	if err := db.CreateTable("t", 2); err != nil {
		t.Fatal(err)
	}
	tx := db.Begin()
	for k := range int64(3) {
		if err := tx.Insert("t", k, []int64{10 * k, 0}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return db
}

func keysOf(rows []Row) []int64 {
	var ks []int64
	for _, r := range rows {
		ks = append(ks, r.Key)
	}
	return ks
}

func mustScan(t *testing.T, tx *Tx, lo, hi int64) []int64 {
	t.Helper()
	rows, err := tx.Scan("t", 0, lo, hi)
	if err != nil {
		t.Fatalf("Scan(%d, %d): %v", lo, hi, err)
	}
	return keysOf(rows)
}

func TestTableBasics(t *testing.T) {
	t.Parallel()
	for _, m := range []Mode{Serializable, SnapshotIsolation, ReadCommitted, ReadUncommitted} {
		t.Run(m.String(), func(t *testing.T) {
			db := newTable(t, m, 0)
			tx := db.Begin()
			if got := mustScan(t, tx, 5, 25); !slices.Equal(got, []int64{1, 2}) {
				t.Fatalf("Scan(5, 25) = %v, want [1 2]", got)
			}
			keys, err := tx.Update("t", 0, 0, 10, func(k int64, old []int64) []int64 { return []int64{old[0] + 100, k} })
			if err != nil || !slices.Equal(keys, []int64{0, 1}) {
				t.Fatalf("Update = %v, %v; want [0 1]", keys, err)
			}
			if err := tx.Insert("t", 7, []int64{15, 0}); err != nil {
				t.Fatal(err)
			}
			if err := tx.Insert("t", 2, []int64{1, 1}); !errors.Is(err, ErrExists) {
				t.Fatalf("Insert of an existing row = %v, want ErrExists", err)
			}
			if ok, err := tx.Delete("t", 2); !ok || err != nil {
				t.Fatalf("Delete(2) = %v, %v", ok, err)
			}
			if ok, _ := tx.Delete("t", 99); ok {
				t.Fatal("Delete of a missing row reported a row")
			}
			// Own writes: rows 0 and 1 moved to 100 and 110, 7 is new, 2 is gone.
			if got := mustScan(t, tx, 0, 200); !slices.Equal(got, []int64{0, 1, 7}) {
				t.Fatalf("Scan after own writes = %v, want [0 1 7]", got)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			rows, err := db.Begin().Scan("t", 0, 0, 200)
			if err != nil || len(rows) != 3 || rows[1].Vals[0] != 110 || rows[1].Vals[1] != 1 {
				t.Fatalf("after commit: %v, %v", rows, err)
			}
		})
	}
}

// TestPhantom: two transactions each read a range and insert into it. Snapshot isolation
// lets both commit (a predicate write skew); serializable aborts the second unless the
// phantom fault is on.
func TestPhantom(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode    Mode
		fault   Fault
		wantErr bool
	}{
		{SnapshotIsolation, 0, false},
		{Serializable, 0, true},
		{Serializable, Phantom, false},
	} {
		t.Run(tc.mode.String()+"/"+tc.fault.String(), func(t *testing.T) {
			db := newTable(t, tc.mode, tc.fault)
			t1, t2 := db.Begin(), db.Begin()
			if got := mustScan(t, t1, 0, 9); len(got) != 1 {
				t.Fatalf("t1 saw %v", got)
			}
			if got := mustScan(t, t2, 0, 9); len(got) != 1 {
				t.Fatalf("t2 saw %v", got)
			}
			if err := t1.Insert("t", 10, []int64{5, 0}); err != nil {
				t.Fatal(err)
			}
			if err := t2.Insert("t", 11, []int64{6, 0}); err != nil {
				t.Fatal(err)
			}
			if err := t1.Commit(); err != nil {
				t.Fatal(err)
			}
			err := t2.Commit()
			if tc.wantErr != errors.Is(err, ErrConflict) {
				t.Fatalf("second committer: Commit() = %v, want conflict %v", err, tc.wantErr)
			}
		})
	}
}

// TestPredicateValidation: serializable aborts a predicate reader when a row it returned is
// overwritten or a row moves into its range, but not when an unrelated row changes; the
// phantom fault still catches the first.
func TestPredicateValidation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		fault   Fault
		change  func(tx *Tx) error
		wantErr bool
	}{
		{"returned row updated", 0, func(tx *Tx) error {
			_, err := tx.Update("t", 0, 0, 0, func(int64, []int64) []int64 { return []int64{1, 1} })
			return err
		}, true},
		{"row moved in", 0, func(tx *Tx) error {
			_, err := tx.Update("t", 0, 20, 20, func(int64, []int64) []int64 { return []int64{5, 1} })
			return err
		}, true},
		{"unrelated row", 0, func(tx *Tx) error {
			_, err := tx.Update("t", 0, 20, 20, func(int64, []int64) []int64 { return []int64{30, 1} })
			return err
		}, false},
		{"phantom fault, returned row deleted", Phantom, func(tx *Tx) error { _, err := tx.Delete("t", 0); return err }, true},
		{"phantom fault, row moved in", Phantom, func(tx *Tx) error {
			_, err := tx.Update("t", 0, 20, 20, func(int64, []int64) []int64 { return []int64{5, 1} })
			return err
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := newTable(t, Serializable, tc.fault)
			r := db.Begin()
			mustScan(t, r, 0, 9)
			w := db.Begin()
			if err := tc.change(w); err != nil {
				t.Fatal(err)
			}
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := r.Commit(); tc.wantErr != errors.Is(err, ErrConflict) {
				t.Fatalf("reader: Commit() = %v, want conflict %v", err, tc.wantErr)
			}
		})
	}
}
