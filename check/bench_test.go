package check_test

import (
	"context"
	"sync"
	"testing"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/histtest"
)

// benchHistories are the histories BenchmarkCheck checks: generated snapshot-isolated
// histories of 2,000 transactions (8 sessions, 200 keys, 4 operations each), without and
// with repeated values (30% of writes), which leave reads several candidate writers; both
// pass every level benchmarked, through pruning and the SAT solver.
func benchHistories() map[string]*history.History {
	return map[string]*history.History{
		"unique": histtest.Gen(1, histtest.GenOptions{Txns: 2000, Sessions: 8, Keys: 200, OpsPerTxn: 4, Concurrency: 4, UnknownRatio: 0.05}),
		"dup":    histtest.Gen(1, histtest.GenOptions{Txns: 2000, Sessions: 8, Keys: 200, OpsPerTxn: 4, Concurrency: 4, UnknownRatio: 0.05, DupRatio: 0.3}),
	}
}

// benchLevels are the levels BenchmarkCheck checks: one per black-box checker's route
// (causal with repeated values goes through snapshot isolation).
var benchLevels = []check.Level{check.Serializable, check.SnapshotIsolation, check.Causal}

// BenchmarkCheck checks the benchmark histories at each level with the zero options.
func BenchmarkCheck(b *testing.B) {
	benchCheck(b, check.Options{})
}

// benchCheck runs check.Check with opts on every benchmark history and level.
func benchCheck(b *testing.B, opts check.Options) {
	hs := benchHistories()
	for _, name := range []string{"unique", "dup"} {
		h := hs[name]
		for _, l := range benchLevels {
			b.Run(name+"/"+l.String(), func(b *testing.B) {
				for b.Loop() {
					rep, err := check.Check(context.Background(), h, l, opts)
					if err != nil || rep.Verdict != check.Pass {
						b.Fatalf("Check(%s) = %v, %v", l, rep.Verdict, err)
					}
				}
			})
		}
	}
}

// BenchmarkCheckProgress is BenchmarkCheck with a progress callback that keeps the last
// value, as the CLI's does: the cost of reporting progress.
func BenchmarkCheckProgress(b *testing.B) {
	var mu sync.Mutex
	var last check.Progress
	benchCheck(b, check.Options{Progress: func(p check.Progress) {
		mu.Lock()
		last = p
		mu.Unlock()
	}})
	_ = last
}
