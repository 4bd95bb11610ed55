package sat

import "fmt"

// Var is a propositional variable. Variables are numbered from 1, in the
// order [Solver.NewVar] creates them; 0 is not a variable.
type Var uint32

// Lit is a literal: a variable or its negation. The sign is bit 0 (1 means
// negated) and the variable is in the remaining bits, so Lit(0) and Lit(1)
// are not literals.
type Lit uint32

// LitNull is the zero Lit, used where "no literal" is meant.
const LitNull Lit = 0

// Pos returns the positive literal of v.
func (v Var) Pos() Lit { return Lit(v << 1) }

// Neg returns the negative literal of v.
func (v Var) Neg() Lit { return Lit(v<<1 | 1) }

// Var returns the variable of m.
func (m Lit) Var() Var { return Var(m >> 1) }

// Not returns the negation of m.
func (m Lit) Not() Lit { return m ^ 1 }

// IsNeg reports whether m is a negative literal.
func (m Lit) IsNeg() bool { return m&1 == 1 }

// Dimacs returns m as a DIMACS integer: v or -v.
func (m Lit) Dimacs() int {
	if m.IsNeg() {
		return -int(m.Var())
	}
	return int(m.Var())
}

// LitOf returns the literal of the DIMACS integer i (non-zero).
func LitOf(i int) Lit {
	if i < 0 {
		return Var(-i).Neg()
	}
	return Var(i).Pos()
}

// String formats m as its DIMACS integer.
func (m Lit) String() string { return fmt.Sprint(m.Dimacs()) }

// LBool is the value of a literal under a partial assignment.
type LBool int8

// Values of a literal under a partial assignment.
const (
	Undef LBool = 0
	True  LBool = 1
	False LBool = -1
)

// String returns "undef", "true" or "false".
func (b LBool) String() string {
	switch b {
	case True:
		return "true"
	case False:
		return "false"
	}
	return "undef"
}

// Status is the outcome of [Solver.Solve].
type Status int8

// Outcomes of [Solver.Solve]. The zero value is Unknown: the search stopped
// (cancellation, budget) before deciding.
const (
	Unknown Status = iota
	Sat
	Unsat
)

// String returns "UNKNOWN", "SATISFIABLE" or "UNSATISFIABLE", as SAT
// competitions print it.
func (st Status) String() string {
	switch st {
	case Sat:
		return "SATISFIABLE"
	case Unsat:
		return "UNSATISFIABLE"
	}
	return "UNKNOWN"
}
