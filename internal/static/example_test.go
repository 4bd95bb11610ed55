package static_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/isovet/isovet/internal/smtlib"
	"github.com/isovet/isovet/internal/static"
)

// unsatBackend answers sat to the serial check (the model admits serial
// executions) and unsat to every other query; real callers pass solve.Exec{}.
// A backend answering unsat to everything stands for a vacuous model, which
// RunCommand refuses (exit 2).
type unsatBackend struct{}

func (unsatBackend) Solve(_ context.Context, _ string, q smtlib.Query, _ time.Duration) (smtlib.Answer, error) {
	if strings.Contains(q.Script.String(), "; query serial ") {
		return smtlib.Answer{Status: smtlib.Sat, Solver: "fake"}, nil
	}
	return smtlib.Answer{Status: smtlib.Unsat, Solver: "fake"}, nil
}

func ExampleRunCommand() {
	src := []byte(`TABLE Account (AccID KEY, Balance);
TXN withdraw(ID, Amount) {
  SELECT Balance AS bal FROM Account WHERE AccID = ID;
  IF bal > Amount { UPDATE Account SET Balance = bal - Amount WHERE AccID = ID; }
}`)
	code, err := static.RunCommand(context.Background(), static.AnalyzeArgs{
		Program: src, Filename: "withdraw.txn", Model: "psi", Bound: 2, Backend: unsatBackend{},
	}, os.Stdout, os.Stderr)
	fmt.Println("exit", code, err)
	// Output:
	// program withdraw.txn, model psi, bound 2, solver fake
	//   serial withdraw alone        sat         0.000s wall    0.000s cpu
	//   serial withdraw then withdraw sat         0.000s wall    0.000s cpu
	//   execution k=2                unsat       0.000s wall    0.000s cpu
	//   cycle k=2                    unsat       0.000s wall    0.000s cpu
	//   shortest-path k=2            unsat       0.000s wall    0.000s cpu
	// the model admits serial executions (2 checked: each transaction alone and two in sequence)
	// verdict: proved serializable for executions of any size (exit 0), by shortest path: no chordless dependency path of 2 edges and no cycle of at most 2 instances (Theorem 10)
	// exit 0 <nil>
}

func ExampleRunCommand_badInput() {
	src := []byte("TABLE A (k KEY, v);\nTXN t(x) { LET y = x / 2; }")
	code, _ := static.RunCommand(context.Background(), static.AnalyzeArgs{
		Program: src, Filename: "bad.txn", Model: "ec", Backend: unsatBackend{},
	}, os.Stdout, os.Stdout)
	fmt.Println("exit", code)
	// Output:
	// bad.txn:2:22: unsupported construct: operator "/" (hint: integer arithmetic is +, - and *)
	// exit 2
}
