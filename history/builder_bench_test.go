package history_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/isovet/isovet/history"
)

// BenchmarkBuilder measures the builder alone (interning, op arena, validation) on a
// history of txns transactions of 8 integer ops over 24 sessions, half reads and half writes
// of unique values, as the readers feed it. Inputs are generated before the timer starts.
func BenchmarkBuilder(b *testing.B) {
	for _, txns := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("txns=%d", txns), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			type op struct {
				write bool
				k, v  int64
			}
			ops := make([]op, txns*8)
			next := int64(1)
			last := make(map[int64]int64)
			for i := range ops {
				k := rng.Int64N(int64(txns / 4))
				if rng.IntN(2) == 0 {
					ops[i] = op{true, k, next}
					last[k] = next
					next++
				} else {
					ops[i] = op{false, k, last[k]}
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				bl := history.NewBuilder()
				sessions := make([]history.SessionID, 24)
				for s := range sessions {
					sessions[s] = bl.Session(history.Int(int64(s)))
				}
				for t := range txns {
					bl.BeginTxn(sessions[t%24], history.Int(int64(t)), history.OutcomeCommitted)
					for _, o := range ops[t*8 : t*8+8] {
						if o.write {
							bl.Write(bl.IntKey(o.k), bl.IntValue(o.v))
						} else {
							bl.Read(bl.IntKey(o.k), bl.IntValue(o.v))
						}
					}
				}
				if _, err := bl.Build(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(txns)*float64(b.N)/b.Elapsed().Seconds(), "txns/s")
		})
	}
}
