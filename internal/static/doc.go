// Package static finds serializability violations in transactional SQL
// programs without running them, after Nagar and Jagannathan, "Automated
// Detection of Serializability Violations under Weak Consistency" (the ANODE
// tool); see docs/static.md.
//
// # Pipeline
//
//	source ─Parse─▶ Program (checked AST) ─Encode─▶ smtlib.Script (φ_{T,Ψ})
//	       ─queries (Cycle, ShortestPath, Inductive)─▶ smtlib.Backend ─▶ Answer
//	       ─witness decoding─▶ Witness ─Replay─▶ confirmed dependency cycle
//
// [Analyze] drives the queries; [RunCommand] is the whole "isovet analyze"
// command. The package is pure: it reads no files, starts no processes and
// never reads the clock; the solver runs behind [smtlib.Backend] (implemented
// by smtlib/solve).
//
// # Encoding (paper §4, App. A), with corrections to the paper
//
//   - Sorts: T (instances), one record sort R.<table> per table, a datatype
//     Ty of transaction types and F.<table> of the table's non-key fields plus
//     Alive. Key fields are functions R.<table> → Int; non-key fields are not
//     modelled (their values depend on the snapshot).
//   - Record-level relations WR.<table>(r, f, a, b) etc. imply WR(a, b), and
//     WR(a, b) implies some record-level WR (the link both ways).
//   - Necessary conditions: for every pair of statements that can conflict on
//     a field (the access table comes from App. B: UPDATE writes its SET
//     fields of live matching rows and reads Alive, INSERT writes Alive and
//     every non-key field, DELETE writes Alive, SELECT reads its fields and
//     Alive, WHERE clauses read their fields on every row), the general rule:
//     both statements run (Λ) and both touch the row. There are no
//     statement-specific shortcuts, so no conflicting pair is missed (§5.5).
//   - WHERE clauses are encoded in two directions: comparisons on non-key
//     fields become true in the over-approximation and false in the
//     under-approximation, and NOT flips the direction. The paper's Fig. 8
//     maps them to true under negation too, which is unsound.
//   - Forcing rules (only where exact): two writes of the same field of the
//     same row by statements outside loops whose WHERE uses key fields only,
//     ordered by ar, are a WW dependency on that row.
//   - φ_dep, key uniqueness (as a left inverse of the key), "a read has one
//     source", Lemma 4, ar a strict total order, vis ⊆ ar. The quantifiers
//     over field datatypes are expanded, record dependencies no statement
//     pair can cause are false, and the record-level axioms carry :pattern
//     annotations (docs/static.md, "Solver performance").
//   - In bounded queries, two field SELECTs of the same live row and field
//     with the same WR sources read the same value ([Encoding.valueAxioms]).
//   - Liveness: rows of tables nobody inserts into or deletes from are live in
//     all snapshots or none; in bounded queries a frame axiom says liveness
//     differs between two snapshots only if a writer of the row's Alive is
//     visible to exactly one of them. The inductive queries get Skolemized
//     liveness facts (last visible writer, frame on written rows) and
//     counter invariants derived from ASSUME INITIALLY conditions of one
//     shape (liveness.go; docs/static.md, "Liveness and counters in the
//     inductive proof").
//
// # Queries (paper §5), with one change
//
// The bounded query ([Encoding.Execution]) asks for an execution of exactly
// k distinct instances with a cycle; [Analyze] asks it for k = 2..K, which
// together is Theorem 9's "at most K". The domain of T is closed to k
// constants, every quantifier over T is expanded into them, and ar is fixed
// to their index order (a symmetry break: any execution is a model once its
// instances are named in ar order) and substituted away. The
// paper's φ_Cycle,k ranges over executions of any size, whose models may use
// instances outside the cycle that a witness cannot show; it is still used,
// as [Encoding.Cycle], for Theorem 10. [Encoding.ShortestPath],
// [Encoding.Inductive1] and [Encoding.Inductive2] are Eq. 7 and §5.2.
//
// # Witness replay
//
// [Replay] re-runs a model's instances with its vis and ar on a store with
// last-writer-wins snapshots, computes Adya's dependency graph (the initial
// database is a virtual first writer; predicate reads see phantoms; a DELETE
// writes every matching row, existing or not), checks the model's axioms on
// it and finds a shortest cycle. An anomaly is reported only when a replay
// confirms it.
//   - Local variables: scalars are functions of the enclosing loop rows and
//     the instance, with a .null companion (a comparison with NULL is false);
//     sets of rows are predicates. φ_aux relates them to the rows they were
//     selected from, in both directions where exact.
//   - Initial database: by default rows may exist initially (the literal
//     φ_INSERT makes every query UNSAT); with
//     EmptyInitialDB, a live row was inserted by a visible transaction.
//
// # Local names
//
//	e       *Encoding       en   env (one instance's evaluation context)
//	t, a, b instance terms   r    row term
//	x       *exec (replay)   rp   *replayer
package static
