package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSatCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, cnf string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(cnf), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name     string
		cnf      string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{"sat", "p cnf 2 2\n1 2 0\n-1 0\n", 10, "s SATISFIABLE\nv -1 2 0\n", ""},
		{"unsat", "c x and not x\np cnf 1 2\n1 0\n-1 0\n", 20, "s UNSATISFIABLE\n", ""},
		{"malformed", "p cnf 2 1\n1 x 0\n", 2, "", "malformed.cnf: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, stderr := runCLI(t, "sat", write(tt.name+".cnf", tt.cnf))
			if code != tt.wantCode {
				t.Errorf("sat %s: exit %d, want %d (stderr %q)", tt.name, code, tt.wantCode, stderr)
			}
			if out != tt.wantOut {
				t.Errorf("sat %s: stdout %q, want %q", tt.name, out, tt.wantOut)
			}
			if tt.wantErr != "" && !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("sat %s: stderr %q, want it to contain %q", tt.name, stderr, tt.wantErr)
			}
		})
	}
}

func TestAnalyzeRefusesMalformedProgram(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "bad.txn")
	if err := os.WriteFile(p, []byte("TXN broken( {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "analyze", p, "--model", "ec", "--bound", "2")
	if code != exitUsage || !strings.Contains(stderr, "bad.txn:1:") {
		t.Errorf("analyze bad.txn: exit %d, stderr %q; want exit 2 naming bad.txn:1:", code, stderr)
	}
}
