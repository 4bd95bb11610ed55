// Package acyclic is the graph-acyclicity theory for package sat: it keeps
// the directed graph made of the edges whose justifications hold under the
// solver's assignment acyclic, as serializability and snapshot-isolation
// checking need (VeriStrong, PVLDB 2026, §3 and App. D; Vbox §3.6).
//
// # Use
//
//	s := sat.New(sat.Options{})
//	g := acyclic.New(s, nodes, acyclic.Options{})
//	x, _ := g.Edge(0, 1)          // fresh variable: x true puts 0→1 in the graph
//	_ = g.AddEdge(x.Not(), 1, 0)  // a literal per orientation (WW pair)
//	_ = g.AddComposite(a, b, 2, 0) // 2→0 present iff a ∧ b (derived RW)
//	_ = g.AddFixed(1, 2)          // known edge
//	st, err := s.Solve(ctx)       // Sat: g.Order() is a topological order
//
// An edge (u,v) may be justified by several literals, conjunctions and a
// fixed mark; it is in the graph while at least one justification holds
// (reference counting), so backtracking one justification never removes an
// edge another still supports. A literal may justify several edges.
//
// # Algorithm
//
// The order is Pearce and Kelly's dynamic topological order (JEA 2006):
// an edge u→v with ord(u) < ord(v) is accepted at once; otherwise a
// forward search from v over nodes ordered before u either reaches u (a
// cycle) or, with a backward search from u over nodes ordered after v,
// finds the affected region, whose positions are reassigned. The forward
// search is breadth-first, so the cycle reported is a shortest one inside
// the affected region. Removing an edge never invalidates the order, so
// backtracking only unlinks edges. Edges present before the first solver
// call are ordered at once with Kahn's algorithm (linear time), instead of
// edge by edge.
//
// A conflict is the negation of one justification per cycle edge (fixed
// edges contribute nothing; among several justifications the one with the
// fewest literals is chosen), so the clause is at most twice the cycle's
// length.
//
// With [Options.Propagate], inserting u→v also looks, within a bounded
// number of nodes around the edge, for unassigned edge literals x whose
// edge a→b would close a cycle b ⇝ u → v ⇝ a, and sets x false. The reason
// ¬x ∨ ¬(path b ⇝ a) is computed only when the solver asks, from edges
// whose activation stamps precede the propagation.
//
// Polarity: a variable never assigned before is decided so that the edges
// of the chosen literal agree with the current topological order
// (VeriStrong §6.2, Algorithm 3), which turns the solver's first descent
// into a greedy topological sort.
//
// Deviations from the papers: VeriStrong derives RW edges inside the
// theory from WW and WR variables; here the encoder declares a derived
// edge as a composite justification a ∧ b, which keeps the theory
// independent of transactions. Bender, Fineman, Gilbert and Tarjan's
// two-way search was not implemented (see docs/benchmarks.md).
//
// # Local names
//
//	g        *Theory
//	s        *sat.Solver
//	u, v, w  nodes (int32 inside, int in the API)
//	e        edge id
//	j        justification id
//	m, p, x  sat.Lit
package acyclic
