package runner_test

import (
	"context"
	"fmt"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/internal/memdb"
	"github.com/isovet/isovet/internal/runner"
	"github.com/isovet/isovet/internal/workload"
)

// Run a bank workload on memdb at serializability and check the recorded history.
func ExampleRun() {
	w, _ := workload.Generate("bank", workload.Options{Seed: 1, Sessions: 4, TxnsPerSess: 25})
	db := &runner.MemDB{Opts: memdb.Options{Mode: memdb.Serializable}}
	res, err := runner.Run(context.Background(), db, w, runner.RunOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	rep, _ := check.Check(context.Background(), res.History, check.Serializable, check.Options{})
	fmt.Println("committed", res.Committed, "of", w.NumTxns())
	fmt.Println("serializable:", rep.Verdict)
	// Output:
	// committed 100 of 100
	// serializable: pass
}

// Open any database by URL; memdb needs no server.
func ExampleOpen() {
	_, target, err := runner.Open(context.Background(), "memdb://read-committed?fault=lost-update", runner.OpenOptions{})
	fmt.Println(target.Description, target.Claim, err)
	// Output:
	// memdb read-committed with fault lost-update read-committed <nil>
}
