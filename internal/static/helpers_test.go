package static

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/isovet/isovet/internal/smtlib/solve"
)

const examplesDir = "../../examples/programs"

func exampleFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(examplesDir, "*.txn"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example programs in %s: %v", examplesDir, err)
	}
	sort.Strings(files)
	return files
}

// needSolver skips when the solver is missing, unless ISOVET_REQUIRE_SERVICES=1.
func needSolver(t testing.TB, name string) {
	t.Helper()
	if solve.Available(name) {
		return
	}
	if os.Getenv("ISOVET_REQUIRE_SERVICES") == "1" {
		t.Fatalf("%s not found on PATH and ISOVET_REQUIRE_SERVICES=1 (apt-get install -y z3 cvc5)", name)
	}
	t.Skipf("%s not found on PATH; install it with apt-get install -y z3 cvc5", name)
}

func mustParse(t testing.TB, src string) *Program {
	t.Helper()
	p, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}
