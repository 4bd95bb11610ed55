package mysql

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/isovet/isovet/internal/cputime"
	"github.com/isovet/isovet/internal/runner"
	"github.com/isovet/isovet/internal/runner/runnertest"
	"github.com/isovet/isovet/internal/workload"
)

// BenchmarkOverhead compares the runner against a bare database/sql loop sending the same
// statements for the same workload (rw-register, 4 ops per transaction over 1000 keys, READ
// COMMITTED so that no retries blur the comparison) over the same connections, as the
// PostgreSQL driver's BenchmarkOverhead does: 4 sessions are opened once, and every round
// runs the 4x50 templates on them with each contender twice, in an order that rotates from
// round to round so that drift in the shared machine's load falls on all alike. The
// contenders are the bare loop (a context without cancellation), the runner as it is
// (sessions are Interrupters: statements get a never-cancelled context) and the runner
// with the sessions' Interrupt hidden, which passes every statement the run's cancellable
// context as before (the driver then hands each statement's context to its connection's
// watcher goroutine). The runner records intervals, outcomes and the history and streams
// native JSONL to io.Discard.
//
// Metrics: overhead-% and cancellable-overhead-% are the medians over rounds of runner
// wall time / bare wall time - 1 (-lo-% and -hi-%: the quartiles); cpu-overhead-% and
// cancellable-cpu-overhead-% are the client CPU (user+sys, this process) of all such
// rounds over that of all bare rounds - 1.
func BenchmarkOverhead(b *testing.B) {
	base := dsn(b)
	w, err := workload.Generate("rw-register", workload.Options{Seed: 1, Sessions: 4, TxnsPerSess: 50, OpsPerTxn: 4, Keys: 1000})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	d, _, err := Open(ctx, base, runner.OpenOptions{Isolation: "read-committed", Table: "isovet_bench_overhead"})
	if err != nil {
		b.Fatal(err)
	}
	db := d.(*DB)
	defer db.Close()
	if err := db.Prepare(ctx, runner.Schema{Keys: w.Keys}); err != nil {
		b.Fatal(err)
	}
	defer db.Cleanup(ctx)
	sess := make([]*session, len(w.Sessions))
	for i := range sess {
		s, err := db.Session(ctx)
		if err != nil {
			b.Fatal(err)
		}
		sess[i] = s.(*session)
		defer s.Close()
	}
	bare := func() (time.Duration, time.Duration) {
		c0, t0 := cputime.Self(), time.Now()
		var wg sync.WaitGroup
		for i, txns := range w.Sessions {
			s := sess[i]
			wg.Go(func() {
				tag := int64(i) << 32
				for _, t := range txns {
					bareTxn(ctx, b, s, &t, &tag)
				}
			})
		}
		wg.Wait()
		return time.Since(t0), cputime.Self() - c0
	}
	run := func(hide bool) func() (time.Duration, time.Duration) {
		return func() (time.Duration, time.Duration) {
			c0 := cputime.Self()
			res, err := runner.Run(ctx, &fixedSessions{sess: sess, hide: hide}, w, runner.RunOptions{Out: io.Discard})
			if err != nil {
				b.Fatal(err)
			}
			return res.Elapsed, cputime.Self() - c0
		}
	}
	contenders := []func() (time.Duration, time.Duration){bare, run(false), run(true)}
	var wall, cpu [3]time.Duration
	var ratios [3][]float64
	n, round := 0, 0
	for b.Loop() {
		var rw [3]time.Duration
		for i := range 6 {
			// Forwards then backwards, starting at a contender that rotates per round.
			j := (round + i) % 3
			if i >= 3 {
				j = (round + 5 - i) % 3
			}
			t, c := contenders[j]()
			rw[j] += t
			wall[j] += t
			cpu[j] += c
		}
		for j := 1; j < 3; j++ {
			ratios[j] = append(ratios[j], float64(rw[j])/float64(rw[0]))
		}
		n += 2 * w.NumTxns()
		round++
	}
	q := runnertest.Quantile
	for j, name := range []string{"", "cancellable-"} {
		j++
		b.ReportMetric(100*(q(ratios[j], 0.5)-1), name+"overhead-%")
		b.ReportMetric(100*(q(ratios[j], 0.25)-1), name+"overhead-lo-%")
		b.ReportMetric(100*(q(ratios[j], 0.75)-1), name+"overhead-hi-%")
		b.ReportMetric(100*(float64(cpu[j])/float64(cpu[0])-1), name+"cpu-overhead-%")
		b.ReportMetric(float64(cpu[j].Microseconds())/float64(n), name+"runner-cpu-us/txn")
	}
	b.ReportMetric(float64(n)/wall[0].Seconds(), "bare-txns/s")
	b.ReportMetric(float64(n)/wall[1].Seconds(), "runner-txns/s")
	b.ReportMetric(float64(cpu[0].Microseconds())/float64(n), "bare-cpu-us/txn")
}

// fixedSessions hands the runner the sessions opened once, in turn; closing one keeps it
// open. With hide, the sessions do not show the runner their Interrupt method.
type fixedSessions struct {
	sess []*session
	hide bool
	next int
}

func (f *fixedSessions) Prepare(context.Context, runner.Schema) error { f.next = 0; return nil }
func (f *fixedSessions) Close() error                                 { return nil }
func (f *fixedSessions) Session(context.Context) (runner.Session, error) {
	s := f.sess[f.next%len(f.sess)]
	f.next++
	if f.hide {
		return keepOpenHidden{s}, nil
	}
	return keepOpen{s}, nil
}

// keepOpen is a session whose Close leaves the connection open.
type keepOpen struct{ *session }

func (keepOpen) Close() error { return nil }

// keepOpenHidden is the same without Interrupt: the runner passes its statements the run's
// cancellable context.
type keepOpenHidden struct{ s *session }

func (k keepOpenHidden) Begin(ctx context.Context) (runner.Tx, error) { return k.s.Begin(ctx) }
func (keepOpenHidden) Close() error                                   { return nil }

var (
	_ runner.Interrupter = keepOpen{}
	_ runner.Session     = keepOpenHidden{}
)

// bareTxn runs one template with plain database/sql calls and no recording.
func bareTxn(ctx context.Context, b *testing.B, s *session, t *workload.Txn, tag *int64) {
	reads := make([]int64, 0, len(t.Ops))
	if _, err := s.c.ExecContext(ctx, "START TRANSACTION"); err != nil {
		b.Fatal(err)
	}
	for i := range t.Ops {
		o := &t.Ops[i]
		var v int64
		switch o.Kind {
		case workload.OpRead:
			if err := s.c.QueryRowContext(ctx, s.sql.Read, o.Key).Scan(&v); err != nil {
				b.Fatal(err)
			}
		case workload.OpWrite:
			*tag++
			v = o.Value(reads, *tag)
			if _, err := s.c.ExecContext(ctx, s.sql.Write, o.Key, v); err != nil {
				b.Fatal(err)
			}
		}
		reads = append(reads, v)
	}
	if _, err := s.c.ExecContext(ctx, "COMMIT"); err != nil {
		b.Fatal(err)
	}
}
