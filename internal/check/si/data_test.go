package si_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/check/si"
	"github.com/isovet/isovet/internal/corpus"
	"github.com/isovet/isovet/internal/cputime"
	"github.com/isovet/isovet/internal/report"
	"github.com/isovet/isovet/internal/sat/acyclic"
)

func open(t testing.TB, rel string) *history.History {
	t.Helper()
	path := corpus.Path(t, rel)
	h, _, err := format.Open(path, format.Auto, format.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	return h
}

// runFile checks one history, logging wall and CPU time, memory and statistics.
func runFile(t testing.TB, rel string, level anomaly.Level) *report.Report {
	t.Helper()
	h := open(t, rel)
	runtime.GC()
	cpu0 := cputime.Self()
	start := time.Now()
	rep, err := si.Check(context.Background(), h, level, si.Options{Now: time.Now, Theory: acyclic.Options{Propagate: os.Getenv("ISOVET_TPROP") != ""}})
	wall := time.Since(start)
	cpu := cputime.Self() - cpu0
	if err != nil {
		t.Fatalf("Check(%s, %s): %v", rel, level, err)
	}
	var ph []string
	for _, p := range rep.Stats.Phases {
		ph = append(ph, fmt.Sprintf("%s=%v", p.Name, p.Elapsed.Round(time.Millisecond)))
	}
	t.Logf("%s %s: %v in %v wall, %v cpu, max rss %d MB (txns %d, constraints %d, pruned %d, sat vars %d, conflicts %d; %s)",
		rel, level, rep.Verdict, wall.Round(time.Millisecond), cpu.Round(time.Millisecond), cputime.PeakRSS()>>20, rep.Stats.Txns, rep.Stats.Constraints,
		rep.Stats.PrunedConstraints, rep.Stats.SATVars, rep.Stats.Conflicts, strings.Join(ph, " "))
	return rep
}

func logAnomaly(t testing.TB, a report.Anomaly) {
	t.Helper()
	t.Logf("%s (also %v), txns %v: %s", a.Kind, a.Also, a.Txns, a.Message)
	for _, r := range a.RuledOut {
		t.Logf("  ruled out: %s", r)
	}
}

// TestPolySIViolations: the three violations PolySI found are rejected at strong-session
// SI and named as the paper names them.
func TestPolySIViolations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rel  string
		want anomaly.Kind
	}{
		{"polysi/violations/galera/galera.txt", anomaly.LostUpdate},
		{"polysi/violations/yugabyte/yugabyte.txt", anomaly.CausalityViolation},
		{"polysi/violations/dgraph/history.bincode", anomaly.CausalityViolation},
	} {
		t.Run(filepath.Base(filepath.Dir(tc.rel)), func(t *testing.T) {
			t.Parallel()
			rep := runFile(t, tc.rel, anomaly.StrongSessionSI)
			if rep.Verdict != report.Fail || len(rep.Anomalies) == 0 {
				t.Fatalf("Check(%s) = %v, want fail", tc.rel, rep.Verdict)
			}
			a := rep.Anomalies[0]
			logAnomaly(t, a)
			if a.Kind != tc.want {
				t.Errorf("Check(%s) kind = %v (also %v), want %v", tc.rel, a.Kind, a.Also, tc.want)
			}
		})
	}
}

// TestElleSIWithoutGSingle: Elle's si-without-g-single passes snapshot isolation and fails
// serializability.
func TestElleSIWithoutGSingle(t *testing.T) {
	t.Parallel()
	const rel = "elle/elle/si-without-g-single.edn"
	h := open(t, rel)
	ctx := context.Background()
	for _, tc := range []struct {
		level anomaly.Level
		want  report.Verdict
	}{{anomaly.SnapshotIsolation, report.Pass}, {anomaly.Serializable, report.Fail}} {
		rep, err := check.Check(ctx, h, tc.level, check.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Verdict != tc.want {
			t.Errorf("check.Check(%s, %s) = %v, want %v: %+v", rel, tc.level, rep.Verdict, tc.want, rep.Anomalies)
		}
	}
}

// benchFiles are the shared benchmark histories.
var benchFiles = []string{
	"bench/veristrong-10k/RH-10k/hist-00000/history.bincode", "bench/veristrong-10k/BL-10k/hist-00000/history.bincode",
	"bench/veristrong-10k/WH-10k/hist-00000/history.bincode", "bench/veristrong-10k/HD-10k/hist-00000/history.bincode",
	"bench/veristrong-10k/rubis-10k", "bench/veristrong-10k/tpcc-10k", "bench/veristrong-10k/twitter-10k",
	"bench/vbox/blindw_rh_10000", "bench/vbox/blindw_wh_10000", "bench/vbox/blindw_wr_10000", "bench/vbox/ctwitter_10000",
	"bench/vbox/blindw_pred_100", "bench/vbox/blindw_pred_1000", "bench/vbox/blindw_wr_100000",
}

// TestBenchHistories checks every shared benchmark history at strong-session SI, the level
// PolySI and VeriStrong call SI (they take seconds each, so -short skips them; CI runs
// without -short; ISOVET_SI_PLAIN=1 adds plain snapshot isolation). They are valid histories:
// none may fail.
func TestBenchHistories(t *testing.T) {
	if testing.Short() {
		t.Skip("large histories: skipped with -short")
	}
	for _, rel := range benchFiles {
		levels := []anomaly.Level{anomaly.StrongSessionSI}
		if strings.Contains(rel, "vbox") && benchName(rel) != "blindw_pred_1000" {
			// Vbox's histories carry client intervals (all but blindw_pred_1000's); Vbox checks
			// them with real time.
			levels = []anomaly.Level{anomaly.StrongSI}
		}
		if os.Getenv("ISOVET_SI_PLAIN") != "" {
			levels = append(levels, anomaly.SnapshotIsolation)
		}
		for _, level := range levels {
			t.Run(benchName(rel)+"/"+level.String(), func(t *testing.T) {
				if f := os.Getenv("ISOVET_ONLY"); f != "" && !slices.Contains(strings.Split(f, ","), benchName(rel)) {
					t.Skip("not selected")
				}
				rep := runFile(t, rel, level)
				if benchName(rel) == "blindw_pred_1000" {
					// It mixes the logs of two runs whose transaction ids overlap: 26,267
					// reads name writers no file holds (placeholders), and the reads naming
					// the ids of aborted logged transactions ended before those began, so
					// they are no aborted reads (format/vbox). It must not pass.
					if rep.Verdict == report.Pass {
						t.Errorf("Check(%s, %s) = pass on a history with placeholder writers", rel, level)
					}
					return
				}
				if benchName(rel) == "blindw_pred_100" && rep.Verdict != report.Pass {
					// Its partial row images leave predicate evaluations open for the SI
					// analysis; the strict serializability certificate decides them by
					// replaying its serial order on whole rows (the MANIFEST: serializable).
					t.Errorf("Check(%s, %s) = %v, want pass on the strict serializability certificate; notes %q", rel, level, rep.Verdict, rep.Notes)
				}
				if rep.Verdict == report.Fail {
					logAnomaly(t, rep.Anomalies[0])
					t.Errorf("Check(%s, %s) = fail on a benchmark history", rel, level)
				}
			})
		}
	}
}

// benchName is the benchmark's name: its directory under bench/<suite>/.
func benchName(rel string) string { return strings.Split(rel, "/")[2] }
