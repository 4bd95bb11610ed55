package main

import (
	"os"
	"path/filepath"
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
// rules out its SI write skew up to the bound (exit 3: no anomaly but, with
// --no-unbounded, no proof; the assumption printed), and
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
	if code != 3 || !strings.Contains(stdout, "ASSUME INITIALLY at") || !strings.Contains(stdout, "satisfying the assumptions") || !strings.Contains(stdout, "no proof") {
		t.Errorf("analyze queue: exit %d, stdout %q, stderr %q; want exit 3 stating the assumption and that there is no proof", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "analyze", queue, "--model", "si", "--bound", "3", "--no-unbounded", "--ignore-assumptions")
	if code != 1 || strings.Contains(stdout, "ASSUME") || !strings.Contains(stdout, "confirmed by replay") {
		t.Errorf("analyze queue --ignore-assumptions: exit %d, stdout %q, stderr %q; want exit 1, a confirmed anomaly", code, stdout, stderr)
	}
}

// TestAnalyzeExitCodes: 1 for a confirmed anomaly (write skew under SI), 0
// for a proof for every size (promoted write skew under SI, by Fekete et
// al.'s theorem, named), 3 for no anomaly up to the bound without a proof,
// 2 for a model file that admits no serial execution, with the sentence
// saying so; a spent solver budget is exit 3, never a proof.
func TestAnalyzeExitCodes(t *testing.T) {
	t.Parallel()
	if !solve.Available("z3") {
		if os.Getenv("ISOVET_REQUIRE_SERVICES") == "1" {
			t.Fatal("z3 not found on PATH and ISOVET_REQUIRE_SERVICES=1")
		}
		t.Skip("z3 not found on PATH")
	}
	const skew, promoted = "../../examples/programs/write-skew.txn", "../../examples/programs/write-skew-promoted.txn"
	vacuous := filepath.Join(t.TempDir(), "false.smt2")
	if err := os.WriteFile(vacuous, []byte("(assert false)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noAr := filepath.Join(t.TempDir(), "no-ar.smt2")
	if err := os.WriteFile(noAr, []byte("(assert (forall ((a T) (b T)) (not (ar a b))))\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		say  string
	}{
		{[]string{skew, "--model", "si", "--bound", "2"}, 1, "confirmed by replay (exit 1)"},
		{[]string{promoted, "--model", "si", "--bound", "2"}, 0, "Theorem 3.1"},
		{[]string{skew, "--model", "ser", "--bound", "2", "--no-unbounded"}, 3, "no proof for larger executions (exit 3)"},
		{[]string{skew, "--model", vacuous, "--bound", "2"}, exitUsage, "admits no serial execution"},
		// The budget is the solver's work: with a resource limit of 1 the
		// solver answers unknown at once, and no safe verdict stands.
		{[]string{promoted, "--model", "si", "--bound", "2", "--rlimit", "1", "--unbounded-rlimit", "0"}, 3, "no safe verdict stands"},
		{[]string{skew, "--model", noAr, "--bound", "2"}, exitUsage, "admits no serial execution"},
	} {
		code, stdout, stderr := runCLI(t, append([]string{"analyze"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stdout+stderr, tc.say) {
			t.Errorf("analyze %v: exit %d, stdout %q, stderr %q; want exit %d saying %q", tc.args, code, stdout, stderr, tc.code, tc.say)
		}
		if tc.code == exitUsage && strings.Contains(stdout, "serializable") {
			t.Errorf("analyze %v under a vacuous model printed a serializable verdict: %q", tc.args, stdout)
		}
	}
}
