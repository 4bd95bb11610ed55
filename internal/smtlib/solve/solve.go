// Package solve runs the SMT solvers z3 and cvc5 as child processes (os/exec)
// and implements [smtlib.Backend]. It knows nothing about databases: it sends
// a script on stdin and parses sat, unsat or unknown and the get-value answer.
package solve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/isovet/isovet/internal/smtlib"
)

// ErrUnknownSolver is returned for a solver name other than z3 or cvc5.
var ErrUnknownSolver = errors.New("solve: unknown solver")

// ErrNotInstalled is wrapped when the solver binary is not on PATH.
var ErrNotInstalled = errors.New("solve: solver not installed")

// Exec is the [smtlib.Backend] that runs solver binaries found on PATH. The
// zero value is ready to use and safe for concurrent use.
type Exec struct{}

var versions sync.Map // solver name -> version string

// Available reports whether the named solver's binary is on PATH.
func Available(solver string) bool {
	_, err := exec.LookPath(solver)
	return err == nil
}

func args(solver string, timeout time.Duration) ([]string, error) {
	switch solver {
	case "z3":
		a := []string{"-in", "-smt2"}
		if timeout > 0 {
			a = append(a, "-t:"+strconv.FormatInt(timeout.Milliseconds(), 10))
		}
		return a, nil
	case "cvc5":
		a := []string{"--lang", "smt2", "--produce-models", "--finite-model-find", "--incremental"}
		if timeout > 0 {
			a = append(a, "--tlimit-per="+strconv.FormatInt(timeout.Milliseconds(), 10))
		}
		return a, nil
	}
	return nil, fmt.Errorf("%w %q (want z3 or cvc5)", ErrUnknownSolver, solver)
}

// Version returns the solver's name and version, e.g. "z3 4.8.12".
func Version(ctx context.Context, solver string) string {
	if v, ok := versions.Load(solver); ok {
		return v.(string)
	}
	out, err := exec.CommandContext(ctx, solver, "--version").Output()
	v := solver
	if err == nil {
		if f, ok := versionField(string(out)); ok {
			v = solver + " " + f
		}
	}
	versions.Store(solver, v)
	return v
}

// versionField is the first word of a --version output that looks like a
// version number (a digit first, a dot in it).
func versionField(out string) (string, bool) {
	for _, f := range strings.Fields(out) {
		if f[0] >= '0' && f[0] <= '9' && strings.Contains(f, ".") {
			return f, true
		}
	}
	return "", false
}

// Solve runs q on the named solver. The context bounds the process; timeout,
// when positive, is also passed to the solver as its own limit, and the process
// is killed a second after it. A timeout or solver-reported "unknown" is an
// Answer with Status Unknown and a Reason, not an error; errors mean the solver
// could not be run or produced output that is not an answer.
func (Exec) Solve(ctx context.Context, solver string, q smtlib.Query, timeout time.Duration) (smtlib.Answer, error) {
	a, err := args(solver, timeout)
	if err != nil {
		return smtlib.Answer{}, err
	}
	if _, err := exec.LookPath(solver); err != nil {
		return smtlib.Answer{}, fmt.Errorf("%w: %s", ErrNotInstalled, solver)
	}
	ans := smtlib.Answer{Solver: Version(ctx, solver)}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout+time.Second)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, solver, a...)
	cmd.Stdin = input(q)
	var out, stderr bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &stderr
	start := time.Now()
	runErr := cmd.Run()
	ans.Elapsed = time.Since(start)
	if cmd.ProcessState != nil {
		ans.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if ctx.Err() != nil {
		if cause := context.Cause(ctx); errors.Is(cause, context.DeadlineExceeded) && timeout > 0 {
			ans.Reason = "timeout after " + timeout.String()
			return ans, nil
		}
		return ans, fmt.Errorf("running %s: %w", solver, context.Cause(ctx))
	}
	return parseOutput(ans, out.String(), stderr.String(), runErr)
}

// input is what the solver reads for q: its script, then the questions
// for the reason of an unknown and for q's values, then exit.
func input(q smtlib.Query) *bytes.Buffer {
	var in bytes.Buffer
	q.Script.WriteTo(&in)
	in.WriteString("(get-info :reason-unknown)\n")
	if len(q.Values) > 0 {
		in.WriteString(smtlib.App("get-value", smtlib.List(q.Values...)).String())
		in.WriteByte('\n')
	}
	in.WriteString("(exit)\n")
	return &in
}

func parseOutput(ans smtlib.Answer, out, stderr string, runErr error) (smtlib.Answer, error) {
	terms, err := smtlib.Parse(out)
	if err != nil {
		return ans, fmt.Errorf("reading %s output: %w", ans.Solver, err)
	}
	i, errs := answerIndex(terms)
	if i == len(terms) {
		return ans, fmt.Errorf("%s gave no answer: %s %s %v", ans.Solver, strings.Join(errs, " "), strings.TrimSpace(stderr), runErr)
	}
	st, ok := statuses[terms[i].Atom()]
	if !ok {
		return ans, fmt.Errorf("%s answered %s: %s", ans.Solver, terms[i], strings.Join(errs, " "))
	}
	ans.Status = st
	if len(errs) > 0 {
		return ans, fmt.Errorf("%s reported %s", ans.Solver, strings.Join(errs, " "))
	}
	readAfterAnswer(&ans, terms[i+1:])
	if ans.Status == smtlib.Unknown && ans.Reason == "" {
		ans.Reason = "solver answered unknown"
	}
	return ans, nil
}

// statuses are the answers a solver may give to check-sat.
var statuses = map[string]smtlib.Status{"sat": smtlib.Sat, "unsat": smtlib.Unsat, "unknown": smtlib.Unknown, "timeout": smtlib.Unknown}

// answerIndex returns the index of the first atom of the output (the
// check-sat answer; len(terms) if none) and the errors reported before it.
func answerIndex(terms []smtlib.Term) (int, []string) {
	var errs []string
	for i, t := range terms {
		if t.Head() == "error" {
			errs = append(errs, t.String())
			continue
		}
		if !t.IsList() {
			return i, errs
		}
	}
	return len(terms), errs
}

// readAfterAnswer reads the reason of an unknown and the values of a sat
// answer from the output after it. Errors there (get-value after unsat,
// get-info after sat) are expected and ignored.
func readAfterAnswer(ans *smtlib.Answer, terms []smtlib.Term) {
	for _, t := range terms {
		switch {
		case t.Head() == ":reason-unknown" && len(t.Elems()) == 2:
			if ans.Status == smtlib.Unknown {
				ans.Reason = t.Elems()[1].String()
			}
		case ans.Status == smtlib.Sat && t.IsList() && t.Head() == "" && ans.Values == nil:
			ans.Values = t.Elems()
		}
	}
}
