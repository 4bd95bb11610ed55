package check_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/internal/histtest"
)

// TestImpliedByStronger: three transactions of one session write x=12 twice and read 12.
// The causal checker cannot tell which write the read saw (and which choice closes no
// cycle); strong-session snapshot isolation, which implies causal consistency, searches
// every choice and passes, so causal passes, saying how. The timestamp-free history has no
// other route.
func TestImpliedByStronger(t *testing.T) {
	h := histtest.MustParse("init 0\ns1: T1 w(x,12)\ns1: T2 w(x,12)\ns1: T3 r(x,12)")
	for _, level := range []check.Level{check.ReadCommitted, check.ReadAtomic, check.Causal} {
		rep, err := check.Check(context.Background(), h, level, check.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Proved() || rep.Level != level {
			t.Errorf("%s: %s (level %s), notes %q", level, rep.Verdict, rep.Level, rep.Notes)
		}
	}
	rep, err := check.Check(context.Background(), h, check.Causal, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "which implies causal") }) {
		t.Logf("causal decided directly: %q", rep.Notes)
	}
}

// TestImplicationNeverContradicts: on random histories with repeated values and unknown
// outcomes, deciding a weak level through a stronger one never contradicts a decision at
// another level: a pass at a level means a pass at every level it implies that decides, and
// a failure at a level means a failure at every level that implies it. It counts the weak
// levels' Unknowns, which implication exists to remove.
func TestImplicationNeverContradicts(t *testing.T) {
	t.Parallel()
	levels := []check.Level{check.ReadCommitted, check.ReadAtomic, check.Causal, check.SnapshotIsolation, check.StrongSessionSI, check.Serializable, check.StrongSessionSerializable}
	unknown := 0
	for seed := range uint64(300) {
		o := histtest.GenOptions{Txns: 8, Sessions: 3, Keys: 2, Concurrency: 3, DupRatio: 0.4, UnknownRatio: 0.15, ListAppend: seed%4 == 0}
		h := histtest.Gen(seed, o)
		got := map[check.Level]check.Verdict{}
		for _, l := range levels {
			rep, err := check.Check(context.Background(), h, l, check.Options{})
			if err != nil {
				t.Fatalf("seed %d %s: %v", seed, l, err)
			}
			got[l] = rep.Verdict
			if rep.Verdict == check.Unknown && (l == check.ReadCommitted || l == check.ReadAtomic || l == check.Causal) {
				unknown++
			}
		}
		for _, a := range levels {
			for _, b := range levels {
				if a != b && a.Implies(b) && got[a] == check.Pass && got[b] == check.Fail {
					t.Errorf("seed %d: %s passes but %s, which it implies, fails\n%s", seed, a, b, histtest.Format(h))
				}
			}
		}
	}
	t.Logf("weak-level Unknowns: %d of %d", unknown, 3*300)
}
