package record_test

import (
	"context"
	"fmt"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/record"
)

// Two clients read the same balance and both write it back increased: the second write
// loses the first. The recorder turns what they did into a history, and check finds the lost
// update. In a real test each client runs in its own goroutine against the database.
func Example() {
	rec := record.New(record.Options{})
	rec.Init("x", 0)

	t1 := rec.Begin("c1")
	t2 := rec.Begin("c2")
	t1.Read("x", 0)
	t2.Read("x", 0)
	t1.Write("x", 1) // c1 adds 1
	t1.Commit()
	t2.Write("x", 10) // c2 adds 10, on the balance it read before c1's write
	t2.Commit()

	h, err := rec.History()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, level := range []check.Level{check.SnapshotIsolation, check.Serializable} {
		rep, err := check.Check(context.Background(), h, level, check.Options{})
		if err != nil {
			fmt.Println(err)
			return
		}
		a := rep.Anomalies[0]
		fmt.Printf("%s: %s, %s; lost update: %v\n", level, rep.Verdict, a.Name(), a.Is(anomaly.LostUpdate))
	}
	// Output:
	// snapshot-isolation: fail, lost-update (G-single); lost update: true
	// serializable: fail, G2-item (lost-update); lost update: true
}
