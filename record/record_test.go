package record_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/history/historytest"
	"github.com/isovet/isovet/record"
)

// fakeClock advances by one ns per reading.
func fakeClock() func() time.Time {
	var n int64
	base := time.Unix(0, 0)
	return func() time.Time { n++; return base.Add(time.Duration(n)) }
}

// TestHistory: what a Recorder records is the history the notation writes, with one session
// per client, T1... in order of Begin, and client intervals from the clock.
func TestHistory(t *testing.T) {
	rec := record.New(record.Options{Now: fakeClock()}) // epoch 1
	rec.Init("x", 0)
	t1 := rec.Begin("c1") // 2 -> begin 1
	t2 := rec.Begin("c2") // begin 2
	t1.Read("x", 0)
	t2.ReadMissing("y")
	t1.Write("x", 1)
	t1.Commit() // end 3
	t2.Write("y", 5)
	t2.Abort()            // end 4
	t3 := rec.Begin("c1") // begin 5
	t3.Read("x", 1)
	t3.Unknown() // end 6
	h, err := rec.History()
	if err != nil {
		t.Fatal(err)
	}
	got := historytest.Format(h)
	want := `init x=0
c1: T1 r(x,0) w(x,1) c @[1,3]
c2: T2 r(y,nil) w(y,5) abort @[2,4]
c1: T3 r(x,1) info @[5,6]
`
	if got != want {
		t.Errorf("History() =\n%s\nwant:\n%s", got, want)
	}
	if t3.Name() != "T3" {
		t.Errorf("Name() = %q, want T3", t3.Name())
	}
}

// TestLeftOpen: a transaction left open when its client begins another, or when the history
// is taken, is of unknown outcome, and the history says so.
func TestLeftOpen(t *testing.T) {
	rec := record.New(record.Options{})
	t1 := rec.Begin("c1")
	t1.Write("x", 1)
	rec.Begin("c1").Write("x", 2)
	t1.Commit() // too late: the recorder already ended it; ignored
	h, err := rec.History()
	if err != nil {
		t.Fatal(err)
	}
	for id, tx := range h.All() {
		if tx.Outcome != history.OutcomeUnknown {
			t.Errorf("%s outcome = %v, want unknown", h.Name(id), tx.Outcome)
		}
	}
	if len(h.Notes) != 2 {
		t.Errorf("Notes = %q, want 2 notes", h.Notes)
	}
}

func TestEmpty(t *testing.T) {
	if _, err := record.New(record.Options{}).History(); !errors.Is(err, record.ErrEmpty) {
		t.Errorf("History() of nothing = %v, want ErrEmpty", err)
	}
}

func TestUseAfterEnd(t *testing.T) {
	for name, f := range map[string]func(*record.Txn){
		"write":  func(tx *record.Txn) { tx.Write("x", 2) },
		"commit": func(tx *record.Txn) { tx.Commit() },
	} {
		t.Run(name, func(t *testing.T) {
			tx := record.New(record.Options{}).Begin("c")
			tx.Abort()
			defer func() {
				if recover() == nil {
					t.Errorf("%s after Abort did not panic", name)
				}
			}()
			f(tx)
		})
	}
}

// TestConcurrent records clients incrementing one counter through a store that serializes
// them with a lock, from many goroutines at once (run it with -race): the history has every
// transaction, each session in its client's order, and it is strictly serializable.
func TestConcurrent(t *testing.T) {
	const clients, txns = 8, 25
	rec := record.New(record.Options{})
	rec.Init("x", 0)
	var (
		mu      sync.Mutex
		counter int64
		wg      sync.WaitGroup
	)
	for c := range clients {
		wg.Go(func() {
			for range txns {
				tx := rec.Begin(fmt.Sprint("c", c))
				mu.Lock()
				tx.Read("x", counter)
				counter += int64(c + 1) // increments are positive, so every value written is new
				tx.Write("x", counter)
				mu.Unlock()
				tx.Commit()
			}
		})
	}
	wg.Wait()
	h, err := rec.History()
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Txns) != clients*txns || len(h.Sessions) != clients {
		t.Fatalf("history has %d transactions in %d sessions, want %d in %d", len(h.Txns), len(h.Sessions), clients*txns, clients)
	}
	for _, s := range h.Sessions {
		for i := 1; i < len(s.Txns); i++ {
			if a, b := h.Txns[s.Txns[i-1]].Time, h.Txns[s.Txns[i]].Time; a.End > b.Begin {
				t.Errorf("session %v: %v does not end before %v begins", s.Source, a, b)
			}
		}
	}
	rep, err := check.Check(context.Background(), h, check.StrictSerializable, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != check.Pass {
		t.Errorf("Check(strict-serializable) = %v, want pass; %v", rep.Verdict, rep.Anomalies)
	}
}
