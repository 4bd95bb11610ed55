package ts_test

import (
	"context"
	"fmt"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/check/ts"
)

// ExampleCheck checks a two-transaction history whose reader missed a committed write.
func ExampleCheck() {
	b := history.NewBuilder()
	b.SetInitial(b.IntValue(0))
	x := b.StrKey("x")
	add := func(id string, start, commit int64) {
		t := b.BeginTxn(b.Session(history.Str(id)), history.Str(id), history.OutcomeCommitted)
		cur := b.Txn(t)
		cur.Start, cur.Commit, cur.HasTimestamps = history.Timestamp{Physical: start}, history.Timestamp{Physical: commit}, true
	}
	add("W", 1, 2)
	b.Write(x, b.IntValue(1))
	add("R", 3, 4)
	b.Read(x, b.IntValue(0))
	h, _ := b.Build()
	rep, err := ts.Check(context.Background(), h, anomaly.SnapshotIsolation, ts.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.Verdict)
	fmt.Println(rep.Anomalies[0].Message)
	// Output:
	// fail
	// EXT (BEFORE): R [start 3, commit 4] read x=0, but the last write visible at its snapshot is 1 by W; 0 is the initial value
}

// ExampleOnline feeds a reader before the writer it read from: the alarm is provisional
// and clears when the writer arrives within the settle time.
func ExampleOnline() {
	on, _ := ts.NewOnline(ts.OnlineOptions{Level: anomaly.SnapshotIsolation, Initial: history.Int(0), Settle: 5 * time.Second})
	t0 := time.Unix(0, 0)
	on.Advance(t0)
	on.Observe(ts.Txn{ID: history.Str("R"), Session: history.Int(2), Seq: -1,
		Start: history.Timestamp{Physical: 3}, Commit: history.Timestamp{Physical: 4},
		Ops: []ts.Op{{Kind: history.OpRead, Key: history.Str("x"), Value: history.Int(1)}}})
	on.Advance(t0.Add(time.Second))
	on.Observe(ts.Txn{ID: history.Str("W"), Session: history.Int(1), Seq: -1,
		Start: history.Timestamp{Physical: 1}, Commit: history.Timestamp{Physical: 2},
		Ops: []ts.Op{{Kind: history.OpWrite, Key: history.Str("x"), Value: history.Int(1)}}})
	evs := on.Advance(t0.Add(10 * time.Second))
	st := on.Stats()
	fmt.Println(len(evs), "violations;", st.Settled, "settled;", st.Flips, "flip")
	// Output:
	// 0 violations; 2 settled; 1 flip
}
