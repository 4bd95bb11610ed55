package main

import (
	"os"
	"strings"
	"testing"

	"github.com/isovet/isovet/internal/smtlib/solve"
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

// TestAnalyzeAssumptions: the queue example's ASSUME INITIALLY condition
// rules out its SI write skew (exit 0, the assumption printed), and
// --ignore-assumptions brings it back (exit 1, confirmed by replay).
func TestAnalyzeAssumptions(t *testing.T) {
	t.Parallel()
	if !solve.Available("z3") {
		if os.Getenv("ISOVET_REQUIRE_SERVICES") == "1" {
			t.Fatal("z3 not found on PATH and ISOVET_REQUIRE_SERVICES=1")
		}
		t.Skip("z3 not found on PATH")
	}
	const queue = "../../examples/programs/queue.txn"
	code, stdout, stderr := runCLI(t, "analyze", queue, "--model", "si", "--bound", "3", "--no-unbounded")
	if code != 0 || !strings.Contains(stdout, "ASSUME INITIALLY at") || !strings.Contains(stdout, "satisfying the assumptions") {
		t.Errorf("analyze queue: exit %d, stdout %q, stderr %q; want exit 0 stating the assumption", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "analyze", queue, "--model", "si", "--bound", "3", "--no-unbounded", "--ignore-assumptions")
	if code != 1 || strings.Contains(stdout, "ASSUME") || !strings.Contains(stdout, "confirmed by replay") {
		t.Errorf("analyze queue --ignore-assumptions: exit %d, stdout %q, stderr %q; want exit 1, a confirmed anomaly", code, stdout, stderr)
	}
}
