package ser

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
	"github.com/isovet/isovet/internal/corpus"
	"github.com/isovet/isovet/internal/report"
)

// cell runs one level on h and summarizes it for docs/ser.md.
func cell(t *testing.T, path string, level anomaly.Level) (report.Verdict, string) {
	t.Helper()
	h, _, err := format.Open(path, format.Auto, format.Options{})
	if err != nil {
		return report.Unknown, "unreadable: " + err.Error()
	}
	rep, err := Check(context.Background(), h, level, Options{})
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

// TestFixtureTable checks Plume's and Elle's fixtures at the three levels and prints the
// table docs/ser.md holds (go test -run TestFixtureTable -v). It asserts the verdicts the
// sources report: Elle's paper example is not serializable.
func TestFixtureTable(t *testing.T) {
	shared := corpus.Dir(t)
	var paths []string
	for _, dir := range []string{"plume/testcase/text", "plume/testcase/elle", "plume/testcase/dbcop", "plume/testcase/cobra", "elle/elle", "elle/elle-cli/elle", "elle/elle-cli/custom", "elle/elle-cli/jepsen"} {
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
	var b strings.Builder
	b.WriteString("| history | serializable | strong-session-serializable | strict-serializable | reason (serializable, else strong-session) |\n|---|---|---|---|---|\n")
	for _, p := range paths {
		full := filepath.Join(shared, p)
		v1, r1 := cell(t, full, anomaly.Serializable)
		v2, r2 := cell(t, full, anomaly.StrongSessionSerializable)
		v3, r3 := cell(t, full, anomaly.StrictSerializable)
		if strings.Contains(r3, "needs a client interval") {
			r3 = "needs time"
		}
		reason := r1
		if reason == "" {
			reason = r2
		}
		if len(reason) > 300 {
			reason = reason[:300] + "…"
		}
		s3 := v3.String()
		if r3 == "needs time" {
			s3 = "n/a (no intervals)"
		}
		fmt.Fprintf(&b, "| `%s` | %v | %v | %s | %s |\n", p, v1, v2, s3, strings.ReplaceAll(reason, "|", "\\|"))
		if strings.HasSuffix(p, "paper-example.edn") && v1 != report.Fail {
			t.Errorf("%s: serializable = %v, want fail (Elle and elle-cli report G1c)", p, v1)
		}
	}
	t.Logf("\n%s", b.String())
}
