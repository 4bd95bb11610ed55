package sat

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkRandom3SAT solves seeded random 3-SAT at ratio 4.26.
func BenchmarkRandom3SAT(b *testing.B) {
	for _, n := range []int{150, 200} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			var conflicts int64
			i := 0
			for b.Loop() {
				r := rand.New(rand.NewPCG(uint64(n), uint64(i%8)))
				i++
				cnf := random3SAT(r, n, int(4.26*float64(n)))
				s := load(n, cnf, Options{})
				if _, err := s.Solve(context.Background()); err != nil {
					b.Fatal(err)
				}
				conflicts += s.Stats().Conflicts
			}
			b.ReportMetric(float64(conflicts)/float64(b.N), "conflicts/op")
		})
	}
}

// BenchmarkPigeonhole solves PHP(n+1, n).
func BenchmarkPigeonhole(b *testing.B) {
	for _, n := range []int{7, 8} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				s := load(n*(n+1), pigeonhole(n), Options{})
				if st, _ := s.Solve(context.Background()); st != Unsat {
					b.Fatal("not UNSAT")
				}
			}
		})
	}
}
