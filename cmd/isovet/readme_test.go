package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeMainCommand runs the README's first command in-process, exactly as written there,
// and checks that it finds and explains an anomaly.
func TestReadmeMainCommand(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go run \./cmd/isovet (run .*)$`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no `go run ./cmd/isovet run ...` command")
	}
	args := strings.Fields(string(m[1]))
	code, out, stderr := runCLI(t, args...)
	if code != exitViolation {
		t.Fatalf("isovet %s: exit %d, want %d (a violation)\nstdout:\n%s\nstderr:\n%s", m[1], code, exitViolation, out, stderr)
	}
	for _, want := range []string{"write skew", "a contradiction"} {
		if !strings.Contains(out, want) {
			t.Errorf("isovet %s: output does not explain the anomaly (no %q):\n%s", m[1], want, out)
		}
	}
}
