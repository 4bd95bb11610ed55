package ts_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/check/ts"
	"github.com/isovet/isovet/internal/histtest"
)

// TestUnknownOutcomes: a transaction of unknown outcome ("?") is taken as committed when a
// committed read saw what only it wrote, and as not committed otherwise; a failure that
// rests on a choice the history does not force (a value another writer gave too, a forced
// writer without timestamps) is Unknown, never a violation.
func TestUnknownOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src string
		want      check.Verdict
		note      string // a note the report must hold
	}{
		{"read of an unknown writer", "init 0\ns1: U ts[1,2] w(x,1) ?\ns2: R ts[3,4] r(x,1)",
			check.Pass, "taken as committed"},
		{"unread unknown writer", "init 0\ns1: W ts[1,2] w(x,1)\ns2: U ts[3,4] w(x,2) ?\ns3: R ts[5,6] r(x,1)",
			check.Pass, ""},
		{"chain of unknown writers", "init 0\ns1: U1 ts[1,2] w(x,1) ?\ns2: U2 ts[3,4] r(x,1) w(y,1) ?\ns3: R ts[5,6] r(y,1)",
			check.Pass, "2 transactions of unknown outcome were taken as committed"},
		{"forced writer read stale", "init 0\ns1: W ts[1,2] w(x,1)\ns2: U ts[3,4] r(x,0) w(y,1) ?\ns3: R ts[5,6] r(y,1)",
			check.Fail, "taken as committed"},
		{"aborted writer", "init 0\ns1: A ts[1,2] w(x,1) abort\ns2: R ts[3,4] r(x,1)",
			check.Fail, ""},
		{"value given twice", "init 0\ns1: U ts[1,2] w(x,1) ?\ns2: R ts[3,4] r(x,1)\ns3: W ts[5,6] w(x,1)",
			check.Unknown, "other writers (or the initial state) gave too"},
		{"list append of an unknown writer", "s1: U ts[1,2] a(l,1) ?\ns2: R ts[3,4] r(l,[1])",
			check.Pass, "taken as committed"},
	}
	for _, tt := range tests {
		h := histtest.MustParse(tt.src)
		rep, err := check.Check(context.Background(), h, check.SnapshotIsolation, check.Options{Method: check.MethodTimestamp})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if rep.Verdict != tt.want {
			t.Errorf("%s: %s, want %s; anomalies %v, notes %q", tt.name, rep.Verdict, tt.want, rep.Anomalies, rep.Notes)
		}
		if tt.note != "" && !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, tt.note) }) {
			t.Errorf("%s: no note %q in %q", tt.name, tt.note, rep.Notes)
		}
	}
}

// TestUnknownOutcomesOracle: on random timestamped histories with transactions of unknown
// outcome, the timestamp checker's verdict agrees with a brute force over their outcomes:
// every subset of them taken as committed (the rest as not), each replayed by ts.Run. It
// passes only if some subset passes (the subset it chose), fails only if none does, and
// Unknown is counted (the duplicated values the generator writes make some).
func TestUnknownOutcomesOracle(t *testing.T) {
	t.Parallel()
	counts := map[check.Verdict]int{}
	for seed := range uint64(2000) {
		o := histtest.GenOptions{Txns: 8, Sessions: 3, Keys: 3, Concurrency: 3, Timestamps: true, UnknownRatio: 0.3, DupRatio: 0.15, ListAppend: seed%3 == 0}
		h := histtest.Gen(seed, o)
		for _, l := range []check.Level{check.SnapshotIsolation, check.Serializable, check.StrongSessionSI} {
			rep, err := check.Check(context.Background(), h, l, check.Options{Method: check.MethodTimestamp})
			if err != nil {
				t.Fatalf("seed %d %s: chronos: %v", seed, l, err)
			}
			counts[rep.Verdict]++
			some := someOutcomesPass(t, h, l)
			if rep.Verdict == check.Pass && !some || rep.Verdict == check.Fail && some {
				t.Errorf("seed %d %s: %s, but some choice of outcomes passes: %v\n%s\nnotes %q", seed, l, rep.Verdict, some, histtest.Format(h), rep.Notes)
			}
		}
	}
	t.Logf("verdicts: %v", counts)
	if counts[check.Pass] < 100 || counts[check.Fail] < 100 {
		t.Errorf("too few passes or failures to prove much: %v", counts)
	}
}

// someOutcomesPass reports whether ts.Run finds no violation of level in h with some subset
// of its transactions of unknown outcome (those with timestamps) taken as committed.
func someOutcomesPass(t *testing.T, h *history.History, level check.Level) bool {
	var unknown []int
	for i := range h.Txns {
		if h.Txns[i].Outcome == history.OutcomeUnknown && h.Txns[i].HasTimestamps {
			unknown = append(unknown, i)
		}
	}
	for mask := range 1 << len(unknown) {
		nh := *h
		nh.Txns = slices.Clone(h.Txns)
		for j, i := range unknown {
			if mask&(1<<j) != 0 {
				nh.Txns[i].Outcome = history.OutcomeCommitted
			}
		}
		res, err := ts.Run(context.Background(), &nh, level, ts.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Violations) == 0 {
			return true
		}
	}
	return false
}
