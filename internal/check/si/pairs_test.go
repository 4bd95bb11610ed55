package si

import (
	"context"
	"testing"

	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/histtest"
)

// TestPairsLeftOut: addPairs leaves out the pairs no witness needs, and only those.
func TestPairsLeftOut(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src      string
		session        bool
		ww, sink, free int
	}{
		// Without session order every blind writer nobody reads is a sink: T2, T3.
		{"sinks", "init 0; s1: T1 w(x,1); T2 w(x,2); s2: T3 w(x,3); T4 r(x,1)", false, 0, 3, 0},
		// With it, T3 ends its session and is a sink, and so is T2, whose only way on is T3.
		// T1 and T4 are read: their pair stays.
		{"sink-chain", "init 0; s1: T1 w(x,1); T5 r(x,1); s2: T2 w(x,2); T3 w(x,3); s3: T4 w(x,4); r(x,4)", true, 1, 5, 0},
		// A and C precede readers in their sessions (no sinks) but nobody reads their x and
		// they read nothing: free on x, no pair. E is read: its pairs stay.
		{"free", "init 0; s1: A w(x,1); B r(y,0); s2: C w(x,2); D r(y,0); s3: E w(x,3); F r(x,3)", true, 2, 0, 1},
		// T2 reads y: neither free nor a sink, although nobody reads its x.
		{"reader", "init 0; s1: T1 w(x,1); r(z,0); s2: T2 r(y,0) w(x,2); s3: T3 w(x,3); r(z,0)", true, 2, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := histtest.MustParse(tc.src)
			d, err := deps.BuildContext(context.Background(), h, deps.Options{Session: tc.session})
			if err != nil {
				t.Fatal(err)
			}
			m := build(d)
			if len(m.ww) != tc.ww || m.sinkPairs != tc.sink || m.freePairs != tc.free {
				t.Errorf("ww %d, sink pairs %d, free pairs %d; want %d, %d, %d", len(m.ww), m.sinkPairs, m.freePairs, tc.ww, tc.sink, tc.free)
			}
		})
	}
}

// TestClockReasons: every known edge the clocks' decisions added without a reason
// (joinDecided) has one clockReason recovers, on random strong-session histories.
func TestClockReasons(t *testing.T) {
	t.Parallel()
	checked, edges := 0, 0
	for seed := uint64(0); seed < 400; seed++ {
		h := histtest.Gen(seed, histtest.GenOptions{Txns: 30, Sessions: 4, Keys: 3, OpsPerTxn: 2, Concurrency: 3})
		d, err := deps.BuildContext(context.Background(), h, deps.Options{Session: true})
		if err != nil || len(d.Findings) > 0 {
			continue
		}
		m := buildBase(d)
		ck, err := m.clockPrune(context.Background(), h)
		if err != nil {
			t.Fatal(err)
		}
		if ck == nil {
			continue
		}
		checked++
		if err := m.addPairs(context.Background(), ck); err != nil {
			t.Fatal(err)
		}
		for u := range int32(m.nn) {
			for _, v := range m.depOut[u] {
				if _, ok := m.why[ekey{u, v, kDep}]; !ok {
					edges++
					if _, ok := m.clockReason(u, v, kDep); !ok {
						t.Fatalf("seed %d: no reason for %d -> %d", seed, u, v)
					}
				}
			}
			for _, v := range m.rwOut[u] {
				if _, ok := m.why[ekey{u, v, kRW}]; !ok {
					edges++
					if _, ok := m.clockReason(u, v, kRW); !ok {
						t.Fatalf("seed %d: no reason for %d -rw-> %d", seed, u, v)
					}
				}
			}
		}
	}
	t.Logf("%d histories, %d edges", checked, edges)
	if checked == 0 || edges == 0 {
		t.Fatal("no history exercised the clocks")
	}
}
