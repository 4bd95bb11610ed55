package main

import (
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/isovet/isovet/internal/smtlib/solve"
	"github.com/isovet/isovet/internal/static"
)

func init() { extraCommands = append(extraCommands, newAnalyzeCmd) }

// The default solver resource limits: z3 4.8.12 spends about 4,000,000
// units per second of CPU on these queries (TPC-C's inductive-2 under SI
// takes 10,700,000 in 2.8 s), so about a minute for a bounded query and a
// dozen seconds for each query of the unbounded proofs.
const (
	defaultRLimit          = 250_000_000
	defaultUnboundedRLimit = 50_000_000
)

var builtinModels = map[string]bool{"ec": true, "cc": true, "pc": true, "psi": true, "psi-paper": true, "si": true, "ser": true}

func newAnalyzeCmd() *cobra.Command {
	var args static.AnalyzeArgs
	var emit string
	c := &cobra.Command{
		Use:   "analyze PROGRAM",
		Short: "Find serializability violations in transactional SQL programs before they run",
		Long: `Analyze the transactions of an application (a small SQL dialect, see docs/static.md) under
a store's consistency model and report dependency cycles of at most --bound transactions, or
prove there are none; with the unbounded queries it can prove serializability outright.

Models: ec (eventual), cc (causal), pc (prefix), psi (parallel SI), si, ser, or a file of
axioms. Before any proof counts, the solver must show the model admits serial executions;
under si, Fekete et al.'s dependency-graph test is tried first. A solver model the replay
refutes is excluded and the solver asked again (--max-refinements). The budget is solver
work (--rlimit, --unbounded-rlimit); --timeout is an optional wall-clock safety.

Exit codes: 0 proved serializable for executions of every size; 1 an anomaly confirmed by
replay; 2 bad input, or a model that admits no serial execution; 3 no anomaly up to the
bound but no proof, or inconclusive (solver unknown, budget spent: never reported as safe).`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, pos []string) error {
			if err := readAnalyzeInput(&args, pos[0]); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			args.Backend = solve.Exec{}
			file := pos[0]
			args.WriteJSON = func(w io.Writer, res *static.Result) error { return analyzeJSON(w, file, res) }
			if emit != "" {
				fh, err := createEmit(emit)
				if err != nil {
					return &exitError{code: exitUsage, err: err}
				}
				defer fh.Close()
				args.EmitSMT = fh
			}
			code, err := static.RunCommand(c.Context(), args, c.OutOrStdout(), c.ErrOrStderr())
			if code != 0 || err != nil {
				return &exitError{code: code, err: err}
			}
			return nil
		},
	}
	c.Flags().StringVarP(&args.Model, "model", "m", "ser", "consistency model: ec, cc, pc, psi, si, ser, or a file of axioms")
	c.Flags().IntVarP(&args.Bound, "bound", "k", 4, "largest cycle length to search for")
	c.Flags().StringVar(&args.Solver, "solver", "z3", "SMT solver: z3 or cvc5")
	c.Flags().DurationVar(&args.Timeout, "timeout", 0, "optional wall-clock safety limit per solver query (0: none; the budget is --rlimit)")
	c.Flags().DurationVar(&args.UnboundedTimeout, "unbounded-timeout", 0, "optional wall-clock safety limit per query of the unbounded proofs (0: --timeout)")
	c.Flags().Int64Var(&args.RLimit, "rlimit", defaultRLimit, "solver resource limit per bounded query (z3 rlimit, cvc5 rlimit-per; 0: none)")
	c.Flags().Int64Var(&args.UnboundedRLimit, "unbounded-rlimit", defaultUnboundedRLimit, "solver resource limit per query of the serial check and the unbounded proofs (0: --rlimit)")
	c.Flags().IntVar(&args.MaxRefinements, "max-refinements", 256, "solver models the replay may refute, each excluded before asking again, before the search gives up (-1: none)")
	c.Flags().BoolVar(&args.EmptyInitialDB, "empty-initial-db", false, "assume every table starts empty")
	c.Flags().BoolVar(&args.JSON, "json", false, `print the result as one JSON document, {"schema": 1, "kind": "analyze", "results": [...]} (docs/json.md)`)
	c.Flags().BoolVar(&args.NoUnbounded, "no-unbounded", false, "skip the unbounded serializability proofs")
	c.Flags().BoolVar(&args.IgnoreAssumptions, "ignore-assumptions", false, "ignore the program's ASSUME INITIALLY conditions on the initial database")
	c.Flags().StringSliceVar(&args.Txns, "txns", nil, "analyze only these transaction programs (comma-separated names)")
	c.Flags().StringVar(&emit, "emit-smt", "", "write every SMT-LIB query sent to the solver to this file")
	return c
}

// readAnalyzeInput reads the program at path and, unless --model names a built-in model, the
// model's file of axioms into args.
func readAnalyzeInput(args *static.AnalyzeArgs, path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	args.Program, args.Filename = src, path
	if !builtinModels[args.Model] {
		m, err := os.ReadFile(args.Model)
		if err != nil {
			return err
		}
		args.ModelSource = m
	}
	return nil
}

// createEmit creates the --emit-smt file, and its directory if needed.
func createEmit(emit string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(emit), 0o755); err != nil && filepath.Dir(emit) != "." {
		return nil, err
	}
	return os.Create(emit)
}

// analyzeResult is the analyze document's result: the program's file, then the analysis.
type analyzeResult struct {
	File string `json:"file"`
	*static.Result
}

// analyzeJSON prints the analyze document of res, the analysis of the program in file.
func analyzeJSON(w io.Writer, file string, res *static.Result) error {
	for _, wt := range append([]*static.Witness{res.Witness}, res.Refuted...) { // lists are lists even when empty
		if wt != nil {
			wt.Instances, wt.Order, wt.Vis, wt.ModelEdges = nonNil(wt.Instances), nonNil(wt.Order), nonNil(wt.Vis), nonNil(wt.ModelEdges)
		}
	}
	res.Queries = nonNil(res.Queries)
	doc := struct {
		jsonHead
		Results []analyzeResult `json:"results"`
	}{newHead("analyze"), []analyzeResult{{File: file, Result: res}}}
	return writeJSONDoc(w, doc)
}

// nonNil is xs, or an empty slice for nil, which JSON writes as [] rather than null.
func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}
