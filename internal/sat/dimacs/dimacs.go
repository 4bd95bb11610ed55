// Package dimacs reads and writes CNF formulas in the DIMACS format, loads
// them into a [sat.Solver], and implements the `isovet sat` command
// ([RunCommand]), so that the solver can be compared with others on the
// same files.
//
// The format: comment lines start with 'c'; a header "p cnf VARS CLAUSES"
// precedes the clauses; a clause is a sequence of non-zero integers (a
// negative number is a negated variable) ended by 0, and may span lines. A
// line "%" ends the formula (as in SATLIB files).
package dimacs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"

	"isovet/internal/sat"
)

// CNF is a formula in conjunctive normal form, with literals as DIMACS
// integers.
type CNF struct {
	Vars    int
	Clauses [][]int
}

// ParseError reports a malformed DIMACS input, with its 1-based line.
type ParseError struct {
	Line int
	Err  error
}

func (e *ParseError) Error() string { return fmt.Sprintf("dimacs: line %d: %v", e.Line, e.Err) }

// Unwrap returns the underlying error.
func (e *ParseError) Unwrap() error { return e.Err }

// Errors wrapped by [ParseError].
var (
	ErrHeader   = errors.New("missing or malformed \"p cnf\" header")
	ErrLiteral  = errors.New("malformed literal")
	ErrRange    = errors.New("variable exceeds the header's count")
	ErrCount    = errors.New("clause count differs from the header")
	ErrTrailing = errors.New("last clause not terminated by 0")
)

// maxVars bounds the header's variable count, so that a corrupt header
// cannot make a loader allocate without limit.
const maxVars = 1 << 28

// Read parses a DIMACS CNF formula from r.
func Read(r io.Reader) (*CNF, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	line := 1
	fail := func(err error) (*CNF, error) { return nil, &ParseError{Line: line, Err: err} }
	var cnf *CNF
	var declared int
	var cur []int
	var tok []byte
	for {
		b, err := br.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading dimacs: %w", err)
		}
		switch {
		case b == '\n':
			line++
			continue
		case b == ' ' || b == '\t' || b == '\r':
			continue
		case b == 'c' && len(tok) == 0:
			if err := skipLine(br); err != nil {
				return nil, err
			}
			line++
			continue
		case b == '%':
			goto done
		case b == 'p':
			if cnf != nil {
				return fail(ErrHeader)
			}
			text, err := br.ReadString('\n')
			if err != nil && err != io.EOF {
				return nil, fmt.Errorf("reading dimacs: %w", err)
			}
			var v, c int
			if n, _ := fmt.Sscanf(text, " cnf %d %d", &v, &c); n != 2 || v < 0 || c < 0 || v > maxVars {
				return fail(ErrHeader)
			}
			cnf = &CNF{Vars: v, Clauses: make([][]int, 0, min(c, 1<<20))}
			declared = c
			line++
			continue
		}
		// A literal.
		if cnf == nil {
			return fail(ErrHeader)
		}
		tok = append(tok[:0], b)
		for {
			b, err := br.ReadByte()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("reading dimacs: %w", err)
			}
			if b == ' ' || b == '\t' || b == '\r' || b == '\n' {
				_ = br.UnreadByte()
				break
			}
			tok = append(tok, b)
		}
		x, err := strconv.Atoi(string(tok))
		tok = tok[:0]
		if err != nil {
			return fail(ErrLiteral)
		}
		if x == 0 {
			cnf.Clauses = append(cnf.Clauses, cur)
			cur = nil
			continue
		}
		if x > cnf.Vars || -x > cnf.Vars {
			return fail(ErrRange)
		}
		cur = append(cur, x)
	}
done:
	if cnf == nil {
		return fail(ErrHeader)
	}
	if cur != nil {
		return fail(ErrTrailing)
	}
	if len(cnf.Clauses) != declared {
		return fail(fmt.Errorf("%w: %d clauses, header says %d", ErrCount, len(cnf.Clauses), declared))
	}
	return cnf, nil
}

func skipLine(br *bufio.Reader) error {
	for {
		b, err := br.ReadByte()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading dimacs: %w", err)
		}
		if b == '\n' {
			return nil
		}
	}
}

// Write writes cnf to w in DIMACS format.
func Write(w io.Writer, cnf *CNF) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "p cnf %d %d\n", cnf.Vars, len(cnf.Clauses))
	var buf []byte
	for _, c := range cnf.Clauses {
		buf = buf[:0]
		for _, x := range c {
			buf = strconv.AppendInt(buf, int64(x), 10)
			buf = append(buf, ' ')
		}
		buf = append(buf, '0', '\n')
		bw.Write(buf)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing dimacs: %w", err)
	}
	return nil
}

// Load creates variables in s up to cnf.Vars and adds the clauses.
// Variable i of the formula is sat.Var(i) if s had no variables before.
func Load(s *sat.Solver, cnf *CNF) error {
	for s.NumVars() < cnf.Vars {
		s.NewVar()
	}
	var lits []sat.Lit
	for _, c := range cnf.Clauses {
		lits = lits[:0]
		for _, x := range c {
			lits = append(lits, sat.LitOf(x))
		}
		if err := s.AddClause(lits...); err != nil {
			return fmt.Errorf("loading dimacs: %w", err)
		}
	}
	return nil
}
