// Package lint enforces the house rules on the whole module as tests: the import boundaries
// (pure core, IO at the edges), the ban on reading the clock in the core, docs that are
// reference rather than a log (no dated log entries, no paths outside the repository), and
// docs/levels.md's example histories, each checked to give the verdict and anomaly it claims.
package lint

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "github.com/isovet/isovet/...").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decoding go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// edge reports whether package path may do IO (open files, sockets, databases, log).
func edge(path string) bool {
	for _, prefix := range []string{
		"github.com/isovet/isovet/cmd/", "github.com/isovet/isovet/internal/server", "github.com/isovet/isovet/internal/runner", "github.com/isovet/isovet/internal/smtlib/solve",
		"github.com/isovet/isovet/internal/lint", "github.com/isovet/isovet/internal/corpus", "github.com/isovet/isovet/tools", "github.com/isovet/isovet/bench",
	} {
		if strings.HasPrefix(path, prefix) {
			return true
		}
	}
	// format.Open opens files and directories; the format subpackages read io.Readers only.
	// record runs inside a user's test against a live database and reads the clock for the
	// client intervals it records.
	return path == "github.com/isovet/isovet/format" || path == "github.com/isovet/isovet/record"
}

// leaves must import no other project package but the utility leaves: the assertion
// package, and the one that asks the kernel for huge pages (itself a leaf).
var leaves = map[string]bool{"github.com/isovet/isovet/history": true, "github.com/isovet/isovet/internal/graph": true, "github.com/isovet/isovet/internal/sat": true, "github.com/isovet/isovet/internal/hugepage": true}

var utilityLeaves = map[string]bool{"github.com/isovet/isovet/internal/invariant": true, "github.com/isovet/isovet/internal/hugepage": true}

var forbiddenInCore = []string{"os", "net", "net/http", "database/sql", "log/slog", "os/exec"}

func TestImportBoundaries(t *testing.T) {
	for _, p := range listPackages(t) {
		for _, imp := range p.Imports {
			if leaves[p.ImportPath] && strings.HasPrefix(imp, "github.com/isovet/isovet/") && !utilityLeaves[imp] {
				t.Errorf("%s imports %s, but it must import no other isovet package", p.ImportPath, imp)
			}
			if edge(p.ImportPath) {
				continue
			}
			for _, f := range forbiddenInCore {
				if imp == f {
					t.Errorf("%s imports %s: only cmd, server, runner and smtlib/solve do IO", p.ImportPath, imp)
				}
			}
		}
	}
}

func TestCoreNeverReadsTheClock(t *testing.T) {
	fset := token.NewFileSet()
	for _, p := range listPackages(t) {
		if edge(p.ImportPath) {
			continue
		}
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			timeName := ""
			for _, imp := range f.Imports {
				if imp.Path.Value == `"time"` {
					timeName = "time"
					if imp.Name != nil {
						timeName = imp.Name.Name
					}
				}
			}
			if timeName == "" {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == timeName && (sel.Sel.Name == "Now" || sel.Sel.Name == "Since") {
					t.Errorf("%s: core package %s reads the clock (time.%s); pass time in instead", fset.Position(sel.Pos()), p.ImportPath, sel.Sel.Name)
				}
				return true
			})
		}
	}
}
