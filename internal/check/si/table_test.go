package si_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/internal/check/si"
	"github.com/isovet/isovet/internal/corpus"
	"github.com/isovet/isovet/internal/report"
)

// cell runs one level on the history at path and summarizes it for docs/si.md.
func cell(path string, level anomaly.Level) (report.Verdict, string) {
	h, _, err := format.Open(path, format.Auto, format.Options{})
	if err != nil {
		return report.Unknown, "unreadable: " + err.Error()
	}
	rep, err := si.Check(context.Background(), h, level, si.Options{})
	if err != nil {
		return report.Unknown, err.Error()
	}
	switch {
	case len(rep.Anomalies) > 0:
		a := rep.Anomalies[0]
		return rep.Verdict, a.Name() + ": " + a.Message
	case len(rep.Notes) > 0:
		return rep.Verdict, strings.Join(rep.Notes, "; ")
	}
	return rep.Verdict, ""
}

// TestFixtureTable judges Plume's anomaly fixtures (and Elle's two SI-relevant examples)
// against SI and prints the table docs/si.md holds (go test -run TestFixtureTable -v). It
// asserts what the sources say: every Plume pattern violates strong-session SI (they target
// read committed, read atomic and causal consistency, all weaker), except the Cobra
// conversion of tap-e, which lost the offending operations.
func TestFixtureTable(t *testing.T) {
	t.Parallel()
	shared := corpus.Dir(t)
	var paths []string
	for _, dir := range []string{"plume/testcase/text", "plume/testcase/elle", "plume/testcase/dbcop", "plume/testcase/cobra"} {
		es, err := os.ReadDir(filepath.Join(shared, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			p := filepath.Join(dir, e.Name())
			if strings.Contains(dir, "dbcop") {
				p = filepath.Join(p, "history.bincode")
			}
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	paths = append(paths, "elle/elle/si-without-g-single.edn", "elle/elle/paper-example.edn")
	var b strings.Builder
	b.WriteString("| history | snapshot-isolation | strong-session-snapshot-isolation | reason (snapshot-isolation, else strong-session) |\n|---|---|---|---|\n")
	for _, p := range paths {
		full := filepath.Join(shared, p)
		v1, r1 := cell(full, anomaly.SnapshotIsolation)
		v2, r2 := cell(full, anomaly.StrongSessionSI)
		reason := r1
		if reason == "" {
			reason = r2
		}
		if len(reason) > 320 {
			reason = reason[:320] + "…"
		}
		fmt.Fprintf(&b, "| `%s` | %v | %v | %s |\n", p, v1, v2, strings.ReplaceAll(reason, "|", "\\|"))
		if strings.HasPrefix(p, "plume/") && p != "plume/testcase/cobra/tap-e" && v2 != report.Fail {
			t.Errorf("%s: strong-session SI = %v, want fail", p, v2)
		}
		if p == "elle/elle/si-without-g-single.edn" && (v1 != report.Pass || v2 != report.Pass) {
			t.Errorf("%s: SI = %v/%v, want pass", p, v1, v2)
		}
	}
	t.Logf("\n%s", b.String())
}
