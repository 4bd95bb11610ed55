package historytest

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/isovet/isovet/history"
)

type tokKind uint8

const (
	tEOF   tokKind = iota
	tSep           // newline or ';'
	tWord          // identifier
	tNum           // integer, or p.l
	tStr           // quoted string (text unquoted)
	tPunct         // one of ( ) [ ] , : ! @ = ? or "<-"
)

type token struct {
	kind tokKind
	text string
	line int
	col  int
}

func isWordStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isWordByte(c byte) bool { return isWordStart(c) || ('0' <= c && c <= '9') || c == '.' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// lexer turns the notation's source into tokens; line and lineStart place the next byte, src[i].
type lexer struct {
	src             string
	i               int
	line, lineStart int
	toks            []token
}

func lex(src string) ([]token, error) {
	l := &lexer{src: src, line: 1}
	for l.i < len(src) {
		if l.skipLayout() {
			continue
		}
		if err := l.token(); err != nil {
			return nil, err
		}
	}
	l.toks = append(l.toks, token{tEOF, "", l.line, len(src) - l.lineStart + 1})
	return l.toks, nil
}

// skipLayout steps over a blank or a comment at src[i] and says whether it did. A newline
// also ends a statement: it is a tSep token.
func (l *lexer) skipLayout() bool {
	switch c := l.src[l.i]; c {
	case '\n':
		l.emit(tSep, l.i+1)
		l.line, l.lineStart = l.line+1, l.i
	case ' ', '\t', '\r':
		l.i++
	case '#':
		for l.i < len(l.src) && l.src[l.i] != '\n' {
			l.i++
		}
	default:
		return false
	}
	return true
}

// token reads the token that starts at src[i].
func (l *lexer) token() error {
	src, i, c := l.src, l.i, l.src[l.i]
	switch {
	case c == ';':
		l.emit(tSep, i+1)
	case c == '<' && i+1 < len(src) && src[i+1] == '-':
		l.emit(tPunct, i+2)
	case strings.IndexByte("()[],:!@=?", c) >= 0:
		l.emit(tPunct, i+1)
	case c == '"':
		t, j, err := lexString(src, i, l.line, l.col())
		if err != nil {
			return err
		}
		l.toks = append(l.toks, t)
		l.i = j
	case isDigit(c) || (c == '-' && i+1 < len(src) && isDigit(src[i+1])):
		l.emit(tNum, numberEnd(src, i+1))
	case isWordStart(c):
		j := i + 1
		for j < len(src) && isWordByte(src[j]) {
			j++
		}
		l.emit(tWord, j)
	default:
		return fmt.Errorf("%d:%d: unexpected character %q", l.line, l.col(), c)
	}
	return nil
}

// col is the column of src[i].
func (l *lexer) col() int { return l.i - l.lineStart + 1 }

// emit appends the token of kind made of src[i:end] and moves past it.
func (l *lexer) emit(kind tokKind, end int) {
	l.toks = append(l.toks, token{kind, l.src[l.i:end], l.line, l.col()})
	l.i = end
}

// lexString reads the quoted string at src[i], which is at line:col, and returns its
// token and the index after it.
func lexString(src string, i, line, col int) (token, int, error) {
	j := i + 1
	for j < len(src) && src[j] != '"' && src[j] != '\n' {
		if src[j] == '\\' {
			j++
		}
		j++
	}
	if j >= len(src) || src[j] != '"' {
		return token{}, j, fmt.Errorf("%d:%d: unterminated string", line, col)
	}
	s, err := strconv.Unquote(src[i : j+1])
	if err != nil {
		return token{}, j, fmt.Errorf("%d:%d: bad string %s: %v", line, col, src[i:j+1], err)
	}
	return token{tStr, s, line, col}, j + 1, nil
}

// numberEnd returns the end of the number whose digits continue at src[j]: more digits,
// then optionally '.' and digits.
func numberEnd(src string, j int) int {
	for j < len(src) && isDigit(src[j]) {
		j++
	}
	if j+1 < len(src) && src[j] == '.' && isDigit(src[j+1]) {
		j++
		for j < len(src) && isDigit(src[j]) {
			j++
		}
	}
	return j
}

type parser struct {
	toks []token
	pos  int
	b    *history.Builder
	sess history.SessionID
	// haveSess: a session label was seen (or the default session created).
	haveSess bool
	ids      map[history.Datum]history.TxnID
	pending  []pendingSrc
	rowSrcs  []pendingRow
	preds    map[[2]int32]*history.PredOp // (txn, op) -> payload, for resolving sources
}

// pendingRow is a predicate row's "<-T" source, resolved once every transaction is known.
// rows and srcs are the slices the builder keeps, so setting srcs[i] updates the history.
type pendingRow struct {
	txn  history.TxnID
	op   int32 // the predicate op's index
	rows []history.Row
	srcs []history.Src
	i    int
	id   history.Datum
	tok  token
	kind history.SrcKind
}

// pendingSrc is a "<-T" source resolved once every transaction is known.
type pendingSrc struct {
	txn  history.TxnID
	op   int32
	id   history.Datum
	tok  token
	kind history.SrcKind
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) peekAt(n int) token {
	if p.pos+n < len(p.toks) {
		return p.toks[p.pos+n]
	}
	return p.toks[len(p.toks)-1]
}
func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

func (p *parser) errf(t token, format string, args ...any) error {
	what := t.text
	switch t.kind {
	case tEOF:
		what = "end of input"
	case tSep:
		what = "end of statement"
	}
	return fmt.Errorf("%d:%d: %s (at %q)", t.line, t.col, fmt.Sprintf(format, args...), what)
}

func (p *parser) isPunct(s string) bool {
	t := p.peek()
	return t.kind == tPunct && t.text == s
}

func (p *parser) expect(s string) error {
	if !p.isPunct(s) {
		return p.errf(p.peek(), "expected %q", s)
	}
	p.next()
	return nil
}

// Parse reads a history written in the notation the package documentation describes. The
// history is built with [history.NewBuilder] and validated; errors name the line and column.
func Parse(src string) (*history.History, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, fmt.Errorf("historytest: %w", err)
	}
	p := &parser{toks: toks, b: history.NewBuilder(), ids: make(map[history.Datum]history.TxnID)}
	for p.peek().kind != tEOF {
		if p.peek().kind == tSep {
			p.next()
			continue
		}
		if err := p.stmt(); err != nil {
			return nil, fmt.Errorf("historytest: %w", err)
		}
		if t := p.peek(); t.kind != tSep && t.kind != tEOF {
			return nil, fmt.Errorf("historytest: %w", p.errf(t, "expected end of statement"))
		}
	}
	if err := p.resolve(); err != nil {
		return nil, fmt.Errorf("historytest: %w", err)
	}
	h, err := p.b.Build()
	if err != nil {
		return nil, fmt.Errorf("historytest: %w", err)
	}
	return h, nil
}

// MustParse is [Parse] for fixtures written in Go source; it panics on error.
func MustParse(src string) *history.History {
	h, err := Parse(src)
	if err != nil {
		panic(err)
	}
	return h
}

func (p *parser) stmt() error {
	t := p.peek()
	if t.kind == tWord && t.text == "init" && !p.peekPunct(1, ":") {
		p.next()
		return p.initStmt()
	}
	// Session label.
	if isAtom(t) && p.peekPunct(1, ":") {
		p.next()
		p.next()
		p.sess = p.b.Session(atom(t))
		p.haveSess = true
	}
	if !p.haveSess {
		p.sess = p.b.Session(history.Str("s0"))
		p.haveSess = true
	}
	return p.txn()
}

func (p *parser) initStmt() error {
	// "init v" or "init k=v[,] k=v ...".
	if p.peekPunct(1, "=") {
		return p.initKeys()
	}
	v, err := p.value()
	if err != nil {
		return err
	}
	p.b.SetInitial(v)
	return nil
}

// initKeys parses the rest of "init k=v[,] k=v ...": each key's initial value.
func (p *parser) initKeys() error {
	for p.peek().kind != tSep && p.peek().kind != tEOF {
		kt := p.next()
		if !isAtom(kt) {
			return p.errf(kt, "expected a key")
		}
		if err := p.expect("="); err != nil {
			return err
		}
		v, err := p.value()
		if err != nil {
			return err
		}
		p.b.SetInitialKey(p.b.Key(atom(kt)), v)
		if p.isPunct(",") {
			p.next()
		}
	}
	return nil
}

var outcomes = map[string]history.Outcome{
	"c": history.OutcomeCommitted, "commit": history.OutcomeCommitted, "ok": history.OutcomeCommitted,
	"abort": history.OutcomeAborted, "fail": history.OutcomeAborted,
	"info": history.OutcomeUnknown, "unknown": history.OutcomeUnknown,
}

// atom turns a word, number or string token into a datum: integers become Int, "nil"
// becomes nil, everything else Str.
func atom(t token) history.Datum {
	switch t.kind {
	case tNum:
		if i, err := strconv.ParseInt(t.text, 10, 64); err == nil {
			return history.Int(i)
		}
		return history.Str(t.text)
	case tWord:
		if t.text == "nil" {
			return history.NilDatum
		}
	}
	return history.Str(t.text)
}

// peekPunct reports whether the token n ahead of the current one is the punctuation s.
func (p *parser) peekPunct(n int, s string) bool {
	t := p.peekAt(n)
	return t.kind == tPunct && t.text == s
}

// atTimestamps reports whether t, the current token, begins a "ts[...]" pair.
func (p *parser) atTimestamps(t token) bool {
	return t.kind == tWord && t.text == "ts" && p.peekPunct(1, "[")
}

// isAtom reports whether t can be an id or a value: a word, a number or a string.
func isAtom(t token) bool { return t.kind == tWord || t.kind == tNum || t.kind == tStr }

// txnBody is the state of the transaction p.txn is reading.
type txnBody struct {
	id        history.TxnID
	nops      int32 // ops read so far
	lastWasOp bool  // the last item read was an op, which "@", "!" and "<-" then qualify
}

// txnPunct handles the items of a transaction that begin with punctuation, by the
// punctuation.
var txnPunct = map[string]func(p *parser, tx *txnBody, t token) error{
	"?":  (*parser).txnUnknown,
	"@":  (*parser).txnInterval,
	"!":  (*parser).txnFailed,
	"<-": (*parser).txnSource,
}

func (p *parser) txn() error {
	src, err := p.txnID()
	if err != nil {
		return err
	}
	tx := &txnBody{id: p.b.BeginTxn(p.sess, src, history.OutcomeCommitted)}
	if !src.IsNil() {
		p.ids[src] = tx.id
	}
	for {
		t := p.peek()
		if t.kind == tSep || t.kind == tEOF {
			p.b.EndTxn()
			return nil
		}
		if err := p.txnItem(tx, t); err != nil {
			return err
		}
	}
}

// txnID reads the transaction's optional id: an atom that does not begin an op, an outcome
// (unless quoted) or timestamps. It returns NilDatum when there is none.
func (p *parser) txnID() (history.Datum, error) {
	t := p.peek()
	if !isAtom(t) || p.peekPunct(1, "(") || p.atTimestamps(t) {
		return history.NilDatum, nil
	}
	if _, isOutcome := outcomes[t.text]; isOutcome && t.kind != tStr {
		return history.NilDatum, nil
	}
	p.next()
	src := atom(t)
	if src.IsNil() {
		return src, p.errf(t, "nil is not a transaction id")
	}
	if _, dup := p.ids[src]; dup {
		return src, p.errf(t, "duplicate transaction id")
	}
	return src, nil
}

// txnItem reads one item of a transaction's body, beginning at t: an op, an outcome,
// timestamps, or a punctuation item (txnPunct).
func (p *parser) txnItem(tx *txnBody, t token) error {
	switch {
	case t.kind == tPunct:
		if h, ok := txnPunct[t.text]; ok {
			return h(p, tx, t)
		}
	case p.atTimestamps(t):
		p.next()
		tx.lastWasOp = false
		return p.timestamps()
	case t.kind == tWord && p.peekPunct(1, "("):
		if err := p.op(); err != nil {
			return err
		}
		tx.nops++
		tx.lastWasOp = true
		return nil
	case t.kind == tWord:
		if o, ok := outcomes[t.text]; ok {
			p.next()
			p.b.Current().Outcome = o
			tx.lastWasOp = false
			return nil
		}
	}
	return p.errf(t, "expected an operation, an outcome or an interval")
}

// txnUnknown reads "?": the transaction's outcome is unknown.
func (p *parser) txnUnknown(tx *txnBody, _ token) error {
	p.next()
	p.b.Current().Outcome = history.OutcomeUnknown
	tx.lastWasOp = false
	return nil
}

// txnInterval reads "@[begin,end]": the client interval of the last op, or of the
// transaction when no op came just before.
func (p *parser) txnInterval(tx *txnBody, t token) error {
	p.next()
	iv, err := p.interval()
	if err != nil {
		return err
	}
	if iv.Begin > iv.End {
		return p.errf(t, "interval ends before it begins")
	}
	if tx.lastWasOp {
		p.b.SetOpTime(tx.nops-1, iv)
		return nil
	}
	cur := p.b.Current()
	cur.Time, cur.HasTime = iv, true
	return nil
}

// txnFailed reads "!" after an op: the op failed.
func (p *parser) txnFailed(tx *txnBody, t token) error {
	if !tx.lastWasOp {
		return p.errf(t, "\"!\" must follow an operation")
	}
	p.next()
	p.b.SetOpFlags(tx.nops-1, history.OpFailed)
	return nil
}

// txnSource reads "<-T" after a read: the transaction (or init, or none) it read from,
// resolved once every transaction is known.
func (p *parser) txnSource(tx *txnBody, t token) error {
	if !tx.lastWasOp {
		return p.errf(t, "\"<-\" must follow a read")
	}
	p.next()
	st, kind, id, err := p.source()
	if err != nil {
		return err
	}
	p.pending = append(p.pending, pendingSrc{txn: tx.id, op: tx.nops - 1, tok: st, kind: kind, id: id})
	return nil
}

// source reads what follows "<-": a transaction id, init or none; id is set for a
// transaction.
func (p *parser) source() (st token, kind history.SrcKind, id history.Datum, err error) {
	st = p.next()
	switch {
	case st.kind == tWord && st.text == "init":
		kind = history.SrcInit
	case st.kind == tWord && st.text == "none":
		kind = history.SrcNone
	case isAtom(st):
		kind, id = history.SrcTxn, atom(st)
	default:
		err = p.errf(st, "expected a transaction id, init or none")
	}
	return st, kind, id, err
}

func (p *parser) int() (int64, error) {
	t := p.next()
	if t.kind != tNum {
		return 0, p.errf(t, "expected an integer")
	}
	i, err := strconv.ParseInt(t.text, 10, 64)
	if err != nil {
		return 0, p.errf(t, "expected an integer")
	}
	return i, nil
}

func (p *parser) interval() (history.Interval, error) {
	var iv history.Interval
	var err error
	if err = p.expect("["); err != nil {
		return iv, err
	}
	if iv.Begin, err = p.int(); err != nil {
		return iv, err
	}
	if err = p.expect(","); err != nil {
		return iv, err
	}
	if iv.End, err = p.int(); err != nil {
		return iv, err
	}
	return iv, p.expect("]")
}

func (p *parser) timestamp() (history.Timestamp, error) {
	t := p.next()
	if t.kind != tNum {
		return history.Timestamp{}, p.errf(t, "expected a timestamp")
	}
	phys, logi, hasLogical := strings.Cut(t.text, ".")
	var ts history.Timestamp
	var err error
	if ts.Physical, err = strconv.ParseInt(phys, 10, 64); err != nil {
		return ts, p.errf(t, "expected a timestamp")
	}
	if hasLogical {
		if ts.Logical, err = strconv.ParseInt(logi, 10, 64); err != nil {
			return ts, p.errf(t, "expected a timestamp")
		}
	}
	return ts, nil
}

func (p *parser) timestamps() error {
	if err := p.expect("["); err != nil {
		return err
	}
	start, err := p.timestamp()
	if err != nil {
		return err
	}
	if err := p.expect(","); err != nil {
		return err
	}
	commit, err := p.timestamp()
	if err != nil {
		return err
	}
	if err := p.expect("]"); err != nil {
		return err
	}
	cur := p.b.Current()
	cur.Start, cur.Commit, cur.HasTimestamps = start, commit, true
	return nil
}

func (p *parser) key() (history.Key, error) {
	t := p.next()
	if t.kind != tWord && t.kind != tNum && t.kind != tStr {
		return 0, p.errf(t, "expected a key")
	}
	return p.b.Key(atom(t)), nil
}

func (p *parser) value() (history.Value, error) {
	t := p.next()
	if t.kind != tWord && t.kind != tNum && t.kind != tStr {
		return 0, p.errf(t, "expected a value")
	}
	return p.b.Value(atom(t)), nil
}

func (p *parser) list() ([]history.Value, error) {
	if err := p.expect("["); err != nil {
		return nil, err
	}
	vs := []history.Value{}
	for !p.isPunct("]") {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
		if p.isPunct(",") {
			p.next()
		} else if !p.isPunct("]") {
			return nil, p.errf(p.peek(), "expected \",\" or \"]\"")
		}
	}
	p.next()
	return vs, nil
}

func (p *parser) op() error {
	name := p.next()
	p.next() // "("
	if name.text == "pr" || name.text == "pw" {
		return p.predOp(name)
	}
	k, err := p.key()
	if err != nil {
		return err
	}
	switch name.text {
	case "del":
		p.b.Delete(k)
		return p.expect(")")
	case "r", "rl", "w", "a", "append", "ins":
	default:
		return p.errf(name, "unknown operation (want r, rl, w, a, ins, del, pr or pw)")
	}
	if err := p.expect(","); err != nil {
		return err
	}
	if err := p.valueOp(name.text, k); err != nil {
		return err
	}
	return p.expect(")")
}

// valueOp parses the value (or, for a list read, the list) of the operation op on k, after
// the comma, and adds the operation.
func (p *parser) valueOp(op string, k history.Key) error {
	if op == "rl" || op == "r" && p.isPunct("[") {
		vs, err := p.list()
		if err != nil {
			return err
		}
		p.b.ReadList(k, vs)
		return nil
	}
	v, err := p.value()
	if err != nil {
		return err
	}
	switch op {
	case "r":
		p.b.Read(k, v)
	case "w":
		p.b.Write(k, v)
	case "a", "append":
		p.b.Append(k, v)
	case "ins":
		p.b.Insert(k, v)
	}
	return nil
}

// predOp parses the rest of pr(...) or pw(...): [relation ","] expr "," "[" rows "]"
// ["," "[" rows "]"] ")", the second list holding rows the predicate did not match.
func (p *parser) predOp(name token) error {
	pred, err := p.predicate(name)
	if err != nil {
		return err
	}
	rows, err := p.rows(nil, true)
	if err != nil {
		return err
	}
	if p.isPunct(",") {
		p.next()
		if rows, err = p.rows(rows, false); err != nil {
			return err
		}
	}
	if err := p.expect(")"); err != nil {
		return err
	}
	p.addPredOp(name, history.PredOp{Pred: pred, Rows: rows})
	return nil
}

// predicate parses the "[relation ","] expr ","" that begins pr(...) or pw(...), named at
// name, and fills in the range of a range expression.
func (p *parser) predicate(name token) (history.Predicate, error) {
	var atoms []token
	for !p.isPunct("[") {
		t := p.next()
		if !isAtom(t) {
			return history.Predicate{}, p.errf(t, "expected a predicate (a quoted expression)")
		}
		atoms = append(atoms, t)
		if err := p.expect(","); err != nil {
			return history.Predicate{}, err
		}
	}
	var pred history.Predicate
	switch len(atoms) {
	case 1:
		pred.Expr = atoms[0].text
	case 2:
		pred.Relation, pred.Expr = atoms[0].text, atoms[1].text
	default:
		return pred, p.errf(name, "expected [relation,] expression before the rows")
	}
	rangeOf(&pred)
	return pred, nil
}

// addPredOp adds the predicate read (pr) or write (pw) po to the current transaction and
// points the row sources its rows named at it.
func (p *parser) addPredOp(name token, po history.PredOp) {
	rows := po.Rows
	for i := range p.rowSrcs {
		if p.rowSrcs[i].rows == nil { // a source named in this op's rows
			po.Srcs = make([]history.Src, len(rows))
			break
		}
	}
	var j int32
	if name.text == "pr" {
		j = p.b.PredRead(po)
	} else {
		j = p.b.PredWrite(po)
	}
	t := history.TxnID(p.b.NumTxns() - 1)
	if p.preds == nil {
		p.preds = make(map[[2]int32]*history.PredOp)
	}
	p.preds[[2]int32{int32(t), j}] = &po
	// Sources recorded by rows() point into the final slice only once it stops growing.
	for i := range p.rowSrcs {
		if p.rowSrcs[i].rows == nil {
			p.rowSrcs[i].rows, p.rowSrcs[i].srcs, p.rowSrcs[i].txn, p.rowSrcs[i].op = rows, po.Srcs, t, j
		}
	}
}

// rows parses "[" {key "=" value ["<-" source]} "]", appending to rows with Match set as
// given.
func (p *parser) rows(rows []history.Row, match bool) ([]history.Row, error) {
	if err := p.expect("["); err != nil {
		return nil, err
	}
	if rows == nil {
		rows = []history.Row{}
	}
	for !p.isPunct("]") {
		k, err := p.key()
		if err != nil {
			return nil, err
		}
		if err := p.expect("="); err != nil {
			return nil, err
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		rows = append(rows, history.Row{Key: k, Value: v, Match: match})
		if p.isPunct("<-") {
			p.next()
			st, kind, id, err := p.source()
			if err != nil {
				return nil, err
			}
			p.rowSrcs = append(p.rowSrcs, pendingRow{i: len(rows) - 1, tok: st, kind: kind, id: id})
		}
		if p.isPunct(",") {
			p.next()
		} else if !p.isPunct("]") {
			return nil, p.errf(p.peek(), "expected \",\" or \"]\"")
		}
	}
	p.next()
	return rows, nil
}

// writeOf returns the op of transaction w that wrote k: its last write of k with value v,
// else its last write of k, else its last predicate write with a row for k; -1 if none.
// Only ops before limit count.
func (p *parser) writeOf(w history.TxnID, limit int, k history.Key, v history.Value) int32 {
	ops := p.b.TxnOps(w)
	found, same, pred := int32(-1), int32(-1), int32(-1)
	for i := range min(limit, len(ops)) {
		o := ops[i]
		switch {
		case o.Kind.IsWrite() && o.Key == k:
			found = int32(i)
			if o.Value == v {
				same = int32(i)
			}
		case o.Kind == history.OpPredWrite:
			for _, r := range p.preds[[2]int32{int32(w), int32(i)}].Rows {
				if r.Key == k {
					pred = int32(i)
				}
			}
		}
	}
	switch {
	case same >= 0:
		return same
	case found >= 0:
		return found
	}
	return pred
}

// resolve fills in "<-T" sources now that every transaction is known.
func (p *parser) resolve() error {
	for _, ps := range p.pending {
		ops := p.b.TxnOps(ps.txn)
		o := ops[ps.op]
		if o.Kind != history.OpRead {
			return p.errf(ps.tok, "only item reads take a source")
		}
		src, err := p.resolveSrc(ps.tok, ps.kind, ps.id, ps.txn, ps.op, o.Key, o.Value)
		if err != nil {
			return err
		}
		o.Src = src
		p.b.SetOp(ps.txn, ps.op, o)
	}
	for _, pr := range p.rowSrcs {
		r := &pr.rows[pr.i]
		src, err := p.resolveSrc(pr.tok, pr.kind, pr.id, pr.txn, pr.op, r.Key, r.Value)
		if err != nil {
			return err
		}
		pr.srcs[pr.i] = src
	}
	return nil
}

// resolveSrc is the source of kind (and id, for a transaction, named at tok) that op op of
// transaction txn, which read v from k, names: the op of the named transaction that wrote
// it (see writeOf), before op itself when a transaction reads its own write.
func (p *parser) resolveSrc(tok token, kind history.SrcKind, id history.Datum, txn history.TxnID, op int32, k history.Key, v history.Value) (history.Src, error) {
	src := history.Src{Kind: kind}
	if kind != history.SrcTxn {
		return src, nil
	}
	w, ok := p.ids[id]
	if !ok {
		return src, p.errf(tok, "no transaction with this id")
	}
	limit := math.MaxInt
	if w == txn {
		limit = int(op)
	}
	found := p.writeOf(w, limit, k, v)
	if found < 0 {
		return src, p.errf(tok, "transaction writes no such key")
	}
	src.Txn, src.Op = w, found
	return src, nil
}

// comparisonRanges maps the comparison of "field op n" to the range [lo, hi] of the field
// it allows.
var comparisonRanges = map[string]func(n int64) (lo, hi int64){
	"=":  func(n int64) (int64, int64) { return n, n },
	"==": func(n int64) (int64, int64) { return n, n },
	">=": func(n int64) (int64, int64) { return n, math.MaxInt64 },
	">":  func(n int64) (int64, int64) { return n + 1, math.MaxInt64 },
	"<=": func(n int64) (int64, int64) { return math.MinInt64, n },
	"<":  func(n int64) (int64, int64) { return math.MinInt64, n - 1 },
}

// rangeOf fills in Field, Lo and Hi when the expression is a range over one integer column:
// "v = 2", "v in [1, 3]", "v >= 2", "v > 2", "v <= 2", "v < 2" or "1 <= v <= 3".
func rangeOf(pred *history.Predicate) {
	f := strings.Fields(strings.NewReplacer("[", " [ ", "]", " ] ", ",", " , ").Replace(pred.Expr))
	if field, lo, hi, ok := fieldRange(f); ok {
		pred.Field, pred.Lo, pred.Hi, pred.IsRange = history.Str(field), lo, hi, true
	}
}

// fieldRange reads the range [lo, hi] of field that the words f of a range expression
// allow; ok is false if f is no such expression.
func fieldRange(f []string) (field string, lo, hi int64, ok bool) {
	switch {
	case len(f) == 3:
		n, err := strconv.ParseInt(f[2], 10, 64)
		r, known := comparisonRanges[f[1]]
		if err != nil || !known {
			return "", 0, 0, false
		}
		lo, hi = r(n)
		return f[0], lo, hi, true
	case len(f) == 7 && f[1] == "in" && f[2] == "[" && f[4] == "," && f[6] == "]":
		lo, hi, ok = bounds(f[3], f[5])
		return f[0], lo, hi, ok
	case len(f) == 5 && f[1] == "<=" && f[3] == "<=":
		lo, hi, ok = bounds(f[0], f[4])
		return f[2], lo, hi, ok
	}
	return "", 0, 0, false
}

// bounds parses the integers lo and hi; ok is false unless both are.
func bounds(los, his string) (lo, hi int64, ok bool) {
	lo, err1 := strconv.ParseInt(los, 10, 64)
	hi, err2 := strconv.ParseInt(his, 10, 64)
	return lo, hi, err1 == nil && err2 == nil
}
