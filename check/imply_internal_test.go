package check

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/internal/check/weak"
	"github.com/isovet/isovet/internal/histtest"
)

// TestFailedThroughWeaker: a check of read atomic, causal, serializability or snapshot isolation left Unknown (here
// given as such) fails when a weak level it implies fails: T2's read of T1's aborted write
// is an aborted read at read committed, which every stronger level forbids. The report is
// labelled with the level asked and says why; the methods that answer for one checker
// (timestamp, basic) and checks made through implication do not go on.
func TestFailedThroughWeaker(t *testing.T) {
	h := histtest.MustParse("init 0\ns1: T1 w(x,1) abort\ns2: T2 r(x,1)")
	for _, level := range []Level{ReadAtomic, Causal, Serializable, StrongSessionSerializable, SnapshotIsolation, StrongSessionSI} {
		unknown := &Report{Level: level, Verdict: Unknown, Notes: []string{"undecided"}}
		rep, err := byImplication(context.Background(), h, level, Options{}, unknown)
		if err != nil || rep.Verdict != Fail || rep.Level != level || len(rep.Anomalies) == 0 {
			t.Errorf("%s: %s at %s with %d anomalies", level, rep.Verdict, rep.Level, len(rep.Anomalies))
			continue
		}
		if !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "which "+level.String()+" implies, fails") }) {
			t.Errorf("%s: the report does not say why: %q", level, rep.Notes)
		}
		for _, o := range []Options{{Method: MethodTimestamp}, {Method: MethodBasic}, {implied: true}} {
			u := &Report{Level: level, Verdict: Unknown}
			if r, _ := byImplication(context.Background(), h, level, o, u); r.Verdict != Unknown {
				t.Errorf("%s with %+v: %s, want it left Unknown", level, o, r.Verdict)
			}
		}
	}
}

// TestStrongerForImplies: every level tried to pass a weak level implies it, and every weak
// level tried to fail a stronger one is implied by it.
func TestStrongerForImplies(t *testing.T) {
	for weak, ss := range strongerFor {
		for _, s := range ss {
			if !s.Implies(weak) || s == weak {
				t.Errorf("%s is tried to pass %s but does not imply it", s, weak)
			}
		}
	}
}

// TestBoundedSearchRunsAgain: check.Check first bounds the weak checker's search over
// choices of writers, so that a stronger level may decide a large history sooner; when none
// does, the weak checker searches again without the bound. With a bound of one conflict,
// some random histories with repeated values stop the first search; every one of them is
// decided all the same.
func TestBoundedSearchRunsAgain(t *testing.T) {
	defer func(old int64) { firstSearchConflicts = old }(firstSearchConflicts)
	firstSearchConflicts = 1
	stopped, again := 0, 0
	for seed := range uint64(3000) {
		o := histtest.GenOptions{Txns: 4 + int(seed%3), Sessions: 2, Keys: 2, OpsPerTxn: 2, Concurrency: 1 + int(seed%3), DupRatio: 0.4, Perturb: 0.3}
		h := histtest.Gen(seed, o)
		for _, level := range []Level{ReadCommitted, ReadAtomic, Causal} {
			first, err := weak.Check(context.Background(), h, level, weak.Options{SearchConflicts: 1})
			if err != nil {
				t.Fatal(err)
			}
			if !first.StoppedOnly() {
				continue
			}
			stopped++
			rep, err := Check(context.Background(), h, level, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict == Unknown {
				t.Fatalf("seed %d at %s: unknown after the bounded search stopped; %v", seed, level, rep.Notes)
			}
			if rep.Checker == "weak" {
				again++ // neither a stronger level nor a weaker one decided it
			}
		}
	}
	t.Logf("%d bounded searches stopped, %d decided by the search run again", stopped, again)
	if again == 0 {
		t.Error("no search ran again: the test tests nothing")
	}
}
