// Package histtest is test support for every package that reads histories: the history
// notation (re-exported from package historytest, which defines it), seeded random history
// generators, and [RunDir], which checks a directory of fixtures whose names carry their
// expected verdict.
//
// It is imported by tests only. It may read files (RunDir), which core packages may not.
//
// # Generators
//
// [Gen] simulates a serial or snapshot-isolated database over a few keys, with aborted and
// unknown-outcome transactions, duplicate values and list appends, then perturbs a fraction
// of the reads, so the histories it returns are often but not always valid. [Seeds] runs a
// test over many seeds and logs the seed on failure; [GenT] also logs the history in the
// DSL. [Shrink] cuts a failing history down to a few transactions and ops, ready to become
// a fixture.
//
// # Fixture directories
//
// [RunDir] runs a checker over every fixture in a directory. A fixture's name is
// <case>-<verdict>.<ext> with verdict pass, fail or unknown; a "# want: G1a, thin-air-read"
// comment line lists anomaly kinds the report must contain.
package histtest
