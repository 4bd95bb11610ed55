package ser

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/polygraph"
	"github.com/isovet/isovet/internal/sat"
	"github.com/isovet/isovet/internal/sat/acyclic"
)

func TestProfPrune(t *testing.T) {
	path := os.Getenv("ISOVET_PROF")
	if path == "" {
		t.Skip()
	}
	h, _, err := format.Open(sharedPath(t, path), format.Auto, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	info := anomaly.StrongSessionSerializable.Info()
	if os.Getenv("ISOVET_STRICT") != "" {
		info = anomaly.StrictSerializable.Info()
	}
	t0 := time.Now()
	d, err := deps.Build(h, deps.Options{Session: info.Session, Realtime: info.Realtime})
	if err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	p := polygraph.Build(d)
	t2 := time.Now()
	v, err := p.Prune(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t3 := time.Now()
	ww, wr := p.Remaining()
	t.Logf("deps %v build %v prune %v passes %d viol %v remaining ww %d wr %d known %d nodes %d WW %d WR %d", t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), p.Passes, v != nil, ww, wr, p.G.M(), p.G.N(), len(p.WW), len(p.WR))
	en, err := p.Encode(context.Background(), polygraph.EncodeOptions{Theory: acyclic.Options{Propagate: os.Getenv("ISOVET_TPROP") != ""}, Solver: sat.Options{Restart: sat.RestartPolicy(len(os.Getenv("ISOVET_GLUCOSE")) % 2)}})
	if err != nil {
		t.Fatal(err)
	}
	t4 := time.Now()
	st, err := en.Solve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("encode %v solve %v %v %+v", t4.Sub(t3), time.Since(t4), st, en.S.Stats())
}
