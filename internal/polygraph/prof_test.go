package polygraph_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/internal/corpus"
	"github.com/isovet/isovet/internal/cputime"
	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/polygraph"
	"github.com/isovet/isovet/internal/sat"
	"github.com/isovet/isovet/internal/sat/acyclic"
)

// TestProfile runs the pipeline stages on ISOVET_PROF (an absolute path, or one in the
// public corpora) and logs each stage's time and CPU time and the solver's and theory's
// counters; ISOVET_STRICT=1 adds real time, ISOVET_PLAIN=1 drops session order,
// ISOVET_SOLVE_TIMEOUT bounds the solver's wall time. Skipped without ISOVET_PROF.
func TestProfile(t *testing.T) {
	path := os.Getenv("ISOVET_PROF")
	if path == "" {
		t.Skip("set ISOVET_PROF to a history (absolute, or relative to the public corpora)")
	}
	if !filepath.IsAbs(path) {
		path = corpus.Path(t, path)
	}
	h, _, err := format.Open(path, format.Auto, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := deps.Options{Session: os.Getenv("ISOVET_PLAIN") == "", Realtime: os.Getenv("ISOVET_STRICT") != ""}
	t0 := time.Now()
	d, err := deps.Build(h, o)
	if err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	cb := cputime.Self()
	p := polygraph.Build(d)
	t2 := time.Now()
	c0 := cputime.Self()
	v, err := p.Prune(context.Background())
	t.Logf("build cpu %v", c0-cb)
	t.Logf("prune cpu %v", cputime.Self()-c0)
	if err != nil {
		t.Fatal(err)
	}
	t3 := time.Now()
	sinks, vers := 0, 0
	for u := range p.G.N() {
		if u < len(d.Nodes) && d.Nodes[u].Kind == deps.NodeVersion {
			vers++
			if len(p.G.Out(int32(u))) == 0 {
				sinks++
			}
		}
	}
	t.Logf("version nodes %d, %d without successors", vers, sinks)
	{
		seen := make([]int32, p.G.N())
		dup, out1, toVer := 0, 0, 0
		for u := range p.G.N() {
			for _, v := range p.G.Out(int32(u)) {
				if seen[v] == int32(u)+1 {
					dup++
				}
				seen[v] = int32(u) + 1
				if int(v) < len(d.Nodes) && d.Nodes[v].Kind == deps.NodeVersion {
					toVer++
				}
			}
			if u < len(d.Nodes) && d.Nodes[u].Kind == deps.NodeVersion && len(p.G.Out(int32(u))) == 1 {
				out1++
			}
		}
		t.Logf("edges %d, duplicates %d, into version nodes %d; version nodes with one successor %d", p.G.M(), dup, toVer, out1)
	}
	ww, wr := p.Remaining()
	t.Logf("deps %v build %v prune %v passes %d viol %v remaining ww %d wr %d known %d nodes %d WW %d WR %d", t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), p.Passes, v != nil, ww, wr, p.G.M(), p.G.N(), len(p.WW), len(p.WR))
	if v != nil || ww+wr == 0 {
		return
	}
	c0 = cputime.Self()
	en, err := p.Encode(context.Background(), polygraph.EncodeOptions{Theory: acyclic.Options{Propagate: os.Getenv("ISOVET_TPROP") != ""}, Solver: sat.Options{Restart: sat.RestartPolicy(len(os.Getenv("ISOVET_GLUCOSE")) % 2), RestartBase: atoi(os.Getenv("ISOVET_RBASE")), ChronoLimit: atoi(os.Getenv("ISOVET_CHRONO"))}})
	if err != nil {
		t.Fatal(err)
	}
	t4 := time.Now()
	t.Logf("encode cpu %v", cputime.Self()-c0)
	if f := os.Getenv("ISOVET_HEAP"); f != "" {
		runtime.GC()
		out, err := os.Create(f)
		if err != nil {
			t.Fatal(err)
		}
		pprof.WriteHeapProfile(out)
		out.Close()
		runtime.KeepAlive(p)
	}
	c0 = cputime.Self()
	ctx := context.Background()
	if s := os.Getenv("ISOVET_SOLVE_TIMEOUT"); s != "" {
		dl, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, dl)
		defer cancel()
	}
	st, err := en.Solve(ctx)
	t.Logf("solve cpu %v", cputime.Self()-c0)
	if err != nil && ctx.Err() == nil {
		t.Fatal(err)
	}
	t.Logf("encode %v solve %v %v %+v", t4.Sub(t3), time.Since(t4), st, en.S.Stats())
	t.Logf("theory nodes %d %+v", en.T.NumNodes(), en.T.Stats())
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
