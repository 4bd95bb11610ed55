package memdb

import (
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/isovet/isovet/internal/cputime"
)

func mustRead(t *testing.T, tx *Tx, k string) int64 {
	t.Helper()
	v, err := tx.Read(k)
	if err != nil {
		t.Fatalf("Read(%s): %v", k, err)
	}
	return v
}

func TestSnapshotFirstCommitterWins(t *testing.T) {
	t.Parallel()
	db := New(Options{Mode: SnapshotIsolation, Initial: map[string]int64{"x": 5}})
	t1, t2 := db.Begin(), db.Begin()
	if got := mustRead(t, t1, "x"); got != 5 {
		t.Fatalf("initial x = %d, want 5", got)
	}
	t1.Write("x", 6)
	t2.Write("x", 7)
	if err := t1.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, t2, "x"); got != 7 {
		t.Errorf("own write x = %d, want 7", got)
	}
	if err := t2.Commit(); !errors.Is(err, ErrConflict) {
		t.Fatalf("second committer: Commit() = %v, want ErrConflict", err)
	}
	t3 := db.Begin()
	if got := mustRead(t, t3, "x"); got != 6 {
		t.Errorf("after commit x = %d, want 6", got)
	}
	st, ct := t1.Timestamps()
	if ct <= st {
		t.Errorf("timestamps of t1: start %d commit %d", st, ct)
	}
}

func TestSnapshotAllowsWriteSkewSerializableDoesNot(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode    Mode
		wantErr bool
	}{{SnapshotIsolation, false}, {Serializable, true}} {
		db := New(Options{Mode: tc.mode})
		t1, t2 := db.Begin(), db.Begin()
		mustRead(t, t1, "x")
		mustRead(t, t1, "y")
		mustRead(t, t2, "x")
		mustRead(t, t2, "y")
		t1.Write("x", 1)
		t2.Write("y", 1)
		if err := t1.Commit(); err != nil {
			t.Fatal(err)
		}
		err := t2.Commit()
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: write skew commit = %v, want error %v", tc.mode, err, tc.wantErr)
		}
	}
}

func TestReadCommittedSeesLatestAndLocks(t *testing.T) {
	t.Parallel()
	db := New(Options{Mode: ReadCommitted})
	t1, t2 := db.Begin(), db.Begin()
	mustRead(t, t1, "x")
	if err := t2.Write("x", 2); err != nil {
		t.Fatal(err)
	}
	if err := t1.Write("x", 3); !errors.Is(err, ErrConflict) {
		t.Fatalf("second writer: %v, want ErrConflict", err)
	}
	if got := mustRead(t, db.Begin(), "x"); got != 0 {
		t.Errorf("uncommitted write visible: x = %d", got)
	}
	t2.Commit()
	if got := mustRead(t, db.Begin(), "x"); got != 2 {
		t.Errorf("x = %d after commit, want 2", got)
	}
}

func TestReadUncommittedDirtyReads(t *testing.T) {
	t.Parallel()
	db := New(Options{Mode: ReadUncommitted})
	t1 := db.Begin()
	t1.Write("x", 9)
	if got := mustRead(t, db.Begin(), "x"); got != 9 {
		t.Errorf("dirty read x = %d, want 9", got)
	}
	t1.Rollback()
	if got := mustRead(t, db.Begin(), "x"); got != 0 {
		t.Errorf("after rollback x = %d, want 0", got)
	}
}

func TestLists(t *testing.T) {
	t.Parallel()
	db := New(Options{})
	t1 := db.Begin()
	t1.Append("l", 1)
	t1.Append("l", 2)
	if err := t1.Commit(); err != nil {
		t.Fatal(err)
	}
	t2 := db.Begin()
	t2.Append("l", 3)
	l, _ := t2.ReadList("l")
	if fmt.Sprint(l) != "[1 2 3]" {
		t.Errorf("list = %v, want [1 2 3]", l)
	}
	if err := t2.Write("l", 1); err != nil {
		t.Fatal(err) // overwriting a list with a register in one txn is allowed
	}
}

func TestFaultsMisbehave(t *testing.T) {
	t.Parallel()
	// lost-update: both increments commit.
	db := New(Options{Mode: SnapshotIsolation, Faults: LostUpdate})
	t1, t2 := db.Begin(), db.Begin()
	t1.Write("x", mustRead(t, t1, "x")+1)
	t2.Write("x", mustRead(t, t2, "x")+1)
	if t1.Commit() != nil || t2.Commit() != nil {
		t.Error("lost-update: a conflicting commit failed")
	}
	// intermediate-read: the first of two writes is what others see.
	db = New(Options{Mode: SnapshotIsolation, Faults: IntermediateRead})
	t1 = db.Begin()
	t1.Write("x", 1)
	t1.Write("x", 2)
	t1.Commit()
	if got := mustRead(t, db.Begin(), "x"); got != 1 {
		t.Errorf("intermediate-read: x = %d, want the intermediate 1", got)
	}
	// aborted-read: an aborted transaction's write is visible.
	db = New(Options{Mode: ReadCommitted, Faults: AbortedRead})
	t1 = db.Begin()
	t1.Write("x", 4)
	t1.Rollback()
	if got := mustRead(t, db.Begin(), "x"); got != 4 {
		t.Errorf("aborted-read: x = %d, want the aborted 4", got)
	}
	// fractured-read: a read after a concurrent commit sees it.
	db = New(Options{Mode: SnapshotIsolation, Faults: FracturedRead})
	t1 = db.Begin()
	mustRead(t, t1, "x")
	t2 = db.Begin()
	t2.Write("y", 1)
	t2.Commit()
	if got := mustRead(t, t1, "y"); got != 1 {
		t.Errorf("fractured-read: y = %d, want 1", got)
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, m := range []Mode{Serializable, SnapshotIsolation, ReadCommitted, ReadUncommitted} {
		if got, err := ParseMode(m.String()); err != nil || got != m {
			t.Errorf("ParseMode(%s) = %v, %v", m, got, err)
		}
	}
	f, err := ParseFault("lost-update,long-fork")
	if err != nil || f != LostUpdate|LongFork || f.String() != "lost-update,long-fork" {
		t.Errorf("ParseFault = %v (%s), %v", f, f, err)
	}
	if _, err := ParseFault("nope"); err == nil {
		t.Error("ParseFault(nope) succeeded")
	}
	if len(Faults()) != 7 {
		t.Errorf("Faults() has %d entries", len(Faults()))
	}
}

// BenchmarkMemDB measures small transactions (2 reads, 2 writes over 1000 keys).
func BenchmarkMemDB(b *testing.B) {
	for _, mode := range []Mode{Serializable, SnapshotIsolation, ReadCommitted} {
		b.Run("mode="+mode.String(), func(b *testing.B) {
			db := New(Options{Mode: mode})
			keys := make([]string, 1000)
			for i := range keys {
				keys[i] = "k" + strconv.Itoa(i)
			}
			cpu0 := cputime.Self()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					i += 7
					tx := db.Begin()
					tx.Read(keys[i%1000])
					tx.Read(keys[(i+1)%1000])
					tx.Write(keys[(i+2)%1000], int64(i))
					tx.Write(keys[(i+3)%1000], int64(i))
					tx.Commit()
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "txns/s")
			// The machine is shared: CPU time says what the store costs when it gets a core.
			b.ReportMetric(float64(b.N)/(cputime.Self()-cpu0).Seconds(), "txns/cpu-s")
		})
	}
}

func ExampleDB() {
	db := New(Options{Mode: SnapshotIsolation, Faults: LostUpdate})
	t1, t2 := db.Begin(), db.Begin()
	x1, _ := t1.Read("counter")
	x2, _ := t2.Read("counter")
	t1.Write("counter", x1+1)
	t2.Write("counter", x2+1)
	fmt.Println(t1.Commit(), t2.Commit())
	x, _ := db.Begin().Read("counter")
	fmt.Println("counter =", x, "after two increments")
	// Output:
	// <nil> <nil>
	// counter = 1 after two increments
}
