package static

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/isovet/isovet/internal/smtlib"
)

// AnalyzeArgs are the inputs of the "isovet analyze" command. The caller
// (cmd/isovet) reads files; this package does no IO of its own.
type AnalyzeArgs struct {
	// Program is the source text of the program and Filename its name (used
	// in messages only).
	Program  []byte
	Filename string
	// Model is ec, cc, pc, psi, si or ser, or the name of a user axiom file
	// whose contents are in ModelSource (ModelSource set means a user file).
	Model       string
	ModelSource []byte
	// Bound is the largest cycle length K (0 means 4).
	Bound int
	// Solver is z3 (default) or cvc5.
	Solver string
	// Timeout is a wall-clock safety limit per solver query (0: none).
	Timeout time.Duration
	// UnboundedTimeout is that of each query of the unbounded proofs when shorter (0: Timeout).
	UnboundedTimeout time.Duration
	// RLimit, UnboundedRLimit and MaxRefinements are the solver-work budget
	// (see [Options]).
	RLimit, UnboundedRLimit int64
	MaxRefinements          int
	// EmptyInitialDB assumes every table starts empty.
	EmptyInitialDB bool
	// EmitSMT, when non-nil, receives every SMT-LIB script sent to the solver.
	EmitSMT io.Writer
	// JSON prints the [Result] as JSON instead of text: through WriteJSON when it is set
	// (the isovet command wraps it in its JSON document), else as the bare Result.
	JSON      bool
	WriteJSON func(w io.Writer, res *Result) error
	// NoUnbounded skips the unbounded proofs.
	NoUnbounded bool
	// Txns restricts the analysis to these transaction programs (nil: all).
	Txns []string
	// IgnoreAssumptions drops the program's ASSUME INITIALLY declarations.
	IgnoreAssumptions bool
	// Backend runs the solver; cmd passes solve.Exec{} from
	// isovet/internal/smtlib/solve (this package may not exec processes).
	Backend smtlib.Backend
	_       struct{}
}

// Exit codes of RunCommand.
const (
	ExitOK           = 0 // proven serializable for executions of every size
	ExitAnomaly      = 1 // a confirmed anomaly
	ExitBadInput     = 2 // unreadable program, model or arguments, or a model admitting no serial execution
	ExitInconclusive = 3 // no anomaly up to K but no proof; or solver unknown, budget spent, unconfirmed candidates
)

// RunCommand implements "isovet analyze": it parses the program, analyzes it
// and prints the result (text or JSON) on stdout; diagnostics go to stderr.
// The exit code follows the constants above; err is non-nil with exit code 2
// for bad input and 3 when the solver could not be run.
func RunCommand(ctx context.Context, args AnalyzeArgs, stdout, stderr io.Writer) (exitCode int, err error) {
	prog, err := parseProgram(args, stderr)
	if err != nil {
		return ExitBadInput, err
	}
	model, err := args.model()
	if err == nil {
		err = args.checkNames(prog)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return ExitBadInput, err
	}
	res, err := Analyze(ctx, prog, Options{Model: model, Bound: args.Bound, Solver: args.Solver, Timeout: args.Timeout, UnboundedTimeout: args.UnboundedTimeout,
		RLimit: args.RLimit, UnboundedRLimit: args.UnboundedRLimit, MaxRefinements: args.MaxRefinements,
		EmptyInitialDB: args.EmptyInitialDB, Backend: args.Backend, Emit: args.EmitSMT, NoUnbounded: args.NoUnbounded, Txns: args.Txns,
		IgnoreAssumptions: args.IgnoreAssumptions})
	if err != nil {
		fmt.Fprintln(stderr, err)
		if errors.Is(err, ErrInvalid) {
			return ExitBadInput, err
		}
		return ExitInconclusive, err
	}
	if args.JSON {
		write := args.WriteJSON
		if write == nil {
			write = writeResultJSON
		}
		if err := write(stdout, res); err != nil {
			return ExitInconclusive, err
		}
	} else {
		WriteText(stdout, prog, args.Filename, res)
	}
	if code, ok := verdictExits[res.Verdict]; ok {
		return code, nil
	}
	return ExitInconclusive, nil
}

// writeResultJSON writes res as indented JSON.
func writeResultJSON(w io.Writer, res *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// verdictExits are the exit codes of the conclusive verdicts; any other is
// ExitInconclusive.
var verdictExits = map[Verdict]int{Anomaly: ExitAnomaly, NoneUpToBound: ExitInconclusive, Serializable: ExitOK}

// parseProgram parses args.Program, printing each parse error, with the
// file name set, on stderr.
func parseProgram(args AnalyzeArgs, stderr io.Writer) (*Program, error) {
	prog, err := Parse(args.Program)
	if err != nil {
		var pe *ParseError
		for _, e := range unjoin(err) {
			if errors.As(e, &pe) {
				pe.File = args.Filename
			}
			fmt.Fprintln(stderr, e)
		}
		return nil, fmt.Errorf("parsing %s: %w", args.Filename, err)
	}
	return prog, nil
}

// model is the memory model args name: parsed from ModelSource when it is
// set, else a built-in one.
func (args AnalyzeArgs) model() (Model, error) {
	if args.ModelSource != nil {
		return ParseModel(args.Model, args.ModelSource)
	}
	model, ok := LookupModel(args.Model)
	if !ok {
		return Model{}, fmt.Errorf("unknown model %q (want %s or an axiom file): %w", args.Model, strings.Join(ModelNames(), ", "), ErrInvalid)
	}
	return model, nil
}

// checkNames reports a transaction or solver args name that does not exist.
func (args AnalyzeArgs) checkNames(prog *Program) error {
	for _, name := range args.Txns {
		if !slices.ContainsFunc(prog.Txns, func(t *Txn) bool { return t.Name == name }) {
			return fmt.Errorf("unknown transaction %q: %w", name, ErrInvalid)
		}
	}
	if args.Solver != "" && args.Solver != "z3" && args.Solver != "cvc5" {
		return fmt.Errorf("unknown solver %q (want z3 or cvc5): %w", args.Solver, ErrInvalid)
	}
	return nil
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// WriteText renders a result for people.
func WriteText(w io.Writer, prog *Program, filename string, res *Result) {
	fmt.Fprintf(w, "program %s, model %s, bound %d, solver %s\n", filename, res.Model, res.Bound, res.Solver)
	writeAssumptions(w, res.Assumptions)
	writeQueries(w, res.Queries)
	if res.SerialCheck != "" {
		fmt.Fprintf(w, "%s\n", res.SerialCheck)
	}
	if n := len(res.Refuted); n > 0 {
		fmt.Fprintf(w, "refinement: the replay refuted %d solver model(s), each excluded before asking again\n", n)
	}
	writeVerdict(w, res)
	wt := res.Witness
	if wt == nil {
		return
	}
	writeInstances(w, wt)
	if !wt.Confirmed {
		fmt.Fprintf(w, "candidate dependencies claimed by the solver (replay failed: %s):\n", wt.ReplayNote)
		for _, e := range wt.ModelEdges {
			fmt.Fprintf(w, "  %s -%s-> %s\n", wt.Instances[e.From].Name, e.Rel, wt.Instances[e.To].Name)
		}
		return
	}
	writeInitial(w, wt.Initial)
	fmt.Fprintf(w, "cycle (confirmed by replay, %s):\n", wt.ReplayNote)
	for _, e := range wt.Cycle {
		fmt.Fprintf(w, "  %s -%s-> %s  on %s[%s].%s  (%s -> %s)\n", wt.Instances[e.From].Name, e.Rel, wt.Instances[e.To].Name,
			e.Table, e.Row, e.Field, e.FromStmt, e.ToStmt)
	}
}

func writeAssumptions(w io.Writer, as []string) {
	if len(as) == 0 {
		return
	}
	fmt.Fprintln(w, "assuming the initial database satisfies (bounded queries and witnesses; the inductive proof only through counter invariants it names):")
	for _, a := range as {
		fmt.Fprintf(w, "  ASSUME INITIALLY at %s\n", a)
	}
}

func writeQueries(w io.Writer, qs []QueryResult) {
	for _, q := range qs {
		fmt.Fprintf(w, "  %-28s %-8s %8.3fs wall %8.3fs cpu", q.Query, q.Status, q.Elapsed.Seconds(), q.CPU.Seconds())
		if q.Reason != "" {
			fmt.Fprintf(w, "  (%s)", q.Reason)
		}
		fmt.Fprintln(w)
	}
}

func writeVerdict(w io.Writer, res *Result) {
	switch res.Verdict {
	case Anomaly:
		fmt.Fprintf(w, "verdict: anomaly: an execution of %d transactions with a dependency cycle, confirmed by replay (exit 1)\n", res.K)
	case NoneUpToBound:
		under := ""
		if len(res.Assumptions) > 0 {
			under = " from an initial database satisfying the assumptions"
		}
		refuted := ""
		if len(res.Refuted) > 0 {
			refuted = fmt.Sprintf(" (besides %d candidate(s) the replay refuted)", len(res.Refuted))
		}
		fmt.Fprintf(w, "verdict: no anomaly with at most %d transactions%s%s, but no proof for larger executions (exit 3)\n", res.Bound, under, refuted)
	case Serializable:
		fmt.Fprintf(w, "verdict: proved serializable for executions of any size (exit 0), by %s\n", res.Proof)
	default:
		fmt.Fprintf(w, "verdict: inconclusive, neither an anomaly nor a proof (exit 3): %s\n", res.Reason)
	}
}

// writeInstances lists the witness's instances in arbitration order, each
// with its parameters and the instances it sees.
func writeInstances(w io.Writer, wt *Witness) {
	fmt.Fprintln(w, "instances (in arbitration order):")
	for _, i := range wt.Order {
		in := wt.Instances[i]
		var ps []string
		for _, p := range in.Params {
			ps = append(ps, fmt.Sprintf("%s=%d", p.Name, p.Value))
		}
		var sees []string
		for _, v := range wt.Vis {
			if v[1] == i {
				sees = append(sees, wt.Instances[v[0]].Name)
			}
		}
		if len(sees) == 0 {
			sees = []string{"none"}
		}
		fmt.Fprintf(w, "  %s = %s(%s)  sees %s\n", in.Name, in.Txn, strings.Join(ps, ", "), strings.Join(sees, ", "))
	}
}

// writeInitial lists the initial rows of a confirming replay, by table.
func writeInitial(w io.Writer, initial map[string][]Row) {
	for _, tb := range slices.Sorted(maps.Keys(initial)) {
		for _, row := range initial[tb] {
			var fs []string
			for f, v := range row.Values {
				fs = append(fs, fmt.Sprintf("%s=%d", f, v))
			}
			slices.Sort(fs)
			dead := ""
			if row.Dead {
				dead = " (deleted)"
			}
			fmt.Fprintf(w, "  initially %s%v {%s}%s\n", tb, row.Key, strings.Join(fs, ", "), dead)
		}
	}
}
