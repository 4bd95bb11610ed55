package lint

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// diary matches what reference docs must not say: references to dated entries of a
// development log ("the eleventh session", "(tenth session)", "this session's figures",
// "the #9 target") and paths outside the repository ("../shared", "/work/..."). Docs state
// the fact, the current figure and the command that reproduces it; git keeps the history.
var diary = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`(?i)\b(third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth)\s+sessions?\b`), "a dated log entry"},
	{regexp.MustCompile(`(?i)["(](first|second)\s+session\b|\bend of the (first|second) session\b`), "a dated log entry"},
	{regexp.MustCompile(`(?i)\b(first|second)\s+session's\b`), "a dated log entry"},
	{regexp.MustCompile(`(?i)\b(this|the previous)\s+session\b|\bthat session's\b`), "a dated log entry"},
	{regexp.MustCompile(`(?i)\(last session\)|\blast session's\b`), "a dated log entry"},
	{regexp.MustCompile(`#\d+ target`), "a log entry's target number"},
	{regexp.MustCompile(`\.\./shared\b`), "a path outside the repository"},
	{regexp.MustCompile(`(^|[\s("'\x60])/work/`), "a path outside the repository"},
}

// diaryHits returns "file:line: what: text" for each line of text (which starts at line
// first of file) on which a match of a diary pattern starts. A line is matched together
// with the next, so that a phrase wrapped across two lines is found.
func diaryHits(file string, first int, text string) []string {
	var hits []string
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		joined := line
		if i+1 < len(lines) {
			joined += " " + strings.TrimLeft(strings.TrimPrefix(strings.TrimSpace(lines[i+1]), "//"), " ")
		}
		for _, d := range diary {
			if loc := d.re.FindStringIndex(joined); loc != nil && loc[0] < len(line) {
				hits = append(hits, file+":"+strconv.Itoa(first+i)+": "+d.what+": "+strings.TrimSpace(joined[loc[0]:loc[1]]))
				break
			}
		}
	}
	return hits
}

// TestDocsAreReference fails on each line of docs/*.md, README.md and every package comment
// that refers to a dated log entry or to a path outside the repository, naming file:line.
func TestDocsAreReference(t *testing.T) {
	root := filepath.Join("..", "..")
	mds, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	mds = append(mds, filepath.Join(root, "README.md"))
	var hits []string
	for _, p := range mds {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		hits = append(hits, diaryHits(rel, 1, string(data))...)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, p := range listPackages(t) {
		for _, name := range p.GoFiles {
			path := filepath.Join(p.Dir, name)
			f, err := parser.ParseFile(fset, path, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if f.Doc == nil {
				continue
			}
			rel, err := filepath.Rel(abs, path)
			if err != nil {
				rel = path
			}
			// Each comment line as written, so that line numbers are the file's.
			for _, c := range f.Doc.List {
				hits = append(hits, diaryHits(rel, fset.Position(c.Slash).Line, c.Text)...)
			}
		}
	}
	for _, h := range hits {
		t.Error(h)
	}
}
