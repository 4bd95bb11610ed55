package lint

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/history/historytest"
)

// docExample is one ```history block of docs/levels.md: the history in the test notation,
// and the verdicts its "# fails LEVEL with KIND" and "# passes LEVEL" lines claim.
type docExample struct {
	line   int // of the opening fence
	src    string
	method check.Method
	fails  []claim
	passes []anomaly.Level
}

type claim struct {
	level anomaly.Level
	kind  anomaly.Kind
}

// readDocExamples returns the ```history blocks of the markdown file at path.
func readDocExamples(t *testing.T, path string) []docExample {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		exs []docExample
		cur *docExample
		sc  = bufio.NewScanner(f)
	)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```history":
			cur = &docExample{line: n}
		case cur != nil && strings.TrimSpace(line) == "```":
			exs = append(exs, *cur)
			cur = nil
		case cur != nil:
			cur.src += line + "\n"
			if err := cur.directive(strings.TrimSpace(line)); err != "" {
				t.Errorf("%s:%d: %s", path, n, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Errorf("%s:%d: unclosed ```history block", path, cur.line)
	}
	return exs
}

// directive records a "# fails L with K", "# passes L" or "# method M" comment line; it
// returns a complaint, or "".
func (e *docExample) directive(line string) string {
	f := strings.Fields(strings.TrimPrefix(line, "#"))
	if !strings.HasPrefix(line, "#") || len(f) == 0 {
		return ""
	}
	switch {
	case f[0] == "fails" && len(f) == 4 && f[2] == "with":
		l, ok := anomaly.ParseLevel(f[1])
		k, ok2 := anomaly.ParseKind(f[3])
		if !ok || !ok2 {
			return "unknown level or kind in " + line
		}
		e.fails = append(e.fails, claim{l, k})
	case f[0] == "passes" && len(f) == 2:
		l, ok := anomaly.ParseLevel(f[1])
		if !ok {
			return "unknown level in " + line
		}
		e.passes = append(e.passes, l)
	case f[0] == "method" && len(f) == 2:
		m, ok := check.ParseMethod(f[1])
		if !ok {
			return "unknown method in " + line
		}
		e.method = m
	}
	return ""
}

// TestLevelsDocExamples checks every example history of docs/levels.md: each fails the
// levels it says it fails, with the anomaly kind it names, and passes the levels it says
// it passes. Every anomaly kind and every level has at least one example.
func TestLevelsDocExamples(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "levels.md")
	exs := readDocExamples(t, path)
	failedKinds := map[anomaly.Kind]bool{}
	levels := map[anomaly.Level]bool{}
	for _, ex := range exs {
		where := path + ":" + strconv.Itoa(ex.line)
		if len(ex.fails)+len(ex.passes) == 0 {
			t.Errorf("%s: example claims nothing (want a \"# fails LEVEL with KIND\" or \"# passes LEVEL\" line)", where)
			continue
		}
		h, err := historytest.Parse(ex.src)
		if err != nil {
			t.Errorf("%s: %v", where, err)
			continue
		}
		for _, c := range ex.fails {
			failedKinds[c.kind], levels[c.level] = true, true
			if !c.level.Forbids(c.kind) && forbiddenSomewhere(c.kind) {
				t.Errorf("%s: claims %s fails with %s, which the level does not forbid", where, c.level, c.kind)
			}
			rep, err := check.Check(context.Background(), h, c.level, check.Options{Method: ex.method})
			if err != nil {
				t.Errorf("%s: Check(%s): %v", where, c.level, err)
				continue
			}
			if rep.Verdict != check.Fail || !reportsKind(rep, c.kind) {
				t.Errorf("%s: Check(%s) = %v with %s, want fail with %s", where, c.level, rep.Verdict, kindsOf(rep), c.kind)
			}
		}
		for _, l := range ex.passes {
			levels[l] = true
			rep, err := check.Check(context.Background(), h, l, check.Options{Method: ex.method})
			if err != nil {
				t.Errorf("%s: Check(%s): %v", where, l, err)
				continue
			}
			if rep.Verdict != check.Pass {
				t.Errorf("%s: Check(%s) = %v with %s, want pass", where, l, rep.Verdict, kindsOf(rep))
			}
		}
	}
	for _, k := range anomaly.Kinds() {
		if !failedKinds[k] && !undemonstrated[k] {
			t.Errorf("%s: no example fails with %s", path, k)
		}
	}
	for _, l := range anomaly.Levels() {
		if !levels[l] {
			t.Errorf("%s: no example is checked at %s", path, l)
		}
	}
}

// undemonstrated are the kinds docs/levels.md describes without a checked example, each
// with the reason given there: no checker reports a duplicate write (readers decide what
// duplicate values mean).
var undemonstrated = map[anomaly.Kind]bool{anomaly.DuplicateWrite: true}

// TestLevelsDocForbidden checks the "Forbidden by:" line under each kind's heading of
// docs/levels.md against the table (Level.Forbids), and that every kind has a heading.
func TestLevelsDocForbidden(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "levels.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[anomaly.Kind]bool{}
	kind := anomaly.KindInvalid
	for i, line := range strings.Split(string(data), "\n") {
		if name, ok := strings.CutPrefix(line, "#### `"); ok {
			name, _, _ = strings.Cut(name, "`")
			k, ok := anomaly.ParseKind(name)
			if !ok {
				t.Errorf("%s:%d: heading names no anomaly kind: %s", path, i+1, line)
			}
			kind, seen[k] = k, true
			continue
		}
		rest, ok := strings.CutPrefix(line, "Forbidden by: ")
		if !ok || kind == anomaly.KindInvalid {
			continue
		}
		var want []string
		for _, l := range anomaly.Levels() {
			if l.Forbids(kind) {
				want = append(want, "`"+l.String()+"`")
			}
		}
		got := strings.TrimSuffix(rest, ".")
		if len(want) == 0 && got != "no level" || len(want) > 0 && got != strings.Join(want, ", ") {
			t.Errorf("%s:%d: %s is forbidden by %q, want %q", path, i+1, kind, got, strings.Join(want, ", "))
		}
		kind = anomaly.KindInvalid
	}
	for _, k := range anomaly.Kinds() {
		if !seen[k] {
			t.Errorf("%s: no heading for %s", path, k)
		}
	}
}

// forbiddenSomewhere reports whether some level forbids k (timestamp-order, for one, is a
// defect of the timestamps that no level lists).
func forbiddenSomewhere(k anomaly.Kind) bool {
	for _, l := range anomaly.Levels() {
		if l.Forbids(k) {
			return true
		}
	}
	return false
}

func reportsKind(rep *check.Report, k anomaly.Kind) bool {
	for _, a := range rep.Anomalies {
		if a.Kind == k || slices.Contains(a.Also, k) {
			return true
		}
	}
	return false
}

func kindsOf(rep *check.Report) string {
	var names []string
	for _, a := range rep.Anomalies {
		names = append(names, a.Name())
	}
	if len(names) == 0 {
		return "no anomaly"
	}
	return strings.Join(names, ", ")
}
