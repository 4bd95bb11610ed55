package main

import (
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/isovet/isovet/internal/sat"
	"github.com/isovet/isovet/internal/sat/dimacs"
)

func init() { extraCommands = append(extraCommands, newSatCmd) }

func newSatCmd() *cobra.Command {
	var opts dimacs.CommandOptions
	var budget int64
	var asJSON bool
	c := &cobra.Command{
		Use:   "sat FILE.cnf",
		Short: "Solve a DIMACS CNF formula with isovet's SAT solver (plain or gzip)",
		Long: `Solve a DIMACS CNF formula (plain or gzip-compressed; - reads stdin) with isovet's own
CDCL solver and print the answer as SAT solvers do: "s SATISFIABLE" with "v" model lines,
"s UNSATISFIABLE" or "s UNKNOWN". Exit codes: 10 satisfiable, 20 unsatisfiable, 0 unknown,
2 bad input. This makes the solver comparable side by side with others (minisat, kissat).

With --json the answer is one JSON document, {"schema": 1, "kind": "sat", "results": [...]}
with one result naming the file: its status (sat, unsat, unknown), sizes, model and the
solver's statistics (docs/json.md); the exit codes stay the same.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			in := os.Stdin
			if args[0] != "-" {
				fh, err := os.Open(args[0])
				if err != nil {
					return &exitError{code: exitUsage, err: err}
				}
				defer fh.Close()
				in = fh
			}
			opts.Solver = sat.Options{ConflictBudget: budget}
			var code int
			var err error
			if asJSON {
				code, err = satJSON(c, in, displayName(args[0]), opts)
			} else {
				code, err = dimacs.RunCommand(c.Context(), in, c.OutOrStdout(), opts)
			}
			if err != nil {
				var pe *dimacs.ParseError
				if errors.As(err, &pe) && args[0] != "-" {
					err = &namedErr{name: args[0], err: err}
				}
				return &exitError{code: code, err: err}
			}
			if code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&opts.Stats, "stats", false, "print solver statistics as c lines")
	c.Flags().BoolVar(&opts.NoModel, "no-model", false, "omit the v model lines")
	c.Flags().Int64Var(&budget, "conflicts", 0, "give up (s UNKNOWN) after this many conflicts; 0 means no limit")
	c.Flags().BoolVar(&asJSON, "json", false, `print the answer as one JSON document, {"schema": 1, "kind": "sat", "results": [...]} (docs/json.md)`)
	return c
}

// namedErr prefixes an error with the file it is about.
type namedErr struct {
	name string
	err  error
}

func (e *namedErr) Error() string { return e.name + ": " + e.err.Error() }
func (e *namedErr) Unwrap() error { return e.err }

// satJSON solves the formula in r and prints the sat document (without the model with
// --no-model); the exit code is the one the text answer has.
func satJSON(c *cobra.Command, r io.Reader, file string, opts dimacs.CommandOptions) (int, error) {
	ans, err := dimacs.Solve(c.Context(), r, opts.Solver)
	if err != nil {
		return dimacs.ExitError, err
	}
	res := satResult{File: file, Status: satStatus(ans.Status), Vars: ans.Vars, Clauses: ans.Clauses, Stats: satStatsOf(ans.Stats)}
	if ans.Cause != nil {
		res.Reason = ans.Cause.Error()
	}
	if ans.Model != nil && !opts.NoModel {
		res.Model = ans.Model
	}
	doc := struct {
		jsonHead
		Results []satResult `json:"results"`
	}{newHead("sat"), []satResult{res}}
	if err := writeJSONDoc(c.OutOrStdout(), doc); err != nil {
		return dimacs.ExitError, err
	}
	return ans.Exit(), nil
}

// satResult is the sat document's result: the file, the answer, and the solver's work.
type satResult struct {
	File    string   `json:"file"`
	Status  string   `json:"status"`
	Reason  string   `json:"reason,omitempty"`
	Vars    int      `json:"vars"`
	Clauses int      `json:"clauses"`
	Model   []int    `json:"model,omitempty"`
	Stats   satStats `json:"stats"`
}

// satStats is the solver's statistics, as the text answer's "c" lines name them.
type satStats struct {
	Conflicts      int64 `json:"conflicts"`
	Decisions      int64 `json:"decisions"`
	Propagations   int64 `json:"propagations"`
	Restarts       int64 `json:"restarts"`
	Reductions     int64 `json:"reductions"`
	Learnts        int   `json:"learnts"`
	LearntLits     int64 `json:"learnt_lits"`
	MinimizedLits  int64 `json:"minimized_lits"`
	DeletedLearnts int64 `json:"deleted_learnts"`
}

// satStatsOf is st as the sat document names its counters.
func satStatsOf(st sat.Stats) satStats {
	return satStats{st.Conflicts, st.Decisions, st.Propagations, st.Restarts, st.Reductions, st.Learnts, st.LearntLits, st.MinimizedLits, st.DeletedLearnts}
}

// satStatus is a solver status as the sat document writes it.
func satStatus(st sat.Status) string {
	switch st {
	case sat.Sat:
		return "sat"
	case sat.Unsat:
		return "unsat"
	}
	return "unknown"
}
