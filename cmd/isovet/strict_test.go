package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/history/historytest"
)

// writeNative writes the history of the notation src as a native file in dir.
func writeNative(t *testing.T, dir, name, src string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := native.Write(fh, historytest.MustParse(src)); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// staleRead is serializable but not strictly serializable: T2 began after T1 ended and
// did not see its write.
const staleRead = `init 0
s1: T1 @[0,10] w(x,1)
s2: T2 @[20,30] r(x,0)
`

// TestStrictExit: a pass whose real-time follow-up fails exits 0, and 1 with --strict-exit,
// for one history and for a directory of them.
func TestStrictExit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	one := writeNative(t, dir, "stale.jsonl", staleRead)
	coll := filepath.Join(dir, "coll")
	if err := os.Mkdir(coll, 0o755); err != nil {
		t.Fatal(err)
	}
	writeNative(t, coll, "a.jsonl", staleRead)
	writeNative(t, coll, "b.jsonl", "init 0\ns1: T1 @[0,10] w(x,1)\ns2: T2 @[20,30] r(x,1)\n")
	tests := []struct {
		name    string
		args    []string
		want    int
		wantErr string
	}{
		{"follow-up failure is reported", []string{"check", "--level", "serializable", one}, exitOK, ""},
		{"follow-up failure is reported in the help", []string{"check", "--help"}, exitOK, ""},
		{"strict exit", []string{"check", "--strict-exit", "--level", "serializable", one}, exitViolation, "serializable holds but strict-serializable does not, and --strict-exit counts that as a violation"},
		{"strict exit, follow-up skipped", []string{"check", "--strict-exit", "--realtime-budget", "0", one}, exitOK, ""},
		{"strict exit, real-time level passes", []string{"check", "--strict-exit", "--level", "strict-serializable", filepath.Join(coll, "b.jsonl")}, exitOK, ""},
		{"directory", []string{"check", "--level", "serializable", coll}, exitOK, ""},
		{"directory, strict exit", []string{"check", "--strict-exit", "--level", "serializable", coll}, exitViolation, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, stderr := runCLI(t, tt.args...)
			if code != tt.want {
				t.Errorf("isovet %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(tt.args, " "), code, tt.want, out, stderr)
			}
			if tt.args[1] == "--help" && !strings.Contains(out, "--strict-exit makes it 1") {
				t.Errorf("check --help does not document --strict-exit:\n%s", out)
			}
			if tt.want == exitOK && strings.Contains(tt.name, "reported") && tt.args[1] != "--help" && !strings.Contains(out, "strict-serializable") {
				t.Errorf("isovet %s: the report does not mention the follow-up:\n%s", strings.Join(tt.args, " "), out)
			}
			if !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("isovet %s: stderr %q, want it to contain %q", strings.Join(tt.args, " "), stderr, tt.wantErr)
			}
		})
	}
}

// TestLevelSpellingsCheck: --level in another case, or with underscores, checks the level.
func TestLevelSpellingsCheck(t *testing.T) {
	t.Parallel()
	path := writeNative(t, t.TempDir(), "ok.jsonl", "init 0\ns1: T1 @[0,10] w(x,1)\ns2: T2 @[20,30] r(x,1)\n")
	for _, spelling := range []string{"Serializable", "SERIALIZABLE", "Strict_Serializable", "SNAPSHOT-ISOLATION", "PL-3"} {
		code, out, stderr := runCLI(t, "check", "--level", spelling, path)
		if code != exitOK || !strings.Contains(out, ": pass") {
			t.Errorf("check --level %s: exit %d, want 0 and a pass\nstdout:\n%s\nstderr:\n%s", spelling, code, out, stderr)
		}
	}
}
