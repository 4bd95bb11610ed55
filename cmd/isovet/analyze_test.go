package main

import (
	"os"
	"strings"
	"testing"

	"isovet/internal/smtlib/solve"
)

// TestAnalyzeTxns runs analyze on a subset of the bank example's programs:
// deposit alone has a lost update under EC at k = 2, and an unknown name is
// bad input.
func TestAnalyzeTxns(t *testing.T) {
	t.Parallel()
	if !solve.Available("z3") {
		if os.Getenv("ISOVET_REQUIRE_SERVICES") == "1" {
			t.Fatal("z3 not found on PATH and ISOVET_REQUIRE_SERVICES=1")
		}
		t.Skip("z3 not found on PATH")
	}
	const bank = "../../examples/programs/bank.txn"
	code, stdout, stderr := runCLI(t, "analyze", bank, "--model", "ec", "--bound", "2", "--txns", "deposit", "--no-unbounded")
	if code != 1 || !strings.Contains(stdout, "deposit(") || strings.Contains(stdout, "transfer(") {
		t.Errorf("analyze --txns deposit: exit %d, stdout %q, stderr %q; want exit 1 with deposit instances only", code, stdout, stderr)
	}
	code, _, stderr = runCLI(t, "analyze", bank, "--model", "ec", "--bound", "2", "--txns", "nosuch")
	if code != exitUsage || !strings.Contains(stderr, "nosuch") {
		t.Errorf("analyze --txns nosuch: exit %d, stderr %q; want exit 2 naming nosuch", code, stderr)
	}
}
