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

	"github.com/isovet/isovet/internal/sat"
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
	p := &parser{br: bufio.NewReaderSize(r, 1<<16), line: 1}
	for {
		b, err := p.br.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading dimacs: %w", err)
		}
		end, err := p.item(b)
		if err != nil {
			return nil, err
		}
		if end {
			break
		}
	}
	return p.finish()
}

// parser is the state of [Read].
type parser struct {
	br       *bufio.Reader
	line     int
	cnf      *CNF // nil until the header
	declared int  // the header's clause count
	cur      []int
	tok      []byte
}

// fail is a parse error at the current line.
func (p *parser) fail(err error) error { return &ParseError{Line: p.line, Err: err} }

func isBlank(b byte) bool { return b == ' ' || b == '\t' || b == '\r' }

// item handles the byte b that starts an item: a blank, a comment, the header, the end
// marker "%" (end true) or a literal.
func (p *parser) item(b byte) (end bool, err error) {
	switch {
	case b == '\n':
		p.line++
	case isBlank(b):
	case b == 'c' && len(p.tok) == 0:
		if err := skipLine(p.br); err != nil {
			return false, err
		}
		p.line++
	case b == '%':
		return true, nil
	case b == 'p':
		return false, p.header()
	default:
		return false, p.literal(b)
	}
	return false, nil
}

// header reads the rest of the "p cnf VARS CLAUSES" line.
func (p *parser) header() error {
	if p.cnf != nil {
		return p.fail(ErrHeader)
	}
	text, err := p.br.ReadString('\n')
	if err != nil && err != io.EOF {
		return fmt.Errorf("reading dimacs: %w", err)
	}
	var v, c int
	if n, _ := fmt.Sscanf(text, " cnf %d %d", &v, &c); n != 2 || v < 0 || c < 0 || v > maxVars {
		return p.fail(ErrHeader)
	}
	p.cnf = &CNF{Vars: v, Clauses: make([][]int, 0, min(c, 1<<20))}
	p.declared = c
	p.line++
	return nil
}

// literal reads the literal starting with b; 0 ends the current clause.
func (p *parser) literal(b byte) error {
	if p.cnf == nil {
		return p.fail(ErrHeader)
	}
	if err := p.token(b); err != nil {
		return err
	}
	x, err := strconv.Atoi(string(p.tok))
	p.tok = p.tok[:0]
	if err != nil {
		return p.fail(ErrLiteral)
	}
	if x == 0 {
		p.cnf.Clauses = append(p.cnf.Clauses, p.cur)
		p.cur = nil
		return nil
	}
	if x > p.cnf.Vars || -x > p.cnf.Vars {
		return p.fail(ErrRange)
	}
	p.cur = append(p.cur, x)
	return nil
}

// token reads into p.tok the token starting with b, up to a blank or the end of input.
func (p *parser) token(b byte) error {
	p.tok = append(p.tok[:0], b)
	for {
		b, err := p.br.ReadByte()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading dimacs: %w", err)
		}
		if isBlank(b) || b == '\n' {
			_ = p.br.UnreadByte()
			return nil
		}
		p.tok = append(p.tok, b)
	}
}

// finish checks the formula once the input ends.
func (p *parser) finish() (*CNF, error) {
	if p.cnf == nil {
		return nil, p.fail(ErrHeader)
	}
	if p.cur != nil {
		return nil, p.fail(ErrTrailing)
	}
	if len(p.cnf.Clauses) != p.declared {
		return nil, p.fail(fmt.Errorf("%w: %d clauses, header says %d", ErrCount, len(p.cnf.Clauses), p.declared))
	}
	return p.cnf, nil
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
