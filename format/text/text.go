// Package text reads and writes the one-operation-per-line text histories of PolySI,
// Plume and IsoVista:
//
//	w(key,value,session,txn)
//	r(key,value,session,txn)
//
// All four fields are decimal integers (Plume's tests use negative numbers). Transaction
// ids are global: a transaction's operations may be spread over the file, and it belongs
// to the session of its first line. Transaction id -1 marks Plume's aborted writes
// (tap-b, AbortedRead): its operations form one aborted transaction per session. Every
// other transaction is committed.
//
// # Initial state
//
// PolySI's loader adds an initial transaction writing 0 to every key; IsoVista's and
// Plume's loaders add none, and the histories IsoVista publishes write the initial state
// themselves, as their first transaction (session 0, transaction 0, writing 0 to every key).
// The reader sets every key's initial value to 0, as PolySI does, and reads such a first
// transaction as that initial state, not as a transaction a checker could order later (one
// placed between two others "resets" keys to 0 and can hide a violation). It does so only
// when the file leaves no other reading: the first transaction of the file (its first line
// is the file's first) commits, reads nothing, and writes 0 exactly once to every key the
// file names; and no other transaction writes 0 to any key. Then it builds no
// transaction for it, gives each key it wrote the initial value 0 per key
// ([history.Builder.SetInitialKey], which an override of every key's initial value leaves
// alone), and says so in the history's notes. Any other first transaction (Plume's fixtures
// write 1s in theirs) is kept as an ordinary one.
//
// Transactions and sessions are ordered by first appearance.
package text

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/parse"
)

// Name is the format's name in the registry.
const Name = "text"

// Aborted is the transaction id Plume uses for aborted writes.
const Aborted = -1

// Decoder reads text histories into a [history.Builder]. It implements format.Decoder.
type Decoder struct{}

// NewDecoder returns a decoder.
func NewDecoder() *Decoder { return &Decoder{} }

// Finish implements format.Decoder.
func (d *Decoder) Finish(*history.Builder) error { return nil }

type op struct {
	write    bool
	key, val int64
}

type txn struct {
	sess, id int64
	line     int
	ops      []op
}

type txnKey struct {
	sess, id int64 // sess is used only for aborted (id -1) transactions
}

// Decode reads r into b. name is used in error messages.
func (d *Decoder) Decode(r io.Reader, name string, b *history.Builder) error {
	br := bufio.NewReaderSize(r, 1<<16)
	g := gather{name: name, byID: make(map[txnKey]*txn)}
	var off int64
	for line := 1; ; line++ {
		ln, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return parse.Errorf(Name, name, line, 1, off, "line longer than %d bytes: expected one operation per line", len(ln))
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("reading %s: %w", name, err)
		}
		if len(bytes.TrimSpace(ln)) > 0 {
			if err := g.line(ln, line, off); err != nil {
				return err
			}
		}
		off += int64(len(ln))
		if err == io.EOF {
			break
		}
	}
	zero := b.IntValue(0)
	b.SetInitial(zero)
	txns := g.txns
	if initialTxn(txns) {
		setInitial(b, txns[0], zero)
		txns = txns[1:]
	}
	build(b, txns)
	return nil
}

// gather collects the operations of a file by transaction.
type gather struct {
	name string
	txns []*txn // in order of first line
	byID map[txnKey]*txn
}

// line adds the operation on line number line (not blank), which starts at offset off.
func (g *gather) line(ln []byte, line int, off int64) error {
	o, sess, id, col, msg := parseLine(ln)
	if msg != "" {
		return parse.Errorf(Name, g.name, line, col, off+int64(col-1), "%s", msg)
	}
	k := txnKey{id: id}
	if id == Aborted {
		k.sess = sess
	}
	t := g.byID[k]
	if t == nil {
		t = &txn{sess: sess, id: id, line: line}
		g.byID[k] = t
		g.txns = append(g.txns, t)
	} else if t.sess != sess {
		return parse.Errorf(Name, g.name, line, 1, off, "transaction %d is in session %d (line %d), not %d: expected one session per transaction", id, t.sess, t.line, sess)
	}
	t.ops = append(t.ops, o)
	return nil
}

// setInitial takes the writes of t, the file's initial transaction (see initialTxn), as the
// initial state: every key it writes starts at zero.
func setInitial(b *history.Builder, t *txn, zero history.Value) {
	// Per key, so that the file's own statement survives an override of the initial
	// value for all keys (format.Options.Initial).
	for _, o := range t.ops {
		b.SetInitialKey(b.IntKey(o.key), zero)
	}
	b.Note(fmt.Sprintf("transaction %d (session %d) comes first and writes 0 to every key once, and nothing else: read as the initial state (every key 0), not as a transaction", t.id, t.sess))
}

// build adds txns to b: those of id Aborted aborted, the others committed.
func build(b *history.Builder, txns []*txn) {
	for _, t := range txns {
		outcome := history.OutcomeCommitted
		if t.id == Aborted {
			outcome = history.OutcomeAborted
		}
		b.BeginTxn(b.Session(history.Int(t.sess)), history.Int(t.id), outcome)
		for _, o := range t.ops {
			if o.write {
				b.Write(b.IntKey(o.key), b.IntValue(o.val))
			} else {
				b.Read(b.IntKey(o.key), b.IntValue(o.val))
			}
		}
		b.EndTxn()
	}
}

// initialTxn reports whether the file's first transaction is its initial state: it commits,
// reads nothing, and writes 0 exactly once to every key of the file; and no other
// transaction writes 0 to any key, so that every read of 0 reads the initial state whichever
// way the transaction is taken. Dropping such a transaction changes the history's meaning
// only by forbidding orders that place it after another transaction, which the file's
// convention (the initial state, written first) rules out; its writes are the initial value
// the reader sets for every key. Where its other lines fall does not matter: the model keeps
// no order of lines, only of transactions (by first line), so neither may this.
func initialTxn(txns []*txn) bool {
	if len(txns) < 2 {
		return false // a lone transaction is the history, not its initial state
	}
	written := zeroWrites(txns[0])
	if written == nil {
		return false
	}
	for _, t := range txns[1:] {
		if !keepsInitial(t, written) {
			return false
		}
	}
	return true
}

// keepsInitial reports whether t agrees with an initial transaction writing 0 to the keys
// written: it touches only those keys, and writes 0 to none.
func keepsInitial(t *txn, written map[int64]bool) bool {
	for _, o := range t.ops {
		if !written[o.key] || o.write && o.val == 0 {
			return false
		}
	}
	return true
}

// zeroWrites returns the keys t writes when it commits and only writes 0, each key once;
// else nil.
func zeroWrites(t *txn) map[int64]bool {
	if t.id == Aborted {
		return nil
	}
	written := make(map[int64]bool, len(t.ops))
	for _, o := range t.ops {
		if !o.write || o.val != 0 || written[o.key] {
			return nil
		}
		written[o.key] = true
	}
	return written
}

// parseLine parses one operation. On error, msg says what was expected at 1-based col.
func parseLine(ln []byte) (o op, sess, id int64, col int, msg string) {
	l := lineScan{ln: ln}
	l.ws()
	switch {
	case l.at('r'):
	case l.at('w'):
		o.write = true
	default:
		return o, 0, 0, l.i + 1, "expected r(key,value,session,txn) or w(...), found " + l.found()
	}
	l.i++
	l.ws()
	if !l.at('(') {
		return o, 0, 0, l.i + 1, "expected '(' after the operation, found " + l.found()
	}
	l.i++
	var f [4]int64
	for n := range f {
		// Each field scanned here: as a call per field, the line costs 10% more.
		l.ws()
		start := l.i
		if l.at('-') {
			l.i++
		}
		for l.i < len(l.ln) && l.ln[l.i] >= '0' && l.ln[l.i] <= '9' {
			l.i++
		}
		v, err := strconv.ParseInt(string(ln[start:l.i]), 10, 64)
		if err != nil {
			col, msg = l.badField(n, start)
			return o, 0, 0, col, msg
		}
		f[n] = v
		l.ws()
		if want := fieldEnd(n); !l.at(want) {
			return o, 0, 0, l.i + 1, fmt.Sprintf("expected '%c' after the %s, found %s", want, fieldNames[n], l.found())
		}
		l.i++
	}
	if col, msg = l.end(); msg != "" {
		return o, 0, 0, col, msg
	}
	o.key, o.val = f[0], f[1]
	return o, f[2], f[3], 0, ""
}

// lineScan is parseLine's place in a line.
type lineScan struct {
	ln []byte
	i  int
}

// fieldNames name the fields of an operation, in order.
var fieldNames = [4]string{"key", "value", "session", "transaction id"}

// at reports whether the byte at i is c.
func (l *lineScan) at(c byte) bool { return l.i < len(l.ln) && l.ln[l.i] == c }

// ws skips blanks and tabs.
func (l *lineScan) ws() {
	for l.i < len(l.ln) && (l.ln[l.i] == ' ' || l.ln[l.i] == '\t') {
		l.i++
	}
}

// found describes what is at i, for an error.
func (l *lineScan) found() string {
	if l.i >= len(l.ln) || l.ln[l.i] == '\n' || l.ln[l.i] == '\r' {
		return "end of line"
	}
	return strconv.QuoteRune(rune(l.ln[l.i]))
}

// fieldEnd is the punctuation after the n-th field: ',', or ')' after the last.
func fieldEnd(n int) byte {
	if n == len(fieldNames)-1 {
		return ')'
	}
	return ','
}

// badField says what is wrong with the n-th field, which starts at start and is not a
// 64-bit integer: it is out of range, or not a number.
func (l *lineScan) badField(n, start int) (col int, msg string) {
	if l.i > start && (l.i-start > 1 || l.ln[start] != '-') {
		return start + 1, "the " + fieldNames[n] + " is out of the 64-bit integer range"
	}
	l.i = start
	return start + 1, "expected the " + fieldNames[n] + " (an integer), found " + l.found()
}

// end checks that only white space follows the operation.
func (l *lineScan) end() (col int, msg string) {
	for ; l.i < len(l.ln); l.i++ {
		if c := l.ln[l.i]; c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return l.i + 1, "expected end of line after the operation, found " + l.found()
		}
	}
	return 0, ""
}

// Sniff reports whether head starts with a text operation line.
func Sniff(_ string, head []byte) bool {
	head = bytes.TrimLeft(head, " \t\r\n")
	ln, _, _ := bytes.Cut(head, []byte{'\n'})
	if len(ln) < 2 || (ln[0] != 'r' && ln[0] != 'w') {
		return false
	}
	if len(ln) == len(head) && !bytes.HasSuffix(bytes.TrimSpace(ln), []byte{')'}) {
		// A first line cut by the sniff limit: judge its start only.
		return bytes.HasPrefix(ln[1:], []byte{'('})
	}
	_, _, _, _, msg := parseLine(ln)
	return msg == ""
}

// ErrUnrepresentable is wrapped by [Write] when a history holds what the text format
// cannot.
var ErrUnrepresentable = errors.New("text: cannot write")

// Write writes h as text lines, transactions in id order. Keys and values must be
// integers, operations reads and writes, and outcomes committed or aborted (at most one
// aborted transaction per session, written with id -1); anything else is an error
// wrapping [ErrUnrepresentable]. Transactions and sessions keep their source ids when
// these are distinct integers, and are numbered by their dense ids otherwise.
// Transactions without operations are not written (the format cannot hold them).
func Write(w io.Writer, h *history.History) error {
	sessIDs, txnIDs := sourceIDs(h)
	bw := bufio.NewWriterSize(w, 1<<16)
	var b []byte
	abortedIn := make(map[history.SessionID]bool)
	for i := range h.Txns {
		t := &h.Txns[i]
		id, err := writtenID(h, t, txnIDs[i], abortedIn)
		if err != nil {
			return err
		}
		for j, o := range t.Ops {
			if b, err = appendLine(b, h, t, j, o, sessIDs[t.Session], id); err != nil {
				return err
			}
		}
		if len(b) > 1<<15 {
			if _, err := bw.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	if _, err := bw.Write(b); err != nil {
		return err
	}
	return bw.Flush()
}

// writtenID returns the id to write for t, whose source id is id: id itself when t commits,
// Aborted when it aborts (unless its session already has an aborted transaction with
// operations, abortedIn); other outcomes are an error.
func writtenID(h *history.History, t *history.Txn, id int64, abortedIn map[history.SessionID]bool) (int64, error) {
	switch t.Outcome {
	case history.OutcomeCommitted:
		return id, nil
	case history.OutcomeAborted:
		if abortedIn[t.Session] && len(t.Ops) > 0 {
			return 0, fmt.Errorf("%w: session %v has several aborted transactions (the text format keeps one per session)", ErrUnrepresentable, h.Sessions[t.Session].Source)
		}
		abortedIn[t.Session] = abortedIn[t.Session] || len(t.Ops) > 0
		return Aborted, nil
	}
	return 0, fmt.Errorf("%w: txn %s is %v (the text format has committed and aborted transactions only)", ErrUnrepresentable, h.Name(t.ID), t.Outcome)
}

// opLetter is the letter of each kind of operation the format holds.
var opLetter = map[history.OpKind]byte{history.OpRead: 'r', history.OpWrite: 'w'}

// appendLine appends the line of op j of t, o, in session sess and transaction id.
func appendLine(b []byte, h *history.History, t *history.Txn, j int, o history.Op, sess, id int64) ([]byte, error) {
	c, ok := opLetter[o.Kind]
	if !ok {
		return b, fmt.Errorf("%w: txn %s op %d is of kind %v (the text format has reads and writes)", ErrUnrepresentable, h.Name(t.ID), j, o.Kind)
	}
	k, ok1 := h.Key(o.Key).Int()
	v, ok2 := h.Value(o.Value).Int()
	if !ok1 || !ok2 {
		return b, fmt.Errorf("%w: txn %s op %d: key %#v and value %#v must be integers", ErrUnrepresentable, h.Name(t.ID), j, h.Key(o.Key), h.Value(o.Value))
	}
	b = append(b, c, '(')
	b = strconv.AppendInt(b, k, 10)
	b = strconv.AppendInt(append(b, ','), v, 10)
	b = strconv.AppendInt(append(b, ','), sess, 10)
	b = strconv.AppendInt(append(b, ','), id, 10)
	return append(b, ")\n"...), nil
}

// sourceIDs returns the ids to write for sessions and transactions: their sources when
// these are distinct integers (and, for transactions, not -1), else dense ids.
func sourceIDs(h *history.History) (sess, txns []int64) {
	never := func(int) bool { return false }
	sess = distinctInts(len(h.Sessions), func(i int) history.Datum { return h.Sessions[i].Source }, never, false)
	// Aborted transactions are written as -1 whatever their id.
	txns = distinctInts(len(h.Txns), func(i int) history.Datum { return h.Txns[i].Source },
		func(i int) bool { return h.Txns[i].Outcome == history.OutcomeAborted }, true)
	return sess, txns
}

// distinctInts returns src(i) for every i of n not skipped when those are distinct integers
// (and not -1 when reserved), else dense ids.
func distinctInts(n int, src func(int) history.Datum, skip func(int) bool, reserved bool) []int64 {
	ids := make([]int64, n)
	seen := make(map[int64]bool, n)
	for i := range ids {
		if skip(i) {
			continue
		}
		v, ok := src(i).Int()
		if !ok || reserved && v == Aborted || seen[v] {
			for i := range ids {
				ids[i] = int64(i)
			}
			return ids
		}
		seen[v] = true
		ids[i] = v
	}
	return ids
}
