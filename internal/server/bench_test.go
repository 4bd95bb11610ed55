package server

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http/httptest"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/cputime"
)

// benchHistory is a snapshot-isolation history of n transactions: 24 sessions, 8 operations
// each (half reads), 10,000 keys, no conflicting writers, reads as a correct database
// would return them.
func benchHistory(n int) *history.History {
	const sessions, ops, keys = 24, 8, 10_000
	rng := rand.New(rand.NewPCG(42, 42))
	type g struct {
		s, c int64
		sess int
	}
	txs := make([]g, n)
	clock := make([]int64, sessions)
	for i := range txs {
		s := i % sessions
		st := clock[s] + 1 + rng.Int64N(20)
		ct := st + 1 + rng.Int64N(40)
		clock[s] = ct
		txs[i] = g{st, ct, s}
	}
	type ev struct {
		ts    int64
		start bool
		i     int32
	}
	evs := make([]ev, 0, 2*n)
	for i, x := range txs {
		evs = append(evs, ev{x.s, true, int32(i)}, ev{x.c, false, int32(i)})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if a.ts != b.ts {
			return cmp.Compare(a.ts, b.ts)
		}
		if a.start != b.start {
			if a.start {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.i, b.i)
	})
	type op struct {
		w    bool
		k, v int64
	}
	txOps := make([][ops]op, n)
	for i := range txOps {
		for j := range ops {
			w := j >= ops/2
			k := rng.Int64N(keys)
			if w {
				k = k - k%sessions + int64(txs[i].sess)
				if k >= keys {
					k -= sessions
				}
			}
			txOps[i][j] = op{w: w, k: k, v: int64(i*ops + j + 1)}
		}
	}
	front := make([]int64, keys)
	for _, e := range evs {
		o := &txOps[e.i]
		for j := range o {
			if e.start && !o[j].w {
				o[j].v = front[o[j].k]
			} else if !e.start && o[j].w {
				front[o[j].k] = o[j].v
			}
		}
	}
	b := history.NewBuilder()
	b.SetInitial(b.IntValue(0))
	for s := range sessions {
		b.Session(history.Int(int64(s)))
	}
	for i, x := range txs {
		id := b.BeginTxn(history.SessionID(x.sess), history.Int(int64(i)), history.OutcomeCommitted)
		cur := b.Txn(id)
		cur.Start, cur.Commit, cur.HasTimestamps = history.Timestamp{Physical: x.s}, history.Timestamp{Physical: x.c}, true
		for _, o := range txOps[i] {
			if o.w {
				b.Write(b.IntKey(o.k), b.IntValue(o.v))
			} else {
				b.Read(b.IntKey(o.k), b.IntValue(o.v))
			}
		}
	}
	h, err := b.Build()
	if err != nil {
		panic(err)
	}
	return h
}

// waitIngested polls until n transactions are ingested (bounded by timeout) and returns
// the largest lag seen.
func waitIngested(b *testing.B, s *Server, n int64, timeout time.Duration) float64 {
	deadline := time.Now().Add(timeout)
	lag := 0.0
	for {
		st := s.Status()
		lag = max(lag, st.LagSeconds)
		if st.Ingested+st.Duplicates >= n {
			return lag
		}
		if time.Now().After(deadline) {
			b.Fatalf("timed out: status %+v", st)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// BenchmarkHTTPIngest sends a 200,000-transaction history over loopback HTTP in batches
// of 1,000 (two, then four requests in flight) to a fresh server and waits until all are applied. The
// client (encoding included) runs in the same process, so txns/cpu-s is the whole
// pipeline's. The GC target is Serve's (400). `go run ./bench/serve` is the fuller
// measurement (separate processes, the checker's own CPU, sustained for a window).
func BenchmarkHTTPIngest(b *testing.B) {
	const n = 200_000
	h := benchHistory(n)
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	for _, par := range []int{2, 4} {
		b.Run(fmt.Sprintf("txns=%d/parallel=%d", n, par), func(b *testing.B) {
			var lag float64
			var cpu time.Duration
			for b.Loop() {
				s, err := New(Options{Initial: history.Int(0), Settle: time.Second})
				if err != nil {
					b.Fatal(err)
				}
				s.Start(context.Background())
				hs := httptest.NewServer(s.Handler())
				c0 := cputime.Self()
				if _, err := Replay(context.Background(), ReplayOptions{History: h, To: hs.URL, Batch: 1000, Parallel: par}); err != nil {
					b.Fatal(err)
				}
				lag = max(lag, waitIngested(b, s, n, time.Minute))
				cpu += cputime.Self() - c0
				hs.Close()
				s.Close()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "txns/s")
			b.ReportMetric(float64(n)*float64(b.N)/cpu.Seconds(), "txns/cpu-s")
			b.ReportMetric(lag, "max-lag-s")
		})
	}
}

// BenchmarkNATSIngest publishes a 200,000-transaction history to a fresh JetStream stream
// (batches of 500, not timed), then times a fresh server consuming and applying all of it.
func BenchmarkNATSIngest(b *testing.B) {
	const n = 200_000
	url := natsURLB(b)
	h := benchHistory(n)
	nc, err := nats.Connect(url)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	var lag float64
	var cpu time.Duration
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		suffix := fmt.Sprint(time.Now().UnixNano(), "-", i)
		stream, subject := "ISOVET_BENCH_"+suffix, "isovet.bench."+suffix
		if _, err := Replay(context.Background(), ReplayOptions{History: h, To: url, Stream: stream, Subject: subject, Batch: 500}); err != nil {
			b.Fatal(err)
		}
		s, err := New(Options{Initial: history.Int(0), Settle: time.Second, NATS: url, Stream: stream, Subject: subject, Durable: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		b.StartTimer()
		c0 := cputime.Self()
		go func() { done <- s.serve(ctx, ln) }()
		lag = max(lag, waitIngested(b, s, n, 2*time.Minute))
		cpu += cputime.Self() - c0
		b.StopTimer()
		cancel()
		<-done
		js.DeleteStream(context.Background(), stream)
		b.StartTimer()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "txns/s")
	b.ReportMetric(float64(n)*float64(b.N)/cpu.Seconds(), "txns/cpu-s")
	b.ReportMetric(lag, "max-lag-s")
}

func natsURLB(b *testing.B) string {
	t := &testing.T{}
	_ = t
	url := nats.DefaultURL
	nc, err := nats.Connect(url, nats.Timeout(2*time.Second))
	if err != nil {
		b.Skipf("NATS is not reachable at %s: %v", url, err)
	}
	nc.Close()
	return url
}
