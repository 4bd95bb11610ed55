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

	"isovet/history"
	"isovet/internal/parse"
)

// Name is the format's name in the registry.
const Name = "chronos"

// Decoder reads a Chronos JSON array into a [history.Builder]. It implements
// format.Decoder. It is not safe for concurrent use.
type Decoder struct {
	initial *history.Datum
	name    string
	sc      scanner
	x       scratch
	in      interner
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
	buf := d.buf[:0]
	eof := false
	var rerr error
	need := 512
	size := int64(-1)
	if l, ok := r.(interface{ Len() int }); ok {
		size = int64(l.Len())
	}
	ntx, nops := 0, 0
	// fill reads more input, keeping buf[keep:]; it returns the shift applied to indexes.
	fill := func(keep int) int {
		if keep > 0 {
			d.line += bytes.Count(buf[:keep], []byte{'\n'})
			if nl := bytes.LastIndexByte(buf[:keep], '\n'); nl >= 0 {
				d.col0 = keep - 1 - nl
			} else {
				d.col0 += keep
			}
			d.off += int64(keep)
			n := copy(buf, buf[keep:])
			buf = buf[:n]
		}
		if cap(buf)-len(buf) < chunk/2 {
			nb := make([]byte, len(buf), 2*cap(buf)+chunk)
			copy(nb, buf)
			buf = nb
		}
		// Restarting an object after every short read would be quadratic on a reader that
		// returns a few bytes at a time: ask for more on each restart of the same object.
		if keep == 0 && len(buf) > 0 {
			need = min(2*need, chunk/4)
		} else {
			need = 512
		}
		n, err := io.ReadAtLeast(r, buf[len(buf):cap(buf)], need)
		buf = buf[:len(buf)+n]
		if err != nil {
			eof = true
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				rerr = err
			}
		}
		return keep
	}
	s := &d.sc
	pos := 0
	// next runs step at pos until it succeeds or fails with all input read.
	next := func(step func() bool) bool {
		for {
			s.reset(buf, pos)
			if step() {
				pos = s.i
				return true
			}
			if !s.hitEnd || eof {
				return false
			}
			pos -= fill(pos)
			if rerr != nil {
				return false
			}
		}
	}
	fill(0)
	if rerr != nil {
		return fmt.Errorf("reading %s: %w", name, rerr)
	}
	if !next(func() bool { return s.expect('[', "'[' starting the JSON array of transactions") }) {
		return d.fail(rerr)
	}
	if !next(func() bool {
		s.peek()
		return s.i < len(s.b) || s.failf(s.i, "expected a transaction object or ']', found end of input")
	}) {
		return d.fail(rerr)
	}
	if buf[pos] == ']' {
		pos++
	} else {
		for {
			if !next(func() bool { return d.x.parse(s) }) {
				return d.fail(rerr)
			}
			d.x.commit(b, &d.in, &d.vs)
			ntx++
			nops += len(d.x.ops)
			if ntx == 1024 && size > 0 {
				// Grow the builder once for the whole input, estimated from its start.
				scale := float64(size) / float64(d.off+int64(pos)) * 1.05
				b.Grow(int(float64(ntx)*scale), int(float64(nops)*scale))
			}
			more := false
			if !next(func() bool { var ok bool; more, ok = s.more(']', "after a transaction"); return ok }) {
				return d.fail(rerr)
			}
			if !more {
				break
			}
		}
	}
	if !next(func() bool {
		s.ws()
		return s.i >= len(s.b) && eof || s.i < len(s.b) && s.failf(s.i, "expected end of input after the array, found %s", s.found(s.i))
	}) {
		return d.fail(rerr)
	}
	d.buf = buf[:0]
	return nil
}

func (d *Decoder) fail(rerr error) error {
	if rerr != nil {
		return fmt.Errorf("reading %s: %w", d.name, rerr)
	}
	return d.locate(d.sc.b, d.sc.at, d.sc.err)
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
	s.reset(obj, 0)
	if !d.x.parse(s) {
		return d.locate(obj, s.at, s.err)
	}
	if s.ws(); s.i < len(obj) {
		return d.locate(obj, s.i, fmt.Errorf("expected end of input after the transaction object, found %s", s.found(s.i)))
	}
	d.x.commit(b, &d.in, &d.vs)
	return nil
}

type scratch struct {
	tid, sid       datum
	sts, cts       history.Timestamp
	hasSts, hasCts bool
	objAt          int
	ops            []rawOp
	list           []datum
}

type rawOp struct {
	kind     history.OpKind
	key, val datum
	list0, n int32
}

// parse parses one transaction object.
func (x *scratch) parse(s *scanner) bool {
	ops, list := x.ops[:0], x.list[:0]
	*x = scratch{ops: ops, list: list}
	s.ws()
	x.objAt = s.i
	seenOps := false
	ok := object(s, "a transaction object", func(k []byte, kstart int) bool {
		switch string(k) {
		case "tid":
			var ok bool
			x.tid, ok = s.datum(`transaction id "tid"`)
			return ok
		case "sid":
			var ok bool
			x.sid, ok = s.datum(`session id "sid"`)
			return ok
		case "sts":
			x.hasSts = true
			return hlc(s, &x.sts, `start timestamp "sts"`)
		case "cts":
			x.hasCts = true
			return hlc(s, &x.cts, `commit timestamp "cts"`)
		case "ops":
			seenOps = true
			return x.parseOps(s)
		}
		return s.skip()
	})
	switch {
	case !ok:
		return false
	case !seenOps:
		return s.failf(x.objAt, `expected an "ops" array in the transaction object`)
	case x.hasSts != x.hasCts:
		return s.failf(x.objAt, `expected both "sts" and "cts" in the transaction object, or neither`)
	}
	return true
}

// hlc parses {"p": physical, "l": logical}.
func hlc(s *scanner, ts *history.Timestamp, what string) bool {
	s.ws()
	at := s.i
	seenP := false
	ok := object(s, what+` {"p": physical, "l": logical}`, func(k []byte, kstart int) bool {
		var ok bool
		switch string(k) {
		case "p":
			seenP = true
			ts.Physical, ok = s.intLoose(`physical time "p"`)
		case "l":
			ts.Logical, ok = s.intLoose(`logical time "l"`)
		default:
			return s.skip()
		}
		return ok
	})
	if ok && !seenP {
		return s.failf(at, `expected a physical time "p" in %s`, what)
	}
	return ok
}

func (x *scratch) parseOps(s *scanner) bool {
	if !s.expect('[', `"ops" array`) {
		return false
	}
	if s.peek() == ']' {
		s.i++
		return true
	}
	for {
		if !x.parseOp(s) {
			return false
		}
		more, ok := s.more(']', "in the ops array")
		if !ok {
			return false
		}
		if !more {
			return true
		}
	}
}

func (x *scratch) parseOp(s *scanner) bool {
	s.ws()
	at := s.i
	var o rawOp
	var kind []byte
	seenK, seenV := false, false
	ok := object(s, `an operation object {"t", "k", "v"}`, func(k []byte, kstart int) bool {
		var ok bool
		switch string(k) {
		case "t":
			s.ws()
			tat := s.i
			if kind, ok = s.str(`operation type "t" ("r", "w" or "a")`); ok {
				switch string(kind) {
				case "r", "w", "a":
				default:
					return s.failf(tat, `expected operation type "r", "w" or "a", found %q`, kind)
				}
			}
		case "k":
			s.ws()
			kat := s.i
			if o.key, ok = s.datum("key \"k\""); ok && o.key.kind == history.DatumNil {
				return s.failf(kat, `expected key "k" (an integer or a string), found null`)
			}
			seenK = true
		case "v":
			seenV = true
			if s.peek() == '[' {
				o.kind = history.OpListRead
				return x.parseList(s, &o)
			}
			o.val, ok = s.datum(`value "v"`)
		default:
			return s.skip()
		}
		return ok
	})
	switch {
	case !ok:
		return false
	case kind == nil:
		return s.failf(at, `expected an operation type "t" in the operation object`)
	case !seenK:
		return s.failf(at, `expected a key "k" in the operation object`)
	case !seenV:
		return s.failf(at, `expected a value "v" in the operation object`)
	}
	switch kind[0] {
	case 'r':
		if o.kind != history.OpListRead {
			o.kind = history.OpRead
		}
	case 'w', 'a':
		if o.kind == history.OpListRead {
			return s.failf(at, `expected a single value "v" in a %q operation, found a list`, kind)
		}
		o.kind = history.OpWrite
		if kind[0] == 'a' {
			o.kind = history.OpAppend
		}
	}
	x.ops = append(x.ops, o)
	return true
}

func (x *scratch) parseList(s *scanner, o *rawOp) bool {
	s.i++ // '['
	o.list0 = int32(len(x.list))
	if s.peek() == ']' {
		s.i++
		return true
	}
	for {
		v, ok := s.datum("a list element")
		if !ok {
			return false
		}
		x.list = append(x.list, v)
		o.n++
		more, ok := s.more(']', "in the list")
		if !ok {
			return false
		}
		if !more {
			return true
		}
	}
}

// object parses {"k": v, ...}, calling f with the scanner positioned at each value.
func object(s *scanner, what string, f func(k []byte, kstart int) bool) bool {
	if !s.expect('{', what) {
		return false
	}
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		kstart := s.i
		k, ok := s.str("a key (a quoted string)")
		if !ok || !s.expect(':', "':' after key") || !f(k, kstart) {
			return false
		}
		more, ok := s.more('}', "in object")
		if !ok {
			return false
		}
		if !more {
			return true
		}
	}
}

func key(b *history.Builder, d datum) history.Key {
	if d.kind == history.DatumInt {
		return b.IntKey(d.i)
	}
	return b.BytesKey(d.s)
}

func value(b *history.Builder, d datum) history.Value {
	switch d.kind {
	case history.DatumInt:
		return b.IntValue(d.i)
	case history.DatumStr:
		return b.BytesValue(d.s)
	}
	return history.Nil
}

// interner memoizes builder ids on the hot path: small integer keys by value, and per key
// the last integer value seen with it (a read usually returns the value the last write of
// its key installed), saving map lookups in the builder.
type interner struct {
	b        *history.Builder
	smallKey []history.Key // id+1 of integer key i, for 0 <= i < len
	last     []lastValue   // per Key
}

type lastValue struct {
	v  int64
	id history.Value // 0: none
}

const maxSmallKey = 1 << 20

func (in *interner) reset(b *history.Builder) {
	if in.b != b {
		*in = interner{b: b, smallKey: in.smallKey[:0], last: in.last[:0]}
	}
}

func (in *interner) key(d datum) history.Key {
	if d.kind != history.DatumInt || d.i < 0 || d.i >= maxSmallKey {
		return key(in.b, d)
	}
	if d.i < int64(len(in.smallKey)) {
		if k := in.smallKey[d.i]; k != 0 {
			return k - 1
		}
	} else if d.i > 2*int64(len(in.smallKey))+4096 {
		return key(in.b, d) // sparse keys: grow the table only as dense keys fill it
	} else {
		in.smallKey = append(in.smallKey, make([]history.Key, int(d.i)+1-len(in.smallKey))...)
	}
	k := in.b.IntKey(d.i)
	in.smallKey[d.i] = k + 1
	return k
}

// value interns d, seen with key k.
func (in *interner) value(k history.Key, d datum) history.Value {
	if d.kind != history.DatumInt {
		return value(in.b, d)
	}
	if int(k) < len(in.last) {
		if lv := in.last[k]; lv.id != 0 && lv.v == d.i {
			return lv.id
		}
	} else {
		in.last = append(in.last, make([]lastValue, int(k)+1-len(in.last))...)
	}
	v := in.b.IntValue(d.i)
	in.last[k] = lastValue{d.i, v}
	return v
}

func (x *scratch) commit(b *history.Builder, in *interner, vs *[]history.Value) {
	in.reset(b)
	b.BeginTxn(b.Session(x.sid.datum()), x.tid.datum(), history.OutcomeCommitted)
	if x.hasSts {
		t := b.Current()
		t.Start, t.Commit, t.HasTimestamps = x.sts, x.cts, true
	}
	for i := range x.ops {
		o := &x.ops[i]
		switch o.kind {
		case history.OpRead:
			k := in.key(o.key)
			b.Read(k, in.value(k, o.val))
		case history.OpWrite:
			k := in.key(o.key)
			b.Write(k, in.value(k, o.val))
		case history.OpAppend:
			k := in.key(o.key)
			b.Append(k, in.value(k, o.val))
		case history.OpListRead:
			k := in.key(o.key)
			l := (*vs)[:0]
			for _, v := range x.list[o.list0 : o.list0+o.n] {
				l = append(l, value(b, v))
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
	head = bytes.TrimLeft(head, " \t\r\n")
	if len(head) == 0 || head[0] != '[' {
		return false
	}
	head = bytes.TrimLeft(head[1:], " \t\r\n")
	if len(head) == 0 || head[0] != '{' {
		return false
	}
	head = bytes.TrimLeft(head[1:], " \t\r\n")
	for _, k := range [...]string{`"tid"`, `"sid"`, `"sts"`, `"cts"`, `"ops"`} {
		if rest, ok := bytes.CutPrefix(head, []byte(k)); ok {
			rest = bytes.TrimLeft(rest, " \t\r\n")
			return len(rest) > 0 && rest[0] == ':'
		}
	}
	return false
}
