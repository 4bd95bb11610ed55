package native

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"isovet/history"
	"isovet/internal/jsonscan"
	"isovet/internal/parse"
)

// Name is the format's name in the registry.
const Name = "native"

// Version is the format version this package reads and writes (the header's "isovet").
const Version = 1

// Decoder reads the native format into a [history.Builder]. It implements format.Decoder.
// A Decoder keeps per-stream state (line numbers, the header's session table), so use one
// Decoder per stream. It is not safe for concurrent use.
type Decoder struct {
	name    string
	line    int   // 1-based number of the last line read
	off     int64 // byte offset of the start of that line
	records int   // non-blank lines decoded
	ops     int   // operations decoded
	sess    []history.SessionID
	sc      jsonscan.Scanner
	x       scratch
	in      jsonscan.Interner
	// sessByInt memoizes sessB's session (id+1) of small integer source ids.
	sessB     *history.Builder
	sessByInt []history.SessionID
	// rec and fb hold a line parsed by the fast path (fastTxn).
	rec fastRec
	fb  fastBuf
	// vc, strs and rowSlab intern string values, share predicates' strings and hand out
	// predicate rows, for both paths.
	vc      valueCache
	pend    pendingValues // string values of a predicate op waiting for one batch
	strs    strCache
	rowSlab rowSlab
	// noFast turns off the fast path (and so the pipeline), for tests comparing it with
	// the general parser; block > 0 forces the two-stage reading with blocks of that size.
	noFast bool
	block  int
}

// NewDecoder returns a decoder for one stream.
func NewDecoder() *Decoder { return &Decoder{} }

// Decode reads every line of r into b. name is used in error messages.
func (d *Decoder) Decode(r io.Reader, name string, b *history.Builder) error {
	d.name, d.line, d.off = name, 0, 0
	size := int64(-1)
	bufSize := 64 << 10 // longer lines are gathered in long
	if l, ok := r.(interface{ Len() int }); ok {
		size = int64(l.Len())
		bufSize = int(min(size+1, int64(bufSize)))
	}
	if d.usePipeline(size) {
		return d.decodePipelined(r, size, b)
	}
	br := bufio.NewReaderSize(r, bufSize)
	var long []byte
	var off int64
	start := d.mark(b)
	for {
		ln, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, ln...)
			continue
		}
		if long != nil {
			ln = append(long, ln...)
			long = nil
		}
		if len(ln) > 0 {
			d.line++
			d.off = off
			off += int64(len(ln))
			if perr := d.decodeLine(ln, b); perr != nil {
				return perr
			}
			if d.line == 2048 && size > off {
				d.grow(b, start, size, off)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return d.readErr(err)
		}
	}
}

// growMark is what a decoder and its builder held when a Decode began.
type growMark struct{ txns, ops, misses, missBytes int }

func (d *Decoder) mark(b *history.Builder) growMark {
	return growMark{b.NumTxns(), d.ops, d.vc.misses, d.vc.missBytes}
}

// grow grows the builder once for the whole input of size bytes, estimated from what its
// first off bytes added since start: transactions, ops, and the string values the value
// cache missed (mostly new values) with their bytes.
func (d *Decoder) grow(b *history.Builder, start growMark, size, off int64) {
	scale := float64(size) / float64(off) * 1.05
	est := func(n int) int { return int(float64(n) * scale) }
	b.Grow(est(b.NumTxns()-start.txns), est(d.ops-start.ops))
	b.GrowValues(est(d.vc.misses-start.misses), est(d.vc.missBytes-start.missBytes))
}

func (d *Decoder) readErr(err error) error { return fmt.Errorf("reading %s: %w", d.name, err) }

// Finish implements format.Decoder; the native format needs no cross-file resolution.
func (d *Decoder) Finish(*history.Builder) error { return nil }

// DecodeLine decodes one line (a header or a transaction; blank lines are ignored) into b,
// continuing the decoder's stream: line numbers in errors count the lines given so far.
// On error, b is unchanged.
func (d *Decoder) DecodeLine(line []byte, b *history.Builder) error {
	d.line++
	err := d.decodeLine(line, b)
	d.off += int64(len(line))
	return err
}

// DecodeLine decodes a single self-contained line (a transaction or a header) into b, for
// callers that receive transactions one at a time (the online server). Error locations
// count from the start of line. On error, b is unchanged.
func DecodeLine(line []byte, b *history.Builder) error {
	d := Decoder{vc: valueCache{off: true}}
	return d.DecodeLine(line, b)
}

func (d *Decoder) errorf(at int, format string, args ...any) error {
	return &parse.Error{Format: Name, File: d.name, Line: d.line, Col: at + 1, Offset: d.off + int64(at), Err: fmt.Errorf(format, args...)}
}

func (d *Decoder) scanErr() error {
	return &parse.Error{Format: Name, File: d.name, Line: d.line, Col: d.sc.At + 1, Offset: d.off + int64(d.sc.At), Err: d.sc.Err}
}

func blank(ln []byte) bool {
	for _, c := range ln {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

func (d *Decoder) decodeLine(ln []byte, b *history.Builder) error {
	if !d.noFast {
		d.fb.reset()
		if fastTxn(ln, &d.rec, &d.fb) {
			d.records++
			d.commitFast(b, &d.rec, &d.fb)
			return nil
		}
	}
	return d.decodeGeneral(ln, b)
}

// decodeGeneral decodes a line with the general parser.
func (d *Decoder) decodeGeneral(ln []byte, b *history.Builder) error {
	x := &d.x
	if blank(ln) {
		return nil
	}
	s := &d.sc
	s.Reset(ln, 0)
	s.End = "end of line"
	if !s.Expect('{', "'{' starting a transaction or header object") {
		return d.scanErr()
	}
	x.reset()
	header := false
	first := true
	if s.Peek() == '}' {
		s.I++
	} else {
		for {
			kstart := s.I
			k, ok := s.Str("a key (a quoted string)")
			if !ok || !s.Expect(':', "':' after key") {
				return d.scanErr()
			}
			if first && string(k) == "isovet" {
				header = true
			}
			first = false
			if header {
				ok = d.headerKey(k, kstart)
			} else {
				ok = x.txnKey(s, k, kstart)
			}
			if !ok {
				return d.scanErr()
			}
			more, ok := s.More('}', "in object")
			if !ok {
				return d.scanErr()
			}
			if !more {
				break
			}
		}
	}
	if !s.AtEnd() {
		return d.errorf(s.I, "expected end of line after the object, found %s", s.Found(s.I))
	}
	d.records++
	if header {
		return d.applyHeader(b)
	}
	return d.commit(b)
}

// scratch holds one parsed line before it is added to the builder, so that a bad line
// leaves the builder untouched.
type scratch struct {
	sess, id        jsonscan.Datum
	si              int64
	hasSI           bool
	siAt            int
	outcome         history.Outcome
	time            history.Interval
	hasTime         bool
	sts, cts        history.Timestamp
	hasSts, hasCts  bool
	stsAt           int
	snap            history.Snapshot
	hasSnap         bool
	ops             []rawOp
	list            []jsonscan.Datum
	preds           []rawPred
	rows            []rawRow
	anyOpTime, seen bool

	// header
	version     int64
	initial     jsonscan.Datum
	initialKeys []rawRow
	sessions    []jsonscan.Datum
	hasSessions bool
}

type rawOp struct {
	kind     history.OpKind
	key, val jsonscan.Datum
	list0, n int32 // list reads: scratch.list[list0 : list0+n]
	pred     int32 // predicate ops: scratch.preds index
	src      history.Src
	failed   bool
	time     history.Interval
	hasTime  bool
}

type rawPred struct {
	pred         history.Predicate
	rows0, nrows int
}

type rawRow struct {
	key, val jsonscan.Datum
	match    bool
	src      history.Src
}

func (x *scratch) reset() {
	ops, list, preds, rows := x.ops[:0], x.list[:0], x.preds[:0], x.rows[:0]
	*x = scratch{ops: ops, list: list, preds: preds, rows: rows, outcome: history.OutcomeCommitted}
}

func dup(s *jsonscan.Scanner, k []byte, kstart int, seen bool) bool {
	if seen {
		return s.Failf(kstart, "duplicate key %q", k)
	}
	return true
}

// txnKey parses the value of key k of a transaction line.
func (x *scratch) txnKey(s *jsonscan.Scanner, k []byte, kstart int) bool {
	var ok bool
	switch string(k) {
	case "s":
		x.sess, ok = s.Datum(`session "s"`)
	case "si":
		s.WS()
		x.siAt = s.I
		x.si, ok = s.Int(`session index "si"`)
		x.hasSI = true
	case "id":
		x.id, ok = s.Datum(`transaction id "id"`)
	case "o":
		var v []byte
		at := s.I
		if v, ok = s.Str(`outcome "o" ("c", "a" or "u")`); ok {
			switch string(v) {
			case "c":
				x.outcome = history.OutcomeCommitted
			case "a":
				x.outcome = history.OutcomeAborted
			case "u":
				x.outcome = history.OutcomeUnknown
			default:
				return s.Failf(at, `expected outcome "c", "a" or "u", found %q`, v)
			}
		}
	case "t":
		if !dup(s, k, kstart, x.hasTime) {
			return false
		}
		x.time.Begin, x.time.End, ok = s.Pair(`client interval "t"`)
		x.hasTime = true
	case "sts":
		if !dup(s, k, kstart, x.hasSts) {
			return false
		}
		s.WS()
		x.stsAt = s.I
		x.sts.Physical, x.sts.Logical, ok = s.Pair(`start timestamp "sts"`)
		x.hasSts = true
	case "cts":
		if !dup(s, k, kstart, x.hasCts) {
			return false
		}
		x.cts.Physical, x.cts.Logical, ok = s.Pair(`commit timestamp "cts"`)
		x.hasCts = true
	case "snap":
		if !dup(s, k, kstart, x.hasSnap) {
			return false
		}
		s.WS()
		at := s.I
		var v []byte
		if v, ok = s.Str(`database snapshot "snap" ("xmin:xmax:xip,...")`); ok {
			sn, err := history.ParseSnapshot(string(v))
			if err != nil {
				return s.Failf(at, "%v", err)
			}
			x.snap, x.hasSnap = sn, true
		}
	case "ops":
		if !dup(s, k, kstart, x.seen) {
			return false
		}
		x.seen = true
		ok = x.parseOps(s)
	default:
		return s.Failf(kstart, `unknown key %q in a transaction (expected "s", "si", "id", "o", "t", "sts", "cts", "snap" or "ops")`, k)
	}
	return ok
}

func (x *scratch) parseOps(s *jsonscan.Scanner) bool {
	return s.Array(`"ops" array`, "in the ops array", func() bool { return x.fastOp(s) || x.parseOp(s) })
}

// fastOp parses the compact form the writer emits for an item op with integer key and
// value, ["w",1,2], and reports whether it did; on false nothing is consumed and parseOp
// handles (or reports) the op.
func (x *scratch) fastOp(s *jsonscan.Scanner) bool {
	b, i := s.B, s.I
	kind, ok := itemOpHead(b, i)
	if !ok || kind == history.OpDelete { // a delete has no value: parseOp reads it
		return false
	}
	k, j, ok := jsonscan.FastInt(b, i+5)
	if !ok || j >= len(b) || b[j] != ',' {
		return false
	}
	v, j, ok := jsonscan.FastInt(b, j+1)
	if !ok || j >= len(b) || b[j] != ']' {
		return false
	}
	x.ops = append(x.ops, rawOp{kind: kind, key: jsonscan.IntDatum(k), val: jsonscan.IntDatum(v)})
	s.I = j + 1
	return true
}

func (x *scratch) parseOp(s *jsonscan.Scanner) bool {
	if !s.Expect('[', "an operation array such as [\"r\", key, value]") {
		return false
	}
	kat := s.I
	kind, ok := s.Str(`an operation kind ("r", "w", "a", "i", "d", "pr" or "pw")`)
	if !ok {
		return false
	}
	var o rawOp
	comma := func(what string) bool {
		if s.Peek() == ',' {
			s.I++
			return true
		}
		return s.Expect(',', "',' and "+what)
	}
	switch string(kind) {
	case "r", "w", "a", "i":
		if !comma("a key") {
			return false
		}
		if o.key, ok = s.Key("a key"); !ok || !comma("a value") {
			return false
		}
		if string(kind) == "r" && s.Peek() == '[' {
			o.kind = history.OpListRead
			if !x.parseList(s, &o) {
				return false
			}
			break
		}
		if o.val, ok = s.Datum("a value"); !ok {
			return false
		}
		switch kind[0] {
		case 'r':
			o.kind = history.OpRead
		case 'w':
			o.kind = history.OpWrite
		case 'a':
			o.kind = history.OpAppend
		default:
			o.kind = history.OpInsert
		}
	case "d":
		if !comma("a key") {
			return false
		}
		o.kind = history.OpDelete
		if o.key, ok = s.Key("a key"); !ok {
			return false
		}
	case "pr", "pw":
		o.kind = history.OpPredRead
		if string(kind) == "pw" {
			o.kind = history.OpPredWrite
		}
		if !comma("a predicate object") || !x.parsePred(s, &o) {
			return false
		}
	default:
		return s.Failf(kat, `expected an operation kind ("r", "w", "a", "i", "d", "pr" or "pw"), found %q`, kind)
	}
	more, ok := s.More(']', "in the operation")
	if !ok {
		return false
	}
	if more {
		if !x.parseOpExtras(s, &o) || !s.Expect(']', "']' closing the operation after its options object") {
			return false
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

func (x *scratch) parseSrc(s *jsonscan.Scanner, what string) (history.Src, bool) {
	switch s.Peek() {
	case '"':
		at := s.I
		v, ok := s.Str(what)
		if !ok {
			return history.Src{}, false
		}
		switch string(v) {
		case "init":
			return history.Src{Kind: history.SrcInit}, true
		case "none":
			return history.Src{Kind: history.SrcNone}, true
		}
		return history.Src{}, s.Failf(at, `expected %s ("init", "none" or [txn, op]), found %q`, what, v)
	case '[':
		at := s.I
		t, o, ok := s.Pair(what)
		if !ok {
			return history.Src{}, false
		}
		if t < 0 || t > 1<<31-1 || o < 0 || o > 1<<31-1 {
			return history.Src{}, s.Failf(at, "expected %s with a non-negative transaction index and op index", what)
		}
		return history.Src{Kind: history.SrcTxn, Txn: history.TxnID(t), Op: int32(o)}, true
	}
	return history.Src{}, s.Failf(s.I, `expected %s ("init", "none" or [txn, op]), found %s`, what, s.Found(s.I))
}

func (x *scratch) parseOpExtras(s *jsonscan.Scanner, o *rawOp) bool {
	return s.Object("an operation options object {\"src\", \"failed\", \"t\"}", func(k []byte, kstart int) bool {
		var ok bool
		switch string(k) {
		case "src":
			o.src, ok = x.parseSrc(s, `read source "src"`)
		case "failed":
			o.failed, ok = s.Boolean(`"failed"`)
		case "t":
			o.time.Begin, o.time.End, ok = s.Pair(`operation interval "t"`)
			o.hasTime = true
			x.anyOpTime = true
		default:
			return s.Failf(kstart, `unknown key %q in operation options (expected "src", "failed" or "t")`, k)
		}
		return ok
	})
}

func (x *scratch) parsePred(s *jsonscan.Scanner, o *rawOp) bool {
	var p rawPred
	ok := s.Object(`a predicate object {"rel", "expr", "range"}`, func(k []byte, kstart int) bool {
		switch string(k) {
		case "rel":
			v, ok := s.Str(`relation "rel" (a string)`)
			p.pred.Relation = string(v)
			return ok
		case "expr":
			v, ok := s.Str(`predicate text "expr" (a string)`)
			p.pred.Expr = string(v)
			return ok
		case "range":
			if !s.Expect('[', `"range" array [field, lo, hi]`) {
				return false
			}
			f, ok := s.Datum("range field")
			if !ok || !s.Expect(',', "',' and the range's low bound") {
				return false
			}
			p.pred.Field = f.Datum()
			if p.pred.Lo, ok = s.Int("range low bound"); !ok || !s.Expect(',', "',' and the range's high bound") {
				return false
			}
			if p.pred.Hi, ok = s.Int("range high bound"); !ok {
				return false
			}
			p.pred.IsRange = true
			return s.Expect(']', "']' closing the range (three elements)")
		}
		return s.Failf(kstart, `unknown key %q in a predicate (expected "rel", "expr" or "range")`, k)
	})
	if !ok || !s.Expect(',', "',' and the predicate's rows array") || !s.Expect('[', "a rows array [[key, value], ...]") {
		return false
	}
	p.rows0 = len(x.rows)
	if s.Peek() == ']' {
		s.I++
	} else {
		for {
			r := rawRow{match: true}
			if !s.Expect('[', "a row array [key, value]") {
				return false
			}
			if r.key, ok = s.Key("a key"); !ok || !s.Expect(',', "',' and the row's value") {
				return false
			}
			if r.val, ok = s.Datum("a row value"); !ok {
				return false
			}
			more, ok := s.More(']', "in the row")
			if !ok {
				return false
			}
			if more {
				ok = s.Object(`a row options object {"match", "src"}`, func(k []byte, kstart int) bool {
					switch string(k) {
					case "match":
						var ok bool
						r.match, ok = s.Boolean(`"match"`)
						return ok
					case "src":
						var ok bool
						r.src, ok = x.parseSrc(s, `row source "src"`)
						return ok
					}
					return s.Failf(kstart, `unknown key %q in row options (expected "match" or "src")`, k)
				})
				if !ok || !s.Expect(']', "']' closing the row after its options object") {
					return false
				}
			}
			x.rows = append(x.rows, r)
			more, ok = s.More(']', "in the rows array")
			if !ok {
				return false
			}
			if !more {
				break
			}
		}
	}
	p.nrows = len(x.rows) - p.rows0
	o.pred = int32(len(x.preds))
	x.preds = append(x.preds, p)
	return true
}

func (d *Decoder) headerKey(k []byte, kstart int) bool {
	s, x := &d.sc, &d.x
	var ok bool
	switch string(k) {
	case "isovet":
		s.WS()
		at := s.I
		if x.version, ok = s.Int(`format version "isovet"`); ok && x.version != Version {
			return s.Failf(at, "unsupported native format version %d (this reader knows version %d)", x.version, Version)
		}
	case "initial":
		x.initial, ok = s.Datum(`initial value "initial"`)
	case "initial_keys":
		ok = s.Expect('[', `"initial_keys" array [[key, value], ...]`)
		if ok && s.Peek() == ']' {
			s.I++
			break
		}
		for ok {
			var r rawRow
			if !s.Expect('[', "a [key, value] pair") {
				return false
			}
			if r.key, ok = s.Key("a key"); !ok || !s.Expect(',', "',' and the initial value") {
				return false
			}
			if r.val, ok = s.Datum("an initial value"); !ok || !s.Expect(']', "']' closing the [key, value] pair") {
				return false
			}
			x.initialKeys = append(x.initialKeys, r)
			var more bool
			if more, ok = s.More(']', `in "initial_keys"`); !more {
				break
			}
		}
	case "sessions":
		x.hasSessions = true
		ok = s.Expect('[', `"sessions" array of session ids`)
		if ok && s.Peek() == ']' {
			s.I++
			break
		}
		for ok {
			var v jsonscan.Datum
			if v, ok = s.Datum("a session id"); !ok {
				return false
			}
			x.sessions = append(x.sessions, v)
			var more bool
			if more, ok = s.More(']', `in "sessions"`); !more {
				break
			}
		}
	default:
		return s.Failf(kstart, `unknown key %q in the header (expected "isovet", "initial", "initial_keys" or "sessions")`, k)
	}
	return ok
}

func (d *Decoder) applyHeader(b *history.Builder) error {
	x := &d.x
	if d.records != 1 {
		return d.errorf(0, "a header line (starting with \"isovet\") must be the first line of the stream")
	}
	b.SetInitial(jsonscan.Value(b, x.initial))
	for _, r := range x.initialKeys {
		b.SetInitialKey(jsonscan.Key(b, r.key), jsonscan.Value(b, r.val))
	}
	if x.hasSessions {
		seen := make(map[history.Datum]bool, len(x.sessions))
		for _, v := range x.sessions {
			dv := v.Datum()
			if seen[dv] {
				d.sess = append(d.sess, b.NewSession(dv))
			} else {
				seen[dv] = true
				d.sess = append(d.sess, b.Session(dv))
			}
		}
	}
	return nil
}

// session returns b's session with source id sd.
func (d *Decoder) session(b *history.Builder, sd jsonscan.Datum) history.SessionID {
	if sd.Kind == history.DatumInt {
		return d.intSession(b, sd.I)
	}
	return b.Session(sd.Datum())
}

// intSession returns b's session with integer source id i, memoizing small ids.
func (d *Decoder) intSession(b *history.Builder, i int64) history.SessionID {
	if d.sessB != b {
		d.sessB, d.sessByInt = b, d.sessByInt[:0]
	}
	if i < 0 || i >= 1<<12 {
		return b.Session(history.Int(i))
	}
	if int(i) < len(d.sessByInt) {
		if s := d.sessByInt[i]; s > 0 {
			return s - 1
		}
	} else {
		d.sessByInt = append(d.sessByInt, make([]history.SessionID, int(i)+1-len(d.sessByInt))...)
	}
	s := b.Session(history.Int(i))
	d.sessByInt[i] = s + 1
	return s
}

// commit adds the parsed transaction to b. It checks everything that could fail first.
func (d *Decoder) commit(b *history.Builder) error {
	x := &d.x
	if !x.seen {
		return d.errorf(0, `expected an "ops" array in the transaction object`)
	}
	if x.hasSts != x.hasCts {
		return d.errorf(x.stsAt, `expected both "sts" and "cts" or neither`)
	}
	var sid history.SessionID
	if x.hasSI {
		if x.si < 0 || x.si >= int64(len(d.sess)) {
			return d.errorf(x.siAt, "session index %d names no session: the header declares %d", x.si, len(d.sess))
		}
		sid = d.sess[x.si]
	} else {
		sid = d.session(b, x.sess)
	}
	in := &d.in
	in.Reset(b)
	d.vc.reset(b)
	b.BeginTxn(sid, x.id.Datum(), x.outcome)
	t := b.Current()
	t.Time, t.HasTime = x.time, x.hasTime
	if x.hasSts {
		t.Start, t.Commit, t.HasTimestamps = x.sts, x.cts, true
	}
	if x.hasSnap {
		b.SetSnapshot(t.ID, x.snap)
	}
	var vs []history.Value
	value := func(k history.Key, v jsonscan.Datum) history.Value {
		if v.Kind == history.DatumStr {
			return d.vc.value(k, v.S)
		}
		return in.Value(k, v)
	}
	for i := range x.ops {
		o := &x.ops[i]
		var j int32
		switch o.kind {
		case history.OpRead:
			k := in.Key(o.key)
			j = b.ReadFrom(k, value(k, o.val), o.src)
		case history.OpWrite:
			k := in.Key(o.key)
			j = b.Write(k, value(k, o.val))
		case history.OpAppend:
			k := in.Key(o.key)
			j = b.Append(k, value(k, o.val))
		case history.OpInsert:
			k := in.Key(o.key)
			j = b.Insert(k, value(k, o.val))
		case history.OpDelete:
			j = b.Delete(in.Key(o.key))
		case history.OpListRead:
			k := in.Key(o.key)
			vs = vs[:0]
			for _, v := range x.list[o.list0 : o.list0+o.n] {
				vs = append(vs, jsonscan.Value(b, v))
			}
			j = b.ReadList(k, vs)
		case history.OpPredRead, history.OpPredWrite:
			p := &x.preds[o.pred]
			po := history.PredOp{Pred: p.pred}
			po.Rows = d.rowSlab.take(p.nrows)
			for ri, r := range x.rows[p.rows0 : p.rows0+p.nrows] {
				k := jsonscan.Key(b, r.key)
				v := history.Nil
				switch r.val.Kind {
				case history.DatumInt:
					v = b.IntValue(r.val.I)
				case history.DatumStr:
					v = d.vc.value(k, r.val.S)
				}
				po.Rows[ri] = history.Row{Key: k, Value: v, Match: r.match}
				po.SetSrc(ri, r.src)
			}
			if o.kind == history.OpPredRead {
				j = b.PredRead(po)
			} else {
				j = b.PredWrite(po)
			}
		}
		if o.src.Kind != history.SrcByValue && o.kind != history.OpRead {
			op := b.TxnOps(t.ID)[j]
			op.Src = o.src
			b.SetOp(t.ID, j, op)
		}
		if o.failed {
			b.SetOpFlags(j, history.OpFailed)
		}
		if x.anyOpTime {
			b.SetOpTime(j, o.time)
		}
	}
	b.EndTxn()
	d.ops += len(x.ops)
	return nil
}

// Sniff reports whether head looks like the native format: a JSON object whose first key
// is "isovet" (the header) or one of the transaction keys.
func Sniff(_ string, head []byte) bool {
	head = bytes.TrimLeft(head, " \t\r\n")
	if len(head) == 0 || head[0] != '{' {
		return false
	}
	head = bytes.TrimLeft(head[1:], " \t")
	for _, k := range [...]string{`"isovet"`, `"s"`, `"si"`, `"id"`, `"o"`, `"ops"`, `"t"`} {
		if rest, ok := bytes.CutPrefix(head, []byte(k)); ok {
			rest = bytes.TrimLeft(rest, " \t")
			return len(rest) > 0 && rest[0] == ':'
		}
	}
	return false
}
