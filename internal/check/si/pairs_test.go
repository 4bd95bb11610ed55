package si

import (
	"context"
	"testing"

	"isovet/internal/deps"
	"isovet/internal/histtest"
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
