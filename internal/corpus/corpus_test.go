package corpus

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestFind: the corpora are where ISOVET_SHARED_DATA says, and a missing or unset variable
// is named in the reason.
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
	if d, why := find(); d != "" || !strings.Contains(why, DirEnv+" is unset") {
		t.Errorf("find() unset = %q, %q; want the variable named", d, why)
	}
}
