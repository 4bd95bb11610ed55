package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/internal/corpus"
)

var update = flag.Bool("update", false, "update golden files")

// sharedData returns the public corpora's directory, or skips (fails under
// ISOVET_REQUIRE_DATA=1) when they are missing.
func sharedData(t *testing.T) string {
	t.Helper()
	return filepath.Dir(corpus.Path(t, "MANIFEST.md"))
}

// notHistories are shared paths that are not histories isovet reads, with the reason.
var notHistories = map[string]string{
	"MANIFEST.md":     "the manifest",
	"vbox/coo_origin": "SQL scripts of the Coo scenarios, replayed by the runner",
}

// refused are shared files that are not transactional histories: reading them must fail
// with a message that says so.
func refused(rel string) bool {
	if strings.HasPrefix(rel, "elle/elle-cli/knossos/") || rel == "elle/elle-cli/custom/comments.edn" {
		return true
	}
	return strings.HasPrefix(rel, "elle/elle-cli/jepsen/") && !strings.Contains(rel, "long-fork")
}

// sharedHistories lists every history under dir: directories of log files are one history,
// other files are one each. Paths are relative to dir, sorted.
func sharedHistories(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if _, skip := notHistories[rel]; skip {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			logs, _ := filepath.Glob(filepath.Join(p, "*.log"))
			if len(logs) > 0 {
				out = append(out, rel)
				return filepath.SkipDir
			}
			return nil
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestStatOnEverySharedHistory reads every public history with `isovet stat --json` and
// compares the counts with testdata/shared-stat.golden. Counts in the golden file were
// checked by hand for several files (see docs/formats.md, "Hand-checked counts").
func TestStatOnEverySharedHistory(t *testing.T) {
	dir := sharedData(t)
	var got strings.Builder
	for _, rel := range sharedHistories(t, dir) {
		code, out, stderr := runCLI(t, "stat", "--json", filepath.Join(dir, rel))
		empty := ""
		if code == exitUsage && strings.Contains(stderr, "format: empty history") {
			// An empty history is an input error; --allow-empty reads it.
			if !strings.Contains(stderr, "pass --allow-empty") {
				t.Errorf("stat %s: %s; want the error to name --allow-empty", rel, stderr)
			}
			empty = " (empty: an input error without --allow-empty)"
			code, out, stderr = runCLI(t, "stat", "--allow-empty", "--json", filepath.Join(dir, rel))
		}
		if refused(rel) {
			if code != exitUsage || !strings.Contains(stderr, "not a transactional history") {
				t.Errorf("stat %s: exit %d, stderr %q; want exit 2 saying it is not a transactional history", rel, code, stderr)
			}
			fmt.Fprintf(&got, "%s: refused\n", rel)
			continue
		}
		if code != 0 {
			t.Errorf("stat %s: exit %d: %s", rel, code, stderr)
			continue
		}
		var doc struct {
			Results []struct {
				Format                                                 string
				Sessions, Txns, Committed, Aborted, Unknown, Ops, Keys int
				Values                                                 int
				UniqueWrites                                           bool           `json:"unique_writes"`
				FailedOps                                              int            `json:"failed_ops"`
				Timed                                                  int            `json:"txns_with_client_time"`
				Timestamped                                            int            `json:"txns_with_db_timestamps"`
				OpsByKind                                              map[string]int `json:"ops_by_kind"`
			}
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Results) != 1 {
			t.Fatalf("stat --json %s: %v, want one result\n%s", rel, err, out)
		}
		s := doc.Results[0]
		var kinds []string
		for k, n := range s.OpsByKind {
			kinds = append(kinds, fmt.Sprintf("%s=%d", k, n))
		}
		slices.Sort(kinds)
		fmt.Fprintf(&got, "%s%s: %s sessions=%d txns=%d committed=%d aborted=%d unknown=%d ops=%d (%s) failed=%d keys=%d values=%d unique=%v timed=%d timestamped=%d\n",
			rel, empty, s.Format, s.Sessions, s.Txns, s.Committed, s.Aborted, s.Unknown, s.Ops, strings.Join(kinds, " "), s.FailedOps, s.Keys, s.Values, s.UniqueWrites, s.Timed, s.Timestamped)
	}
	golden := filepath.Join("testdata", "shared-stat.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update once)", err)
	}
	if diff := cmp.Diff(string(want), got.String()); diff != "" {
		t.Errorf("stat over the shared histories differs from %s (-want +got):\n%s", golden, diff)
	}
}
