package check_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/histtest"
)

// stream is the progress one checker gave at one level, in the order it came.
type stream struct {
	level   check.Level
	checker string
	events  []check.Progress
}

// recordProgress checks h at level with a progress callback, checks that the verdict is
// the one the same check gives without it, and returns the report and what the callback
// was given, split into one stream per checker run (a level decided through another gives
// one for each). It records without a lock: Options.Progress promises calls one at a
// time, which the race detector checks.
func recordProgress(t *testing.T, h *history.History, level check.Level, method check.Method) (*check.Report, []stream) {
	t.Helper()
	quiet, err := check.Check(context.Background(), h, level, check.Options{Method: method})
	if err != nil {
		t.Fatalf("Check(%s) = %v", level, err)
	}
	var got []check.Progress
	rep, err := check.Check(context.Background(), h, level, check.Options{Method: method, Progress: func(p check.Progress) { got = append(got, p) }})
	if err != nil {
		t.Fatalf("Check(%s) with progress = %v", level, err)
	}
	if rep.Verdict != quiet.Verdict || len(rep.Anomalies) != len(quiet.Anomalies) {
		t.Fatalf("Check(%s) = %s with %d anomalies with progress, %s with %d without", level, rep.Verdict, len(rep.Anomalies), quiet.Verdict, len(quiet.Anomalies))
	}
	var ss []stream
	for _, p := range got {
		if n := len(ss); n == 0 || ss[n-1].level != p.Level || ss[n-1].checker != p.Checker {
			ss = append(ss, stream{level: p.Level, checker: p.Checker})
		}
		ss[len(ss)-1].events = append(ss[len(ss)-1].events, p)
	}
	return rep, ss
}

// stages returns the stages s started, in order.
func (s stream) stages() []check.Stage {
	var out []check.Stage
	for i, p := range s.events {
		if !p.Ended && (i == 0 || s.events[i-1].Ended) {
			out = append(out, p.Stage)
		}
	}
	return out
}

// wellFormed reports what is wrong with s, or "": each stage starts, may be updated, and
// ends before the next starts; the last has ended; every event counts the history's txns
// transactions; the counts never go down and pruning decides no more than were built.
func (s stream) wellFormed(txns int) string {
	var open check.Stage
	var prev check.Progress
	for i, p := range s.events {
		switch {
		case p.Txns != txns:
			return fmt.Sprintf("event %d counts %d transactions, want %d", i, p.Txns, txns)
		case p.Stage == 0:
			return fmt.Sprintf("event %d has no stage", i)
		case open == 0 && p.Ended:
			return fmt.Sprintf("event %d ends %s, which had not started", i, p.Stage)
		case open != 0 && p.Stage != open:
			return fmt.Sprintf("event %d is of %s while %s is under way", i, p.Stage, open)
		case p.Conflicts < prev.Conflicts || p.Decisions < prev.Decisions || p.Tries < prev.Tries || p.Replayed < prev.Replayed:
			return fmt.Sprintf("event %d counts less than event %d: %+v after %+v", i, i-1, p, prev)
		case p.Pruned > p.Constraints:
			return fmt.Sprintf("event %d: %d of %d constraints pruned", i, p.Pruned, p.Constraints)
		}
		open = p.Stage
		if p.Ended {
			open = 0
		}
		prev = p
	}
	if open != 0 {
		return fmt.Sprintf("%s never ended", open)
	}
	return ""
}

// last is the last event of s.
func (s stream) last() check.Progress { return s.events[len(s.events)-1] }

// TestProgress checks the progress callback on a check of each checker: the stages come
// in the order of its pipeline, each started and ended, with sane counts (the solver's
// conflicts add up to the report's, pruning decides what was built, the replay reaches
// every event, the anomalies found are counted), and the verdict is the one the check
// gives without a callback.
func TestProgress(t *testing.T) {
	t.Parallel()
	small := histtest.Gen(1, histtest.GenOptions{Txns: 300, Sessions: 8, Keys: 30, OpsPerTxn: 4, Concurrency: 4, UnknownRatio: 0.05, DupRatio: 0.3})
	unique := histtest.Gen(1, histtest.GenOptions{Txns: 300, Sessions: 8, Keys: 30, OpsPerTxn: 4, Concurrency: 4, UnknownRatio: 0.05})
	skew := histtest.MustParse("init 0\ns1: T1 r(x,0) r(y,0) w(x,1)\ns2: T2 r(x,0) r(y,0) w(y,1)")
	timed := histtest.Gen(3, histtest.GenOptions{Txns: 20_000, Sessions: 8, Keys: 200, OpsPerTxn: 4, Concurrency: 4, Timestamps: true})
	tests := []struct {
		name   string
		h      *history.History
		level  check.Level
		method check.Method
		// want is the stages of each stream, in order: the checker, at the level.
		want []string
		// verdict is the check's.
		verdict check.Verdict
	}{
		{"ser", small, check.Serializable, check.MethodAuto,
			[]string{"ser at strong-session-serializable: basic checks, dependencies, constructing, pruning, solving"}, check.Pass},
		{"ser after the session level", unique, check.Serializable, check.MethodAuto,
			[]string{"ser at strong-session-serializable: basic checks, dependencies, constructing, pruning, explaining",
				"ser at serializable: basic checks, dependencies, constructing, pruning, explaining"}, check.Fail},
		{"ser write skew", skew, check.Serializable, check.MethodAuto,
			[]string{"ser at serializable: basic checks, dependencies, constructing, pruning, explaining"}, check.Fail},
		{"si", small, check.StrongSessionSI, check.MethodAuto,
			[]string{"si at strong-session-snapshot-isolation: basic checks, dependencies, constructing, pruning, solving"}, check.Pass},
		{"weak", unique, check.Causal, check.MethodAuto,
			[]string{"weak at causal: basic checks, dependencies, saturating"}, check.Pass},
		{"weak search", small, check.Causal, check.MethodAuto,
			[]string{"weak at causal: basic checks, dependencies, saturating, searching"}, check.Pass},
		{"weak read committed", skew, check.ReadCommitted, check.MethodAuto,
			[]string{"weak at read-committed: basic checks, dependencies"}, check.Pass},
		{"timestamp", timed, check.SnapshotIsolation, check.MethodTimestamp,
			[]string{"chronos at snapshot-isolation: replaying"}, check.Pass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep, ss := recordProgress(t, tt.h, tt.level, tt.method)
			if rep.Verdict != tt.verdict {
				t.Fatalf("Check(%s) = %s, want %s", tt.level, rep.Verdict, tt.verdict)
			}
			var got []string
			for _, s := range ss {
				if bad := s.wellFormed(len(tt.h.Txns)); bad != "" {
					t.Errorf("%s at %s: %s", s.checker, s.level, bad)
				}
				var names []string
				for _, st := range s.stages() {
					names = append(names, st.String())
				}
				got = append(got, fmt.Sprintf("%s at %s: %s", s.checker, s.level, strings.Join(names, ", ")))
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("progress:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			end := ss[len(ss)-1].last()
			if tt.verdict == check.Fail && (end.Anomalies == 0 || end.Anomalies > len(rep.Anomalies)) {
				t.Errorf("the last event counts %d anomalies; the report has %d", end.Anomalies, len(rep.Anomalies))
			}
			if tt.verdict == check.Pass && end.Anomalies != 0 {
				t.Errorf("the last event of a pass counts %d anomalies", end.Anomalies)
			}
		})
	}
}

// TestProgressCounts checks the counts of the long stages: the solver's conflicts reported
// during solving add up to the report's, with reports in between (every few hundred
// conflicts); construction and pruning count the constraints the report does; the replay
// reaches every event, reporting as it goes.
func TestProgressCounts(t *testing.T) {
	t.Parallel()
	small := histtest.Gen(1, histtest.GenOptions{Txns: 300, Sessions: 8, Keys: 30, OpsPerTxn: 4, Concurrency: 4, UnknownRatio: 0.05, DupRatio: 0.3})
	for _, tt := range []struct {
		name  string
		h     *history.History
		level check.Level
	}{
		{"ser", small, check.Serializable},
		{"si", small, check.StrongSessionSI},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep, ss := recordProgress(t, tt.h, tt.level, check.MethodAuto)
			s := ss[len(ss)-1]
			var during int
			var solved, pruned check.Progress
			for _, p := range s.events {
				switch {
				case p.Stage == check.StageSolving && !p.Ended && p.Conflicts > 0:
					during++
				case p.Stage == check.StageSolving && p.Ended:
					solved = p
				case p.Stage == check.StagePruning && p.Ended:
					pruned = p
				}
			}
			st := rep.Stats
			if solved.Conflicts != st.Conflicts || solved.Decisions != st.Decisions {
				t.Errorf("solving ended with %d conflicts and %d decisions; the report counts %d and %d", solved.Conflicts, solved.Decisions, st.Conflicts, st.Decisions)
			}
			if st.Conflicts >= 512 && during == 0 {
				t.Errorf("%d conflicts and no report of them while solving", st.Conflicts)
			}
			if pruned.Constraints != st.Constraints || pruned.Pruned != st.PrunedConstraints || pruned.Edges != st.KnownEdges || pruned.Constraints == 0 {
				t.Errorf("pruning ended with %d constraints, %d pruned, %d edges; the report counts %d, %d, %d", pruned.Constraints, pruned.Pruned, pruned.Edges, st.Constraints, st.PrunedConstraints, st.KnownEdges)
			}
		})
	}
	t.Run("timestamp", func(t *testing.T) {
		t.Parallel()
		h := histtest.Gen(3, histtest.GenOptions{Txns: 20_000, Sessions: 8, Keys: 200, OpsPerTxn: 4, Concurrency: 4, Timestamps: true})
		_, ss := recordProgress(t, h, check.SnapshotIsolation, check.MethodTimestamp)
		s := ss[0]
		end := s.last()
		if end.Events == 0 || end.Replayed != end.Events {
			t.Errorf("the replay ended at %d of %d events", end.Replayed, end.Events)
		}
		if len(s.events) < 2+end.Events/4096 {
			t.Errorf("%d progress events for %d events replayed: want one every 4,096", len(s.events), end.Events)
		}
	})
}
