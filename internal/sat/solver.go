package sat

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/isovet/isovet/internal/invariant"
)

// ErrBudget is returned with [Unknown] when [Options.ConflictBudget]
// conflicts were spent without deciding the formula.
var ErrBudget = errors.New("sat: conflict budget exhausted")

// ErrBadLit is returned by [Solver.AddClause] for a literal whose variable
// was not created by [Solver.NewVar].
var ErrBadLit = errors.New("sat: literal of unknown variable")

// RestartPolicy selects when the search restarts.
type RestartPolicy int8

// Restart policies. The zero value is RestartLuby.
const (
	// RestartLuby restarts after Luby(i) * RestartBase conflicts (MiniSat).
	RestartLuby RestartPolicy = iota
	// RestartGlucose restarts when the recent average LBD of learnt clauses
	// exceeds the global average by a margin (Audemard and Simon, 2012).
	RestartGlucose
)

// Options configure a [Solver]. The zero value is usable; zero fields take
// the defaults documented on each field.
type Options struct {
	// ConflictBudget bounds the conflicts of one Solve call; 0 means no
	// bound. When it is spent, Solve returns Unknown and ErrBudget.
	ConflictBudget int64
	// Restart is the restart policy (default RestartLuby).
	Restart RestartPolicy
	// RestartBase is the Luby unit in conflicts (default 100).
	RestartBase int
	// VarDecay is the VSIDS decay factor (default 0.95).
	VarDecay float64
	// ClauseDecay is the learnt-clause activity decay (default 0.999).
	ClauseDecay float64
	// ReduceBase and ReduceInc set the learnt database reduction schedule:
	// the k-th reduction happens after ReduceBase + k*ReduceInc more
	// conflicts (defaults 2000 and 300).
	ReduceBase, ReduceInc int
	// NoMinimize turns off recursive learnt-clause minimization.
	NoMinimize bool
	// NoTheoryPhase ignores the theory's polarity suggestions.
	NoTheoryPhase bool
	// NoChrono turns off chronological backtracking: every conflict then
	// backjumps to the learnt clause's assertion level.
	NoChrono bool
	// ChronoLimit is the backjump distance (in decision levels) above which
	// the solver backtracks chronologically, one level below the conflict,
	// instead (default 100; Nadel and Ryvchin, SAT 2018).
	ChronoLimit int

	_ struct{}
}

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o Options) EnsureDefaults() Options {
	o.RestartBase = positiveOr(o.RestartBase, 100)
	o.VarDecay = decayOr(o.VarDecay, 0.95)
	o.ClauseDecay = decayOr(o.ClauseDecay, 0.999)
	o.ReduceBase = positiveOr(o.ReduceBase, 2000)
	o.ReduceInc = positiveOr(o.ReduceInc, 300)
	o.ChronoLimit = positiveOr(o.ChronoLimit, 100)
	return o
}

// positiveOr is n if it is positive, else def.
func positiveOr(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// decayOr is the decay factor f if it lies in (0, 1), else def.
func decayOr(f, def float64) float64 {
	if f <= 0 || f >= 1 {
		return def
	}
	return f
}

// Stats are counters of a [Solver], cumulative over Solve calls.
type Stats struct {
	Vars, Clauses, Learnts int // current sizes

	Solves, Decisions, Propagations, Conflicts, Restarts int64
	ChronoBacktracks                                     int64 // conflicts undone one level instead of backjumping
	Reductions, DeletedLearnts, Collections              int64
	LearntLits, MinimizedLits                            int64 // literals kept and removed by minimization
	TheoryConflicts, TheoryPropagations, TheoryReasons   int64
	FinalChecks                                          int64

	_ struct{}
}

// watcher is an entry of a watch list: clause c watches the negation of the
// list's literal. If blocker is true, c is satisfied and need not be visited.
// A binary clause is fully described by its watcher: blocker is the other
// literal.
type watcher struct {
	c       cref
	blocker Lit
	bin     bool
}

// Solver is a CDCL SAT solver. It is not safe for concurrent use.
type Solver struct {
	opts Options
	ok   bool // false once the clauses are unsatisfiable at level 0

	nvars    int
	arena    []uint32
	wasted   int
	clauses  []cref // irredundant clauses (size >= 2)
	learnts  []cref
	watches  [][]watcher // by Lit
	vals     []LBool     // by Lit
	level    []int32     // by Var
	reason   []cref      // by Var
	phase    []int8      // by Var: saved phase, 0 none, 1 positive, -1 negative
	trail    []Lit
	trailLim []int
	qhead    int // next trail index for unit propagation
	thead    int // next trail index to tell the theory

	activity []float64 // by Var
	varInc   float64
	claInc   float64
	heap     varHeap

	seen     []uint8 // by Var
	lbdSeen  []uint32
	lbdStamp uint32
	stack    []Lit
	toClear  []Lit
	learnt0  []Lit

	theory Theory
	thBuf  []Lit

	assumptions []Lit
	failed      []Lit
	model       []bool

	restart    restarter
	nextReduce int64
	nReduce    int64
	simpTrail  int // trail size at the last level-0 simplification

	stats Stats
	orig  [][]Lit // every added clause, kept only under invariants
	// observe, when set, is called every observeEvery conflicts ([Solver.Observe]).
	observe func(Stats)
}

// New returns an empty solver.
func New(opts Options) *Solver {
	s := &Solver{
		opts:     opts.EnsureDefaults(),
		ok:       true,
		varInc:   1,
		claInc:   1,
		vals:     make([]LBool, 2),
		watches:  make([][]watcher, 2),
		level:    make([]int32, 1),
		reason:   make([]cref, 1),
		phase:    make([]int8, 1),
		activity: make([]float64, 1),
		seen:     make([]uint8, 1),
	}
	s.heap.act = &s.activity
	s.heap.pos = make([]int32, 1)
	return s
}

// NewVar creates a variable.
func (s *Solver) NewVar() Var {
	s.nvars++
	v := Var(s.nvars)
	s.vals = append(s.vals, Undef, Undef)
	s.watches = append(s.watches, nil, nil)
	s.level = append(s.level, 0)
	s.reason = append(s.reason, crefNone)
	s.phase = append(s.phase, 0)
	s.activity = append(s.activity, 0)
	s.seen = append(s.seen, 0)
	s.heap.pos = append(s.heap.pos, -1)
	s.heap.insert(v)
	return v
}

// NumVars returns the number of variables.
func (s *Solver) NumVars() int { return s.nvars }

// AddClause adds the clause l1 ∨ l2 ∨ ... . It may be called between Solve
// calls (never during one, for example from a Theory). The empty clause
// makes the formula unsatisfiable. The slice is not retained.
func (s *Solver) AddClause(lits ...Lit) error {
	if m, bad := s.badLit(lits); bad {
		return fmt.Errorf("adding clause: %w: %d", ErrBadLit, m.Dimacs())
	}
	if invariant.Enabled {
		s.orig = append(s.orig, slices.Clone(lits))
	}
	if !s.ok {
		return nil
	}
	if len(s.trailLim) > 0 {
		s.cancelUntil(0)
	}
	c, satisfied := s.simplifyClause(lits)
	if satisfied {
		return nil
	}
	switch len(c) {
	case 0:
		s.ok = false
	case 1:
		s.enqueue(c[0], crefNone)
	default:
		cr := s.alloc(c, false)
		s.clauses = append(s.clauses, cr)
		s.attach(cr)
	}
	return nil
}

// badLit returns the first of lits whose variable does not exist.
func (s *Solver) badLit(lits []Lit) (Lit, bool) {
	for _, m := range lits {
		if m.Var() == 0 || int(m.Var()) > s.nvars {
			return m, true
		}
	}
	return LitNull, false
}

// simplifyClause returns the clause lits at level 0, sorted, without false
// or repeated literals, in the scratch buffer learnt0; satisfied is set when
// a literal is true or the clause is a tautology.
func (s *Solver) simplifyClause(lits []Lit) (c []Lit, satisfied bool) {
	c = append(s.learnt0[:0], lits...)
	slices.Sort(c)
	j := 0
	prev := LitNull
	for _, m := range c {
		switch {
		case s.vals[m] == True || m == prev.Not():
			s.learnt0 = c
			return nil, true
		case s.vals[m] == False || m == prev:
			continue
		}
		c[j] = m
		j++
		prev = m
	}
	c = c[:j]
	s.learnt0 = c
	return c, false
}

// Value returns the value of m in the model of the last Solve that
// returned Sat. It returns false for variables created after that Solve.
func (s *Solver) Value(m Lit) bool {
	v := int(m.Var())
	if v >= len(s.model) {
		return false
	}
	return s.model[v] != m.IsNeg()
}

// Model returns the model of the last Solve that returned Sat, indexed by
// Var (index 0 is unused). The caller owns the slice.
func (s *Solver) Model() []bool { return slices.Clone(s.model) }

// Failed returns the assumptions of the last Solve that returned Unsat
// which suffice for unsatisfiability (a subset of the assumptions, as given,
// not necessarily minimal). It is empty if the clauses alone are
// unsatisfiable. The caller owns the slice.
func (s *Solver) Failed() []Lit { return slices.Clone(s.failed) }

// LitValue returns the value of m under the current partial assignment. It
// is meant for theories, during Solve.
func (s *Solver) LitValue(m Lit) LBool { return s.vals[m] }

// Level returns the decision level of an assigned variable (meant for
// theories). Level 0 holds facts.
func (s *Solver) Level(v Var) int { return int(s.level[v]) }

// DecisionLevel returns the current decision level (meant for theories).
func (s *Solver) DecisionLevel() int { return len(s.trailLim) }

// Stats returns the solver's counters.
func (s *Solver) Stats() Stats {
	st := s.stats
	st.Vars = s.nvars
	st.Clauses = len(s.clauses)
	st.Learnts = len(s.learnts)
	return st
}

// observeEvery is how many conflicts pass between two calls of an observer
// ([Solver.Observe]) and two polls of the context: a power of two.
const observeEvery = 256

// Observe makes Solve call f with the solver's counters every 256 conflicts, on the
// solving goroutine (nil: never), so that a long search can show its progress. f must be
// quick; it must not call the solver.
func (s *Solver) Observe(f func(Stats)) { s.observe = f }

// Solve decides the clauses added so far under the assumptions, which hold
// for this call only. It returns Sat (read the model with [Solver.Value] or
// [Solver.Model]), Unsat (read [Solver.Failed]), or Unknown with the cause:
// context.Cause(ctx) on cancellation, [ErrBudget] when the conflict budget
// is spent. An Unknown result never hides a wrong answer: it only means the
// search stopped. The solver can be used again after any result.
func (s *Solver) Solve(ctx context.Context, assumptions ...Lit) (Status, error) {
	s.stats.Solves++
	s.model = s.model[:0]
	s.failed = s.failed[:0]
	if m, bad := s.badLit(assumptions); bad {
		return Unknown, fmt.Errorf("solving: assumption: %w: %d", ErrBadLit, m.Dimacs())
	}
	if !s.ok {
		return Unsat, nil
	}
	s.assumptions = append(s.assumptions[:0], assumptions...)
	defer s.cancelUntil(0)
	st, err := s.search(ctx)
	if st == Sat {
		s.saveModel()
	}
	return st, err
}

// saveModel copies the current total assignment into the model (and, with
// invariants, checks that it satisfies every clause added).
func (s *Solver) saveModel() {
	s.model = make([]bool, s.nvars+1)
	for v := 1; v <= s.nvars; v++ {
		s.model[v] = s.vals[Var(v).Pos()] == True
	}
	if invariant.Enabled {
		for _, c := range s.orig {
			invariant.Assertf(s.satisfied(c), "model falsifies clause %v", c)
		}
	}
}

func (s *Solver) satisfied(c []Lit) bool {
	for _, m := range c {
		if s.vals[m] == True {
			return true
		}
	}
	return false
}

// search is the CDCL loop: propagate; on a conflict learn and backjump; else restart,
// simplify or reduce when due, and decide (the next assumption, else a branch; with no
// branch left, the theory's final check).
func (s *Solver) search(ctx context.Context) (Status, error) {
	budget := s.startSearch()
	var confl []Lit
	var tick uint32
	for {
		var conflict bool
		if confl, conflict = s.findConflict(confl[:0]); conflict {
			s.stats.Conflicts++
			if !s.resolveConflict(confl) {
				return Unsat, nil
			}
			if s.stats.Conflicts&(observeEvery-1) == 0 {
				if s.observe != nil {
					s.observe(s.Stats())
				}
				if ctx.Err() != nil {
					return Unknown, context.Cause(ctx)
				}
			}
			continue
		}

		tick++
		if tick&1023 == 0 && ctx.Err() != nil {
			return Unknown, context.Cause(ctx)
		}
		if budget >= 0 && s.stats.Conflicts >= budget {
			return Unknown, ErrBudget
		}
		if s.maintain() {
			continue
		}
		next, unsat := s.nextAssumption()
		if unsat {
			return Unsat, nil
		}
		if next == LitNull {
			if next = s.pickBranch(); next == LitNull {
				fc := s.finalCheck()
				if fc == nil {
					return Sat, nil
				}
				s.stats.Conflicts++
				if !s.resolveConflict(append(confl[:0], fc...)) {
					return Unsat, nil
				}
				continue
			}
			s.stats.Decisions++
		}
		s.newLevel()
		s.enqueue(next, crefNone)
	}
}

// startSearch schedules the first reduction and restart, and returns the conflict count
// at which the budget runs out, or -1.
func (s *Solver) startSearch() int64 {
	if s.nextReduce == 0 {
		s.nextReduce = s.stats.Conflicts + int64(s.opts.ReduceBase)
	}
	s.restart.init(s.opts)
	if s.opts.ConflictBudget > 0 {
		return s.stats.Conflicts + s.opts.ConflictBudget
	}
	return -1
}

// findConflict propagates, then lets the theory propagate; it appends to confl the
// conflict clause found, if any.
func (s *Solver) findConflict(confl []Lit) ([]Lit, bool) {
	if c := s.propagate(); c != crefNone {
		confl = append(confl, s.lits(c)...)
		if s.learnt(c) {
			s.bumpClause(c)
		}
		return confl, true
	}
	if s.theory != nil {
		return s.theoryPropagate(confl)
	}
	return confl, false
}

// maintain restarts when due (reporting true), else simplifies at level 0 after new
// top-level facts and reduces the learnt clauses when due.
func (s *Solver) maintain() (restarted bool) {
	if s.restart.due(s.stats.Conflicts) {
		s.stats.Restarts++
		s.cancelUntil(0)
		s.restart.next(s.stats.Conflicts)
		return true
	}
	if len(s.trailLim) == 0 && len(s.trail) > s.simpTrail && s.qhead == len(s.trail) {
		s.simplify()
	}
	if s.stats.Conflicts >= s.nextReduce {
		s.nReduce++
		s.nextReduce = s.stats.Conflicts + int64(s.opts.ReduceBase) + s.nReduce*int64(s.opts.ReduceInc)
		s.reduce()
	}
	return false
}

// nextAssumption opens a level for each assumption already true and returns the next
// unassigned one, or LitNull when all hold; unsat if one is false (s.failed is set).
func (s *Solver) nextAssumption() (next Lit, unsat bool) {
	for len(s.trailLim) < len(s.assumptions) {
		p := s.assumptions[len(s.trailLim)]
		switch s.vals[p] {
		case True:
			s.newLevel()
			continue
		case False:
			s.analyzeFinal(p.Not())
			return LitNull, true
		}
		return p, false
	}
	return LitNull, false
}

// finalCheck asks the theory, once every variable is assigned, for a conflict.
func (s *Solver) finalCheck() []Lit {
	if s.theory == nil {
		return nil
	}
	s.stats.FinalChecks++
	fc := s.theory.Check()
	if fc != nil {
		s.stats.TheoryConflicts++
	}
	return fc
}

// resolveConflict learns from the clause confl, all of whose literals are
// false, and backjumps. It returns false if the formula is unsatisfiable
// (under the assumptions, in which case s.failed is set).
func (s *Solver) resolveConflict(confl []Lit) bool {
	if invariant.Enabled {
		for _, m := range confl {
			invariant.Assertf(s.vals[m] == False, "conflict literal %v is not false", m)
		}
	}
	// A theory conflict need not involve the current level: go down to the
	// highest level in the clause first.
	maxLevel := 0
	for _, m := range confl {
		maxLevel = max(maxLevel, int(s.level[m.Var()]))
	}
	if maxLevel == 0 {
		s.ok = false
		return false
	}
	if maxLevel < len(s.trailLim) {
		s.cancelUntil(maxLevel)
	}
	learnt, bt, lbd := s.analyze(confl)
	// Chronological backtracking: when the assertion level is far below the
	// conflict, undo only the conflict's level. The asserting literal is
	// still assigned at its assertion level bt, out of order on the trail;
	// cancelUntil keeps such literals when it undoes the levels above theirs.
	// Otherwise a far backjump would make the solver re-decide (and the
	// theory re-insert) thousands of assignments phase saving restores
	// unchanged.
	target := bt
	if dl := len(s.trailLim); !s.opts.NoChrono && dl-bt > s.opts.ChronoLimit {
		target = dl - 1
		s.stats.ChronoBacktracks++
	}
	s.cancelUntil(target)
	if len(learnt) == 1 {
		s.enqueueAt(learnt[0], crefNone, 0)
	} else {
		c := s.alloc(learnt, true)
		s.setLBD(c, lbd)
		s.learnts = append(s.learnts, c)
		s.attach(c)
		s.bumpClause(c)
		s.enqueueAt(learnt[0], c, int32(bt))
	}
	s.restart.conflict(lbd, len(s.trail))
	s.varDecay()
	s.clauseDecay()
	return true
}

// attach adds the watches of clause c on its first two literals.
func (s *Solver) attach(c cref) {
	l := s.lits(c)
	bin := len(l) == 2
	s.watches[l[0].Not()] = append(s.watches[l[0].Not()], watcher{c, l[1], bin})
	s.watches[l[1].Not()] = append(s.watches[l[1].Not()], watcher{c, l[0], bin})
}

// pickBranch returns the next decision literal, or LitNull if every
// variable is assigned.
func (s *Solver) pickBranch() Lit {
	for {
		v := s.heap.removeMin()
		if v == 0 {
			return LitNull
		}
		if s.vals[v.Pos()] != Undef {
			continue
		}
		switch s.phase[v] {
		case 1:
			return v.Pos()
		case -1:
			return v.Neg()
		}
		if s.theory != nil && !s.opts.NoTheoryPhase {
			if m := s.theory.Phase(v); m.Var() == v {
				return m
			}
		}
		return v.Neg()
	}
}
