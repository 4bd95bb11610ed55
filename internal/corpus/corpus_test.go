package corpus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDeclares(t *testing.T) {
	tests := []struct {
		mod  string
		want bool
	}{
		{"module github.com/isovet/isovet\n\ngo 1.26\n", true},
		{"// a comment\nmodule  github.com/isovet/isovet \n", true},
		{"module example.com/t\n\nrequire github.com/isovet/isovet v0.0.0\n", false},
		{"module github.com/isovet/isovet/sub\n", false},
	}
	for _, tt := range tests {
		if got := declares([]byte(tt.mod)); got != tt.want {
			t.Errorf("declares(%q) = %v, want %v", tt.mod, got, tt.want)
		}
	}
}

// TestFind: ISOVET_SHARED_DATA wins when set and says so when it is not a directory; unset,
// the corpora are looked for beside the repository's root, found from here.
func TestFind(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(DirEnv, dir)
	if d, why := find(); d != dir || why != "" {
		t.Errorf("find() with %s=%s = %q, %q", DirEnv, dir, d, why)
	}
	t.Setenv(DirEnv, filepath.Join(dir, "missing"))
	if d, why := find(); d != "" || !strings.Contains(why, DirEnv) {
		t.Errorf("find() with a missing directory = %q, %q; want the variable named", d, why)
	}
	t.Setenv(DirEnv, "")
	repo, ok := repoRoot()
	if !ok {
		t.Fatal("repoRoot found no go.mod of this module above the test's directory")
	}
	if _, err := os.Stat(filepath.Join(repo, "internal", "corpus", "corpus.go")); err != nil {
		t.Errorf("repoRoot() = %s, which does not hold this package", repo)
	}
	d, why := find()
	if beside := filepath.Join(filepath.Dir(repo), "shared", "data"); d != "" && d != beside {
		t.Errorf("find() = %q, want %s or nothing", d, beside)
	}
	if d == "" && !strings.Contains(why, "../shared/data") {
		t.Errorf("find() without the corpora says %q; want where it looked", why)
	}
}
