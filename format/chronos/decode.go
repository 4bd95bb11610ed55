// Package chronos reads and writes the JSON histories of Chronos and Aion
// (FertileFragrance/TimeKiller): a JSON array of transactions with hybrid-logical-clock
// start and commit timestamps,
//
//	[{"tid":1,"sid":0,"sts":{"p":5,"l":0},"cts":{"p":9,"l":0},
//	  "ops":[{"t":"w","k":1,"v":2},{"t":"r","k":3,"v":null}]}, ...]
//
// in a key-value variant (ops "w" and "r") and a list variant (ops "a", append, and "r"
// with a list value). Every transaction is committed. Timestamps may be JSON numbers or
// strings of digits, as the authors' examples have both. Unknown keys (e.g. Aion's "rtts")
// are skipped.
//
// The format has no marker for the initial state: the reader leaves it nil unless told
// otherwise ([NewDecoder]'s initial; format.Options.Initial), and the authors' examples need
// 0 (with nil, their checker reports hundreds of spurious violations).
//
// [Decoder] is a hand-written scanner over bytes that parses one transaction object at a
// time from a buffered stream; [DecodeTxn] decodes a single object for an online endpoint.
package chronos

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/jsonscan"
	"github.com/isovet/isovet/internal/parse"
)

// Name is the format's name in the registry.
const Name = "chronos"

// Decoder reads a Chronos JSON array into a [history.Builder]. It implements
// format.Decoder. It is not safe for concurrent use.
type Decoder struct {
	initial *history.Datum
	name    string
	sc      jsonscan.Scanner
	x       scratch
	in      jsonscan.Interner
	vs      []history.Value

	// Location of buf[0] in the input, for errors: line, 0-based column, byte offset.
	line, col0 int
	off        int64
	buf        []byte
}

// NewDecoder returns a decoder. If initial is non-nil, the history's initial value is set
// to it.
func NewDecoder(initial *history.Datum) *Decoder { return &Decoder{initial: initial} }

const chunk = 1 << 20

// Decode reads the JSON array in r into b. name is used in error messages.
func (d *Decoder) Decode(r io.Reader, name string, b *history.Builder) error {
	d.name, d.line, d.col0, d.off = name, 1, 0, 0
	if d.initial != nil {
		b.SetInitial(b.Value(*d.initial))
	}
	if cap(d.buf) < chunk {
		d.buf = make([]byte, 0, chunk)
	}
	size := inputSize(r) // before the first read
	st := &stream{d: d, r: r, buf: d.buf[:0], need: 512}
	st.fill(0)
	if st.rerr != nil {
		return fmt.Errorf("reading %s: %w", name, st.rerr)
	}
	s := &d.sc
	if !st.next(func() bool { return s.Expect('[', "'[' starting the JSON array of transactions") }) {
		return d.fail(st.rerr)
	}
	if !st.next(d.firstItem) {
		return d.fail(st.rerr)
	}
	if st.buf[st.pos] == ']' {
		st.pos++
	} else if !d.txns(st, b, size) {
		return d.fail(st.rerr)
	}
	if !st.next(func() bool { return d.atEnd(st.eof) }) {
		return d.fail(st.rerr)
	}
	d.buf = st.buf[:0]
	return nil
}

// firstItem checks that something follows the array's '[': a transaction or the closing ']'.
func (d *Decoder) firstItem() bool {
	s := &d.sc
	s.Peek()
	return s.I < len(s.B) || s.Failf(s.I, "expected a transaction object or ']', found end of input")
}

// atEnd checks that only white space follows the array; eof says all input is in s.B.
func (d *Decoder) atEnd(eof bool) bool {
	s := &d.sc
	s.WS()
	return s.I >= len(s.B) && eof || s.I < len(s.B) && s.Failf(s.I, "expected end of input after the array, found %s", s.Found(s.I))
}

// inputSize is the length of r if it says (a bytes.Reader, say), else -1.
func inputSize(r io.Reader) int64 {
	if l, ok := r.(interface{ Len() int }); ok {
		return int64(l.Len())
	}
	return -1
}

// txns reads the transactions of the array, up to and including its closing ']', into b;
// size is the input's length (-1: unknown), for growing b once. On false, d.sc says why.
func (d *Decoder) txns(st *stream, b *history.Builder, size int64) bool {
	s := &d.sc
	ntx, nops := 0, 0
	for {
		if !st.next(func() bool { return d.x.parse(s) }) {
			return false
		}
		d.x.commit(b, &d.in, &d.vs)
		ntx++
		nops += len(d.x.ops)
		if ntx == 1024 && size > 0 {
			// Grow the builder once for the whole input, estimated from its start.
			scale := float64(size) / float64(d.off+int64(st.pos)) * 1.05
			b.Grow(int(float64(ntx)*scale), int(float64(nops)*scale))
		}
		more := false
		if !st.next(func() bool { var ok bool; more, ok = s.More(']', "after a transaction"); return ok }) {
			return false
		}
		if !more {
			return true
		}
	}
}

// stream is the buffered input of one Decode: buf holds the input from d.off on, and pos
// is where parsing goes on.
type stream struct {
	d    *Decoder
	r    io.Reader
	buf  []byte
	pos  int
	eof  bool  // all input is in buf
	rerr error // a read error other than the end of input
	need int   // bytes the next read asks for at least
}

// fill reads more input, keeping buf[keep:]; it returns the shift applied to indexes.
func (st *stream) fill(keep int) int {
	if keep > 0 {
		st.discard(keep)
	}
	if cap(st.buf)-len(st.buf) < chunk/2 {
		nb := make([]byte, len(st.buf), 2*cap(st.buf)+chunk)
		copy(nb, st.buf)
		st.buf = nb
	}
	// Restarting an object after every short read would be quadratic on a reader that
	// returns a few bytes at a time: ask for more on each restart of the same object.
	if keep == 0 && len(st.buf) > 0 {
		st.need = min(2*st.need, chunk/4)
	} else {
		st.need = 512
	}
	n, err := io.ReadAtLeast(st.r, st.buf[len(st.buf):cap(st.buf)], st.need)
	st.buf = st.buf[:len(st.buf)+n]
	if err != nil {
		st.eof = true
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			st.rerr = err
		}
	}
	return keep
}

// discard drops buf[:keep], moving the decoder's location past it.
func (st *stream) discard(keep int) {
	d, done := st.d, st.buf[:keep]
	d.line += bytes.Count(done, []byte{'\n'})
	if nl := bytes.LastIndexByte(done, '\n'); nl >= 0 {
		d.col0 = keep - 1 - nl
	} else {
		d.col0 += keep
	}
	d.off += int64(keep)
	n := copy(st.buf, st.buf[keep:])
	st.buf = st.buf[:n]
}

// next runs step at pos until it succeeds or fails with all input read.
func (st *stream) next(step func() bool) bool {
	s := &st.d.sc
	for {
		s.Reset(st.buf, st.pos)
		if step() {
			st.pos = s.I
			return true
		}
		if !s.HitEnd || st.eof {
			return false
		}
		st.pos -= st.fill(st.pos)
		if st.rerr != nil {
			return false
		}
	}
}

func (d *Decoder) fail(rerr error) error {
	if rerr != nil {
		return fmt.Errorf("reading %s: %w", d.name, rerr)
	}
	return d.locate(d.sc.B, d.sc.At, d.sc.Err)
}

// locate turns index at of buf into a located error.
func (d *Decoder) locate(buf []byte, at int, err error) error {
	at = min(at, len(buf))
	line := d.line + bytes.Count(buf[:at], []byte{'\n'})
	col := at - bytes.LastIndexByte(buf[:at], '\n')
	if col == at+1 {
		col += d.col0
	}
	return &parse.Error{Format: Name, File: d.name, Line: line, Col: col, Offset: d.off + int64(at), Err: err}
}

// Finish implements format.Decoder.
func (d *Decoder) Finish(*history.Builder) error { return nil }

// DecodeTxn decodes one transaction object (an element of the array) into b, for callers
// that receive transactions one at a time. On error, b is unchanged.
func DecodeTxn(obj []byte, b *history.Builder) error {
	d := Decoder{line: 1}
	s := &d.sc
	s.Reset(obj, 0)
	if !d.x.parse(s) {
		return d.locate(obj, s.At, s.Err)
	}
	if s.WS(); s.I < len(obj) {
		return d.locate(obj, s.I, fmt.Errorf("expected end of input after the transaction object, found %s", s.Found(s.I)))
	}
	d.x.commit(b, &d.in, &d.vs)
	return nil
}

type scratch struct {
	tid, sid       jsonscan.Datum
	sts, cts       history.Timestamp
	hasSts, hasCts bool
	seenOps        bool
	objAt          int
	ops            []rawOp
	list           []jsonscan.Datum
}

type rawOp struct {
	kind     history.OpKind
	key, val jsonscan.Datum
	list0, n int32
}

// parse parses one transaction object.
func (x *scratch) parse(s *jsonscan.Scanner) bool {
	ops, list := x.ops[:0], x.list[:0]
	*x = scratch{ops: ops, list: list}
	s.WS()
	x.objAt = s.I
	ok := s.Object("a transaction object", func(k []byte, _ int) bool { return x.member(s, k) })
	switch {
	case !ok:
		return false
	case !x.seenOps:
		return s.Failf(x.objAt, `expected an "ops" array in the transaction object`)
	case x.hasSts != x.hasCts:
		return s.Failf(x.objAt, `expected both "sts" and "cts" in the transaction object, or neither`)
	}
	return true
}

// member parses the value of the transaction object's member named k.
func (x *scratch) member(s *jsonscan.Scanner, k []byte) bool {
	var ok bool
	switch string(k) {
	case "tid":
		x.tid, ok = s.Datum(`transaction id "tid"`)
	case "sid":
		x.sid, ok = s.Datum(`session id "sid"`)
	case "sts":
		x.hasSts = true
		ok = hlc(s, &x.sts, `start timestamp "sts"`, `start timestamp "sts" {"p": physical, "l": logical}`)
	case "cts":
		x.hasCts = true
		ok = hlc(s, &x.cts, `commit timestamp "cts"`, `commit timestamp "cts" {"p": physical, "l": logical}`)
	case "ops":
		x.seenOps = true
		ok = x.parseOps(s)
	default:
		ok = s.Skip()
	}
	return ok
}

// hlc parses {"p": physical, "l": logical}; objWhat is what followed by that shape.
func hlc(s *jsonscan.Scanner, ts *history.Timestamp, what, objWhat string) bool {
	s.WS()
	at := s.I
	if fastHLC(s, ts) {
		return true
	}
	seenP := false
	ok := s.Object(objWhat, func(k []byte, kstart int) bool {
		var ok bool
		switch string(k) {
		case "p":
			seenP = true
			ts.Physical, ok = s.IntLoose(`physical time "p"`)
		case "l":
			ts.Logical, ok = s.IntLoose(`logical time "l"`)
		default:
			return s.Skip()
		}
		return ok
	})
	if ok && !seenP {
		return s.Failf(at, `expected a physical time "p" in %s`, what)
	}
	return ok
}

// fastHLC parses the compact form {"p":1,"l":2} at s.I and reports whether it did; on
// false nothing is consumed.
func fastHLC(s *jsonscan.Scanner, ts *history.Timestamp) bool {
	b, at := s.B, s.I
	if at+6 >= len(b) || string(b[at:at+5]) != `{"p":` {
		return false
	}
	p, j, ok := jsonscan.FastInt(b, at+5)
	if !ok || j+5 >= len(b) || string(b[j:j+5]) != `,"l":` {
		return false
	}
	l, j, ok := jsonscan.FastInt(b, j+5)
	if !ok || j >= len(b) || b[j] != '}' {
		return false
	}
	ts.Physical, ts.Logical = p, l
	s.I = j + 1
	return true
}

func (x *scratch) parseOps(s *jsonscan.Scanner) bool {
	return s.Array(`"ops" array`, "in the ops array", func() bool { return x.fastOp(s) || x.parseOp(s) })
}

// fastKinds maps the letter of an operation type "t" to the kind of an item op.
var fastKinds = [256]history.OpKind{'r': history.OpRead, 'w': history.OpWrite, 'a': history.OpAppend}

// fastOp parses the compact form of an item op with integer key and value,
// {"t":"w","k":1,"v":2}, and reports whether it did; on false nothing is consumed and
// parseOp handles (or reports) the op.
func (x *scratch) fastOp(s *jsonscan.Scanner) bool {
	b, i := s.B, s.I
	if i+12 >= len(b) || string(b[i:i+6]) != `{"t":"` || string(b[i+7:i+13]) != `","k":` {
		return false
	}
	kind := fastKinds[b[i+6]]
	if kind == history.OpInvalid {
		return false
	}
	k, j, ok := jsonscan.FastInt(b, i+13)
	if !ok || j+5 >= len(b) || string(b[j:j+5]) != `,"v":` {
		return false
	}
	v, j, ok := jsonscan.FastInt(b, j+5)
	if !ok || j >= len(b) || b[j] != '}' {
		return false
	}
	x.ops = append(x.ops, rawOp{kind: kind, key: jsonscan.IntDatum(k), val: jsonscan.IntDatum(v)})
	s.I = j + 1
	return true
}

func (x *scratch) parseOp(s *jsonscan.Scanner) bool {
	s.WS()
	at := s.I
	var o rawOp
	var kind []byte
	seenK, seenV := false, false
	ok := s.Object(`an operation object {"t", "k", "v"}`, func(k []byte, kstart int) bool {
		var ok bool
		switch string(k) {
		case "t":
			s.WS()
			tat := s.I
			if kind, ok = s.Str(`operation type "t" ("r", "w" or "a")`); ok {
				switch string(kind) {
				case "r", "w", "a":
				default:
					return s.Failf(tat, `expected operation type "r", "w" or "a", found %q`, kind)
				}
			}
		case "k":
			o.key, ok = s.Key(`key "k"`)
			seenK = true
		case "v":
			seenV = true
			if s.Peek() == '[' {
				o.kind = history.OpListRead
				return x.parseList(s, &o)
			}
			o.val, ok = s.Datum(`value "v"`)
		default:
			return s.Skip()
		}
		return ok
	})
	switch {
	case !ok:
		return false
	case kind == nil:
		return s.Failf(at, `expected an operation type "t" in the operation object`)
	case !seenK:
		return s.Failf(at, `expected a key "k" in the operation object`)
	case !seenV:
		return s.Failf(at, `expected a value "v" in the operation object`)
	}
	switch kind[0] {
	case 'r':
		if o.kind != history.OpListRead {
			o.kind = history.OpRead
		}
	case 'w', 'a':
		if o.kind == history.OpListRead {
			return s.Failf(at, `expected a single value "v" in a %q operation, found a list`, kind)
		}
		o.kind = history.OpWrite
		if kind[0] == 'a' {
			o.kind = history.OpAppend
		}
	}
	x.ops = append(x.ops, o)
	return true
}

func (x *scratch) parseList(s *jsonscan.Scanner, o *rawOp) bool {
	o.list0 = int32(len(x.list))
	var ok bool
	x.list, ok = s.List(x.list, "a list")
	o.n = int32(len(x.list)) - o.list0
	return ok
}

func (x *scratch) commit(b *history.Builder, in *jsonscan.Interner, vs *[]history.Value) {
	in.Reset(b)
	b.BeginTxn(b.Session(x.sid.Datum()), x.tid.Datum(), history.OutcomeCommitted)
	if x.hasSts {
		t := b.Current()
		t.Start, t.Commit, t.HasTimestamps = x.sts, x.cts, true
	}
	for i := range x.ops {
		o := &x.ops[i]
		switch o.kind {
		case history.OpRead:
			k := in.Key(o.key)
			b.Read(k, in.Value(k, o.val))
		case history.OpWrite:
			k := in.Key(o.key)
			b.Write(k, in.Value(k, o.val))
		case history.OpAppend:
			k := in.Key(o.key)
			b.Append(k, in.Value(k, o.val))
		case history.OpListRead:
			k := in.Key(o.key)
			l := (*vs)[:0]
			for _, v := range x.list[o.list0 : o.list0+o.n] {
				l = append(l, jsonscan.Value(b, v))
			}
			b.ReadList(k, l)
			*vs = l
		}
	}
	b.EndTxn()
}

// Sniff reports whether head looks like a Chronos history: a JSON array whose first
// object's first key is one of the transaction keys.
func Sniff(_ string, head []byte) bool {
	head, ok := past(head, '[')
	if !ok {
		return false
	}
	if head, ok = past(head, '{'); !ok {
		return false
	}
	head = bytes.TrimLeft(head, " \t\r\n")
	for _, k := range [...]string{`"tid"`, `"sid"`, `"sts"`, `"cts"`, `"ops"`} {
		if rest, ok := bytes.CutPrefix(head, []byte(k)); ok {
			_, ok = past(rest, ':')
			return ok
		}
	}
	return false
}

// past returns what follows c in b, which is white space then c; false when b is not.
func past(b []byte, c byte) ([]byte, bool) {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 || b[0] != c {
		return nil, false
	}
	return b[1:], true
}
