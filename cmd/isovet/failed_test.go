package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckFailedStatements: a transaction logged as committed with a failed statement is
// named in the report and read as --failed-statements says, for one history and for a
// collection.
func TestCheckFailedStatements(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// T1 committed without its failed write of z, or rolled back: T2 read its write of y,
	// so only the rolled-back reading makes T2's read an aborted read.
	h := `{"isovet":1,"initial":0}
{"s":1,"id":1,"ops":[["w","y",5],["w","z",1,{"failed":true}]]}
{"s":2,"id":2,"ops":[["r","y",5]]}
`
	if err := os.MkdirAll(filepath.Join(dir, "coll"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.jsonl", "b.jsonl"} {
		if err := os.WriteFile(filepath.Join(dir, "coll", name), []byte(h), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "coll", "a.jsonl")
	for _, tt := range []struct {
		reading string
		code    int
	}{{"uncertain", 0}, {"rolled-back", 1}, {"skipped", 0}} {
		code, out, stderr := runCLI(t, "check", "--level", "serializable", "--failed-statements", tt.reading, "--realtime-budget", "0", file)
		if code != tt.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", tt.reading, code, tt.code, out, stderr)
		}
		if !strings.Contains(out, "Failed statements: 1 transaction logged as committed contains a failed statement (T1)") {
			t.Errorf("%s: the report does not name transaction 1:\n%s", tt.reading, out)
		}
	}
	code, out, _ := runCLI(t, "check", "--level", "serializable", "--realtime-budget", "0", filepath.Join(dir, "coll"))
	if code != 0 || !strings.Contains(out, "pass; 1 transaction logged as committed with a failed statement, read as uncertain") ||
		!strings.Contains(out, "2 of them hold transactions logged as committed with a failed statement") {
		t.Errorf("collection: exit %d\n%s", code, out)
	}
}

// TestBasicNeverPasses: the basic checks cannot decide a level, so on the command line
// their clean result is unknown (exit 3), never a pass, and no follow-up says the
// real-time counterpart holds.
func TestBasicNeverPasses(t *testing.T) {
	t.Parallel()
	lost := filepath.Join("..", "..", "testdata", "examples", "lost-update.edn")
	for _, level := range []string{"serializable", "strong-session-serializable", "strict-serializable", "snapshot-isolation"} {
		code, out, stderr := runCLI(t, "check", lost, "--method", "basic", "--level", level)
		if code != 3 || strings.Contains(out, "holds too") || !strings.Contains(out, "only the basic checks ran") {
			t.Errorf("%s: exit %d, want 3 and no follow-up\n%s%s", level, code, out, stderr)
		}
	}
}
