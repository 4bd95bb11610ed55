// Package sat is a CDCL SAT solver with a theory interface.
//
// It is generic: it knows nothing of histories, graphs or isolation levels,
// and imports nothing from the project. Encoders create variables with
// [Solver.NewVar], add clauses with [Solver.AddClause], optionally attach a
// [Theory] (such as the graph-acyclicity theory of package
// isovet/internal/sat/acyclic), call [Solver.Solve] and read the model.
//
// # Algorithm
//
// The solver follows MiniSat 2.2 (Eén and Sörensson, SAT 2003) with
// Glucose's learnt-clause management (Audemard and Simon, IJCAI 2009):
//
//   - Clauses live in one arena of uint32 words (arena.go), addressed by
//     offsets; a clause is a three-word header (size and flags, LBD,
//     activity) followed by its literals. Deleted clauses are reclaimed by
//     compaction when a fifth of the arena is wasted.
//   - Unit propagation uses two watched literals with blocking literals
//     (watch.go); binary clauses are handled inside the watch entry.
//   - Decisions come from EVSIDS with a binary heap (vsids.go), polarity
//     from phase saving, or from the theory for variables never assigned.
//   - Conflicts are analyzed to the first UIP with recursive clause
//     minimization (analyze.go); assumptions yield a failed-assumption core
//     (analyzeFinal).
//   - A conflict whose assertion level is more than [Options.ChronoLimit]
//     levels down backtracks chronologically, one level only (Nadel and
//     Ryvchin, SAT 2018; Möhle and Biere, SAT 2019): the asserting literal
//     keeps its assertion level, so the trail is not sorted by level, and
//     every implication gets the highest level among its reason's false
//     literals. Backtracking keeps the assignments of the remaining levels
//     that sit higher on the trail and propagates them again. With an
//     expensive theory this matters: a far backjump makes the solver
//     re-decide, and the theory re-insert, everything phase saving then
//     restores unchanged.
//   - Restarts follow the Luby sequence, or Glucose's LBD moving averages
//     (restart.go).
//   - The learnt database is halved every 2000+300k conflicts, keeping
//     clauses of LBD <= 2 ("glue" clauses) and reasons (reduce.go).
//   - Clauses satisfied at level 0 are removed when new facts appear.
//
// # Theories
//
// A [Theory] is told of every assignment and backtrack; it may report a
// conflict clause, propagate literals whose reasons it produces lazily, veto
// a complete assignment, and suggest polarities (theory.go; the semantics
// follow IPASIR-UP, Fazekas, Niemetz, Preiner, Kirchweger, Szeider and
// Biere, SAT 2023). Theory conflicts are analyzed like clause conflicts,
// after backjumping to the highest level in the conflict clause. A lazily
// requested reason is stored as a learnt clause, so it is asked for once.
//
// # Results
//
// Solve returns Sat, Unsat or Unknown. Unknown comes with its cause:
// context.Cause(ctx) when ctx is done, [ErrBudget] when
// [Options.ConflictBudget] is spent. Under the build tag "invariants" every
// model is checked against every clause ever added.
//
// # Local names
//
//	s        *Solver
//	v        Var
//	m, p, q  Lit
//	c        cref (clause offset in the arena)
//	w, ws    watcher, watch list
//	t        Theory
package sat
