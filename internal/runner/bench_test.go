package runner

import (
	"context"
	"io"
	"os"
	"strconv"
	"testing"

	"github.com/isovet/isovet/internal/cputime"
	"github.com/isovet/isovet/internal/memdb"
	"github.com/isovet/isovet/internal/workload"
)

// BenchmarkRunMemDB is the runner end to end on memdb: rw-register (BL, 8 ops per txn,
// 1000 keys), 8 sessions, 10,000 transactions, history encoded to native JSONL.
func BenchmarkRunMemDB(b *testing.B) {
	for _, mode := range []memdb.Mode{memdb.SnapshotIsolation, memdb.Serializable} {
		b.Run("mode="+mode.String(), func(b *testing.B) {
			w, err := workload.Generate("rw-register", workload.Options{Seed: 1, Sessions: 8, TxnsPerSess: 1250})
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			c0 := cputime.Self()
			for b.Loop() {
				res, err := Run(context.Background(), &MemDB{Opts: memdb.Options{Mode: mode}}, w, RunOptions{Out: io.Discard})
				if err != nil {
					b.Fatal(err)
				}
				n += len(res.History.Txns)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "txns/s")
			b.ReportMetric(float64(n)/(cputime.Self()-c0).Seconds(), "txns/cpu-s")
		})
	}
}

// nullDB answers every operation at once: what is left is the runner's own cost per
// transaction (executor, intervals, channel, builder, native encoding).
type nullDB struct{}

func (nullDB) Prepare(context.Context, Schema) error             { return nil }
func (nullDB) Session(context.Context) (Session, error)          { return nullDB{}, nil }
func (nullDB) Close() error                                      { return nil }
func (nullDB) Begin(context.Context) (Tx, error)                 { return nullDB{}, nil }
func (nullDB) Read(context.Context, string) (int64, error)       { return 0, nil }
func (nullDB) Write(context.Context, string, int64) error        { return nil }
func (nullDB) Append(context.Context, string, int64) error       { return nil }
func (nullDB) ReadList(context.Context, string) ([]int64, error) { return nil, nil }
func (nullDB) Commit(context.Context) error                      { return nil }
func (nullDB) Rollback(context.Context) error                    { return nil }

// BenchmarkRunnerOwnCost: the runner against a database that costs nothing, with the
// workload of the PostgreSQL overhead benchmark (4 sessions, 4 ops per txn). Divide by a
// real database's time per transaction to bound the runner's overhead.
func BenchmarkRunnerOwnCost(b *testing.B) {
	w, err := workload.Generate("rw-register", workload.Options{Seed: 1, Sessions: 4, TxnsPerSess: 2500, OpsPerTxn: 4, Keys: 1000})
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	c0 := cputime.Self()
	for b.Loop() {
		res, err := Run(context.Background(), nullDB{}, w, RunOptions{Out: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		n += len(res.History.Txns)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/txn")
	b.ReportMetric(float64((cputime.Self()-c0).Nanoseconds())/float64(n), "cpu-ns/txn")
}

// BenchmarkRunBlindWPred records Vbox's BlindW-Pred on memdb: 10,000 rows loaded, then
// 10,000 transactions (half predicate reads, half predicate writes, ranges matching 1 to
// 1,000 rows), 8 sessions, history encoded to native JSONL. It reports the recording
// speed; the history is what the predicate checker is timed on.
func BenchmarkRunBlindWPred(b *testing.B) {
	for _, mode := range []memdb.Mode{memdb.Serializable, memdb.SnapshotIsolation} {
		b.Run("mode="+mode.String(), func(b *testing.B) {
			txns := 10_000
			if s := os.Getenv("ISOVET_BENCH_TXNS"); s != "" {
				txns, _ = strconv.Atoi(s)
			}
			w, err := workload.Generate("blindw-pred", workload.Options{Seed: 1, Sessions: 8, TxnsPerSess: txns / 8})
			if err != nil {
				b.Fatal(err)
			}
			n, rows := 0, 0
			c0 := cputime.Self()
			for b.Loop() {
				res, err := Run(context.Background(), &MemDB{Opts: memdb.Options{Mode: mode}}, w, RunOptions{Out: io.Discard})
				if err != nil {
					b.Fatal(err)
				}
				n += len(res.History.Txns)
				for _, p := range res.History.Preds {
					rows += len(p.Rows)
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "txns/s")
			b.ReportMetric(float64(n)/(cputime.Self()-c0).Seconds(), "txns/cpu-s")
			b.ReportMetric(float64(rows)/float64(n), "rows/txn")
		})
	}
}
