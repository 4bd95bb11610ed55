package si

import (
	"context"
	"slices"
	"testing"

	"isovet/internal/deps"
	"isovet/internal/histtest"
)

// TestPruneWorkGraph: pruning with the reduced working graph of later passes decides exactly
// what pruning on the whole known split graph decides, on random histories with duplicate
// values, at the three levels.
func TestPruneWorkGraph(t *testing.T) {
	used := 0
	for seed := range uint64(400) {
		o := histtest.GenOptions{Txns: 12 + int(seed%30), Sessions: 2 + int(seed%4), Keys: 2 + int(seed%5), Concurrency: int(seed % 4), DupRatio: 0.3}
		h := histtest.Gen(seed, o)
		do := deps.Options{Session: seed%3 != 0, Realtime: seed%3 == 2 && h.HasTime()}
		run := func(limit int) (*model, *violation) {
			saved := maxWorkTerminals
			maxWorkTerminals = limit
			defer func() { maxWorkTerminals = saved }()
			d, err := deps.Build(h, do)
			if err != nil {
				t.Fatal(err)
			}
			m := build(d)
			v, err := m.prune(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return m, v
		}
		mw, vw := run(1 << 20)
		mf, vf := run(0)
		used += mw.workBuilds
		if (vw == nil) != (vf == nil) {
			t.Fatalf("seed %d: violation with working graph %v, without %v", seed, vw != nil, vf != nil)
		}
		if vw != nil {
			continue
		}
		for i := range mw.ww {
			if mw.ww[i].fixed != mf.ww[i].fixed {
				t.Fatalf("seed %d: WW %d fixed %d with working graph, %d without", seed, i, mw.ww[i].fixed, mf.ww[i].fixed)
			}
		}
		for i := range mw.wr {
			if !slices.Equal(mw.wr[i].cands, mf.wr[i].cands) {
				t.Fatalf("seed %d: WR %d candidates %v with working graph, %v without", seed, i, mw.wr[i].cands, mf.wr[i].cands)
			}
		}
	}
	if used < 20 {
		t.Errorf("the working graph was built only %d times", used)
	}
}
