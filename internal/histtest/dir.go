package histtest

import (
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

// Fixture is one fixture file and what it expects.
type Fixture struct {
	Name    string         // file name without directory
	Case    string         // the name without the verdict and extension
	Path    string         // its path within the fixture file system
	Verdict report.Verdict // from the name: <case>-<pass|fail|unknown>.<ext>
	// Want lists the anomaly kinds a "# want: kind, kind" line requires in the report.
	Want []anomaly.Kind
	Text []byte // the file's contents
}

// Loader reads a fixture that is not a DSL (.txt) file.
type Loader func(fx Fixture) (*history.History, error)

// RunDir runs check on every fixture at the top of dir (not recursive) as a subtest named
// after the case. Files ending in .txt are parsed as the DSL; others are skipped. See
// [RunDirLoad]. dir is a file system so that this package does no IO of its own; tests pass
// os.DirFS("testdata/histories/basic").
func RunDir(t *testing.T, dir fs.FS, check func(t *testing.T, h *history.History) *report.Report) {
	t.Helper()
	RunDirLoad(t, dir, nil, check)
}

// RunDirLoad is [RunDir] with a loader for other extensions (e.g. a format reader). A nil
// load, or one returning (nil, nil), skips non-.txt files.
//
// For each fixture it asserts that the report's verdict is the one the name encodes, that
// every kind listed in a "# want:" line occurs among the report's anomalies, and that a
// pass fixture's report lists no anomalies. It fails the test if dir holds no fixture.
func RunDirLoad(t *testing.T, dir fs.FS, load Loader, check func(t *testing.T, h *history.History) *report.Report) {
	t.Helper()
	ents, err := fs.ReadDir(dir, ".")
	if err != nil {
		t.Fatalf("reading fixtures: %v", err)
	}
	n := 0
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		fx, h := loadFixture(t, dir, e.Name(), load)
		if h == nil {
			continue
		}
		n++
		t.Run(fx.Case, func(t *testing.T) {
			rep := check(t, h)
			if rep == nil {
				t.Fatalf("check(%s) returned no report", fx.Name)
			}
			assertFixture(t, fx, rep)
		})
	}
	if n == 0 {
		t.Fatalf("no fixtures in %v", dir)
	}
}

// loadFixture reads the fixture file name in dir: its name, contents, wanted kinds and
// history (the DSL for .txt files, else through load). A nil history skips it: the file
// is not one load reads, or the error was reported on t.
func loadFixture(t *testing.T, dir fs.FS, name string, load Loader) (Fixture, *history.History) {
	t.Helper()
	fx, ok := parseName(name)
	if !ok {
		t.Errorf("fixture %s: name is not <case>-<pass|fail|unknown>.<ext>", name)
		return fx, nil
	}
	fx.Path = name
	var err error
	if fx.Text, err = fs.ReadFile(dir, fx.Path); err != nil {
		t.Fatalf("reading fixture: %v", err)
	}
	var h *history.History
	fx.Want, err = wants(fx.Text)
	switch {
	case err != nil:
	case strings.HasSuffix(fx.Name, ".txt"):
		h, err = Parse(string(fx.Text))
	case load != nil:
		h, err = load(fx)
	}
	if err != nil {
		t.Errorf("fixture %s: %v", fx.Name, err)
		return fx, nil
	}
	return fx, h
}

// assertFixture checks rep against what fx expects: its verdict, no anomaly on a pass, and
// every wanted kind among the anomalies (as a kind or another name of one).
func assertFixture(t *testing.T, fx Fixture, rep *report.Report) {
	t.Helper()
	if rep.Verdict != fx.Verdict {
		t.Errorf("Check(%s) = %v, want %v; anomalies: %s; notes: %q", fx.Name, rep.Verdict, fx.Verdict, kindsOf(rep), rep.Notes)
	}
	if fx.Verdict == report.Pass && len(rep.Anomalies) > 0 {
		t.Errorf("Check(%s) passes but lists anomalies: %s", fx.Name, kindsOf(rep))
	}
	for _, k := range fx.Want {
		if !slices.ContainsFunc(rep.Anomalies, func(a report.Anomaly) bool { return a.Kind == k || slices.Contains(a.Also, k) }) {
			t.Errorf("Check(%s) anomalies = %s, want %v among them", fx.Name, kindsOf(rep), k)
		}
	}
}

// fixtureVerdicts maps the verdict part of a fixture's name to the verdict it expects.
var fixtureVerdicts = map[string]report.Verdict{"pass": report.Pass, "fail": report.Fail, "unknown": report.Unknown}

func parseName(name string) (Fixture, bool) {
	base, _, ok := strings.Cut(name, ".")
	if !ok {
		return Fixture{}, false
	}
	i := strings.LastIndexByte(base, '-')
	if i <= 0 {
		return Fixture{}, false
	}
	v, ok := fixtureVerdicts[base[i+1:]]
	if !ok {
		return Fixture{}, false
	}
	return Fixture{Name: name, Case: base[:i], Verdict: v}, true
}

// wants reads "# want: kind, kind" lines (also ";; want:" and "// want:").
func wants(text []byte) ([]anomaly.Kind, error) {
	var ks []anomaly.Kind
	for line := range strings.Lines(string(text)) {
		line = strings.TrimSpace(line)
		line = strings.TrimLeft(line, "#;/ ")
		rest, ok := strings.CutPrefix(line, "want:")
		if !ok {
			continue
		}
		for name := range strings.FieldsFuncSeq(rest, func(r rune) bool { return r == ',' || r == ' ' }) {
			k, ok := anomaly.ParseKind(name)
			if !ok {
				return nil, &wantError{name}
			}
			ks = append(ks, k)
		}
	}
	return ks, nil
}

type wantError struct{ name string }

func (e *wantError) Error() string { return "unknown anomaly kind " + e.name + " in want line" }

func kindsOf(r *report.Report) string {
	if len(r.Anomalies) == 0 {
		return "none"
	}
	var names []string
	for _, a := range r.Anomalies {
		names = append(names, a.Kind.String())
	}
	return strings.Join(names, ", ")
}
