package main

import (
	"slices"
	"strings"
	"testing"
)

// TestCompleteFlagValues runs cobra's hidden __complete command, what the shell scripts
// call, and checks the values offered and the directive line.
func TestCompleteFlagValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want []string // in order; the last line is the directive
	}{
		{[]string{"check", "--level", ""}, []string{"read-committed", "read-atomic", "causal", "snapshot-isolation", "strong-session-snapshot-isolation", "strong-snapshot-isolation", "serializable", "strong-session-serializable", "strict-serializable", ":4"}},
		{[]string{"check", "--level", "Strict"}, []string{"strict-serializable", ":4"}},
		{[]string{"check", "-l", "read-"}, []string{"read-committed", "read-atomic", ":4"}},
		{[]string{"run", "--check", "si,strong-s"}, []string{"si,strong-session-snapshot-isolation", "si,strong-snapshot-isolation", "si,strong-session-serializable", ":4"}},
		{[]string{"check", "--method", ""}, []string{"auto", "black-box", "timestamp", "basic", ":4"}},
		{[]string{"run", "--method", "b"}, []string{"black-box", "basic", ":4"}},
		{[]string{"run", "--isolation", "re"}, []string{"repeatable-read", "read-committed", "read-uncommitted", ":4"}},
		{[]string{"coo", "--isolation", "serializable,read-"}, []string{"serializable,read-uncommitted", "serializable,read-committed", ":4"}},
		{[]string{"run", "--db", "memdb://s"}, []string{"memdb://serializable", "memdb://snapshot-isolation", ":6"}},
		{[]string{"run", "--db", "p"}, []string{"postgres://", "postgresql://", ":6"}},
		{[]string{"run", "--workload", "list"}, []string{"list-append", ":4"}},
		{[]string{"check", "--failed-statements", ""}, []string{"uncertain", "rolled-back", "skipped", ":4"}},
	}
	for _, tt := range tests {
		args := append([]string{"__complete"}, tt.args...)
		code, out, _ := runCLI(t, args...)
		if code != exitOK {
			t.Errorf("isovet %s: exit %d", strings.Join(args, " "), code)
			continue
		}
		got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if !slices.Equal(got, tt.want) {
			t.Errorf("isovet %q offered %q, want %q", args, got, tt.want)
		}
	}
	// Every input format and every writable format is offered.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "check", "--format", ""}, "elle-edn\n"},
		{[]string{"__complete", "stat", "-f", "v"}, "vbox\n"},
		{[]string{"__complete", "convert", "--to", ""}, "native\n"},
	} {
		if _, out, _ := runCLI(t, c.args...); !strings.Contains(out, c.want) || !strings.HasSuffix(out, ":4\n") {
			t.Errorf("isovet %q offered %q, want %q among them", c.args, out, c.want)
		}
	}
}
