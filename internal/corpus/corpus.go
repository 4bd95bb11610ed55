// Package corpus finds the public history corpora for tests: the histories published with
// Elle, Cobra, dbcop, PolySI, Plume, Chronos, Vbox and VeriStrong, kept outside the
// repository because of their size.
//
// Tests find them through [Dir] or [Path]. The corpora are at $ISOVET_SHARED_DATA when that
// is set, and otherwise at ../shared/data beside the repository's root (the root is found by
// walking up from the test's directory to the go.mod of this module). When they are missing
// a test that needs them skips, with a message naming ISOVET_SHARED_DATA; when
// ISOVET_REQUIRE_DATA=1 (as CI sets it) the test fails instead, so CI never skips one
// silently.
//
// It is imported by tests only. A skipped test's message is "<TestName> needs the public
// corpora: ...", so
//
//	go test -v ./... | grep 'needs the public corpora'
//
// lists every test that was skipped for want of them.
package corpus

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

const (
	// DirEnv names the environment variable that points at the corpora's root directory.
	DirEnv = "ISOVET_SHARED_DATA"
	// RequireEnv names the environment variable that, set to 1, turns a missing corpus
	// into a test failure.
	RequireEnv = "ISOVET_REQUIRE_DATA"
)

// modulePath is the module whose root the default location is beside.
const modulePath = "github.com/isovet/isovet"

var root = sync.OnceValues(find)

// find returns the corpora's root directory and, when it is missing, a sentence saying
// where it was looked for.
func find() (string, string) {
	if d := os.Getenv(DirEnv); d != "" {
		if isDir(d) {
			return d, ""
		}
		return "", d + " ($" + DirEnv + ") is not a directory"
	}
	repo, ok := repoRoot()
	if !ok {
		return "", "$" + DirEnv + " is unset and the repository's root was not found"
	}
	d := filepath.Join(filepath.Dir(repo), "shared", "data")
	if isDir(d) {
		return d, ""
	}
	return "", "$" + DirEnv + " is unset and ../shared/data is not beside the clone"
}

// repoRoot walks up from the working directory (a test's package directory) to the
// directory holding this module's go.mod.
func repoRoot() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && declares(mod) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// declares reports whether the go.mod text mod declares this module.
func declares(mod []byte) bool {
	for line := range bytes.Lines(mod) {
		if f := bytes.Fields(line); len(f) == 2 && string(f[0]) == "module" && string(f[1]) == modulePath {
			return true
		}
	}
	return false
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// Available reports whether the corpora were found, for code (such as a benchmark's setup)
// that chooses what to do without skipping.
func Available() bool {
	d, _ := root()
	return d != ""
}

// Dir returns the corpora's root directory. When they are missing it skips t, or fails it
// when ISOVET_REQUIRE_DATA=1.
func Dir(t testing.TB) string {
	t.Helper()
	d, why := root()
	if d == "" {
		missing(t, why)
	}
	return d
}

// Path returns the file or directory rel (slash-separated, relative to the corpora's root)
// in the corpora. When the corpora, or rel in them, are missing it skips t, or fails it when
// ISOVET_REQUIRE_DATA=1.
func Path(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(Dir(t), filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		missing(t, rel+" is missing from them ("+err.Error()+")")
	}
	return p
}

func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s needs the public corpora (%s=1): %s (README: \"Tests and the public data\")", t.Name(), RequireEnv, why)
	}
	t.Skipf("%s needs the public corpora: %s (README: \"Tests and the public data\")", t.Name(), why)
}

// Find returns the file or directory rel in the corpora and whether it is there, for uses
// that are optional (a fuzz test's extra seeds): it never skips.
func Find(rel string) (string, bool) {
	d, _ := root()
	if d == "" {
		return "", false
	}
	p := filepath.Join(d, filepath.FromSlash(rel))
	_, err := os.Stat(p)
	return p, err == nil
}
