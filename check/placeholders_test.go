package check_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/corpus"
)

// openPlaceholders reads the Vbox history of testdata/placeholders/<name> (README.md there
// says what each holds).
func openPlaceholders(t *testing.T, path string) *history.History {
	t.Helper()
	h, _, err := format.Open(path, format.Auto, format.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	if len(h.Placeholders()) == 0 {
		t.Fatalf("%s: no placeholder writer; the fixture is meant to have one", path)
	}
	return h
}

// placeholderAt returns the index of the first anomaly through a placeholder, or -1.
func placeholderAt(h *history.History, as []check.Anomaly) int {
	ph := map[history.TxnID]bool{}
	for _, t := range h.Placeholders() {
		ph[t] = true
	}
	for i, a := range as {
		for _, t := range a.Txns {
			if ph[t] {
				return i
			}
		}
	}
	return -1
}

// hasNote reports whether some note of rep contains every one of parts.
func hasNote(rep *check.Report, parts ...string) bool {
	for _, n := range rep.Notes {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(n, p)
		}
		if all {
			return true
		}
	}
	return false
}

// TestPlaceholderVerdicts: a read of a writer no log holds is no violation by itself. Where
// the placeholder's outcome is unknown (the one logged transaction with its id began after the
// read ended), no level fails and none passes: the report is Unknown with the one finding
// that counts the reads. Where the outcome is known to be aborted (the logged transaction
// with that id was running), the read is an aborted read, which every level forbids.
func TestPlaceholderVerdicts(t *testing.T) {
	t.Parallel()
	levels := []anomaly.Level{anomaly.ReadCommitted, anomaly.ReadAtomic, anomaly.Causal, anomaly.SnapshotIsolation, anomaly.Serializable, anomaly.StrictSerializable}
	refuted := openPlaceholders(t, filepath.Join("testdata", "placeholders", "refuted"))
	identified := openPlaceholders(t, filepath.Join("testdata", "placeholders", "identified"))
	for _, level := range levels {
		t.Run("refuted/"+level.String(), func(t *testing.T) {
			t.Parallel()
			rep, err := check.Check(context.Background(), refuted, level, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != check.Unknown || len(rep.Anomalies) > 0 {
				t.Errorf("verdict %v with %d anomalies, want unknown with none: the only read of a missing writer proves nothing", rep.Verdict, len(rep.Anomalies))
			}
			if !hasNote(rep, "1 read names a writer that no log holds", "1 placeholder transaction", "T1 read 4 from T9") {
				t.Errorf("no placeholder finding counting the read among the notes %q", rep.Notes)
			}
			if !hasNote(rep, "transaction id 9", "transaction 9 of 1.log began", "transaction 9 of 1.log aborted") {
				t.Errorf("no note that the logged transaction 9 is not the writer, among %q", rep.Notes)
			}
		})
		t.Run("identified/"+level.String(), func(t *testing.T) {
			t.Parallel()
			rep, err := check.Check(context.Background(), identified, level, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != check.Fail || len(rep.Anomalies) == 0 || !rep.Anomalies[0].Is(anomaly.AbortedRead) {
				t.Fatalf("verdict %v (%d anomalies), want fail with an aborted read of the placeholder taken as aborted", rep.Verdict, len(rep.Anomalies))
			}
			if !hasNote(rep, "1 read names a writer that no log holds", "T9 taken as aborted") {
				t.Errorf("no placeholder finding among the notes %q", rep.Notes)
			}
		})
	}
}

// TestPlaceholdersLast: a real aborted read among recorded transactions is listed first, before
// the aborted reads of a placeholder that the history reveals earlier, and a cap on the
// anomalies listed never leaves it out.
func TestPlaceholdersLast(t *testing.T) {
	t.Parallel()
	h := openPlaceholders(t, filepath.Join("testdata", "placeholders", "recorded-first"))
	for _, level := range []anomaly.Level{anomaly.ReadCommitted, anomaly.Causal, anomaly.SnapshotIsolation, anomaly.Serializable, anomaly.StrictSerializable} {
		for _, max := range []int{1, 2, 20} {
			t.Run(fmt.Sprintf("%s/max-%d", level, max), func(t *testing.T) {
				t.Parallel()
				rep, err := check.Check(context.Background(), h, level, check.Options{MaxAnomalies: max})
				if err != nil {
					t.Fatal(err)
				}
				if rep.Verdict != check.Fail || len(rep.Anomalies) == 0 {
					t.Fatalf("verdict %v with %d anomalies, want fail", rep.Verdict, len(rep.Anomalies))
				}
				first := rep.Anomalies[0]
				if !first.Is(anomaly.AbortedRead) || !slices.ContainsFunc(first.Txns, func(t history.TxnID) bool { return h.Name(t) == "T6" }) {
					t.Errorf("first anomaly %s %q, want T6's aborted read of T5's write", first.Kind, first.Message)
				}
				if i := placeholderAt(h, rep.Anomalies); i == 0 {
					t.Errorf("an anomaly through a placeholder is listed first: %q", first.Message)
				}
				if !hasNote(rep, "3 reads name a writer that no log holds", "T1 read 4 from T9, T1 read 5 from T9, T1 read 6 from T9") {
					t.Errorf("no placeholder finding counting the 3 reads among the notes %q", rep.Notes)
				}
			})
		}
	}
}

// TestVboxBlindWPredPlaceholders: Vbox's blindw_pred_1000 mixes the logs of two runs whose
// transaction ids overlap, and 26,267 reads name writers no file holds. The report counts
// them in one finding, names transaction 9 of 5.log (the aborted transaction Vbox's own
// verifier, matching writers by id alone, reports an aborted read of) and why those reads
// are not of it, and lists no anomaly through a placeholder before one among the recorded
// transactions.
func TestVboxBlindWPredPlaceholders(t *testing.T) {
	if testing.Short() {
		t.Skip("a large history: skipped with -short")
	}
	path := corpus.Path(t, "bench/vbox/blindw_pred_1000")
	h, _, err := format.Open(path, format.Auto, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := check.Check(context.Background(), h, anomaly.StrictSerializable, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict == check.Pass {
		t.Fatalf("pass on a history with placeholder writers")
	}
	n := countPlaceholderReads(h)
	if n == 0 {
		t.Fatal("no read of a placeholder: the corpus is not the one this test expects")
	}
	if !hasNote(rep, fmt.Sprintf("%d reads name a writer that no log holds", n), fmt.Sprintf("%d placeholder transactions", len(h.Placeholders())), "more") {
		t.Errorf("no placeholder finding counting the %d reads among the notes %q", n, rep.Notes)
	}
	if !hasNote(rep, "other transactions with the same ids", "transaction 9 of 5.log", "aborted reads of them") {
		t.Errorf("no note naming transaction 9 of 5.log among %q", rep.Notes)
	}
	if i := placeholderAt(h, rep.Anomalies); i >= 0 {
		for j := i; j < len(rep.Anomalies); j++ {
			if placeholderAt(h, rep.Anomalies[j:j+1]) < 0 {
				t.Errorf("anomaly %d (%s) is among recorded transactions but listed after one through a placeholder", j+1, rep.Anomalies[j].Kind)
			}
		}
	}
	for _, a := range rep.Anomalies {
		if a.Is(anomaly.AbortedRead) && placeholderAt(h, []check.Anomaly{a}) == 0 {
			t.Errorf("aborted read of a placeholder whose id real time ties to no logged transaction: %q", a.Message)
		}
	}
}

// countPlaceholderReads counts the reads (item reads and predicate rows) whose source is a
// placeholder.
func countPlaceholderReads(h *history.History) int {
	ph := map[history.TxnID]bool{}
	for _, t := range h.Placeholders() {
		ph[t] = true
	}
	n := 0
	for i := range h.Txns {
		for _, o := range h.Txns[i].Ops {
			switch o.Kind {
			case history.OpRead:
				if o.Src.Kind == history.SrcTxn && ph[o.Src.Txn] {
					n++
				}
			case history.OpPredRead, history.OpPredWrite:
				for _, s := range h.Pred(o).Srcs {
					if s.Kind == history.SrcTxn && ph[s.Txn] {
						n++
					}
				}
			}
		}
	}
	return n
}
