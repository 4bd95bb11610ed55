package vbox

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/corpus"
	"github.com/isovet/isovet/internal/cputime"
)

// genLogs returns n transactions of a seeded workload as Vbox logs of the given number of
// sessions: each transaction reads two rows (the initial version or an earlier write) and
// writes two; one in ten aborts.
func genLogs(n, sessions int, seed uint64) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 2))
	logs := make([]*logw, sessions)
	for i := range logs {
		logs[i] = new(logw)
	}
	type w struct {
		tid, oid uint32
		key      uint64
	}
	var writes []w
	oid := uint32(1)
	for tid := uint32(1); tid <= uint32(n); tid++ {
		l := logs[int(tid)%sessions]
		l.T(tid).S(oid)
		oid++
		for range 2 {
			if len(writes) == 0 || rng.IntN(4) == 0 {
				l.R(oid, rng.Uint64N(10000), 0, 0)
			} else {
				x := writes[len(writes)-1-rng.IntN(min(len(writes), 1000))]
				l.R(oid, x.key, x.tid, x.oid)
			}
			oid++
		}
		for range 2 {
			k := rng.Uint64N(10000)
			l.W(oid, k, 0x50208e526f506080, rng.Uint32())
			writes = append(writes, w{tid, oid, k})
			oid++
		}
		if rng.IntN(10) == 0 {
			l.A(oid)
		} else {
			l.C(oid)
		}
		oid++
	}
	out := make([][]byte, sessions)
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
			if err := d.Decode(bytes.NewReader(f), strconv.Itoa(i)+".log", bld); err != nil {
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
		b.Run("txns="+strconv.Itoa(n), func(b *testing.B) {
			benchFiles(b, genLogs(n, 24, 1))
		})
	}
}

func BenchmarkReadShared(b *testing.B) {
	for _, dir := range []string{"bench/vbox/blindw_wr_100000", "bench/vbox/blindw_pred_1000", "bench/vbox/ctwitter_10000"} {
		b.Run(filepath.Base(dir), func(b *testing.B) {
			names, _ := filepath.Glob(filepath.Join(corpus.Path(b, dir), "*.log"))
			num := func(p string) int { n, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(p), ".log")); return n }
			slices.SortFunc(names, func(x, y string) int { return num(x) - num(y) })
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

func TestGeneratedLogsRead(t *testing.T) {
	t.Parallel()
	files := genLogs(2000, 4, 7)
	d := &Decoder{Strict: true}
	bld := history.NewBuilder()
	for i, f := range files {
		if err := d.Decode(bytes.NewReader(f), strconv.Itoa(i)+".log", bld); err != nil {
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
