package ser

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/internal/corpus"
	"github.com/isovet/isovet/internal/cputime"
	"github.com/isovet/isovet/internal/report"
)

// sharedPath returns the slash-separated path elem, joined, in the public corpora, or skips
// t (fails it under ISOVET_REQUIRE_DATA=1) when it is missing.
func sharedPath(t testing.TB, elem ...string) string {
	t.Helper()
	return corpus.Path(t, path.Join(elem...))
}

// runFile loads one history and checks it, logging time and heap.
func runFile(t testing.TB, path string, level anomaly.Level) *report.Report {
	t.Helper()
	return runFileWith(t, path, level, Options{})
}

// runFileWith is runFile with options (Now is set).
func runFileWith(t testing.TB, path string, level anomaly.Level, o Options) *report.Report {
	t.Helper()
	h, _, err := format.Open(path, format.Auto, format.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	runtime.GC()
	cpu0 := cputime.Self()
	start := time.Now()
	o.Now = time.Now
	rep, err := Check(context.Background(), h, level, o)
	cpu := cputime.Self() - cpu0
	if err != nil {
		t.Fatalf("Check(%s, %s): %v", path, level, err)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var ph []string
	for _, p := range rep.Stats.Phases {
		ph = append(ph, fmt.Sprintf("%s=%v", p.Name, p.Elapsed.Round(time.Millisecond)))
	}
	t.Logf("%s %s: %v in %v wall, %v cpu, max rss %d MB (txns %d, constraints %d, pruned %d, sat vars %d, conflicts %d; %s; heap sys %d MB)",
		filepath.Base(path), level, rep.Verdict, time.Since(start).Round(time.Millisecond), cpu.Round(time.Millisecond), cputime.PeakRSS()>>20, rep.Stats.Txns, rep.Stats.Constraints,
		rep.Stats.PrunedConstraints, rep.Stats.SATVars, rep.Stats.Conflicts, strings.Join(ph, " "), ms.HeapSys>>20)
	return rep
}

// TestCobraViolations: all six real violations are rejected with a witness.
func TestCobraViolations(t *testing.T) {
	for _, name := range []string{"cock-G2", "cock-blog", "yuga-G2-a", "fauna-page", "yuga-G2-b", "yuga-G2-c"} {
		t.Run(name, func(t *testing.T) {
			rep := runFile(t, sharedPath(t, "cobra/ser-violation", name), anomaly.StrongSessionSerializable)
			if name == "cock-blog" {
				// 8 reads name writers that are in no client log. Cobra logs every committed
				// transaction and no aborted one, so those writers did not commit: G1a.
				if rep.Verdict != report.Fail || rep.Anomalies[0].Kind != anomaly.AbortedRead {
					t.Fatalf("verdict %v, want fail with an aborted read; anomalies %v, notes %v", rep.Verdict, rep.Anomalies, rep.Notes)
				}
			}
			if rep.Verdict != report.Fail || len(rep.Anomalies) == 0 {
				t.Fatalf("verdict %v with %d anomalies, want fail with a witness; notes %v", rep.Verdict, len(rep.Anomalies), rep.Notes)
			}
			a := rep.Anomalies[0]
			t.Logf("%s (also %v): %s", a.Kind, a.Also, a.Message)
			for _, r := range a.RuledOut {
				t.Logf("  ruled out: %s", r)
			}
		})
	}
}

// benchFiles are the valid benchmark histories (docs/benchmarks.md) and the level each is
// checked at.
var benchFiles = []struct {
	path  string
	level anomaly.Level
	want  report.Verdict
}{
	{"bench/veristrong-10k/RH-10k/hist-00000/history.bincode", anomaly.StrongSessionSerializable, report.Pass},
	{"bench/veristrong-10k/BL-10k/hist-00000/history.bincode", anomaly.StrongSessionSerializable, report.Pass},
	{"bench/veristrong-10k/WH-10k/hist-00000/history.bincode", anomaly.StrongSessionSerializable, report.Pass},
	{"bench/veristrong-10k/HD-10k/hist-00000/history.bincode", anomaly.StrongSessionSerializable, report.Pass},
	{"bench/veristrong-10k/tpcc-10k", anomaly.StrongSessionSerializable, report.Pass},
	{"bench/veristrong-10k/twitter-10k", anomaly.StrongSessionSerializable, report.Pass},
	{"bench/veristrong-10k/rubis-10k", anomaly.StrongSessionSerializable, report.Pass},
	{"bench/vbox/blindw_wr_10000", anomaly.StrictSerializable, report.Pass},
	{"bench/vbox/blindw_rh_10000", anomaly.StrictSerializable, report.Pass},
	{"bench/vbox/blindw_wh_10000", anomaly.StrictSerializable, report.Pass},
	{"bench/vbox/ctwitter_10000", anomaly.StrictSerializable, report.Pass},
	{"bench/vbox/blindw_wr_100000", anomaly.StrictSerializable, report.Pass},
}

// TestBenchHistories checks the valid benchmark histories pass. They take seconds each, so
// -short skips them; CI runs without -short.
func TestBenchHistories(t *testing.T) {
	if testing.Short() {
		t.Skip("large histories: skipped with -short")
	}
	for _, f := range benchFiles {
		name := strings.TrimSuffix(strings.TrimSuffix(f.path, "/hist-00000/history.bincode"), "/")
		t.Run(filepath.Base(name), func(t *testing.T) {
			rep := runFile(t, sharedPath(t, f.path), f.level)
			if rep.Verdict != f.want {
				for _, a := range rep.Anomalies {
					t.Logf("%s: %s", a.Kind, a.Message)
				}
				t.Errorf("verdict %v, want %v; notes %v", rep.Verdict, f.want, rep.Notes)
			}
		})
	}
}

// TestBlindWPredAbortedRead: Vbox's blindw_pred_1000 mixes the logs of two runs whose
// transaction ids overlap; the reads naming the ids of aborted logged transactions (tid 9 of
// 5.log among them, which Vbox's own verifier reports as an aborted read) all ended before
// those transactions began, so the reader leaves their placeholders' outcomes unknown. The
// check must not pass the history, and must list no aborted read of those placeholders.
func TestBlindWPredAbortedRead(t *testing.T) {
	rep := runFile(t, sharedPath(t, "bench/vbox/blindw_pred_1000"), anomaly.StrongSessionSerializable)
	if rep.Verdict == report.Pass {
		t.Fatalf("verdict pass on a history with placeholder writers; notes %v", rep.Notes)
	}
	ph := report.PlaceholdersOf(rep.History)
	for i, a := range rep.Anomalies {
		if ph.Involves(&a) && a.Kind == anomaly.AbortedRead {
			t.Errorf("anomaly %d: an aborted read of a placeholder whose outcome is unknown: %s", i+1, a.Message)
		}
		if i > 0 && !ph.Involves(&a) && ph.Involves(&rep.Anomalies[i-1]) {
			t.Errorf("anomaly %d is among recorded transactions but listed after one through a placeholder", i+1)
		}
	}
}
