package static

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/isovet/isovet/internal/smtlib"
	"github.com/isovet/isovet/internal/smtlib/solve"
)

// TestVacuousModelRefused: a model file that admits no serial execution
// ((assert false), or one under which arbitration never holds) is refused
// with ErrVacuous, never answered "serializable"; the built-in models pass
// the check.
func TestVacuousModelRefused(t *testing.T) {
	t.Parallel()
	needSolver(t, "z3")
	prog := mustParse(t, withdrawSrc)
	for _, tc := range []struct{ name, src string }{
		{"assert-false", "(assert false)"},
		{"no-arbitration", "(assert (forall ((a T) (b T)) (not (ar a b))))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := ParseModel(tc.name+".smt2", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Analyze(context.Background(), prog, Options{Model: m, Bound: 2, Backend: solve.Exec{}, Timeout: time.Minute})
			if !errors.Is(err, ErrVacuous) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("Analyze under %s: err %v, want ErrVacuous (bad input)", tc.src, err)
			}
			if res.Verdict == Serializable || res.Verdict == NoneUpToBound {
				t.Errorf("Analyze under %s: verdict %s, want no safe verdict", tc.src, res.Verdict)
			}
			if !strings.Contains(err.Error(), "admits no serial execution") {
				t.Errorf("error %q does not say the model admits no serial execution", err)
			}
		})
	}
	res, err := Analyze(context.Background(), prog, Options{Model: model(t, "psi"), Bound: 4, Backend: solve.Exec{}, Timeout: time.Minute})
	if err != nil || res.Verdict != Serializable || !strings.Contains(res.SerialCheck, "admits serial executions") {
		t.Errorf("withdraw under psi: %v, %s, serial check %q; want serializable after the serial check", err, res.Verdict, res.SerialCheck)
	}
}

// TestFeketeWriteSkew: the dependency-graph test proves the promoted write
// skew serializable under SI before any bounded query, naming the theorem;
// on the plain write skew it finds a dangerous structure and gives way to
// the bounded search, which confirms the anomaly.
func TestFeketeWriteSkew(t *testing.T) {
	t.Parallel()
	needSolver(t, "z3")
	for _, tc := range []struct {
		file string
		want Verdict
	}{{"write-skew-promoted.txn", Serializable}, {"write-skew.txn", Anomaly}} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(filepath.Join(examplesDir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Analyze(context.Background(), mustParse(t, string(src)), Options{Model: model(t, "si"), Bound: 2, Backend: solve.Exec{}, Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tc.want {
				t.Fatalf("%s under si: %s (%s%s), want %s", tc.file, res.Verdict, res.Proof, res.Reason, tc.want)
			}
			bounded := false
			for _, q := range res.Queries {
				bounded = bounded || strings.HasPrefix(q.Query, "execution")
			}
			if tc.want == Serializable && (!strings.Contains(res.Proof, "Theorem 3.1") || bounded) {
				t.Errorf("proof %q (bounded queries asked: %v): want Fekete et al.'s Theorem 3.1 before any bounded query", res.Proof, bounded)
			}
		})
	}
}

// doctorsSrc is the on-call rota: a doctor leaves only while two of the
// shift are on call.
const doctorsSrc = `TABLE Doctors (did KEY, shift, oncall);
TXN GoOffCall(D, S) {
  SELECT COUNT(*) AS n FROM Doctors WHERE shift = S AND oncall = 1;
  IF n >= 2 {
    UPDATE Doctors SET oncall = 0 WHERE did = D AND shift = S;
  }
}`

// TestRefinementExcludesRefuted: when the replay refutes a model, the
// solver is asked again with the model's execution excluded, so no refuted
// execution comes back; the search ends in a confirmed anomaly or, with the
// budget of refinements spent, inconclusive (never a safe verdict). D and S
// are equality-only parameters, so each refuted model excludes its class:
// two refuted executions never agree on which parameters equal which.
func TestRefinementExcludesRefuted(t *testing.T) {
	t.Parallel()
	needSolver(t, "z3")
	prog := mustParse(t, doctorsSrc)
	eq := eqOnlyParams(prog)[prog.Txns[0]]
	if !eq["D"] || !eq["S"] {
		t.Fatalf("equality-only parameters of GoOffCall: %v, want D and S", eq)
	}
	const budget = 3
	res, err := Analyze(context.Background(), prog, Options{Model: model(t, "si"), Bound: 2, Backend: solve.Exec{}, Timeout: time.Minute,
		MaxRefinements: budget, NoUnbounded: true})
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	for _, q := range res.Queries {
		if q.Query == "execution k=2" {
			asked++
		}
	}
	switch res.Verdict {
	case Anomaly:
		if !res.Witness.Confirmed || asked != len(res.Refuted)+1 {
			t.Errorf("anomaly after %d queries and %d refuted models (confirmed %v)", asked, len(res.Refuted), res.Witness.Confirmed)
		}
	case Inconclusive:
		if len(res.Refuted) != budget+1 || asked != budget+1 {
			t.Errorf("inconclusive after %d queries and %d refuted models, want %d of each", asked, len(res.Refuted), budget+1)
		}
	default:
		t.Fatalf("verdict %s (%s), want an anomaly or inconclusive", res.Verdict, res.Reason)
	}
	seen := map[string]bool{}
	for _, w := range res.Refuted {
		if w.Confirmed {
			t.Errorf("a confirmed witness was counted as refuted")
		}
		class := fmt.Sprint(w.Vis, paramPattern(w, programConsts(prog)))
		if seen[class] {
			t.Errorf("refuted class %s came back after it was excluded", class)
		}
		seen[class] = true
	}
}

// paramPattern is which parameter values of w equal each other and which
// equal each constant.
func paramPattern(w *Witness, consts []int64) string {
	var vals []int64
	for _, in := range w.Instances {
		for _, p := range in.Params {
			vals = append(vals, p.Value)
		}
	}
	var b strings.Builder
	for i, v := range vals {
		for _, c := range consts {
			fmt.Fprint(&b, v == c, " ")
		}
		for _, u := range vals[:i] {
			fmt.Fprint(&b, v == u, " ")
		}
	}
	return b.String()
}

// spuriousFirst runs the real solver, but answers the first bounded query
// under an extra constraint (the two instances' shifts differ), as a solver
// might: a model the replay refutes, since doctors of different shifts do
// not conflict.
type spuriousFirst struct {
	inner smtlib.Backend
	asked bool
}

func (b *spuriousFirst) Solve(ctx context.Context, solver string, q smtlib.Query, timeout time.Duration) (smtlib.Answer, error) {
	if !b.asked && queryName(q) == "execution k=2" {
		b.asked = true
		extra := smtlib.App("assert", smtlib.Not(smtlib.Eq(smtlib.App("GoOffCall.S", smtlib.Sym("e1")), smtlib.App("GoOffCall.S", smtlib.Sym("e2")))))
		q = smtlib.Query{Script: q.Script.Clone().InsertBeforeAsserts(extra), Values: q.Values}
	}
	return b.inner.Solve(ctx, solver, q, timeout)
}

// TestRefinementFindsAnomaly: the first model (two doctors of different
// shifts) is refuted by the replay; the refinement excludes its class and
// asks again, and the next model is the real write skew, confirmed.
func TestRefinementFindsAnomaly(t *testing.T) {
	t.Parallel()
	needSolver(t, "z3")
	prog := mustParse(t, doctorsSrc)
	res, err := Analyze(context.Background(), prog, Options{Model: model(t, "si"), Bound: 2, Backend: &spuriousFirst{inner: solve.Exec{}},
		Timeout: time.Minute, NoUnbounded: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Anomaly || !res.Witness.Confirmed || len(res.Refuted) == 0 {
		var b strings.Builder
		WriteText(&b, prog, "doctors", res)
		t.Fatalf("verdict %s with %d refuted models, want a confirmed anomaly after at least one refuted model\n%s", res.Verdict, len(res.Refuted), b.String())
	}
	first := res.Refuted[0].Instances
	if first[0].Params[1].Value == first[1].Params[1].Value {
		t.Errorf("the first refuted model has one shift for both doctors: %v", first)
	}
	w := res.Witness.Instances
	if w[0].Params[1].Value != w[1].Params[1].Value || w[0].Params[0].Value == w[1].Params[0].Value {
		t.Errorf("confirmed witness %v: want two doctors of one shift", w)
	}
	for _, row := range res.Witness.Initial["Doctors"] {
		if row.Values["oncall"] != 1 {
			t.Errorf("initial row %v: want every doctor on call", row)
		}
	}
}
