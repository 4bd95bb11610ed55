package solve

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/isovet/isovet/internal/smtlib"
)

// needSolver skips when the solver is missing, unless ISOVET_REQUIRE_SERVICES=1.
func needSolver(t *testing.T, name string) {
	t.Helper()
	if Available(name) {
		return
	}
	if os.Getenv("ISOVET_REQUIRE_SERVICES") == "1" {
		t.Fatalf("%s not found on PATH and ISOVET_REQUIRE_SERVICES=1 (apt-get install -y z3 cvc5)", name)
	}
	t.Skipf("%s not found on PATH; install it with apt-get install -y z3 cvc5", name)
}

func TestSolve(t *testing.T) {
	for _, solver := range []string{"z3", "cvc5"} {
		t.Run(solver, func(t *testing.T) {
			t.Parallel()
			needSolver(t, solver)
			for _, tc := range []struct {
				name   string
				assert smtlib.Term
				want   smtlib.Status
			}{
				{"sat", smtlib.App("<", smtlib.App("f", smtlib.Sym("a")), smtlib.Int(-3)), smtlib.Sat},
				{"unsat", smtlib.False, smtlib.Unsat},
			} {
				var s smtlib.Script
				s.Add(smtlib.App("set-logic", smtlib.Sym("ALL")),
					smtlib.App("declare-sort", smtlib.Sym("T"), smtlib.Sym("0")),
					smtlib.App("declare-fun", smtlib.Sym("f"), smtlib.List(smtlib.Sym("T")), smtlib.Sym("Int")),
					smtlib.App("declare-const", smtlib.Sym("a"), smtlib.Sym("T")))
				s.Add(smtlib.App("assert", tc.assert), smtlib.Cmd("check-sat"))
				a, err := Exec{}.Solve(context.Background(), solver, smtlib.Query{Script: &s, Values: []smtlib.Term{smtlib.App("f", smtlib.Sym("a"))}}, 10*time.Second)
				if err != nil {
					t.Fatalf("Solve(%s): %v", tc.name, err)
				}
				if a.Status != tc.want {
					t.Fatalf("Solve(%s) = %v, want %v", tc.name, a.Status, tc.want)
				}
				if tc.want == smtlib.Sat {
					if len(a.Values) != 1 {
						t.Fatalf("Solve(%s) values = %v", tc.name, a.Values)
					}
					n, err := smtlib.IntValue(a.Values[0].Elems()[1])
					if err != nil || n >= -3 {
						t.Fatalf("Solve(%s) f(a) = %v (%v), want < -3", tc.name, a.Values[0], err)
					}
				}
			}
		})
	}
}

func TestUnknownSolver(t *testing.T) {
	if _, err := (Exec{}).Solve(context.Background(), "yices", smtlib.Query{Script: &smtlib.Script{}}, 0); err == nil {
		t.Fatal("Solve(yices) succeeded, want ErrUnknownSolver")
	}
}
