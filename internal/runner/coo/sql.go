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
	i := 0
	for i < len(b) {
		c := b[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_':
			j := i
			for j < len(b) && (b[j] >= 'a' && b[j] <= 'z' || b[j] >= 'A' && b[j] <= 'Z' || b[j] == '_' || b[j] >= '0' && b[j] <= '9') {
				j++
			}
			out = append(out, token{off: i, text: strings.ToLower(string(b[i:j])), kind: tokWord})
			i = j
		case c >= '0' && c <= '9' || c == '-' && i+1 < len(b) && b[i+1] >= '0' && b[i+1] <= '9':
			j := i + 1
			for j < len(b) && b[j] >= '0' && b[j] <= '9' {
				j++
			}
			n, err := strconv.ParseInt(string(b[i:j]), 10, 64)
			if err != nil {
				return nil, &sqlError{i, fmt.Sprintf("integer %s out of range", b[i:j])}
			}
			out = append(out, token{off: i, text: string(b[i:j]), num: n, kind: tokInt})
			i = j
		case c == '>' || c == '<':
			if i+1 < len(b) && b[i+1] == '=' {
				out = append(out, token{off: i, text: string(b[i : i+2]), kind: tokPunct})
				i += 2
				continue
			}
			return nil, &sqlError{i, fmt.Sprintf("unsupported operator %q (the scripts use =, >= and <=)", c)}
		case c == '(' || c == ')' || c == ',' || c == '*' || c == '=':
			out = append(out, token{off: i, text: string(c), kind: tokPunct})
			i++
		default:
			return nil, &sqlError{i, fmt.Sprintf("unexpected character %q", c)}
		}
	}
	return append(out, token{off: len(b), kind: tokEnd}), nil
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
	switch first.text {
	case "begin":
		s.Kind = KindBegin
		p.accept("work")
	case "start":
		s.Kind = KindBegin
		err = p.words("transaction")
	case "commit":
		s.Kind = KindCommit
		p.accept("work")
	case "rollback":
		s.Kind = KindRollback
		p.accept("work")
	case "drop":
		s.Kind = KindDropTable
		if err = p.words("table"); err == nil {
			if p.accept("if") {
				err = p.words("exists")
			}
			if err == nil {
				s.Table, err = p.table()
			}
		}
	case "create":
		s.Kind = KindCreateTable
		if err = p.words("table"); err == nil {
			if s.Table, err = p.table(); err == nil {
				err = p.words("(", "k", "int", "primary", "key", ",", "v", "int", ")")
				if err != nil {
					err = &sqlError{err.(*sqlError).off, "unsupported table definition (want (k INT PRIMARY KEY, v INT)): " + err.Error()}
				}
			}
		}
	case "insert":
		s.Kind = KindInsert
		if err = p.words("into"); err == nil {
			if s.Table, err = p.table(); err == nil {
				if err = p.words("values", "("); err == nil {
					if s.Key, err = p.int(); err == nil {
						if err = p.words(","); err == nil {
							if s.Value, err = p.int(); err == nil {
								err = p.words(")")
							}
						}
					}
				}
			}
		}
	case "select":
		err = p.selectRest(&s)
	case "update":
		s.Kind = KindUpdate
		if s.Table, err = p.table(); err == nil {
			if err = p.words("set", "v", "="); err == nil {
				if s.Value, err = p.int(); err == nil {
					if err = p.words("where", "k", "="); err == nil {
						s.Key, err = p.int()
					}
				}
			}
		}
	default:
		return s, &sqlError{first.off, fmt.Sprintf("unsupported statement %s (the scripts use BEGIN, COMMIT, ROLLBACK, DROP, CREATE, INSERT, SELECT, UPDATE)", strings.ToUpper(first.text))}
	}
	if err == nil {
		err = p.end()
	}
	return s, err
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
