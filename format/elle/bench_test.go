package elle_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/isovet/isovet/format/elle"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/cputime"
)

// genListAppend returns a seeded list-append history of n transactions in the shape of
// Elle's generator: 10 processes; 1 to 4 micro-ops per transaction, half appends of unique
// values and half reads; 10 keys active at a time, each retired after 32 appends; reads
// return the key's whole list. About 1% of transactions fail and 0.5% end in :info.
func genListAppend(tb testing.TB, n int) *history.History {
	tb.Helper()
	r := rand.New(rand.NewPCG(7, 11))
	b := history.NewBuilder()
	b.Grow(n, 3*n)
	const procs, active, perKey = 10, 10, 32
	keys := make([]int64, active)
	lists := make([][]history.Value, active)
	nextKey := int64(0)
	for i := range keys {
		keys[i] = nextKey
		nextKey++
	}
	sess := make([]history.SessionID, procs)
	for p := range sess {
		sess[p] = b.NewSession(history.Int(int64(p)))
	}
	next := int64(0)
	now := int64(1_000_000)
	for i := range n {
		p := i % procs
		outcome := history.OutcomeCommitted
		switch x := r.IntN(1000); {
		case x < 10:
			outcome = history.OutcomeAborted
		case x < 15:
			outcome = history.OutcomeUnknown
		}
		b.BeginTxn(sess[p], history.Int(int64(2*i)), outcome)
		for range 1 + r.IntN(4) {
			j := r.IntN(active)
			k := b.IntKey(keys[j])
			if r.IntN(2) == 0 {
				next++
				v := b.IntValue(next)
				b.Append(k, v)
				if outcome == history.OutcomeCommitted {
					lists[j] = append(lists[j], v)
				}
				if len(lists[j]) >= perKey {
					keys[j], lists[j] = nextKey, nil
					nextKey++
				}
			} else if outcome == history.OutcomeCommitted {
				b.ReadList(k, lists[j])
			}
		}
		c := b.Current()
		c.Time, c.HasTime = history.Interval{Begin: now, End: now + 900_000}, true
		now += 100_000
		if outcome == history.OutcomeUnknown {
			sess[p] = b.NewSession(history.Int(int64(p)))
		}
	}
	h, err := b.Build()
	if err != nil {
		tb.Fatal(err)
	}
	// Unknown transactions end at the last time in the history, as the reader makes them.
	last := h.Txns[len(h.Txns)-1].Time.End
	for i := range h.Txns {
		if h.Txns[i].Outcome == history.OutcomeUnknown {
			h.Txns[i].Time.End = last
		}
	}
	return h
}

func genBytes(tb testing.TB, n int, json bool) []byte {
	h := genListAppend(tb, n)
	var buf bytes.Buffer
	write := elle.WriteEDN
	if json {
		write = elle.WriteJSON
	}
	if err := write(&buf, h); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func TestGeneratedHistoryRoundTrips(t *testing.T) {
	t.Parallel()
	h := genListAppend(t, 2000)
	roundTrip(t, h)
}

func BenchmarkRead(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		for _, json := range []bool{false, true} {
			name, read := "edn", elle.ReadEDN
			if json {
				name, read = "json", elle.ReadJSON
			}
			b.Run(fmt.Sprintf("%s/txns=%d", name, n), func(b *testing.B) {
				if testing.Short() && n > 10_000 {
					b.Skip("short")
				}
				data := genBytes(b, n, json)
				b.SetBytes(int64(len(data)))
				cpu0 := cputime.Self()
				b.ResetTimer()
				for b.Loop() {
					h, err := read(bytes.NewReader(data), "bench")
					if err != nil || len(h.Txns) != n {
						b.Fatalf("read %d txns, err %v", len(h.Txns), err)
					}
				}
				b.StopTimer()
				// The CI machine has 2 shared cores: CPU time (all threads, GC included) is
				// the steadier figure when other jobs compete for them.
				b.ReportMetric((cputime.Self()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "txns/s")
			})
		}
	}
}

func BenchmarkWrite(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		for _, json := range []bool{false, true} {
			name, write := "edn", elle.WriteEDN
			if json {
				name, write = "json", elle.WriteJSON
			}
			b.Run(fmt.Sprintf("%s/txns=%d", name, n), func(b *testing.B) {
				if testing.Short() && n > 10_000 {
					b.Skip("short")
				}
				h := genListAppend(b, n)
				var buf bytes.Buffer
				b.ResetTimer()
				for b.Loop() {
					buf.Reset()
					if err := write(&buf, h); err != nil {
						b.Fatal(err)
					}
				}
				b.SetBytes(int64(buf.Len()))
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "txns/s")
			})
		}
	}
}
