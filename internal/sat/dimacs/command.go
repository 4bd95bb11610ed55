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
	in, closeIn, err := decompressed(r)
	if err != nil {
		return ExitError, err
	}
	defer closeIn()
	cnf, err := Read(in)
	if err != nil {
		return ExitError, err
	}
	s := sat.New(opts.Solver)
	if err := Load(s, cnf); err != nil {
		return ExitError, err
	}
	st, cause := s.Solve(ctx)
	w := bufio.NewWriter(stdout)
	code := writeAnswer(w, s, st, cause, cnf.Vars, opts.NoModel)
	if opts.Stats {
		writeStats(w, s.Stats(), len(cnf.Clauses))
	}
	if err := w.Flush(); err != nil {
		return ExitError, fmt.Errorf("sat: writing answer: %w", err)
	}
	return code, nil
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

// writeAnswer writes the "s" line of st (with the model unless noModel, or
// the cause of an unknown) and returns the exit code.
func writeAnswer(w *bufio.Writer, s *sat.Solver, st sat.Status, cause error, vars int, noModel bool) int {
	switch st {
	case sat.Sat:
		fmt.Fprintln(w, "s SATISFIABLE")
		if !noModel {
			writeModel(w, s, vars)
		}
		return ExitSat
	case sat.Unsat:
		fmt.Fprintln(w, "s UNSATISFIABLE")
		return ExitUnsat
	}
	fmt.Fprintln(w, "s UNKNOWN")
	if cause != nil {
		fmt.Fprintf(w, "c reason: %v\n", cause)
	}
	return ExitUnknown
}

// writeModel prints "v" lines of at most about 78 characters.
func writeModel(w *bufio.Writer, s *sat.Solver, vars int) {
	line := []byte("v")
	for v := 1; v <= vars; v++ {
		x := v
		if !s.Value(sat.Var(v).Pos()) {
			x = -v
		}
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
