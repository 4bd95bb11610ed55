package static

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrSyntax is wrapped by every [ParseError] raised while reading a program;
// ErrUnsupported by those refusing a construct the analyzer does not model.
var (
	ErrSyntax      = errors.New("static: syntax error")
	ErrInvalid     = errors.New("static: invalid program")
	ErrUnsupported = errors.New("static: unsupported construct")
)

// ParseError locates a problem in a program. Kind is one of [ErrSyntax],
// [ErrInvalid] or [ErrUnsupported].
type ParseError struct {
	File      string
	Line, Col int
	Msg       string
	Hint      string
	Kind      error
}

func (e *ParseError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteByte(':')
	}
	fmt.Fprintf(&b, "%d:%d: %s", e.Line, e.Col, e.Msg)
	if e.Hint != "" {
		b.WriteString(" (hint: ")
		b.WriteString(e.Hint)
		b.WriteByte(')')
	}
	return b.String()
}

// Unwrap returns the kind sentinel.
func (e *ParseError) Unwrap() error { return e.Kind }

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tInt
	tPunct
)

type token struct {
	kind tokKind
	text string
	pos  Pos
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tInt:
		return "number " + t.text
	}
	return fmt.Sprintf("%q", t.text)
}

// unsupported maps SQL words the dialect does not model to a hint.
var unsupported = map[string]string{
	"JOIN": "select from one table at a time", "ORDER": "use MIN or MAX", "GROUP": "use FOREACH",
	"LIMIT": "use MIN or MAX", "HAVING": "use IF", "UNION": "use two SELECTs", "LIKE": "compare integers",
	"BETWEEN": "use two comparisons", "EXISTS": "SELECT COUNT(*) and compare", "CASE": "use IF",
	"WHILE": "use FOREACH over a selected set", "FOR": "use FOREACH x IN s { ... }", "CHOOSE": "select one row by its full key",
	"RETURN": "the result of a transaction is not modelled; remove it", "SUM": "aggregates are MIN, MAX and COUNT",
	"AVG": "aggregates are MIN, MAX and COUNT", "COMMIT": "a TXN commits at its end", "ROLLBACK": "aborts are not modelled",
	"ABORT": "aborts are not modelled", "DISTINCT": "rows are sets already", "IN": "",
}

func lex(src string) ([]token, error) {
	l := &lexer{src: src, line: 1, col: 1}
	for l.i < len(src) {
		if err := l.next(); err != nil {
			return nil, err
		}
	}
	l.toks = append(l.toks, token{tEOF, "", Pos{l.line, l.col}})
	return l.toks, nil
}

// lexer is the position of lex in the source and the tokens so far.
type lexer struct {
	src       string
	i         int
	line, col int
	toks      []token
}

// adv moves n bytes on, counting lines and columns.
func (l *lexer) adv(n int) {
	for range n {
		if l.src[l.i] == '\n' {
			l.line++
			l.col = 1
		} else {
			l.col++
		}
		l.i++
	}
}

// next reads one token, or skips white space or a -- comment.
func (l *lexer) next() error {
	c := l.src[l.i]
	switch {
	case isSpace(c):
		l.adv(1)
	case l.atComment():
		l.skipLine()
	case isLetter(c):
		l.word(tIdent, func(c byte) bool { return isLetter(c) || isDigit(c) })
	case isDigit(c):
		l.word(tInt, isDigit)
	default:
		return l.punct(c)
	}
	return nil
}

// atComment reports whether a -- comment starts here.
func (l *lexer) atComment() bool {
	return l.src[l.i] == '-' && l.i+1 < len(l.src) && l.src[l.i+1] == '-'
}

// skipLine moves to the end of the line (its newline is white space).
func (l *lexer) skipLine() {
	for l.i < len(l.src) && l.src[l.i] != '\n' {
		l.adv(1)
	}
}

// word reads a token of the bytes from here that satisfy in.
func (l *lexer) word(kind tokKind, in func(byte) bool) {
	j := l.i
	for j < len(l.src) && in(l.src[j]) {
		j++
	}
	l.toks = append(l.toks, token{kind, l.src[l.i:j], Pos{l.line, l.col}})
	l.adv(j - l.i)
}

// punct reads a one- or two-character operator or punctuation mark.
func (l *lexer) punct(c byte) error {
	pos := Pos{l.line, l.col}
	if l.i+1 < len(l.src) {
		switch two := l.src[l.i : l.i+2]; two {
		case "<=", ">=", "<>", "!=":
			l.toks = append(l.toks, token{tPunct, two, pos})
			l.adv(2)
			return nil
		}
	}
	if strings.IndexByte("(){},;.=<>+-*:", c) >= 0 {
		l.toks = append(l.toks, token{tPunct, string(c), pos})
		l.adv(1)
		return nil
	}
	if c == '/' || c == '%' {
		return &ParseError{Line: l.line, Col: l.col, Kind: ErrUnsupported,
			Msg:  fmt.Sprintf("unsupported construct: operator %q", string(c)),
			Hint: "integer arithmetic is +, - and *"}
	}
	return &ParseError{Line: l.line, Col: l.col, Kind: ErrSyntax, Msg: fmt.Sprintf("unexpected character %q", string(c))}
}

func isLetter(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isSpace(c byte) bool  { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// keywords are reserved (case-insensitive) and cannot name anything.
var keywords = map[string]bool{
	"TABLE": true, "KEY": true, "TXN": true, "SELECT": true, "AS": true, "FROM": true, "WHERE": true,
	"UPDATE": true, "SET": true, "INSERT": true, "INTO": true, "VALUES": true, "DELETE": true, "IF": true,
	"ELSE": true, "FOREACH": true, "IN": true, "LET": true, "SKIP": true, "AND": true, "OR": true, "NOT": true,
	"IS": true, "NULL": true, "MIN": true, "MAX": true, "COUNT": true, "TRUE": true, "FALSE": true, "INT": true,
	"ASSUME": true, "INITIALLY": true, "FORALL": true,
}

type parser struct {
	toks []token
	i    int
}

// Parse reads and checks a program. Errors are *[ParseError]s (several joined
// with errors.Join when the checker finds more than one problem).
func Parse(src []byte) (*Program, error) {
	toks, err := lex(string(src))
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	prog, err := p.program()
	if err != nil {
		return nil, err
	}
	if err := check(prog); err != nil {
		return nil, err
	}
	return prog, nil
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) isKw(kw string) bool {
	t := p.peek()
	return t.kind == tIdent && strings.EqualFold(t.text, kw)
}

func (p *parser) isPunct(s string) bool {
	t := p.peek()
	return t.kind == tPunct && t.text == s
}

func (p *parser) errAt(t token, hint, format string, args ...any) error {
	kind := ErrSyntax
	if t.kind == tIdent {
		if h, ok := unsupported[strings.ToUpper(t.text)]; ok && h != "" {
			return &ParseError{Line: t.pos.Line, Col: t.pos.Col, Kind: ErrUnsupported,
				Msg: "unsupported construct " + strings.ToUpper(t.text), Hint: h}
		}
	}
	return &ParseError{Line: t.pos.Line, Col: t.pos.Col, Kind: kind, Msg: fmt.Sprintf(format, args...), Hint: hint}
}

func (p *parser) expectKw(kw, hint string) (token, error) {
	if !p.isKw(kw) {
		return token{}, p.errAt(p.peek(), hint, "expected %s, found %s", kw, p.peek())
	}
	return p.next(), nil
}

func (p *parser) expect(s, hint string) (token, error) {
	if !p.isPunct(s) {
		return token{}, p.errAt(p.peek(), hint, "expected %q, found %s", s, p.peek())
	}
	return p.next(), nil
}

func (p *parser) ident(what string) (token, error) {
	t := p.peek()
	if t.kind != tIdent {
		return t, p.errAt(t, "", "expected %s, found %s", what, t)
	}
	if keywords[strings.ToUpper(t.text)] {
		return t, p.errAt(t, "keywords are reserved; pick another name", "expected %s, found keyword %s", what, strings.ToUpper(t.text))
	}
	if h := unsupported[strings.ToUpper(t.text)]; h != "" {
		return t, p.errAt(t, "", "")
	}
	return p.next(), nil
}

func (p *parser) program() (*Program, error) {
	prog := &Program{}
	for p.peek().kind != tEOF {
		switch {
		case p.isKw("TABLE"):
			t, err := p.table()
			if err != nil {
				return nil, err
			}
			prog.Tables = append(prog.Tables, t)
		case p.isKw("TXN"):
			t, err := p.txn()
			if err != nil {
				return nil, err
			}
			prog.Txns = append(prog.Txns, t)
		case p.isKw("ASSUME"):
			a, err := p.assume()
			if err != nil {
				return nil, err
			}
			prog.Assumes = append(prog.Assumes, a)
		default:
			return nil, p.errAt(p.peek(), "a program is a list of TABLE, TXN and ASSUME INITIALLY declarations", "expected TABLE, TXN or ASSUME, found %s", p.peek())
		}
	}
	return prog, nil
}

// assume := ASSUME INITIALLY FORALL row IN table {, row IN table} [WHERE cond] : cond ;
func (p *parser) assume() (*Assume, error) {
	kw := p.next()
	if !p.isKw("INITIALLY") {
		return nil, &ParseError{Line: p.peek().pos.Line, Col: p.peek().pos.Col, Kind: ErrUnsupported,
			Msg:  fmt.Sprintf("unsupported construct: ASSUME without INITIALLY (found %s)", p.peek()),
			Hint: "only conditions on the initial database can be assumed: ASSUME INITIALLY FORALL r IN T WHERE ...: ...; an invariant of every snapshot would need a proof that every transaction preserves it"}
	}
	p.next()
	if _, err := p.expectKw("FORALL", "ASSUME INITIALLY FORALL d IN District, n IN NewOrders WHERE ...: ...;"); err != nil {
		return nil, err
	}
	a := &Assume{Pos: kw.pos}
	var err error
	if a.Rows, err = p.assumeRows(); err != nil {
		return nil, err
	}
	if p.isKw("WHERE") {
		p.next()
		if a.Premise, err = p.cond(); err != nil {
			return nil, err
		}
	}
	if _, err := p.expect(":", "FORALL rows [WHERE premise]: conclusion;"); err != nil {
		return nil, err
	}
	if a.Conclusion, err = p.cond(); err != nil {
		return nil, err
	}
	if _, err := p.expect(";", "end the ASSUME declaration with ';'"); err != nil {
		return nil, err
	}
	return a, nil
}

// assumeRows := row IN table {, row IN table}
func (p *parser) assumeRows() ([]AssumeRow, error) {
	var rows []AssumeRow
	for {
		name, err := p.ident("row name")
		if err != nil {
			return nil, err
		}
		if _, err := p.expectKw("IN", "FORALL row IN table"); err != nil {
			return nil, err
		}
		tb, err := p.ident("table name")
		if err != nil {
			return nil, err
		}
		rows = append(rows, AssumeRow{Name: name.text, Table: tb.text})
		if !p.isPunct(",") {
			return rows, nil
		}
		p.next()
	}
}

// table := TABLE name ( field [INT] [KEY] {, field [INT] [KEY]} ) ;
func (p *parser) table() (*Table, error) {
	kw := p.next()
	name, err := p.ident("table name")
	if err != nil {
		return nil, err
	}
	t := &Table{Pos: kw.pos, Name: name.text}
	if _, err := p.expect("(", "TABLE Account (AccID KEY, Balance);"); err != nil {
		return nil, err
	}
	for {
		fld, err := p.field()
		if err != nil {
			return nil, err
		}
		t.Fields = append(t.Fields, fld)
		if !p.isPunct(",") {
			break
		}
		p.next()
	}
	if _, err := p.expect(")", "fields are separated by commas"); err != nil {
		return nil, err
	}
	if _, err := p.expect(";", "end the TABLE declaration with ';'"); err != nil {
		return nil, err
	}
	return t, nil
}

// field := name [INT] [KEY]
func (p *parser) field() (*Field, error) {
	f, err := p.ident("field name")
	if err != nil {
		return nil, err
	}
	fld := &Field{Name: f.text}
	if p.isKw("INT") {
		p.next()
	}
	if p.isKw("KEY") {
		p.next()
		fld.Key = true
	}
	return fld, nil
}

// txn := TXN name ( [param {, param}] ) block
func (p *parser) txn() (*Txn, error) {
	kw := p.next()
	name, err := p.ident("transaction name")
	if err != nil {
		return nil, err
	}
	t := &Txn{Pos: kw.pos, Name: name.text}
	if _, err := p.expect("(", "TXN name(param, ...) { ... }"); err != nil {
		return nil, err
	}
	for !p.isPunct(")") {
		prm, err := p.ident("parameter name")
		if err != nil {
			return nil, err
		}
		t.Params = append(t.Params, prm.text)
		if !p.isPunct(",") {
			break
		}
		p.next()
	}
	if _, err := p.expect(")", "parameters are separated by commas"); err != nil {
		return nil, err
	}
	t.Body, err = p.block()
	return t, err
}

func (p *parser) block() ([]Stmt, error) {
	if _, err := p.expect("{", "blocks are enclosed in { }"); err != nil {
		return nil, err
	}
	var body []Stmt
	for !p.isPunct("}") {
		if p.peek().kind == tEOF {
			return nil, p.errAt(p.peek(), "a '}' is missing", "unexpected end of input in block")
		}
		s, err := p.stmt()
		if err != nil {
			return nil, err
		}
		body = append(body, s)
	}
	p.next()
	return body, nil
}

func (p *parser) semi() error {
	_, err := p.expect(";", "end each statement with ';'")
	return err
}

func (p *parser) stmt() (Stmt, error) {
	t := p.peek()
	switch {
	case p.isKw("SELECT"):
		return p.selectStmt()
	case p.isKw("UPDATE"):
		return p.updateStmt()
	case p.isKw("INSERT"):
		return p.insertStmt()
	case p.isKw("DELETE"):
		return p.deleteStmt()
	case p.isKw("LET"):
		return p.letStmt()
	case p.isKw("IF"):
		return p.ifStmt()
	case p.isKw("FOREACH"):
		return p.foreachStmt()
	case p.isKw("SKIP"):
		p.next()
		return &Skip{Pos: t.pos}, p.semi()
	}
	return nil, p.errAt(t, "statements are SELECT, UPDATE, INSERT, DELETE, LET, IF, FOREACH and SKIP", "expected a statement, found %s", t)
}

// deleteStmt := DELETE FROM table [WHERE cond] ;
func (p *parser) deleteStmt() (Stmt, error) {
	t := p.next()
	if _, err := p.expectKw("FROM", "DELETE FROM table WHERE ..."); err != nil {
		return nil, err
	}
	tbl, err := p.ident("table name")
	if err != nil {
		return nil, err
	}
	w, err := p.where()
	if err != nil {
		return nil, err
	}
	return &Delete{Pos: t.pos, Table: tbl.text, Where: w}, p.semi()
}

// letStmt := LET v = expr ;
func (p *parser) letStmt() (Stmt, error) {
	t := p.next()
	v, err := p.ident("variable name")
	if err != nil {
		return nil, err
	}
	if _, err := p.expect("=", "LET v = expression;"); err != nil {
		return nil, err
	}
	e, err := p.expr()
	if err != nil {
		return nil, err
	}
	return &Let{Pos: t.pos, Var: v.text, Expr: e}, p.semi()
}

// foreachStmt := FOREACH x IN set block
func (p *parser) foreachStmt() (Stmt, error) {
	t := p.next()
	it, err := p.ident("iterator name")
	if err != nil {
		return nil, err
	}
	if _, err := p.expectKw("IN", "FOREACH x IN s { ... }"); err != nil {
		return nil, err
	}
	set, err := p.ident("set variable")
	if err != nil {
		return nil, err
	}
	body, err := p.block()
	if err != nil {
		return nil, err
	}
	return &Foreach{Pos: t.pos, Iter: it.text, Set: set.text, Body: body}, nil
}

func (p *parser) ifStmt() (Stmt, error) {
	t := p.next()
	c, err := p.cond()
	if err != nil {
		return nil, err
	}
	if p.isKw("THEN") {
		p.next()
	}
	then, err := p.block()
	if err != nil {
		return nil, err
	}
	s := &If{Pos: t.pos, Cond: c, Then: then}
	if p.isKw("ELSE") {
		p.next()
		if p.isKw("IF") {
			e, err := p.ifStmt()
			if err != nil {
				return nil, err
			}
			s.Else = []Stmt{e}
		} else if s.Else, err = p.block(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// select := SELECT (* | f {, f} | MIN(f) | MAX(f) | COUNT(*)) AS v {...} FROM t WHERE c ;
// Per-field form: SELECT f AS v, g AS w FROM t WHERE c;
func (p *parser) selectStmt() (Stmt, error) {
	t := p.next()
	s := &Select{Pos: t.pos}
	var err error
	switch {
	case p.isPunct("*"):
		err = p.selectRows(s)
	case p.isKw("MIN") || p.isKw("MAX") || p.isKw("COUNT"):
		err = p.selectAggregate(s)
	default:
		err = p.selectFields(s)
	}
	if err != nil {
		return nil, err
	}
	if _, err := p.expectKw("FROM", "SELECT ... AS v FROM table WHERE ...;"); err != nil {
		return nil, err
	}
	tbl, err := p.ident("table name")
	if err != nil {
		return nil, err
	}
	s.Table = tbl.text
	if s.Where, err = p.where(); err != nil {
		return nil, err
	}
	return s, p.semi()
}

// selectRows reads "* AS rows".
func (p *parser) selectRows(s *Select) error {
	p.next()
	s.Kind = SelectRows
	if _, err := p.expectKw("AS", "SELECT * AS rows FROM t WHERE ...;"); err != nil {
		return err
	}
	return p.selectVar(s)
}

// selectVar reads the one variable of a SELECT * or an aggregate.
func (p *parser) selectVar(s *Select) error {
	v, err := p.ident("variable name")
	if err != nil {
		return err
	}
	s.Vars = []string{v.text}
	return nil
}

var aggregateKinds = map[string]SelectKind{"MIN": SelectMin, "MAX": SelectMax, "COUNT": SelectCount}

// selectAggregate reads "MIN(f) AS v", "MAX(f) AS v", "COUNT(f) AS v" or
// "COUNT(*) AS v".
func (p *parser) selectAggregate(s *Select) error {
	agg := strings.ToUpper(p.next().text)
	if _, err := p.expect("(", agg+"(field)"); err != nil {
		return err
	}
	s.Kind = aggregateKinds[agg]
	if s.Kind == SelectCount && p.isPunct("*") {
		p.next()
	} else {
		f, err := p.ident("field name")
		if err != nil {
			return err
		}
		s.Fields = []string{f.text}
	}
	if _, err := p.expect(")", ""); err != nil {
		return err
	}
	if _, err := p.expectKw("AS", "SELECT "+agg+"(f) AS v FROM t WHERE ...;"); err != nil {
		return err
	}
	return p.selectVar(s)
}

// selectFields reads "f AS v, g AS w, ...".
func (p *parser) selectFields(s *Select) error {
	s.Kind = SelectFields
	for {
		f, err := p.ident("field name, *, MIN, MAX or COUNT")
		if err != nil {
			return err
		}
		if _, err := p.expectKw("AS", "name each selected field: SELECT f AS v, g AS w FROM ..."); err != nil {
			return err
		}
		v, err := p.ident("variable name")
		if err != nil {
			return err
		}
		s.Fields = append(s.Fields, f.text)
		s.Vars = append(s.Vars, v.text)
		if !p.isPunct(",") {
			return nil
		}
		p.next()
	}
}

func (p *parser) where() (Cond, error) {
	if !p.isKw("WHERE") {
		return &BoolLit{Pos: p.peek().pos, V: true}, nil
	}
	p.next()
	return p.cond()
}

func (p *parser) assigns(hint string) ([]Assign, error) {
	var out []Assign
	for {
		f, err := p.ident("field name")
		if err != nil {
			return nil, err
		}
		if _, err := p.expect("=", hint); err != nil {
			return nil, err
		}
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		out = append(out, Assign{Pos: f.pos, Field: f.text, Expr: e})
		if !p.isPunct(",") {
			return out, nil
		}
		p.next()
	}
}

func (p *parser) updateStmt() (Stmt, error) {
	t := p.next()
	tbl, err := p.ident("table name")
	if err != nil {
		return nil, err
	}
	if _, err := p.expectKw("SET", "UPDATE table SET f = e WHERE ...;"); err != nil {
		return nil, err
	}
	sets, err := p.assigns("UPDATE table SET f = e, g = e2 WHERE ...;")
	if err != nil {
		return nil, err
	}
	w, err := p.where()
	if err != nil {
		return nil, err
	}
	return &Update{Pos: t.pos, Table: tbl.text, Sets: sets, Where: w}, p.semi()
}

func (p *parser) insertStmt() (Stmt, error) {
	t := p.next()
	if _, err := p.expectKw("INTO", "INSERT INTO table VALUES (f = e, ...);"); err != nil {
		return nil, err
	}
	tbl, err := p.ident("table name")
	if err != nil {
		return nil, err
	}
	if _, err := p.expectKw("VALUES", "INSERT INTO table VALUES (f = e, ...);"); err != nil {
		return nil, err
	}
	if _, err := p.expect("(", "INSERT INTO table VALUES (f = e, ...);"); err != nil {
		return nil, err
	}
	vals, err := p.assigns("INSERT INTO table VALUES (f = e, ...);")
	if err != nil {
		return nil, err
	}
	if _, err := p.expect(")", "values are separated by commas"); err != nil {
		return nil, err
	}
	return &Insert{Pos: t.pos, Table: tbl.text, Values: vals}, p.semi()
}

// cond := and {OR and}; and := unary {AND unary}; unary := NOT unary | atom
func (p *parser) cond() (Cond, error) {
	l, err := p.andCond()
	if err != nil {
		return nil, err
	}
	for p.isKw("OR") {
		t := p.next()
		r, err := p.andCond()
		if err != nil {
			return nil, err
		}
		l = &Logic{Pos: t.pos, L: l, R: r}
	}
	return l, nil
}

func (p *parser) andCond() (Cond, error) {
	l, err := p.unaryCond()
	if err != nil {
		return nil, err
	}
	for p.isKw("AND") {
		t := p.next()
		r, err := p.unaryCond()
		if err != nil {
			return nil, err
		}
		l = &Logic{Pos: t.pos, And: true, L: l, R: r}
	}
	return l, nil
}

func (p *parser) unaryCond() (Cond, error) {
	t := p.peek()
	switch {
	case p.isKw("NOT"):
		p.next()
		c, err := p.unaryCond()
		return &Not{Pos: t.pos, C: c}, err
	case p.isKw("TRUE") || p.isKw("FALSE"):
		p.next()
		return &BoolLit{Pos: t.pos, V: strings.EqualFold(t.text, "TRUE")}, nil
	case p.isPunct("("):
		if c, ok := p.parenCond(); ok {
			return c, nil
		}
	}
	if p.atIsNull() {
		return p.isNullCond()
	}
	return p.cmpCond()
}

// parenCond reads a parenthesised condition; ok is false, and the parser is
// back where it was, when the '(' starts an expression instead (the
// parentheses are not a whole condition, or a comparison follows them).
func (p *parser) parenCond() (c Cond, ok bool) {
	save := p.i
	p.next()
	c, err := p.cond()
	if err == nil && p.isPunct(")") {
		p.next()
		if !p.isCmpOp() {
			return c, true
		}
	}
	p.i = save
	return nil, false
}

// atIsNull reports whether the next tokens are "v IS", a null test.
func (p *parser) atIsNull() bool {
	t, u := p.peek(), p.toks[p.i+1]
	return t.kind == tIdent && !keywords[strings.ToUpper(t.text)] && u.kind == tIdent && strings.EqualFold(u.text, "IS")
}

// isNullCond := v IS [NOT] NULL
func (p *parser) isNullCond() (Cond, error) {
	t := p.next()
	p.next()
	neg := false
	if p.isKw("NOT") {
		p.next()
		neg = true
	}
	if _, err := p.expectKw("NULL", "v IS NULL or v IS NOT NULL"); err != nil {
		return nil, err
	}
	return &IsNull{Pos: t.pos, Var: t.text, Negated: neg}, nil
}

// cmpCond := expr op expr, with != read as <>.
func (p *parser) cmpCond() (Cond, error) {
	l, err := p.expr()
	if err != nil {
		return nil, err
	}
	if !p.isCmpOp() {
		return nil, p.errAt(p.peek(), "conditions compare expressions: a < b, a = b, a <> b, v IS NULL", "expected a comparison operator, found %s", p.peek())
	}
	op := p.next()
	r, err := p.expr()
	if err != nil {
		return nil, err
	}
	o := op.text
	if o == "!=" {
		o = "<>"
	}
	return &Cmp{Pos: op.pos, Op: o, L: l, R: r}, nil
}

func (p *parser) isCmpOp() bool {
	for _, o := range []string{"<", "<=", "=", "<>", "!=", ">", ">="} {
		if p.isPunct(o) {
			return true
		}
	}
	return false
}

// expr := term {(+|-) term}; term := factor {* factor}; factor := int | name | name.field | (expr) | -factor
func (p *parser) expr() (Expr, error) {
	l, err := p.term()
	if err != nil {
		return nil, err
	}
	for p.isPunct("+") || p.isPunct("-") {
		op := p.next()
		r, err := p.term()
		if err != nil {
			return nil, err
		}
		l = &Binary{Pos: op.pos, Op: op.text, L: l, R: r}
	}
	return l, nil
}

func (p *parser) term() (Expr, error) {
	l, err := p.factor()
	if err != nil {
		return nil, err
	}
	for p.isPunct("*") {
		op := p.next()
		r, err := p.factor()
		if err != nil {
			return nil, err
		}
		l = &Binary{Pos: op.pos, Op: "*", L: l, R: r}
	}
	return l, nil
}

func (p *parser) factor() (Expr, error) {
	t := p.peek()
	switch {
	case t.kind == tInt:
		return p.intLit()
	case p.isPunct("-"):
		p.next()
		x, err := p.factor()
		return &Neg{Pos: t.pos, X: x}, err
	case p.isPunct("("):
		p.next()
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		_, err = p.expect(")", "unbalanced parentheses")
		return e, err
	case p.isKw("NULL"):
		return nil, p.errAt(t, "test for NULL with v IS NULL", "NULL is not a value")
	case t.kind == tIdent:
		return p.nameExpr()
	}
	return nil, p.errAt(t, "", "expected an expression, found %s", t)
}

// intLit reads an integer of at most 2^40.
func (p *parser) intLit() (Expr, error) {
	t := p.next()
	n, err := strconv.ParseInt(t.text, 10, 64)
	if err != nil || n > 1<<40 {
		return nil, p.errAt(t, "", "integer %s out of range", t.text)
	}
	return &IntLit{Pos: t.pos, V: n}, nil
}

// nameExpr := name | name.field; a function call is unsupported.
func (p *parser) nameExpr() (Expr, error) {
	t := p.peek()
	if h, ok := unsupported[strings.ToUpper(t.text)]; ok && h != "" {
		return nil, p.errAt(t, "", "")
	}
	name, err := p.ident("a variable, parameter or field")
	if err != nil {
		return nil, err
	}
	if p.isPunct(".") {
		p.next()
		f, err := p.ident("field name after '.'")
		if err != nil {
			return nil, err
		}
		return &FieldOf{Pos: name.pos, Iter: name.text, Field: f.text}, nil
	}
	if p.isPunct("(") {
		return nil, &ParseError{Line: t.pos.Line, Col: t.pos.Col, Kind: ErrUnsupported,
			Msg: "unsupported construct: function call " + t.text + "(...)", Hint: "expressions are integers, names, + - * and parentheses"}
	}
	return &Ref{Pos: name.pos, Name: name.text}, nil
}
