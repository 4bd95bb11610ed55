package pg

import (
	"context"
	"io"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/cputime"
	"github.com/isovet/isovet/internal/runner"
	"github.com/isovet/isovet/internal/runner/runnertest"
	"github.com/isovet/isovet/internal/workload"
)

// BenchmarkOverhead compares the runner against a bare pgx loop sending the same
// statements for the same workload (rw-register, 4 ops per transaction over 1000 keys, READ
// COMMITTED so that no retries blur the comparison) over the same connections: 4 sessions
// are opened once, and in every round the bare loop and the runner each run the 4x50
// templates on them, in ABBA order (bare, runner, runner, bare, ...) so that drift in the
// shared machine's load falls on both alike. The runner records intervals, outcomes and
// the history, and streams native JSONL to io.Discard; the transaction-id variant (the
// default of isovet run: pg_current_xact_id_if_assigned() sent with COMMIT and, with
// track_commit_timestamp, the commit times read in bulk at the end of the run, which the
// runner's time includes, with the sidecar written to io.Discard) is measured the same way.
//
// Metrics: overhead-% is the median over rounds of runner wall time / bare wall time - 1;
// overhead-lo-% and overhead-hi-% are the 25th and 75th percentiles of that ratio;
// cpu-overhead-% is the client CPU (user+sys, this process) of all runner rounds over
// that of all bare rounds - 1; txid-overhead-% the median for the id-recording variant
// (each round runs it once, against the two bare runs' mean), txid-cpu-us/txn its client CPU.
func BenchmarkOverhead(b *testing.B) {
	base := dsn(b)
	w, err := workload.Generate("rw-register", workload.Options{Seed: 1, Sessions: 4, TxnsPerSess: 50, OpsPerTxn: 4, Keys: 1000})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	open := func(txid bool) *DB {
		d := base
		if !txid {
			d += sep + "isovet_txid=off"
		}
		db, _, err := Open(ctx, d, runner.OpenOptions{Isolation: "read-committed", Table: "isovet_bench_overhead"})
		if err != nil {
			b.Fatal(err)
		}
		return db.(*DB)
	}
	plain, withID := open(false), open(true)
	defer withID.Close()
	if err := plain.Prepare(ctx, runner.Schema{Keys: w.Keys}); err != nil {
		b.Fatal(err)
	}
	defer plain.Cleanup(ctx)
	// The connections every contender uses, opened once.
	conns := make([]*pgx.Conn, len(w.Sessions))
	for i := range conns {
		if conns[i], err = pgx.ConnectConfig(ctx, plain.cfg); err != nil {
			b.Fatal(err)
		}
		defer conns[i].Close(ctx)
	}
	var tBare, tRun, tID, cBare, cRun, cID time.Duration
	var ratios, idRatios []float64
	n := 0
	// The rounds run under pprof labels (contender=bare, runner or txid), so that a
	// -cpuprofile splits by contender: go tool pprof -tagfocus contender=runner.
	labelled := func(name string, f func(ctx context.Context) (time.Duration, time.Duration)) (d, c time.Duration) {
		pprof.Do(ctx, pprof.Labels("contender", name), func(ctx context.Context) { d, c = f(ctx) })
		return d, c
	}
	bareRound0 := func(ctx context.Context) (time.Duration, time.Duration) {
		c0, t0 := cputime.Self(), time.Now()
		var wg sync.WaitGroup
		for s, txns := range w.Sessions {
			c := conns[s]
			q := plain.newSession(c) // the statements, as the driver writes them
			wg.Go(func() {
				tag := int64(s) << 32
				for _, t := range txns {
					bareTxn(ctx, b, c, q, &t, &tag)
				}
			})
		}
		wg.Wait()
		return time.Since(t0), cputime.Self() - c0
	}
	bareRound := func() (time.Duration, time.Duration) { return labelled("bare", bareRound0) }
	runRound0 := func(ctx context.Context, db *DB) (time.Duration, time.Duration) {
		c0 := cputime.Self()
		ro := runner.RunOptions{Out: io.Discard}
		if db.txid {
			ro.Sidecar = io.Discard
		}
		res, err := runner.Run(ctx, &fixedConns{db: db, conns: conns}, w, ro)
		if err != nil {
			b.Fatal(err)
		}
		return res.Elapsed, cputime.Self() - c0
	}
	runRound := func(db *DB) (time.Duration, time.Duration) {
		name := "runner"
		if db.txid {
			name = "txid"
		}
		return labelled(name, func(ctx context.Context) (time.Duration, time.Duration) { return runRound0(ctx, db) })
	}
	round := 0
	for b.Loop() {
		var rb, rr time.Duration
		for i := range 2 {
			// ABBA: bare first in even rounds' first half, runner first otherwise.
			if (round+i)%2 == 0 {
				t, c := bareRound()
				rb, tBare, cBare = rb+t, tBare+t, cBare+c
				t, c = runRound(plain)
				rr, tRun, cRun = rr+t, tRun+t, cRun+c
			} else {
				t, c := runRound(plain)
				rr, tRun, cRun = rr+t, tRun+t, cRun+c
				t, c = bareRound()
				rb, tBare, cBare = rb+t, tBare+t, cBare+c
			}
		}
		ti, ci := runRound(withID)
		tID, cID = tID+ti, cID+ci
		round++
		n += 2 * w.NumTxns()
		ratios = append(ratios, float64(rr)/float64(rb))
		idRatios = append(idRatios, float64(2*ti)/float64(rb))
	}
	q := runnertest.Quantile
	b.ReportMetric(float64(n)/tBare.Seconds(), "bare-txns/s")
	b.ReportMetric(float64(n)/tRun.Seconds(), "runner-txns/s")
	b.ReportMetric(100*(q(ratios, 0.5)-1), "overhead-%")
	b.ReportMetric(100*(q(ratios, 0.25)-1), "overhead-lo-%")
	b.ReportMetric(100*(q(ratios, 0.75)-1), "overhead-hi-%")
	b.ReportMetric(100*(float64(tRun)/float64(tBare)-1), "total-overhead-%")
	b.ReportMetric(100*(float64(cRun)/float64(cBare)-1), "cpu-overhead-%")
	b.ReportMetric(100*(q(idRatios, 0.5)-1), "txid-overhead-%")
	b.ReportMetric(float64(cBare.Microseconds())/float64(n), "bare-cpu-us/txn")
	b.ReportMetric(float64(cRun.Microseconds())/float64(n), "runner-cpu-us/txn")
	b.ReportMetric(float64(cID.Microseconds())/float64(n/2), "txid-cpu-us/txn")
}

// fixedConns is the PostgreSQL driver over connections opened once: Session hands out the
// next one and closing a session keeps it open, so that the runner and the bare loop use
// the very same connections.
type fixedConns struct {
	db    *DB
	conns []*pgx.Conn
	next  int
}

func (f *fixedConns) Prepare(context.Context, runner.Schema) error { f.next = 0; return nil }
func (f *fixedConns) CommitTimes(ctx context.Context, ids []history.Datum) ([]int64, error) {
	return f.db.CommitTimes(ctx, ids)
}
func (f *fixedConns) Close() error { return nil }
func (f *fixedConns) Session(context.Context) (runner.Session, error) {
	c := f.conns[f.next%len(f.conns)]
	f.next++
	s := f.db.newSession(c)
	return keepOpen{s}, nil
}

// keepOpen is a session whose Close leaves the connection open.
type keepOpen struct{ *session }

func (keepOpen) Close() error { return nil }

// bareTxn runs one template with plain pgx calls and no recording.
func bareTxn(ctx context.Context, b *testing.B, c *pgx.Conn, db *session, t *workload.Txn, tag *int64) {
	reads := make([]int64, 0, len(t.Ops))
	if _, err := c.Exec(ctx, db.db.begin); err != nil {
		b.Fatal(err)
	}
	for i := range t.Ops {
		o := &t.Ops[i]
		var v int64
		switch o.Kind {
		case workload.OpRead:
			if err := c.QueryRow(ctx, db.qRead, o.Key).Scan(&v); err != nil {
				b.Fatal(err)
			}
		case workload.OpWrite:
			*tag++
			v = o.Value(reads, *tag)
			if _, err := c.Exec(ctx, db.qWrite, o.Key, v); err != nil {
				b.Fatal(err)
			}
		}
		reads = append(reads, v)
	}
	if _, err := c.Exec(ctx, "COMMIT"); err != nil {
		b.Fatal(err)
	}
}
