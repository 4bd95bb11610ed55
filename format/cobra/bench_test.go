package cobra

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/corpus"
	"github.com/isovet/isovet/internal/cputime"
)

// genLogs returns n transactions of a seeded workload as Cobra logs of the given number of
// clients: each transaction reads two keys (from the initial state or an earlier write,
// named explicitly) and writes two.
func genLogs(n, clients int, seed uint64) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	logs := make([]*logw, clients)
	for i := range logs {
		logs[i] = new(logw)
	}
	type w struct{ txn, wid, key int64 }
	var writes []w
	wid := int64(1)
	for id := int64(1); id <= int64(n); id++ {
		l := logs[id%int64(clients)]
		l.S(id, 0)
		for range 2 {
			if len(writes) == 0 || rng.IntN(4) == 0 {
				l.R(InitID, InitID, rng.Int64N(100000), 0)
			} else {
				x := writes[len(writes)-1-rng.IntN(min(len(writes), 1000))]
				l.R(x.txn, x.wid, x.key, x.wid)
			}
		}
		for range 2 {
			k := rng.Int64N(100000)
			l.W(wid, k, wid)
			writes = append(writes, w{id, wid, k})
			wid++
		}
		l.C(id, 0)
	}
	out := make([][]byte, clients)
	for i, l := range logs {
		out[i] = l.Bytes()
	}
	return out
}

func benchFiles(b *testing.B, files [][]byte) {
	b.Helper()
	var txns int
	cpu0 := cputime.Self().Seconds()
	for b.Loop() {
		d := NewDecoder()
		bld := history.NewBuilder()
		for i, f := range files {
			if err := d.Decode(bytes.NewReader(f), "T"+string(rune('0'+i%10))+".log", bld); err != nil {
				b.Fatal(err)
			}
		}
		if err := d.Finish(bld); err != nil {
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
		b.Run("txns="+itoa(n), func(b *testing.B) {
			if n > 10000 && testing.Short() {
				b.Skip("short")
			}
			benchFiles(b, genLogs(n, 16, 1))
		})
	}
}

func BenchmarkReadShared(b *testing.B) {
	for _, dir := range []string{"cobra/ser-violation/fauna-page", "cobra/ser-violation/yuga-G2-a", "bench/veristrong-10k/twitter-10k"} {
		b.Run(filepath.Base(dir), func(b *testing.B) {
			names, _ := filepath.Glob(filepath.Join(corpus.Path(b, dir), "T*.log"))
			slices.SortFunc(names, func(x, y string) int { return fileNum(x) - fileNum(y) })
			var files [][]byte
			for _, n := range names {
				data, err := os.ReadFile(n)
				if err != nil {
					b.Fatal(err)
				}
				files = append(files, data)
			}
			benchFiles(b, files)
		})
	}
}

func itoa(n int) string {
	switch {
	case n >= 1000000 && n%1000000 == 0:
		return string(rune('0'+n/1000000)) + "M"
	case n >= 1000 && n%1000 == 0:
		return itoa(n/1000) + "k"
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func TestGeneratedLogsRead(t *testing.T) {
	t.Parallel()
	files := genLogs(2000, 4, 7)
	d := NewDecoder()
	bld := history.NewBuilder()
	for i, f := range files {
		if err := d.Decode(bytes.NewReader(f), "T"+itoa(i)+".log", bld); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Finish(bld); err != nil {
		t.Fatal(err)
	}
	h, err := bld.Build()
	if err != nil || len(h.Txns) != 2000 {
		t.Fatalf("generated history: %d txns, %v", len(h.Txns), err)
	}
}
