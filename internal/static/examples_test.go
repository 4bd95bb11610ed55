package static

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/isovet/isovet/internal/smtlib/solve"
)

// want is one expectation from an example's header:
//
//	-- want: MODEL bound=K VERDICT[@k] [txns=A,B,...] [bounded] [z3only]
//
// VERDICT is anomaly, none-up-to-bound, serializable or inconclusive; @k is
// the size of the anomalous execution.
type want struct {
	line    int
	model   string
	bound   int
	verdict string
	k       int
	txns    []string
	bounded bool // skip the unbounded proofs
	z3only  bool // too slow for cvc5 within the test budget
	// noassume ignores the program's ASSUME INITIALLY declarations.
	noassume bool
}

func (w want) String() string {
	s := fmt.Sprintf("%s bound=%d %s", w.model, w.bound, w.verdict)
	if w.k > 0 {
		s += "@" + strconv.Itoa(w.k)
	}
	if w.txns != nil {
		s += " txns=" + strings.Join(w.txns, ",")
	}
	if w.bounded {
		s += " bounded"
	}
	if w.z3only {
		s += " z3only"
	}
	if w.noassume {
		s += " noassume"
	}
	return s
}

func readWants(t *testing.T, path string, src []byte) []want {
	t.Helper()
	var out []want
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		rest, ok := strings.CutPrefix(line, "-- want:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 3 || !strings.HasPrefix(f[1], "bound=") {
			t.Fatalf("%s:%d: malformed want line %q", path, n, line)
		}
		w := want{line: n, model: f[0]}
		w.bound, _ = strconv.Atoi(strings.TrimPrefix(f[1], "bound="))
		w.verdict = f[2]
		if v, k, ok := strings.Cut(f[2], "@"); ok {
			w.verdict = v
			w.k, _ = strconv.Atoi(k)
		}
		for _, opt := range f[3:] {
			if v, ok := strings.CutPrefix(opt, "txns="); ok {
				w.txns = strings.Split(v, ",")
			} else if opt == "bounded" {
				w.bounded = true
			} else if opt == "z3only" {
				w.z3only = true
			} else if opt == "noassume" {
				w.noassume = true
			} else {
				t.Fatalf("%s:%d: unknown option %q", path, n, opt)
			}
		}
		out = append(out, w)
	}
	return out
}

// TestExamples checks every example program against the expectations in its
// header, with z3 and with cvc5 (the two must agree with the header, hence
// with each other). Anomalies must be confirmed by replay.
func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("solver runs skipped in -short mode")
	}
	for _, path := range exampleFiles(t) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := Parse(src)
		if err != nil {
			t.Fatalf("Parse(%s): %v", path, err)
		}
		wants := readWants(t, path, src)
		if len(wants) == 0 {
			t.Errorf("%s has no '-- want:' header lines", path)
		}
		for _, solver := range []string{"z3", "cvc5"} {
			for _, w := range wants {
				if w.z3only && solver != "z3" {
					continue
				}
				name := fmt.Sprintf("%s/%s/%s", strings.TrimSuffix(filepath.Base(path), ".txn"), solver, strings.ReplaceAll(w.String(), " ", "_"))
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					needSolver(t, solver)
					m := exampleModel(t, w.model)
					res, err := Analyze(context.Background(), prog, Options{Model: m, Bound: w.bound, Solver: solver,
						Timeout: 10 * time.Minute, Backend: solve.Exec{}, Txns: w.txns, NoUnbounded: w.bounded, IgnoreAssumptions: w.noassume})
					if err != nil {
						t.Fatalf("Analyze: %v", err)
					}
					t.Logf("%s:%d %s: %s k=%d in %v wall, %v solver cpu; %s", path, w.line, solver, res.Verdict, res.K, res.Elapsed.Round(time.Millisecond), res.CPU.Round(time.Millisecond), res.Proof+res.Reason)
					if got := res.Verdict.String(); got != w.verdict || (w.k > 0 && res.K != w.k) {
						var b bytes.Buffer
						WriteText(&b, prog, path, res)
						t.Errorf("%s:%d: %s: got %s@%d, want %s\n%s", path, w.line, solver, got, res.K, w, b.String())
					}
					if res.Verdict == Anomaly && (res.Witness == nil || !res.Witness.Confirmed) {
						t.Errorf("anomaly not confirmed by replay")
					}
					if want := len(prog.Assumes); !w.noassume && len(res.Assumptions) == 0 && want > 0 && w.txns == nil {
						t.Errorf("the program has %d ASSUME INITIALLY declarations but the result states none", want)
					}
				})
			}
		}
	}
}

// exampleModel is a built-in model or an axiom file next to the examples.
func exampleModel(t *testing.T, name string) Model {
	t.Helper()
	if !strings.HasSuffix(name, ".smt2") {
		return model(t, name)
	}
	src, err := os.ReadFile(filepath.Join(examplesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseModel(name, src)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
