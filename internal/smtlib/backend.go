package smtlib

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// Status is a solver's answer to check-sat.
type Status int

// The solver answers. The zero value is Unknown, so an unset status is never
// mistaken for a proof.
const (
	Unknown Status = iota
	Sat
	Unsat
)

func (s Status) String() string {
	switch s {
	case Sat:
		return "sat"
	case Unsat:
		return "unsat"
	}
	return "unknown"
}

// Answer is the outcome of one check-sat.
type Answer struct {
	Status Status
	// Values are the (term value) pairs of a get-value issued after a sat
	// check-sat, in request order; nil otherwise.
	Values []Term
	// Reason explains an Unknown status (solver message, timeout).
	Reason string
	// Solver names the solver and its version, e.g. "z3 4.8.12".
	Solver string
	// Elapsed is the wall time the solver ran; CPU its user+system CPU time
	// (the better measure on a loaded machine).
	Elapsed time.Duration
	CPU     time.Duration
}

// Query is one satisfiability question: a script ending in (check-sat) and,
// when Values is non-empty, the terms to evaluate if the answer is sat.
type Query struct {
	Script *Script
	Values []Term
}

// Backend runs queries on a named solver ("z3" or "cvc5"). A timeout of zero
// means no limit. Implementations are in smtlib/solve.
type Backend interface {
	Solve(ctx context.Context, solver string, q Query, timeout time.Duration) (Answer, error)
}

// IntValue decodes a numeral or (- numeral) model value.
func IntValue(t Term) (int64, error) {
	if !t.isL {
		return strconv.ParseInt(t.atom, 10, 64)
	}
	if len(t.list) == 2 && t.Head() == "-" && !t.list[1].isL {
		n, err := strconv.ParseInt(t.list[1].atom, 10, 64)
		return -n, err
	}
	return 0, fmt.Errorf("smtlib: %s is not an integer value", t)
}

// BoolValue decodes true or false.
func BoolValue(t Term) (bool, error) {
	switch {
	case t.isTrue():
		return true, nil
	case t.isFalse():
		return false, nil
	}
	return false, fmt.Errorf("smtlib: %s is not a Boolean value", t)
}
