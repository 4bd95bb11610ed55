package sat

// Theory is a decision procedure attached to a [Solver], in the spirit of
// IPASIR-UP (Fazekas et al., SAT 2023). The solver tells the theory which
// literals become true and when it backtracks; the theory answers with
// conflicts, implied literals and polarity advice. All methods are called
// from inside [Solver.Solve], on the solver's goroutine.
//
// Slices returned by a theory are copied by the solver before the next
// call, so a theory may reuse its buffers.
type Theory interface {
	// Assign tells the theory that m became true; level is the decision
	// level at which the solver reports it (Backtrack(l) undoes what was
	// reported at levels above l). Every assigned literal is reported once
	// per assignment, in trail order, including facts at level 0 (also those
	// assigned before the theory was attached). After chronological
	// backtracking, a literal implied below the current level may survive
	// Backtrack(l) in the solver although it was reported above l: the
	// solver then reports it again, at level l. It returns nil, or a
	// conflict: a clause every literal of which is false under the current
	// assignment (m may be among them as ¬m). After a conflict the solver
	// backtracks; literals not yet reported are reported again after that.
	Assign(m Lit, level int) (conflict []Lit)

	// Propagate appends to dst literals implied by the theory under the
	// assignment reported so far, and returns dst. It is called when unit
	// propagation is done; returning no new literal ends theory propagation.
	// Literals already true are ignored; an implied literal that is false
	// is a conflict whose clause the solver obtains from Reason.
	Propagate(dst []Lit) []Lit

	// Reason appends to dst the clause that justifies a literal m that
	// Propagate returned, and returns it. The clause contains m; its other
	// literals are false and were reported by Assign before Propagate
	// returned m. The solver asks lazily, only when conflict analysis needs
	// it, and at most once per propagation.
	Reason(m Lit, dst []Lit) []Lit

	// Backtrack tells the theory that every assignment above decision level
	// level was undone.
	Backtrack(level int)

	// Check is called when every variable is assigned and there is no
	// conflict. It returns nil to accept the model, or a conflict clause as
	// Assign does. (A theory that reports every conflict from Assign may
	// simply return nil.)
	Check() (conflict []Lit)

	// Phase suggests a polarity for deciding v: v.Pos(), v.Neg(), or
	// LitNull for no opinion. It is asked only for variables never assigned
	// before; afterwards the saved phase is used.
	Phase(v Var) Lit
}

// AttachTheory attaches t to s. At most one theory can be attached; attach
// it before the first Solve. A theory that needs several theories combined
// must multiplex them itself.
func (s *Solver) AttachTheory(t Theory) {
	if s.theory != nil {
		panic("sat: a theory is already attached")
	}
	s.theory = t
	s.thead = 0
}

// theoryPropagate reports new assignments to the theory and applies its
// propagations, alternating with unit propagation, until a fixpoint or a
// conflict. It appends the conflict clause, if any, to confl.
func (s *Solver) theoryPropagate(confl []Lit) ([]Lit, bool) {
	t := s.theory
	for {
		for s.thead < len(s.trail) {
			m := s.trail[s.thead]
			s.thead++
			if c := t.Assign(m, len(s.trailLim)); c != nil {
				s.stats.TheoryConflicts++
				return append(confl, c...), true
			}
		}
		props := t.Propagate(s.thBuf[:0])
		s.thBuf = props[:0]
		fresh := false
		for i := 0; i < len(props); i++ {
			p := props[i]
			switch s.vals[p] {
			case True:
				continue
			case False:
				s.stats.TheoryConflicts++
				r := t.Reason(p, nil)
				return append(confl, r...), true
			}
			s.stats.TheoryPropagations++
			s.enqueue(p, crefTheory)
			fresh = true
		}
		if !fresh {
			return confl, false
		}
		if c := s.propagate(); c != crefNone {
			if s.learnt(c) {
				s.bumpClause(c)
			}
			return append(confl, s.lits(c)...), true
		}
	}
}
