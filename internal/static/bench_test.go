package static

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/isovet/isovet/internal/smtlib/solve"
)

// BenchmarkAnalyze runs the example analyses too slow for TestExamples: the
// paper's TPC-C long forks under PSI at k = 4, and the largest runs of the
// other examples. It reports the solvers' CPU time per run (cpu-s/op) next to
// the wall time, since the machine is shared. Each case states the verdict
// it must reach; a different verdict fails the benchmark.
//
//	go test ./internal/static -run '^$' -bench Analyze -benchtime 1x -v
func BenchmarkAnalyze(b *testing.B) {
	for _, bc := range []struct {
		name, file, model string
		bound             int
		txns              []string
		bounded           bool
		want              Verdict
		k                 int
	}{
		// The paper's first long fork: New-Order, Payment, two Order-Status.
		{"tpcc-psi-longfork-NO-Pay-OS", "tpcc.txn", "psi", 4, []string{"NewOrder", "Payment", "OrderStatus"}, true, Anomaly, 4},
		// The paper's second: two New-Order, two Stock-Level, confirmed by
		// a spread replay (two order lines in each Stock-Level's range).
		{"tpcc-psi-longfork-NO-SL", "tpcc.txn", "psi", 4, []string{"NewOrder", "StockLevel"}, true, Anomaly, 4},
		// All five, from an initial database satisfying tpcc.txn's ASSUME
		// INITIALLY conditions: the paper's "no anomaly" at k = 2, 3 (PSI)
		// and up to 4 (SI).
		{"tpcc-psi-all", "tpcc.txn", "psi", 3, nil, true, NoneUpToBound, 0},
		{"tpcc-si-all", "tpcc.txn", "si", 4, nil, true, NoneUpToBound, 0},
		// All five under SI, unbounded: the inductive proof in the paper's
		// steps, with the liveness facts and the counter invariant.
		{"tpcc-si-all-inductive", "tpcc.txn", "si", 2, nil, false, Serializable, 0},
		{"bank-psi-longfork", "bank.txn", "psi", 4, nil, true, Anomaly, 4},
		{"withdraw-psi-serializable", "withdraw.txn", "psi", 4, nil, false, Serializable, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			needSolver(b, "z3")
			src, err := os.ReadFile(filepath.Join(examplesDir, bc.file))
			if err != nil {
				b.Fatal(err)
			}
			prog, err := Parse(src)
			if err != nil {
				b.Fatal(err)
			}
			var cpu time.Duration
			for b.Loop() {
				res, err := Analyze(context.Background(), prog, Options{Model: model(b, bc.model), Bound: bc.bound,
					Solver: "z3", Timeout: 5 * time.Minute, Backend: solve.Exec{}, Txns: bc.txns, NoUnbounded: bc.bounded})
				if err != nil {
					b.Fatal(err)
				}
				if res.Verdict != bc.want || res.K != bc.k {
					b.Fatalf("Analyze(%s) = %s@%d (%s), want %s@%d", bc.name, res.Verdict, res.K, res.Reason, bc.want, bc.k)
				}
				cpu += res.CPU
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}
