package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSummaryNamesInternal: in the one-line summary of several histories, an internal
// inconsistency says what it is, so that "fail: internal" does not read like a fault of
// isovet.
func TestSummaryNamesInternal(t *testing.T) {
	dir := t.TempDir()
	bad := `{:type :invoke, :f :txn, :value [[:w :x 1] [:r :x nil]], :process 0, :index 0}
{:type :ok, :f :txn, :value [[:w :x 1] [:r :x 2]], :process 0, :index 1}
`
	good := `{:type :invoke, :f :txn, :value [[:w :x 1]], :process 0, :index 0}
{:type :ok, :f :txn, :value [[:w :x 1]], :process 0, :index 1}
`
	for name, src := range map[string]string{"bad.edn": bad, "good.edn": good} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, stderr := runCLI(t, "check", "--level", "read-committed", filepath.Join(dir, "bad.edn"), filepath.Join(dir, "good.edn"))
	if code != 1 || !strings.Contains(out, "fail: internal (a read did not return the transaction's own write)") {
		t.Errorf("exit %d, output:\n%s%s", code, out, stderr)
	}
}
