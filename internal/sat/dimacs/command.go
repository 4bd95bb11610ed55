package dimacs

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/isovet/isovet/internal/sat"
)

// CommandOptions configure [RunCommand]. The zero value is usable.
type CommandOptions struct {
	// Stats prints solver statistics as "c " comment lines after the
	// answer.
	Stats bool
	// NoModel omits the "v" model lines of a satisfiable answer.
	NoModel bool
	// Solver configures the solver (conflict budget, restarts, ...).
	Solver sat.Options

	_ struct{}
}

// Exit codes of [RunCommand], as SAT competition solvers use them.
const (
	ExitUnknown = 0
	ExitSat     = 10
	ExitUnsat   = 20
	ExitError   = 2
)

// RunCommand is the `isovet sat FILE.cnf` command: it reads a DIMACS CNF
// formula from r, plain or gzip-compressed (detected by the gzip magic
// bytes), solves it, and writes the answer to stdout in SAT competition
// format:
//
//	s SATISFIABLE          then "v l1 l2 ... 0" lines (a full model)
//	s UNSATISFIABLE
//	s UNKNOWN              when ctx is done or the conflict budget is spent;
//	                       a "c reason: ..." line gives the cause
//
// The exit code is 10 (SAT), 20 (UNSAT) or 0 (UNKNOWN), with a nil error.
// On malformed input or a read or write failure it returns ExitError (2)
// and the error (a [*ParseError] for malformed input); nothing but comment
// lines has been written then. With opts.Stats, "c key value" statistics
// lines follow the answer. RunCommand does not read the clock: the caller
// times it if wanted.
func RunCommand(ctx context.Context, r io.Reader, stdout io.Writer, opts CommandOptions) (exitCode int, err error) {
	ans, err := Solve(ctx, r, opts.Solver)
	if err != nil {
		return ExitError, err
	}
	w := bufio.NewWriter(stdout)
	code := writeAnswer(w, ans, opts.NoModel)
	if opts.Stats {
		writeStats(w, ans.Stats, ans.Clauses)
	}
	if err := w.Flush(); err != nil {
		return ExitError, fmt.Errorf("sat: writing answer: %w", err)
	}
	return code, nil
}

// Answer is what solving a formula found.
type Answer struct {
	Status sat.Status
	// Cause is why the status is unknown (the context's cause, the conflict budget); nil
	// otherwise.
	Cause error
	// Vars and Clauses are the formula's sizes, as its header gives them.
	Vars, Clauses int
	// Model is, for a satisfiable formula, every variable 1..Vars as v (true) or -v
	// (false); nil otherwise.
	Model []int
	Stats sat.Stats
	_     struct{}
}

// Exit is the exit code of the answer, as SAT competition solvers use them: 10 SAT,
// 20 UNSAT, 0 UNKNOWN.
func (a *Answer) Exit() int {
	switch a.Status {
	case sat.Sat:
		return ExitSat
	case sat.Unsat:
		return ExitUnsat
	}
	return ExitUnknown
}

// Solve reads a DIMACS CNF formula from r, plain or gzip-compressed, and solves it with
// options o. The error is a [*ParseError] for malformed input, or a reading error.
func Solve(ctx context.Context, r io.Reader, o sat.Options) (*Answer, error) {
	in, closeIn, err := decompressed(r)
	if err != nil {
		return nil, err
	}
	defer closeIn()
	cnf, err := Read(in)
	if err != nil {
		return nil, err
	}
	s := sat.New(o)
	if err := Load(s, cnf); err != nil {
		return nil, err
	}
	st, cause := s.Solve(ctx)
	a := &Answer{Status: st, Vars: cnf.Vars, Clauses: len(cnf.Clauses), Stats: s.Stats()}
	switch st {
	case sat.Sat:
		a.Model = make([]int, cnf.Vars)
		for v := 1; v <= cnf.Vars; v++ {
			a.Model[v-1] = v
			if !s.Value(sat.Var(v).Pos()) {
				a.Model[v-1] = -v
			}
		}
	case sat.Unknown:
		a.Cause = cause
	}
	return a, nil
}

// decompressed reads r through gzip when it starts with the gzip magic
// bytes; closeIn releases the gzip reader.
func decompressed(r io.Reader) (in io.Reader, closeIn func(), err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("sat: reading gzip: %w", err)
		}
		return zr, func() { zr.Close() }, nil
	}
	return br, func() {}, nil
}

// writeAnswer writes the "s" line of a (with the model unless noModel, or the cause of
// an unknown) and returns the exit code.
func writeAnswer(w *bufio.Writer, a *Answer, noModel bool) int {
	switch a.Status {
	case sat.Sat:
		fmt.Fprintln(w, "s SATISFIABLE")
		if !noModel {
			writeModel(w, a.Model)
		}
	case sat.Unsat:
		fmt.Fprintln(w, "s UNSATISFIABLE")
	default:
		fmt.Fprintln(w, "s UNKNOWN")
		if a.Cause != nil {
			fmt.Fprintf(w, "c reason: %v\n", a.Cause)
		}
	}
	return a.Exit()
}

// writeModel prints "v" lines of at most about 78 characters.
func writeModel(w *bufio.Writer, model []int) {
	line := []byte("v")
	for _, x := range model {
		tok := strconv.Itoa(x)
		if len(line)+1+len(tok) > 78 {
			w.Write(append(line, '\n'))
			line = append(line[:0], 'v')
		}
		line = append(append(line, ' '), tok...)
	}
	w.Write(append(line, " 0\n"...))
}

func writeStats(w io.Writer, st sat.Stats, clauses int) {
	rows := []struct {
		k string
		v int64
	}{
		{"vars", int64(st.Vars)},
		{"clauses", int64(clauses)},
		{"conflicts", st.Conflicts},
		{"decisions", st.Decisions},
		{"propagations", st.Propagations},
		{"restarts", st.Restarts},
		{"reductions", st.Reductions},
		{"learnts", int64(st.Learnts)},
		{"learnt_lits", st.LearntLits},
		{"minimized_lits", st.MinimizedLits},
		{"deleted_learnts", st.DeletedLearnts},
	}
	for _, r := range rows {
		fmt.Fprintf(w, "c %s %d\n", r.k, r.v)
	}
}
