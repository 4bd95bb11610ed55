package certify

import (
	"context"
	"testing"

	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/histtest"
)

// newPath builds the strict fast path's state for a history in the test DSL, with the
// dependency analysis the checkers give it.
func newPath(t *testing.T, src string) *strictPath {
	t.Helper()
	d, err := deps.Build(histtest.MustParse(src), deps.Options{Session: true, Realtime: true, NoEdges: true})
	if err != nil {
		t.Fatal(err)
	}
	return &strictPath{ctx: context.Background(), d: d}
}

// TestStrictPathPhases runs the strict fast path's phases one at a time on a history of two
// overlapping writers of x and a later reader of the second: each phase's result is checked
// on its own, and the order the phases build is replayed.
func TestStrictPathPhases(t *testing.T) {
	s := newPath(t, "init 0\ns1: W1 @[0,10] w(x,1)\ns2: W2 @[5,15] w(x,2)\ns3: R @[20,30] r(x,2)")
	if !s.index() {
		t.Fatalf("index declined: %s", s.fs.Why)
	}
	if len(s.txn) != 3 || s.begin[0] > s.begin[1] || s.begin[1] > s.begin[2] {
		t.Fatalf("index: dense ids %v, begins %v: want three, by begin", s.txn, s.begin)
	}
	s.writersByKey()
	x := s.d.H.Txns[s.txn[0]].Ops[0].Key
	if ws := s.wAll[s.wOff[x]:s.wOff[x+1]]; len(ws) != 2 || ws[0] != 0 || ws[1] != 1 {
		t.Fatalf("writersByKey: writers of x %v, want [0 1] (W1, W2 by begin)", ws)
	}
	s.choices()
	if len(s.pairs) != 1 || s.pairs[0].a != 0 || s.pairs[0].b != 1 || s.pairs[0].fixed {
		t.Fatalf("choices: %+v, want one open choice between the overlapping writers", s.pairs)
	}
	if !s.knownEdges() || !s.close() {
		t.Fatalf("known edges or closure declined: %s", s.fs.Why)
	}
	if !s.c.Reach(1, 2) {
		t.Errorf("closure: W2 does not reach R, which read its write")
	}
	if !s.prune([]int32{0}, maxPrunePasses) {
		t.Fatalf("prune declined: %s", s.fs.Why)
	}
	// W2 before W1 would have R read W1's overwrite of W2: only W1 before W2 is left.
	if !s.pairs[0].fixed || !s.c.Reach(0, 1) {
		t.Errorf("prune: the choice is not fixed to W1 before W2: %+v", s.pairs[0])
	}
	if !s.greedy() || !s.chooseReads() {
		t.Fatalf("greedy or read choices declined: %s", s.fs.Why)
	}
	if !s.certify() {
		t.Errorf("certify: the order does not replay: %s", s.fs.Why)
	}
}

// TestStrictPathDeclines: on histories that are not strict serializable the phase that sees
// it declines, saying why, and the whole path does not pass.
func TestStrictPathDeclines(t *testing.T) {
	for _, tt := range []struct{ name, src string }{
		{"stale read", "init 0\ns1: W @[0,10] w(x,1)\ns2: R @[20,30] r(x,0)"},
		{"read from the future", "init 0\ns1: R @[0,10] r(x,1)\ns2: W @[20,30] w(x,1)"},
		{"lost update", "init 0\ns1: A @[0,10] r(x,0) w(x,1)\ns2: B @[5,15] r(x,0) w(x,2)"},
	} {
		s := newPath(t, tt.src)
		ok, err := s.run()
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if ok || s.fs.Why == "" {
			t.Errorf("%s: passed %v, why %q: want a decline with a reason", tt.name, ok, s.fs.Why)
		}
	}
}
