package coo

import (
	"fmt"
	"strconv"
	"strings"
)

// The statement grammar, case-insensitive, any blanks between tokens:
//
//	BEGIN | START TRANSACTION | COMMIT | ROLLBACK
//	DROP TABLE [IF EXISTS] t
//	CREATE TABLE t ( k INT PRIMARY KEY , v INT )
//	INSERT INTO t VALUES ( int , int )
//	SELECT * FROM t WHERE k = int
//	SELECT * FROM t WHERE v >= int AND v <= int
//	SELECT * FROM t [ORDER BY k]
//	UPDATE t SET v = int WHERE k = int

// token is one lexeme: a word (lower-cased), an integer, or punctuation.
type token struct {
	off  int    // byte offset in the statement
	text string // lower-cased words; punctuation as written
	num  int64
	kind tokKind
}

type tokKind uint8

const (
	tokWord tokKind = iota + 1
	tokInt
	tokPunct
	tokEnd
)

// sqlError is a syntax error at a byte offset of the statement.
type sqlError struct {
	off int
	msg string
}

func (e *sqlError) Error() string { return e.msg }

func lex(b []byte) ([]token, error) {
	var out []token
	for i := 0; i < len(b); {
		if b[i] == ' ' || b[i] == '\t' {
			i++
			continue
		}
		t, j, err := lexToken(b, i)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		i = j
	}
	return append(out, token{off: len(b), kind: tokEnd}), nil
}

// lexToken reads the token at b[i], which is not a blank, and returns it and the index
// after it.
func lexToken(b []byte, i int) (token, int, error) {
	c := b[i]
	switch {
	case isWordByte(c) && !isDigitByte(c):
		j := wordEnd(b, i)
		return token{off: i, kind: tokWord, text: strings.ToLower(string(b[i:j]))}, j, nil
	case isDigitByte(c) || c == '-' && i+1 < len(b) && isDigitByte(b[i+1]):
		return lexInt(b, i)
	case c == '>' || c == '<':
		if i+1 >= len(b) || b[i+1] != '=' {
			return token{}, i, &sqlError{i, fmt.Sprintf("unsupported operator %q (the scripts use =, >= and <=)", c)}
		}
		return token{off: i, text: string(b[i : i+2]), kind: tokPunct}, i + 2, nil
	case strings.IndexByte("(),*=", c) >= 0:
		return token{off: i, text: string(c), kind: tokPunct}, i + 1, nil
	}
	return token{}, i, &sqlError{i, fmt.Sprintf("unexpected character %q", c)}
}

func isDigitByte(c byte) bool { return c >= '0' && c <= '9' }

// isWordByte reports whether c can be in a word: a letter, '_' or a digit (not first).
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || isDigitByte(c)
}

// wordEnd returns the end of the word at b[i].
func wordEnd(b []byte, i int) int {
	for i < len(b) && isWordByte(b[i]) {
		i++
	}
	return i
}

// lexInt reads the integer at b[i], with an optional '-', and returns its token and the
// index after it.
func lexInt(b []byte, i int) (token, int, error) {
	j := i + 1
	for j < len(b) && isDigitByte(b[j]) {
		j++
	}
	n, err := strconv.ParseInt(string(b[i:j]), 10, 64)
	if err != nil {
		return token{}, j, &sqlError{i, fmt.Sprintf("integer %s out of range", b[i:j])}
	}
	return token{off: i, text: string(b[i:j]), num: n, kind: tokInt}, j, nil
}

// parser matches a token list against the grammar's patterns.
type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) errorf(format string, args ...any) error {
	return &sqlError{p.peek().off, fmt.Sprintf(format, args...)}
}

func describe(t token) string {
	if t.kind == tokEnd {
		return "the end of the statement"
	}
	return strconv.Quote(t.text)
}

// words consumes the given keywords or punctuation in order.
func (p *parser) words(ws ...string) error {
	for _, w := range ws {
		t := p.peek()
		if (t.kind != tokWord && t.kind != tokPunct) || t.text != w {
			return p.errorf("want %s, found %s", strings.ToUpper(w), describe(t))
		}
		p.i++
	}
	return nil
}

// accept consumes w if it comes next.
func (p *parser) accept(w string) bool {
	if t := p.peek(); (t.kind == tokWord || t.kind == tokPunct) && t.text == w {
		p.i++
		return true
	}
	return false
}

func (p *parser) int() (int64, error) {
	t := p.peek()
	if t.kind != tokInt {
		return 0, p.errorf("want an integer, found %s", describe(t))
	}
	p.i++
	return t.num, nil
}

var keywords = map[string]bool{"select": true, "from": true, "where": true, "and": true, "order": true, "by": true, "set": true, "values": true, "into": true, "table": true, "if": true, "exists": true}

func (p *parser) table() (string, error) {
	t := p.peek()
	if t.kind != tokWord || keywords[t.text] {
		return "", p.errorf("want a table name, found %s", describe(t))
	}
	p.i++
	return t.text, nil
}

func (p *parser) end() error {
	if t := p.peek(); t.kind != tokEnd {
		return p.errorf("unexpected %s after the statement", describe(t))
	}
	return nil
}

// parseSQL parses one statement (without its prefix and semicolon).
func parseSQL(b []byte) (Stmt, error) {
	toks, err := lex(b)
	if err != nil {
		return Stmt{}, err
	}
	p := &parser{toks: toks}
	var s Stmt
	first := p.peek()
	if first.kind != tokWord {
		if first.kind == tokEnd {
			return s, p.errorf("empty statement")
		}
		return s, p.errorf("want a statement (BEGIN, COMMIT, ROLLBACK, DROP, CREATE, INSERT, SELECT, UPDATE), found %s", describe(first))
	}
	p.i++
	rest, ok := stmtParsers[first.text]
	if !ok {
		return s, &sqlError{first.off, fmt.Sprintf("unsupported statement %s (the scripts use BEGIN, COMMIT, ROLLBACK, DROP, CREATE, INSERT, SELECT, UPDATE)", strings.ToUpper(first.text))}
	}
	err = rest(p, &s)
	if err == nil {
		err = p.end()
	}
	return s, err
}

// stmtParsers parse the rest of a statement, by its first word.
var stmtParsers = map[string]func(p *parser, s *Stmt) error{
	"begin":    func(p *parser, s *Stmt) error { s.Kind = KindBegin; p.accept("work"); return nil },
	"start":    func(p *parser, s *Stmt) error { s.Kind = KindBegin; return p.words("transaction") },
	"commit":   func(p *parser, s *Stmt) error { s.Kind = KindCommit; p.accept("work"); return nil },
	"rollback": func(p *parser, s *Stmt) error { s.Kind = KindRollback; p.accept("work"); return nil },
	"drop":     (*parser).dropRest,
	"create":   (*parser).createRest,
	"insert":   (*parser).insertRest,
	"select":   (*parser).selectRest,
	"update":   (*parser).updateRest,
}

// dropRest parses the rest of DROP TABLE [IF EXISTS] t.
func (p *parser) dropRest(s *Stmt) (err error) {
	s.Kind = KindDropTable
	if err = p.words("table"); err != nil {
		return err
	}
	if p.accept("if") {
		if err = p.words("exists"); err != nil {
			return err
		}
	}
	s.Table, err = p.table()
	return err
}

// createRest parses the rest of CREATE TABLE t (k INT PRIMARY KEY, v INT).
func (p *parser) createRest(s *Stmt) (err error) {
	s.Kind = KindCreateTable
	if err = p.words("table"); err != nil {
		return err
	}
	if s.Table, err = p.table(); err != nil {
		return err
	}
	if err = p.words("(", "k", "int", "primary", "key", ",", "v", "int", ")"); err != nil {
		return &sqlError{err.(*sqlError).off, "unsupported table definition (want (k INT PRIMARY KEY, v INT)): " + err.Error()}
	}
	return nil
}

// insertRest parses the rest of INSERT INTO t VALUES (k, v).
func (p *parser) insertRest(s *Stmt) (err error) {
	s.Kind = KindInsert
	if err = p.words("into"); err != nil {
		return err
	}
	if s.Table, err = p.table(); err != nil {
		return err
	}
	if err = p.words("values", "("); err != nil {
		return err
	}
	if s.Key, err = p.int(); err != nil {
		return err
	}
	if err = p.words(","); err != nil {
		return err
	}
	if s.Value, err = p.int(); err != nil {
		return err
	}
	return p.words(")")
}

// updateRest parses the rest of UPDATE t SET v = x WHERE k = y.
func (p *parser) updateRest(s *Stmt) (err error) {
	s.Kind = KindUpdate
	if s.Table, err = p.table(); err != nil {
		return err
	}
	if err = p.words("set", "v", "="); err != nil {
		return err
	}
	if s.Value, err = p.int(); err != nil {
		return err
	}
	if err = p.words("where", "k", "="); err != nil {
		return err
	}
	s.Key, err = p.int()
	return err
}

func (p *parser) selectRest(s *Stmt) error {
	if err := p.words("*", "from"); err != nil {
		return err
	}
	var err error
	if s.Table, err = p.table(); err != nil {
		return err
	}
	switch {
	case p.accept("where"):
		switch {
		case p.accept("k"):
			s.Kind = KindSelectKey
			if err := p.words("="); err != nil {
				return err
			}
			s.Key, err = p.int()
			return err
		case p.accept("v"):
			s.Kind = KindSelectRange
			if err := p.words(">="); err != nil {
				return err
			}
			if s.Lo, err = p.int(); err != nil {
				return err
			}
			if err := p.words("and", "v", "<="); err != nil {
				return err
			}
			s.Hi, err = p.int()
			return err
		}
		return p.errorf("want k = N or v >= LO AND v <= HI, found %s", describe(p.peek()))
	case p.accept("order"):
		s.Kind = KindSelectAll
		return p.words("by", "k")
	}
	s.Kind = KindSelectAll
	return nil
}
