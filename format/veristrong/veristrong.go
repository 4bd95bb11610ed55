// Package veristrong reads and writes VeriStrong's list-append text histories (its
// --history-type elle-list-append): a record count, then that many records
//
//	sess txn R key n v1 ... vn    a read of key returning the list v1..vn
//	sess txn A key v              an append of v to key
//
// with every field an integer and tokens separated by any white space. Transaction ids
// are global: a transaction's records may be spread over the file and it belongs to the
// session of its first record. Transactions and sessions are ordered by first appearance;
// every transaction is committed and lists start empty.
package veristrong

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/parse"
)

// Name is the format's name in the registry.
const Name = "veristrong"

// Decoder reads VeriStrong histories into a [history.Builder]. It implements
// format.Decoder.
type Decoder struct{}

// NewDecoder returns a decoder.
func NewDecoder() *Decoder { return &Decoder{} }

// Finish implements format.Decoder.
func (d *Decoder) Finish(*history.Builder) error { return nil }

// tokens splits input into white-space separated tokens, tracking where each starts.
type tokens struct {
	r         *bufio.Reader
	name      string
	line, col int   // position of the next byte (1-based)
	off       int64 // offset of the next byte
	tok       []byte
	tl, tc    int // position of tok
	toff      int64
	err       error
}

// next reads the next token; at the end of input it returns false with t.err nil.
func (t *tokens) next() bool {
	t.tok = t.tok[:0]
	for {
		c, err := t.r.ReadByte()
		if err != nil {
			if err != io.EOF {
				t.err = fmt.Errorf("reading %s: %w", t.name, err)
			}
			return len(t.tok) > 0
		}
		switch c {
		case ' ', '\t', '\r', '\n', '\v', '\f':
			if len(t.tok) > 0 {
				_ = t.r.UnreadByte()
				return true
			}
			t.advance(c)
			continue
		}
		if len(t.tok) == 0 {
			t.tl, t.tc, t.toff = t.line, t.col, t.off
		}
		t.tok = append(t.tok, c)
		t.advance(c)
	}
}

func (t *tokens) advance(c byte) {
	t.off++
	if c == '\n' {
		t.line++
		t.col = 1
	} else {
		t.col++
	}
}

func (t *tokens) errorf(format string, args ...any) error {
	return parse.Errorf(Name, t.name, t.tl, t.tc, t.toff, format, args...)
}

// int reads an integer token; what names it for errors.
func (t *tokens) int(what string) (int64, error) {
	if !t.next() {
		if t.err != nil {
			return 0, t.err
		}
		return 0, parse.Errorf(Name, t.name, t.line, t.col, t.off, "expected %s (an integer), found end of input: %w", what, parse.ErrTruncated)
	}
	v, err := strconv.ParseInt(string(t.tok), 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, t.errorf("%s %s is out of the 64-bit integer range", what, t.tok)
		}
		return 0, t.errorf("expected %s (an integer), found %q", what, t.tok)
	}
	return v, nil
}

type op struct {
	read bool
	key  int64
	vals []int64 // the list read, or the appended value
}

type txn struct {
	sess, id int64
	line     int
	ops      []op
}

// maxPrealloc caps allocations sized by counts in the input.
const maxPrealloc = 1 << 16

// Decode reads r into b. name is used in error messages.
func (d *Decoder) Decode(r io.Reader, name string, b *history.Builder) error {
	t := &tokens{r: bufio.NewReaderSize(r, 1<<16), name: name, line: 1, col: 1}
	n, err := t.int("the record count")
	if err != nil {
		return err
	}
	if n < 0 {
		return t.errorf("expected a non-negative record count, found %d", n)
	}
	rd := records{t: t, byID: make(map[int64]*txn)}
	for i := int64(0); i < n; i++ {
		if err := rd.record(i); err != nil {
			return err
		}
	}
	if t.next() {
		return t.errorf("expected end of input after %d records, found %q", n, t.tok)
	}
	if t.err != nil {
		return t.err
	}
	build(b, rd.txns)
	return nil
}

// records gathers the records of a history by transaction.
type records struct {
	t    *tokens
	txns []*txn // in order of first appearance
	byID map[int64]*txn
}

// record reads record i (0-based) and adds its operation to its transaction.
func (rd *records) record(i int64) error {
	t := rd.t
	sess, err := t.int("a session id")
	if err != nil {
		return err
	}
	id, err := t.int("a transaction id")
	if err != nil {
		return err
	}
	tx, err := rd.txn(sess, id)
	if err != nil {
		return err
	}
	read, err := t.kind(i)
	if err != nil {
		return err
	}
	o := op{read: read}
	if o.key, err = t.int("a key"); err != nil {
		return err
	}
	if o.read {
		o.vals, err = t.list()
	} else {
		o.vals, err = t.appended()
	}
	if err != nil {
		return err
	}
	tx.ops = append(tx.ops, o)
	return nil
}

// txn returns transaction id of session sess, new when this is its first record; the
// tokens' last token is id.
func (rd *records) txn(sess, id int64) (*txn, error) {
	tx := rd.byID[id]
	if tx == nil {
		tx = &txn{sess: sess, id: id, line: rd.t.tl}
		rd.byID[id] = tx
		rd.txns = append(rd.txns, tx)
	} else if tx.sess != sess {
		return nil, rd.t.errorf("transaction %d is in session %d (line %d), not %d: expected one session per transaction", id, tx.sess, tx.line, sess)
	}
	return tx, nil
}

// kind reads the kind of record i: true for R (a read), false for A (an append).
func (t *tokens) kind(i int64) (read bool, err error) {
	if !t.next() {
		if t.err != nil {
			return false, t.err
		}
		return false, parse.Errorf(Name, t.name, t.line, t.col, t.off, "expected R or A, found end of input: %w", parse.ErrTruncated)
	}
	switch string(t.tok) {
	case "R":
		return true, nil
	case "A":
		return false, nil
	}
	return false, t.errorf("expected R (read) or A (append) in record %d, found %q", i+1, t.tok)
}

// list reads the list of a read record: its length, then its elements.
func (t *tokens) list() ([]int64, error) {
	m, err := t.int("the length of the list read")
	if err != nil {
		return nil, err
	}
	if m < 0 {
		return nil, t.errorf("expected a non-negative list length, found %d", m)
	}
	vals := make([]int64, 0, min(m, maxPrealloc))
	for range m {
		v, err := t.int("a list element")
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
	}
	return vals, nil
}

// appended reads the value of an append record.
func (t *tokens) appended() ([]int64, error) {
	v, err := t.int("the appended value")
	if err != nil {
		return nil, err
	}
	return []int64{v}, nil
}

// build adds the transactions read to b, each committed.
func build(b *history.Builder, txns []*txn) {
	var vs []history.Value
	for _, tx := range txns {
		b.BeginTxn(b.Session(history.Int(tx.sess)), history.Int(tx.id), history.OutcomeCommitted)
		for _, o := range tx.ops {
			k := b.IntKey(o.key)
			if !o.read {
				b.Append(k, b.IntValue(o.vals[0]))
				continue
			}
			vs = vs[:0]
			for _, v := range o.vals {
				vs = append(vs, b.IntValue(v))
			}
			b.ReadList(k, vs)
		}
		b.EndTxn()
	}
}

// Sniff reports whether head looks like a VeriStrong history: a count line, then a record
// line "sess txn R|A key ...".
func Sniff(_ string, head []byte) bool {
	w := words{head: head}
	count := w.next()
	if !isCount(count) {
		return false
	}
	if n, _ := strconv.Atoi(string(count)); n == 0 {
		return len(w.next()) == 0
	}
	sess, txn, kind, key := w.next(), w.next(), w.next(), w.next()
	return isInt(sess) && isInt(txn) && (string(kind) == "R" || string(kind) == "A") && isInt(key)
}

// words splits the head of a file into white-space separated words, for sniffing.
type words struct {
	head []byte
	i    int
}

// next returns the next word, empty at the end of head.
func (w *words) next() []byte {
	w.skip(true)
	start := w.i
	w.skip(false)
	return w.head[start:w.i]
}

// skip moves past white space (ws true) or past anything else (ws false).
func (w *words) skip(ws bool) {
	for ; w.i < len(w.head); w.i++ {
		c := w.head[w.i]
		if isWS := c == ' ' || c == '\t' || c == '\r' || c == '\n'; isWS != ws {
			return
		}
	}
}

// isCount reports whether tok is a non-negative integer.
func isCount(tok []byte) bool { return isInt(tok) && tok[0] != '-' }

func isInt(tok []byte) bool {
	_, err := strconv.ParseInt(string(tok), 10, 64)
	return err == nil
}

// ErrUnrepresentable is wrapped by [Write] when a history holds what the format cannot.
var ErrUnrepresentable = errors.New("veristrong: cannot write")

// Write writes h in VeriStrong's format. It holds committed transactions of appends and
// list reads on integer keys and values; transactions and sessions keep their source ids
// when these are distinct integers, and are numbered by dense ids otherwise. Transactions
// without operations are not written.
func Write(w io.Writer, h *history.History) error {
	n, err := committedOps(h)
	if err != nil {
		return err
	}
	wr := writer{
		h:       h,
		sessIDs: ids(len(h.Sessions), func(i int) history.Datum { return h.Sessions[i].Source }),
		txnIDs:  ids(len(h.Txns), func(i int) history.Datum { return h.Txns[i].Source }),
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	wr.b = strconv.AppendInt(nil, int64(n), 10)
	wr.b = append(wr.b, '\n')
	for i := range h.Txns {
		for j := range h.Txns[i].Ops {
			if err := wr.record(i, j); err != nil {
				return err
			}
		}
		if len(wr.b) > 1<<15 {
			if _, err := bw.Write(wr.b); err != nil {
				return err
			}
			wr.b = wr.b[:0]
		}
	}
	if _, err := bw.Write(wr.b); err != nil {
		return err
	}
	return bw.Flush()
}

// committedOps returns the number of operations in h, the file's record count, or an error
// when a transaction is not committed.
func committedOps(h *history.History) (int, error) {
	n := 0
	for i := range h.Txns {
		t := &h.Txns[i]
		if t.Outcome != history.OutcomeCommitted {
			return 0, fmt.Errorf("%w: txn %s is %v (the format holds committed transactions only)", ErrUnrepresentable, h.Name(t.ID), t.Outcome)
		}
		n += len(t.Ops)
	}
	return n, nil
}

// writer renders records into b.
type writer struct {
	h               *history.History
	sessIDs, txnIDs []int64
	b               []byte
}

// record appends the record of op j of transaction i.
func (w *writer) record(i, j int) error {
	h := w.h
	t := &h.Txns[i]
	o := t.Ops[j]
	if o.Kind != history.OpAppend && o.Kind != history.OpListRead {
		// Checked first: other ops (predicates) may have no key to look up.
		return fmt.Errorf("%w: txn %s op %d is of kind %v (the format has appends and list reads)", ErrUnrepresentable, h.Name(t.ID), j, o.Kind)
	}
	k, err := w.integer(h.Key(o.Key), t, j)
	if err != nil {
		return err
	}
	b := strconv.AppendInt(w.b, w.sessIDs[t.Session], 10)
	b = strconv.AppendInt(append(b, ' '), w.txnIDs[i], 10)
	if o.Kind == history.OpAppend {
		v, err := w.integer(h.Value(o.Value), t, j)
		if err != nil {
			return err
		}
		b = strconv.AppendInt(append(b, " A "...), k, 10)
		b = strconv.AppendInt(append(b, ' '), v, 10)
	} else {
		b = strconv.AppendInt(append(b, " R "...), k, 10)
		if b, err = w.appendList(b, t, j); err != nil {
			return err
		}
	}
	w.b = append(b, '\n')
	return nil
}

// appendList appends the length and elements of the list that op j of t, a list read,
// read.
func (w *writer) appendList(b []byte, t *history.Txn, j int) ([]byte, error) {
	l := w.h.List(t.Ops[j])
	b = strconv.AppendInt(append(b, ' '), int64(len(l)), 10)
	for _, x := range l {
		v, err := w.integer(w.h.Value(x), t, j)
		if err != nil {
			return b, err
		}
		b = strconv.AppendInt(append(b, ' '), v, 10)
	}
	return b, nil
}

// integer returns d, a key or value of op j of t, as an integer.
func (w *writer) integer(d history.Datum, t *history.Txn, j int) (int64, error) {
	v, ok := d.Int()
	if !ok {
		return 0, fmt.Errorf("%w: txn %s op %d: %#v is not an integer", ErrUnrepresentable, w.h.Name(t.ID), j, d)
	}
	return v, nil
}

// ids returns source ids when they are distinct integers, else dense ids.
func ids(n int, src func(int) history.Datum) []int64 {
	out := make([]int64, n)
	seen := make(map[int64]bool, n)
	for i := range out {
		v, ok := src(i).Int()
		if !ok || seen[v] {
			for i := range out {
				out[i] = int64(i)
			}
			return out
		}
		seen[v] = true
		out[i] = v
	}
	return out
}
