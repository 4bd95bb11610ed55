package native

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/jsonscan"
	"github.com/isovet/isovet/internal/parse"
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
	size, bufSize := inputSize(r)
	if d.usePipeline(size) {
		return d.decodePipelined(r, size, b)
	}
	br := bufio.NewReaderSize(r, bufSize)
	var long []byte
	p := progress{size: size, start: d.mark(b)}
	for {
		ln, err := readLine(br, &long)
		if len(ln) > 0 {
			d.nextLine(&p, len(ln))
			if perr := d.decodeLine(ln, b); perr != nil {
				return perr
			}
			d.growOnce(b, &p)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return d.readErr(err)
		}
	}
}

// inputSize returns the size of r if it tells it (-1 if not) and the size of the buffer
// to read it with: 64 KiB, or less for a smaller input.
func inputSize(r io.Reader) (size int64, bufSize int) {
	bufSize = 64 << 10 // longer lines are gathered by readLine
	if l, ok := r.(interface{ Len() int }); ok {
		size = int64(l.Len())
		return size, int(min(size+1, int64(bufSize)))
	}
	return -1, bufSize
}

// readLine reads the next line of br (with its newline, if any), gathering in *long the
// pieces of a line longer than br's buffer.
func readLine(br *bufio.Reader, long *[]byte) ([]byte, error) {
	for {
		ln, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			*long = append(*long, ln...)
			continue
		}
		if *long != nil {
			ln = append(*long, ln...)
			*long = nil
		}
		return ln, err
	}
}

// progress is how far a Decode has read its input of size bytes (-1: unknown): off is
// the offset of the next line; start is what the builder held at the start, to grow it.
type progress struct {
	off, size int64
	start     growMark
}

// nextLine counts the next line, of n bytes.
func (d *Decoder) nextLine(p *progress, n int) {
	d.line++
	d.off = p.off
	p.off += int64(n)
}

// growOnce grows the builder for the whole input after its first 2048 lines.
func (d *Decoder) growOnce(b *history.Builder, p *progress) {
	if d.line == 2048 && p.size > p.off {
		d.grow(b, p.start, p.size, p.off)
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
	if blank(ln) {
		return nil
	}
	s := &d.sc
	s.Reset(ln, 0)
	s.End = "end of line"
	d.x.reset()
	// The first key says what the line is: "isovet" starts a header.
	header, first := false, true
	ok := s.Object("'{' starting a transaction or header object", func(k []byte, kstart int) bool {
		if first && string(k) == "isovet" {
			header = true
		}
		first = false
		if header {
			return d.headerKey(k, kstart)
		}
		return d.x.txnKey(s, k, kstart)
	})
	if !ok {
		return d.scanErr()
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
	sess, id       jsonscan.Datum
	si             int64
	hasSI          bool
	siAt           int
	outcome        history.Outcome
	time           history.Interval
	hasTime        bool
	sts, cts       history.Timestamp
	hasSts, hasCts bool
	stsAt          int
	snap           history.Snapshot
	hasSnap        bool
	ops            []rawOp
	list           []jsonscan.Datum
	preds          []rawPred
	rows           []rawRow
	vals           []history.Value // a list read's values, for the builder
	anyOpTime      bool
	once           txnKeySet // the keys seen of those that may appear once

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
	ops, list, preds, rows, vals := x.ops[:0], x.list[:0], x.preds[:0], x.rows[:0], x.vals[:0]
	*x = scratch{ops: ops, list: list, preds: preds, rows: rows, vals: vals, outcome: history.OutcomeCommitted}
}

// txnKeySet is a set of the transaction keys that may appear only once in a line.
type txnKeySet uint8

const (
	onceT txnKeySet = 1 << iota
	onceSts
	onceCts
	onceSnap
	onceOps
)

// txnKeys maps each key of a transaction line to the parser of its value, and to its bit
// if the key may appear only once (a repeated "s", "si", "id" or "o" overrides).
var txnKeys = map[string]struct {
	once  txnKeySet
	parse func(x *scratch, s *jsonscan.Scanner) bool
}{
	"s":    {0, (*scratch).parseSess},
	"si":   {0, (*scratch).parseSI},
	"id":   {0, (*scratch).parseID},
	"o":    {0, (*scratch).parseOutcome},
	"t":    {onceT, (*scratch).parseTime},
	"sts":  {onceSts, (*scratch).parseSts},
	"cts":  {onceCts, (*scratch).parseCts},
	"snap": {onceSnap, (*scratch).parseSnap},
	"ops":  {onceOps, (*scratch).parseOps},
}

// txnKey parses the value of key k of a transaction line.
func (x *scratch) txnKey(s *jsonscan.Scanner, k []byte, kstart int) bool {
	f, ok := txnKeys[string(k)]
	if !ok {
		return s.Failf(kstart, `unknown key %q in a transaction (expected "s", "si", "id", "o", "t", "sts", "cts", "snap" or "ops")`, k)
	}
	if x.once&f.once != 0 {
		return s.Failf(kstart, "duplicate key %q", k)
	}
	x.once |= f.once
	return f.parse(x, s)
}

func (x *scratch) parseSess(s *jsonscan.Scanner) bool {
	var ok bool
	x.sess, ok = s.Datum(`session "s"`)
	return ok
}

func (x *scratch) parseSI(s *jsonscan.Scanner) bool {
	var ok bool
	s.WS()
	x.siAt = s.I
	x.si, ok = s.Int(`session index "si"`)
	x.hasSI = true
	return ok
}

func (x *scratch) parseID(s *jsonscan.Scanner) bool {
	var ok bool
	x.id, ok = s.Datum(`transaction id "id"`)
	return ok
}

// outcomes maps the values of a transaction's "o" to outcomes.
var outcomes = map[string]history.Outcome{"c": history.OutcomeCommitted, "a": history.OutcomeAborted, "u": history.OutcomeUnknown}

func (x *scratch) parseOutcome(s *jsonscan.Scanner) bool {
	at := s.I
	v, ok := s.Str(`outcome "o" ("c", "a" or "u")`)
	if !ok {
		return false
	}
	if x.outcome, ok = outcomes[string(v)]; !ok {
		return s.Failf(at, `expected outcome "c", "a" or "u", found %q`, v)
	}
	return true
}

func (x *scratch) parseTime(s *jsonscan.Scanner) bool {
	var ok bool
	x.time.Begin, x.time.End, ok = s.Pair(`client interval "t"`)
	x.hasTime = true
	return ok
}

func (x *scratch) parseSts(s *jsonscan.Scanner) bool {
	var ok bool
	s.WS()
	x.stsAt = s.I
	x.sts.Physical, x.sts.Logical, ok = s.Pair(`start timestamp "sts"`)
	x.hasSts = true
	return ok
}

func (x *scratch) parseCts(s *jsonscan.Scanner) bool {
	var ok bool
	x.cts.Physical, x.cts.Logical, ok = s.Pair(`commit timestamp "cts"`)
	x.hasCts = true
	return ok
}

func (x *scratch) parseSnap(s *jsonscan.Scanner) bool {
	s.WS()
	at := s.I
	v, ok := s.Str(`database snapshot "snap" ("xmin:xmax:xip,...")`)
	if !ok {
		return false
	}
	sn, err := history.ParseSnapshot(string(v))
	if err != nil {
		return s.Failf(at, "%v", err)
	}
	x.snap, x.hasSnap = sn, true
	return true
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
	k, j, ok := intBefore(b, i+5, ',')
	if !ok {
		return false
	}
	v, j, ok := intBefore(b, j+1, ']')
	if !ok {
		return false
	}
	x.ops = append(x.ops, rawOp{kind: kind, key: jsonscan.IntDatum(k), val: jsonscan.IntDatum(v)})
	s.I = j + 1
	return true
}

// opKinds maps the kinds of an operation array to op kinds; a read of a list is told
// by its value.
var opKinds = map[string]history.OpKind{
	"r": history.OpRead, "w": history.OpWrite, "a": history.OpAppend, "i": history.OpInsert,
	"d": history.OpDelete, "pr": history.OpPredRead, "pw": history.OpPredWrite,
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
	if o.kind, ok = opKinds[string(kind)]; !ok {
		return s.Failf(kat, `expected an operation kind ("r", "w", "a", "i", "d", "pr" or "pw"), found %q`, kind)
	}
	switch o.kind {
	case history.OpDelete:
		ok = parseKeyArg(s, &o)
	case history.OpPredRead, history.OpPredWrite:
		ok = opComma(s, "a predicate object") && x.parsePred(s, &o)
	default:
		ok = x.parseItemArgs(s, &o)
	}
	if !ok || !x.parseOpEnd(s, &o) {
		return false
	}
	x.ops = append(x.ops, o)
	return true
}

// opComma consumes the ',' before the next element of an operation array, what.
func opComma(s *jsonscan.Scanner, what string) bool {
	if s.Peek() == ',' {
		s.I++
		return true
	}
	return s.Expect(',', "',' and "+what)
}

// parseKeyArg parses the key of an operation array, after its kind.
func parseKeyArg(s *jsonscan.Scanner, o *rawOp) bool {
	var ok bool
	if !opComma(s, "a key") {
		return false
	}
	o.key, ok = s.Key("a key")
	return ok
}

// parseItemArgs parses the key and value of an item op; a read whose value is an array is
// a list read.
func (x *scratch) parseItemArgs(s *jsonscan.Scanner, o *rawOp) bool {
	if !parseKeyArg(s, o) || !opComma(s, "a value") {
		return false
	}
	if o.kind == history.OpRead && s.Peek() == '[' {
		o.kind = history.OpListRead
		return x.parseList(s, o)
	}
	var ok bool
	o.val, ok = s.Datum("a value")
	return ok
}

// parseOpEnd parses the end of an operation array: ']', or an options object and ']'.
func (x *scratch) parseOpEnd(s *jsonscan.Scanner, o *rawOp) bool {
	more, ok := s.More(']', "in the operation")
	if !ok || !more {
		return ok
	}
	return x.parseOpExtras(s, o) && s.Expect(']', "']' closing the operation after its options object")
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
		return parseSrcName(s, what)
	case '[':
		return parseSrcPair(s, what)
	}
	return history.Src{}, s.Failf(s.I, `expected %s ("init", "none" or [txn, op]), found %s`, what, s.Found(s.I))
}

// srcNames maps the sources written as strings to their kinds.
var srcNames = map[string]history.SrcKind{"init": history.SrcInit, "none": history.SrcNone}

// parseSrcName parses a source written as a string, "init" or "none".
func parseSrcName(s *jsonscan.Scanner, what string) (history.Src, bool) {
	at := s.I
	v, ok := s.Str(what)
	if !ok {
		return history.Src{}, false
	}
	if k, ok := srcNames[string(v)]; ok {
		return history.Src{Kind: k}, true
	}
	return history.Src{}, s.Failf(at, `expected %s ("init", "none" or [txn, op]), found %q`, what, v)
}

// parseSrcPair parses a source written as [txn, op].
func parseSrcPair(s *jsonscan.Scanner, what string) (history.Src, bool) {
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

// parsePred parses the predicate object and the rows of a predicate op.
func (x *scratch) parsePred(s *jsonscan.Scanner, o *rawOp) bool {
	var p rawPred
	ok := s.Object(`a predicate object {"rel", "expr", "range"}`, func(k []byte, kstart int) bool {
		return p.parseKey(s, k, kstart)
	})
	if !ok || !s.Expect(',', "',' and the predicate's rows array") {
		return false
	}
	p.rows0 = len(x.rows)
	if !s.Array("a rows array [[key, value], ...]", "in the rows array", func() bool { return x.parseRow(s) }) {
		return false
	}
	p.nrows = len(x.rows) - p.rows0
	o.pred = int32(len(x.preds))
	x.preds = append(x.preds, p)
	return true
}

// parseKey parses the value of key k of a predicate object.
func (p *rawPred) parseKey(s *jsonscan.Scanner, k []byte, kstart int) bool {
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
		return p.parseRange(s)
	}
	return s.Failf(kstart, `unknown key %q in a predicate (expected "rel", "expr" or "range")`, k)
}

// parseRange parses a predicate's range, [field, lo, hi].
func (p *rawPred) parseRange(s *jsonscan.Scanner) bool {
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

// parseRow parses a row of a predicate op, [key, value] or [key, value, options], and
// appends it to x.rows.
func (x *scratch) parseRow(s *jsonscan.Scanner) bool {
	r := rawRow{match: true}
	var ok bool
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
	if !ok || more && !(x.parseRowOptions(s, &r) && s.Expect(']', "']' closing the row after its options object")) {
		return false
	}
	x.rows = append(x.rows, r)
	return true
}

// parseRowOptions parses a row's options object, {"match", "src"}.
func (x *scratch) parseRowOptions(s *jsonscan.Scanner, r *rawRow) bool {
	return s.Object(`a row options object {"match", "src"}`, func(k []byte, kstart int) bool {
		var ok bool
		switch string(k) {
		case "match":
			r.match, ok = s.Boolean(`"match"`)
		case "src":
			r.src, ok = x.parseSrc(s, `row source "src"`)
		default:
			return s.Failf(kstart, `unknown key %q in row options (expected "match" or "src")`, k)
		}
		return ok
	})
}

// headerKeys maps each key of a header line to the parser of its value.
var headerKeys = map[string]func(d *Decoder) bool{
	"isovet":       (*Decoder).parseVersion,
	"initial":      (*Decoder).parseInitial,
	"initial_keys": (*Decoder).parseInitialKeys,
	"sessions":     (*Decoder).parseSessions,
}

// headerKey parses the value of key k of a header line.
func (d *Decoder) headerKey(k []byte, kstart int) bool {
	if parse, ok := headerKeys[string(k)]; ok {
		return parse(d)
	}
	return d.sc.Failf(kstart, `unknown key %q in the header (expected "isovet", "initial", "initial_keys" or "sessions")`, k)
}

func (d *Decoder) parseVersion() bool {
	s, x := &d.sc, &d.x
	s.WS()
	at := s.I
	var ok bool
	if x.version, ok = s.Int(`format version "isovet"`); ok && x.version != Version {
		return s.Failf(at, "unsupported native format version %d (this reader knows version %d)", x.version, Version)
	}
	return ok
}

func (d *Decoder) parseInitial() bool {
	var ok bool
	d.x.initial, ok = d.sc.Datum(`initial value "initial"`)
	return ok
}

func (d *Decoder) parseInitialKeys() bool {
	s, x := &d.sc, &d.x
	return s.Array(`"initial_keys" array [[key, value], ...]`, `in "initial_keys"`, func() bool {
		var r rawRow
		var ok bool
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
		return true
	})
}

func (d *Decoder) parseSessions() bool {
	s, x := &d.sc, &d.x
	x.hasSessions = true
	return s.Array(`"sessions" array of session ids`, `in "sessions"`, func() bool {
		v, ok := s.Datum("a session id")
		if ok {
			x.sessions = append(x.sessions, v)
		}
		return ok
	})
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
		d.applySessions(b)
	}
	return nil
}

// applySessions adds the header's sessions to b in order: a repeated source id is a new
// session.
func (d *Decoder) applySessions(b *history.Builder) {
	seen := make(map[history.Datum]bool, len(d.x.sessions))
	for _, v := range d.x.sessions {
		dv := v.Datum()
		if seen[dv] {
			d.sess = append(d.sess, b.NewSession(dv))
		} else {
			seen[dv] = true
			d.sess = append(d.sess, b.Session(dv))
		}
	}
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
	if x.once&onceOps == 0 {
		return d.errorf(0, `expected an "ops" array in the transaction object`)
	}
	if x.hasSts != x.hasCts {
		return d.errorf(x.stsAt, `expected both "sts" and "cts" or neither`)
	}
	sid, err := d.txnSession(b)
	if err != nil {
		return err
	}
	d.in.Reset(b)
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
	for i := range x.ops {
		o := &x.ops[i]
		d.setOpOptions(b, t.ID, d.addOp(b, o), o)
	}
	b.EndTxn()
	d.ops += len(x.ops)
	return nil
}

// txnSession returns the session of the parsed transaction: the header's session of its
// index "si", or b's session of its source id "s".
func (d *Decoder) txnSession(b *history.Builder) (history.SessionID, error) {
	x := &d.x
	if !x.hasSI {
		return d.session(b, x.sess), nil
	}
	if x.si < 0 || x.si >= int64(len(d.sess)) {
		return 0, d.errorf(x.siAt, "session index %d names no session: the header declares %d", x.si, len(d.sess))
	}
	return d.sess[x.si], nil
}

// value interns the parsed value v of key k.
func (d *Decoder) value(k history.Key, v jsonscan.Datum) history.Value {
	if v.Kind == history.DatumStr {
		return d.vc.value(k, v.S)
	}
	return d.in.Value(k, v)
}

// addOp adds the parsed op o to b's open transaction and returns its index.
func (d *Decoder) addOp(b *history.Builder, o *rawOp) int32 {
	switch o.kind {
	case history.OpDelete:
		return b.Delete(d.in.Key(o.key))
	case history.OpListRead:
		return d.addListRead(b, o)
	case history.OpPredRead, history.OpPredWrite:
		return d.addPredOp(b, o)
	}
	k := d.in.Key(o.key)
	return addItem(b, o.kind, k, d.value(k, o.val), o.src)
}

func (d *Decoder) addListRead(b *history.Builder, o *rawOp) int32 {
	k := d.in.Key(o.key)
	vs := d.x.vals[:0]
	for _, v := range d.x.list[o.list0 : o.list0+o.n] {
		vs = append(vs, jsonscan.Value(b, v))
	}
	d.x.vals = vs
	return b.ReadList(k, vs)
}

func (d *Decoder) addPredOp(b *history.Builder, o *rawOp) int32 {
	p := &d.x.preds[o.pred]
	po := history.PredOp{Pred: p.pred}
	po.Rows = d.rowSlab.take(p.nrows)
	for ri, r := range d.x.rows[p.rows0 : p.rows0+p.nrows] {
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
	return addPred(b, o.kind, po)
}

// addPred adds the predicate op po of kind (OpPredRead or OpPredWrite) to b's open
// transaction and returns its index.
func addPred(b *history.Builder, kind history.OpKind, po history.PredOp) int32 {
	if kind == history.OpPredRead {
		return b.PredRead(po)
	}
	return b.PredWrite(po)
}

// setOpOptions sets what the options object of the parsed op o said on op j of
// transaction t: its source (which a read gave the builder already), failure and interval.
func (d *Decoder) setOpOptions(b *history.Builder, t history.TxnID, j int32, o *rawOp) {
	if o.src.Kind != history.SrcByValue && o.kind != history.OpRead {
		op := b.TxnOps(t)[j]
		op.Src = o.src
		b.SetOp(t, j, op)
	}
	if o.failed {
		b.SetOpFlags(j, history.OpFailed)
	}
	if d.x.anyOpTime {
		b.SetOpTime(j, o.time)
	}
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
