package pg

import (
	"context"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"isovet/internal/runner"
	"isovet/internal/workload"
)

// BenchmarkOverhead compares the runner (recording intervals, outcomes and the native
// history, with and without asking for transaction ids) against a bare pgx loop sending
// the same statements for the same workload: 4 sessions, rw-register, 4 ops per
// transaction over 1000 keys, READ COMMITTED (so that retries do not blur the comparison).
// Metrics: throughput of each, the median over rounds of the runner's time over the bare
// loop's (overhead-%), and client CPU per transaction (the runner's includes Prepare and
// connecting).
func BenchmarkOverhead(b *testing.B) {
	base := dsn(b)
	w, err := workload.Generate("rw-register", workload.Options{Seed: 1, Sessions: 4, TxnsPerSess: 100, OpsPerTxn: 4, Keys: 1000})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	open := func(b *testing.B, txid bool) runner.DB {
		d := base
		if !txid {
			d += sep + "isovet_txid=off"
		}
		db, _, err := Open(ctx, d, runner.OpenOptions{Isolation: "read-committed", Table: "isovet_bench_overhead"})
		if err != nil {
			b.Fatal(err)
		}
		return db
	}
	bare := open(b, false).(*DB)
	plain := open(b, false)
	withID := open(b, true)
	defer bare.Cleanup(ctx)
	// Rounds alternate, so that the load of a shared machine falls on all three alike; the
	// runner's time is Result.Elapsed (after Prepare and connecting, like the bare loop's).
	var tBare, tRun, tID time.Duration
	var cBare, cRun, cID time.Duration
	var ratios, idRatios []float64
	n := 0
	round := 0
	for b.Loop() {
		rb, rr, ri := tBare, tRun, tID
		bareRound := func() {
			if err := bare.Prepare(ctx, runner.Schema{Keys: w.Keys}); err != nil {
				b.Fatal(err)
			}
			// Fresh connections each round, as Run opens its sessions: a new server
			// backend starts with cold caches, and both sides should pay for that alike.
			conns := make([]*pgx.Conn, len(w.Sessions))
			for i := range conns {
				if conns[i], err = pgx.ConnectConfig(ctx, bare.cfg); err != nil {
					b.Fatal(err)
				}
			}
			c0, t0 := cpuTime(), time.Now()
			var wg sync.WaitGroup
			for s, txns := range w.Sessions {
				c := conns[s]
				wg.Go(func() {
					var tag int64
					for _, t := range txns {
						bareTxn(ctx, b, c, bare, &t, &tag)
					}
				})
			}
			wg.Wait()
			tBare += time.Since(t0)
			cBare += cpuTime() - c0
			for _, c := range conns {
				c.Close(ctx)
			}
		}
		runRound := func(db runner.DB, t, c *time.Duration) {
			c0 := cpuTime()
			res, err := runner.Run(ctx, db, w, runner.RunOptions{})
			if err != nil {
				b.Fatal(err)
			}
			*c += cpuTime() - c0
			*t += res.Elapsed
		}
		// Rotate the order, so that no contender always goes first after a TRUNCATE.
		steps := []func(){bareRound, func() { runRound(plain, &tRun, &cRun) }, func() { runRound(withID, &tID, &cID) }}
		for i := range steps {
			steps[(i+round)%len(steps)]()
		}
		round++
		n += w.NumTxns()
		ratios = append(ratios, float64(tRun-rr)/float64(tBare-rb))
		idRatios = append(idRatios, float64(tID-ri)/float64(tBare-rb))
	}
	median := func(xs []float64) float64 { slices.Sort(xs); return xs[len(xs)/2] }
	b.ReportMetric(float64(n)/tBare.Seconds(), "bare-txns/s")
	b.ReportMetric(float64(n)/tRun.Seconds(), "runner-txns/s")
	// The median of per-round ratios resists the load spikes of a shared machine.
	b.ReportMetric(100*(median(ratios)-1), "overhead-%")
	b.ReportMetric(100*(median(idRatios)-1), "txid-overhead-%")
	b.ReportMetric(float64(cBare.Microseconds())/float64(n), "bare-cpu-us/txn")
	b.ReportMetric(float64(cRun.Microseconds())/float64(n), "runner-cpu-us/txn")
}

// cpuTime returns this process's user and system CPU time (the client's; the server is
// another process).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// bareTxn runs one template with plain pgx calls and no recording.
func bareTxn(ctx context.Context, b *testing.B, c *pgx.Conn, db *DB, t *workload.Txn, tag *int64) {
	reads := make([]int64, 0, len(t.Ops))
	if _, err := c.Exec(ctx, db.begin); err != nil {
		b.Fatal(err)
	}
	for i := range t.Ops {
		o := &t.Ops[i]
		var v int64
		switch o.Kind {
		case workload.OpRead:
			if err := c.QueryRow(ctx, "SELECT v FROM "+db.table+" WHERE k = $1", o.Key).Scan(&v); err != nil {
				b.Fatal(err)
			}
		case workload.OpWrite:
			*tag++
			v = o.Value(reads, *tag)
			if _, err := c.Exec(ctx, "UPDATE "+db.table+" SET v = $2 WHERE k = $1", o.Key, v); err != nil {
				b.Fatal(err)
			}
		}
		reads = append(reads, v)
	}
	if _, err := c.Exec(ctx, "COMMIT"); err != nil {
		b.Fatal(err)
	}
}
