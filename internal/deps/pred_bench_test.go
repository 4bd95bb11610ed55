package deps_test

import (
	"context"
	"os"
	"runtime"
	"testing"

	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/internal/cputime"
	"github.com/isovet/isovet/internal/deps"
)

// BenchmarkBuildFile measures deps.Build on the history file named by ISOVET_DEPS_FILE (for
// example a BlindW-Pred history from isovet run), with the options of the strict fast path,
// of the strict level with edges, and the defaults (ISOVET_DEPS_OPTS=fast, strict or default
// picks one). It reports CPU time per Build (all threads, user and system: on a shared
// machine the fairer figure) and the reads made. Without the variable it is skipped: the
// generated benchmarks of the checkers cover the same code on synthetic histories.
func BenchmarkBuildFile(b *testing.B) {
	p := os.Getenv("ISOVET_DEPS_FILE")
	if p == "" {
		b.Skip("ISOVET_DEPS_FILE is not set")
	}
	h, _, err := format.Open(p, format.Auto, format.Options{})
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	for _, c := range []struct {
		name string
		o    deps.Options
	}{
		{"fast", deps.Options{Realtime: true, Session: true, NoEdges: true}},
		{"strict", deps.Options{Realtime: true, Session: true}},
		{"default", deps.Options{}},
	} {
		if only := os.Getenv("ISOVET_DEPS_OPTS"); only != "" && only != c.name {
			continue
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := int64(cputime.Self())
			for b.Loop() {
				d, err := deps.BuildContext(context.Background(), h, c.o)
				if err != nil {
					b.Log(err) // ErrUnsupported (verdict unknown) is a result worth timing
					continue
				}
				b.ReportMetric(float64(len(d.Reads)), "reads")
			}
			b.ReportMetric(float64(int64(cputime.Self())-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
