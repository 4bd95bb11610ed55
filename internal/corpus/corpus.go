// Package corpus finds the public history corpora for tests: the histories published with
// Elle, Cobra, dbcop, PolySI, Plume, Chronos, Vbox and VeriStrong, kept outside the
// repository because of their size.
//
// Tests find them through [Dir] or [Path], in the directory $ISOVET_SHARED_DATA names: no
// default points outside the repository. When they are missing a test that needs them
// skips, with a message naming ISOVET_SHARED_DATA; when ISOVET_REQUIRE_DATA=1 (as CI sets
// it) the test fails instead, so CI never skips one silently.
//
// It is imported by tests only. A skipped test's message is "<TestName> needs the public
// corpora: ...", so
//
//	go test -v ./... | grep 'needs the public corpora'
//
// lists every test that was skipped for want of them.
package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

var root = sync.OnceValues(find)

// find returns the corpora's root directory and, when it is missing, a sentence saying
// why.
func find() (string, string) {
	d := os.Getenv(DirEnv)
	switch {
	case d == "":
		return "", "$" + DirEnv + " is unset"
	case !isDir(d):
		return "", d + " ($" + DirEnv + ") is not a directory"
	}
	return d, ""
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
	announce.Do(func() { tellTerminal(why) })
	t.Skipf("%s needs the public corpora: %s (README: \"Tests and the public data\")", t.Name(), why)
}

var announce sync.Once

// tellTerminal says once per test binary, on the terminal the tests run from, that some of
// its tests skip for want of the corpora. go test shows nothing a passing package prints,
// so without this a plain "go test ./..." would skip them silently; with no terminal (CI,
// a pipe) it says nothing, and -v lists every skipped test.
func tellTerminal(why string) {
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer tty.Close()
	pkg := strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")
	fmt.Fprintf(tty, "isovet: %s: tests that need the public corpora skip (%s); list them with go test -v ./... | grep 'needs the public corpora'\n", pkg, why)
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
