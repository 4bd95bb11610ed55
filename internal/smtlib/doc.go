// Package smtlib is a small SMT-LIB v2 term AST with a deterministic printer and
// an S-expression reader.
//
// # What it is for
//
// The static analyzer (package static) builds its first-order encoding as a
// [Script] of [Term]s; [Script.WriteTo] renders it byte-for-byte
// deterministically, so emitted scripts are golden-tested. [Parse] reads the
// S-expressions a solver prints back (get-value answers) and user axiom files.
//
// The package knows nothing about databases or solvers' processes: running a
// solver lives in smtlib/solve, behind the [Backend] interface declared here.
//
// # Local names
//
//	t, u    Term
//	s       Script
//	a       Answer
package smtlib
