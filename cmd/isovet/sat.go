package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/isovet/isovet/internal/sat"
	"github.com/isovet/isovet/internal/sat/dimacs"
)

func init() { extraCommands = append(extraCommands, newSatCmd) }

func newSatCmd() *cobra.Command {
	var opts dimacs.CommandOptions
	var budget int64
	c := &cobra.Command{
		Use:   "sat FILE.cnf",
		Short: "Solve a DIMACS CNF formula with isovet's SAT solver (plain or gzip)",
		Long: `Solve a DIMACS CNF formula (plain or gzip-compressed; - reads stdin) with isovet's own
CDCL solver and print the answer as SAT solvers do: "s SATISFIABLE" with "v" model lines,
"s UNSATISFIABLE" or "s UNKNOWN". Exit codes: 10 satisfiable, 20 unsatisfiable, 0 unknown,
2 bad input. This makes the solver comparable side by side with others (minisat, kissat).`,
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
			code, err := dimacs.RunCommand(c.Context(), in, c.OutOrStdout(), opts)
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
	return c
}

// namedErr prefixes an error with the file it is about.
type namedErr struct {
	name string
	err  error
}

func (e *namedErr) Error() string { return e.name + ": " + e.err.Error() }
func (e *namedErr) Unwrap() error { return e.err }
