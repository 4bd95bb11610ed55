package smtlib

import (
	"errors"
	"fmt"
	"strings"
)

// ErrSyntax is wrapped by errors from [Parse].
var ErrSyntax = errors.New("smtlib: syntax error")

// ParseError locates a syntax error in S-expression input.
type ParseError struct {
	Line, Col int
	Msg       string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("smtlib: %d:%d: %s", e.Line, e.Col, e.Msg)
}

// Unwrap returns [ErrSyntax].
func (e *ParseError) Unwrap() error { return ErrSyntax }

// Parse reads every S-expression in src. Comments (";" to end of line),
// quoted symbols (|...|) and string literals ("...") are supported; quoted
// symbols and strings are kept verbatim, quotes included.
func Parse(src string) ([]Term, error) {
	p := &sparser{src: src, line: 1, col: 1}
	var out []Term
	for {
		p.skip()
		if p.pos >= len(p.src) {
			return out, nil
		}
		t, err := p.term()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
}

type sparser struct {
	src       string
	pos       int
	line, col int
}

func (p *sparser) adv() {
	if p.src[p.pos] == '\n' {
		p.line++
		p.col = 1
	} else {
		p.col++
	}
	p.pos++
}

func (p *sparser) skip() {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == ';':
			p.skipLine()
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.adv()
		default:
			return
		}
	}
}

// skipLine moves to the end of the line (a comment).
func (p *sparser) skipLine() {
	for p.pos < len(p.src) && p.src[p.pos] != '\n' {
		p.adv()
	}
}

func (p *sparser) errf(format string, args ...any) error {
	return &ParseError{Line: p.line, Col: p.col, Msg: fmt.Sprintf(format, args...)}
}

func (p *sparser) term() (Term, error) {
	p.skip()
	if p.pos >= len(p.src) {
		return Term{}, p.errf("unexpected end of input")
	}
	switch c := p.src[p.pos]; c {
	case '(':
		return p.list()
	case ')':
		return Term{}, p.errf("unexpected ')'")
	case '|', '"':
		return p.quoted(c)
	default:
		start := p.pos
		for p.pos < len(p.src) && !strings.ContainsRune(" \t\r\n();|\"", rune(p.src[p.pos])) {
			p.adv()
		}
		return Sym(p.src[start:p.pos]), nil
	}
}

// list reads the terms of a list up to its ')'.
func (p *sparser) list() (Term, error) {
	p.adv()
	var elems []Term
	for {
		p.skip()
		if p.pos >= len(p.src) {
			return Term{}, p.errf("unclosed parenthesis")
		}
		if p.src[p.pos] == ')' {
			p.adv()
			return Term{list: elems, isL: true}, nil
		}
		e, err := p.term()
		if err != nil {
			return Term{}, err
		}
		elems = append(elems, e)
	}
}

// quoted reads a |symbol| or a "string" (delimited by c), delimiters
// included.
func (p *sparser) quoted(c byte) (Term, error) {
	start := p.pos
	p.adv()
	for p.pos < len(p.src) && p.src[p.pos] != c {
		p.adv()
	}
	if p.pos >= len(p.src) {
		return Term{}, p.errf("unterminated %c", c)
	}
	p.adv()
	return Sym(p.src[start:p.pos]), nil
}
