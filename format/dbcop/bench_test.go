package dbcop

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/corpus"
	"github.com/isovet/isovet/internal/cputime"
)

// genBincode returns n transactions of a seeded workload in sessions of equal size, four
// events each; one in twenty aborts.
func genBincode(n, sessions int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 3))
	s := make([][]txn, sessions)
	val := uint64(1)
	for i := range n {
		t := txn{ok: rng.IntN(20) != 0}
		for range 4 {
			e := ev{write: rng.IntN(2) == 0, k: rng.Uint64N(5000), ok: true}
			if e.write {
				e.v = val
				val++
			} else {
				e.v = rng.Uint64N(val)
			}
			t.evs = append(t.evs, e)
		}
		s[i%sessions] = append(s[i%sessions], t)
	}
	return encode(s)
}

func bench(b *testing.B, data []byte) {
	b.Helper()
	var txns int
	cpu0 := cputime.Self().Seconds()
	for b.Loop() {
		bld := history.NewBuilder()
		if err := NewDecoder().Decode(bytes.NewReader(data), "history.bincode", bld); err != nil {
			b.Fatal(err)
		}
		h, err := bld.Build()
		if err != nil {
			b.Fatal(err)
		}
		txns = len(h.Txns)
	}
	b.ReportMetric(float64(txns)*float64(b.N)/b.Elapsed().Seconds(), "txns/s")
	// The machine is shared: CPU seconds (all threads, GC included) per op are steadier
	// than wall time when other jobs compete for the two cores.
	b.ReportMetric((cputime.Self().Seconds()-cpu0)/float64(b.N), "cpu-s/op")
}

func BenchmarkRead(b *testing.B) {
	for _, n := range []int{10000, 1000000} {
		b.Run("txns="+strconv.Itoa(n), func(b *testing.B) { bench(b, genBincode(n, 25, 1)) })
	}
}

func BenchmarkReadShared(b *testing.B) {
	for _, p := range []string{"bench/veristrong-10k/WH-10k/hist-00000/history.bincode", "polysi/violations/dgraph/history.bincode"} {
		b.Run(filepath.Base(filepath.Dir(filepath.Dir(p))), func(b *testing.B) {
			data, err := os.ReadFile(corpus.Path(b, p))
			if err != nil {
				b.Fatal(err)
			}
			bench(b, data)
		})
	}
}

func TestGeneratedBincodeReads(t *testing.T) {
	t.Parallel()
	h, err := decodeBin(genBincode(1000, 5, 7))
	if err != nil || len(h.Txns) != 1000 {
		t.Fatalf("generated history: %v", err)
	}
}
