package edn

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/isovet/isovet/internal/jsonscan"
	"github.com/isovet/isovet/internal/parse"
)

// Options configure a [Decoder]. The zero value reads EDN.
type Options struct {
	File   string // file name for errors ("" for a stream)
	Format string // format name for errors; default "edn" or "json"
	// JSON makes the decoder read JSON instead of EDN.
	JSON bool
	// Reuse lets the decoder recycle the storage of Items between calls to Next: a value it
	// returns is valid only until the next call. Streaming readers that convert each form at
	// once should set it.
	Reuse bool
	// MaxDepth bounds the nesting of collections (default 1000).
	MaxDepth int
	_        struct{}
}

// Decoder reads a stream of EDN (or JSON) forms. It buffers its input.
// A Decoder is not safe for concurrent use.
type Decoder struct {
	opts Options
	r    io.Reader
	rerr error

	buf  []byte
	p, n int   // read position and end of valid data in buf
	base int64 // stream offset of buf[0]

	line      int32
	lineStart int64 // stream offset of the first byte of the current line

	stack   []Value // children of open collections
	chunk   []Value // storage handed out as Items
	seqs    []seq   // collections opened with Enter
	started bool    // a leading byte-order mark has been skipped
	scratch []byte
	intern  map[string]string
	recent  [4096]recentEntry
}

type seq struct {
	closer byte
	kind   Kind
	first  bool
	pos    Pos
}

const (
	minBuf     = 64 << 10
	maxIntern  = 4096
	chunkSize  = 4096
	defaultMax = 1000
)

// NewDecoder returns a decoder reading from r.
func NewDecoder(r io.Reader, opts Options) *Decoder {
	if opts.Format == "" {
		opts.Format = "edn"
		if opts.JSON {
			opts.Format = "json"
		}
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = defaultMax
	}
	return &Decoder{opts: opts, r: r, buf: make([]byte, minBuf), line: 1, intern: make(map[string]string)}
}

// ParseAll decodes every top-level form of data.
func ParseAll(data []byte, opts Options) ([]Value, error) {
	d := NewDecoder(&sliceReader{b: data}, opts)
	var vs []Value
	for {
		v, err := d.Next()
		if err == io.EOF {
			return vs, nil
		}
		if err != nil {
			return vs, err
		}
		vs = append(vs, v)
	}
}

type sliceReader struct{ b []byte }

func (s *sliceReader) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}

// Pos returns the position of the next unread byte.
func (d *Decoder) Pos() Pos {
	off := d.base + int64(d.p)
	return Pos{Offset: off, Line: d.line, Col: int32(off-d.lineStart) + 1}
}

// Errorf returns a *parse.Error at p, in this decoder's file and format.
func (d *Decoder) Errorf(p Pos, msg string, args ...any) error {
	return parse.Errorf(d.opts.Format, d.opts.File, int(p.Line), int(p.Col), p.Offset, msg, args...)
}

func (d *Decoder) truncated(p Pos, msg string, args ...any) error {
	return &parse.Error{Format: d.opts.Format, File: d.opts.File, Line: int(p.Line), Col: int(p.Col), Offset: p.Offset,
		Err: fmt.Errorf("%w: %s", parse.ErrTruncated, fmt.Sprintf(msg, args...))}
}

// readErr turns a read failure into an error; io.EOF means a clean end of input.
func (d *Decoder) readErr() error {
	if d.rerr == nil || d.rerr == io.EOF {
		return nil
	}
	return d.Errorf(d.Pos(), "reading input: %v", d.rerr)
}

// fill reads more input, keeping buf[d.p:d.n]. It reports whether new bytes arrived.
func (d *Decoder) fill() bool {
	if d.rerr != nil {
		return false
	}
	if d.p > 0 {
		copy(d.buf, d.buf[d.p:d.n])
		d.base += int64(d.p)
		d.n -= d.p
		d.p = 0
	}
	if d.n == len(d.buf) {
		nb := make([]byte, 2*len(d.buf))
		copy(nb, d.buf[:d.n])
		d.buf = nb
	}
	for range 100 {
		m, err := d.r.Read(d.buf[d.n:])
		d.n += m
		if err != nil {
			d.rerr = err
			return m > 0
		}
		if m > 0 {
			return true
		}
	}
	d.rerr = io.ErrNoProgress
	return false
}

// ensure makes k bytes available at d.p if the input has them.
func (d *Decoder) ensure(k int) bool {
	for d.n-d.p < k {
		if !d.fill() {
			return false
		}
	}
	return true
}

func (d *Decoder) newline(at int) {
	d.line++
	d.lineStart = d.base + int64(at) + 1
}

// alloc returns storage for n items.
func (d *Decoder) alloc(n int) []Value {
	if cap(d.chunk)-len(d.chunk) < n {
		size := chunkSize
		if d.opts.Reuse && 2*cap(d.chunk) > size {
			size = 2 * cap(d.chunk)
		}
		d.chunk = make([]Value, 0, max(size, n))
	}
	s := d.chunk[len(d.chunk) : len(d.chunk)+n : len(d.chunk)+n]
	d.chunk = d.chunk[:len(d.chunk)+n]
	return s
}

// Next returns the next top-level form, or the next element of the collection opened with
// [Decoder.Enter] (call [Decoder.More] first). It returns io.EOF at the end of the input.
func (d *Decoder) Next() (Value, error) {
	if d.opts.Reuse {
		d.chunk = d.chunk[:0]
	}
	if err := d.skip(0); err != nil {
		return Value{}, err
	}
	if d.p >= d.n && !d.fill() {
		if err := d.readErr(); err != nil {
			return Value{}, err
		}
		if len(d.seqs) > 0 {
			s := d.seqs[len(d.seqs)-1]
			return Value{}, d.truncated(d.Pos(), "expected %q to close the %v opened at line %d, column %d", s.closer, s.kind, s.pos.Line, s.pos.Col)
		}
		return Value{}, io.EOF
	}
	return d.value(len(d.seqs))
}

// Peek skips whitespace (and comments and discarded forms) and returns the next byte without
// consuming it, or io.EOF at the end of the input.
func (d *Decoder) Peek() (byte, error) {
	if err := d.skip(0); err != nil {
		return 0, err
	}
	if d.p >= d.n && !d.fill() {
		if err := d.readErr(); err != nil {
			return 0, err
		}
		return 0, io.EOF
	}
	return d.buf[d.p], nil
}

// Enter consumes the opening bracket of a vector or list ('[' or '('; '[' only for JSON) so
// that its elements can be streamed with [Decoder.More] and [Decoder.Next].
func (d *Decoder) Enter() error {
	c, err := d.Peek()
	if err != nil {
		if err == io.EOF {
			return d.truncated(d.Pos(), "expected '[' or '('")
		}
		return err
	}
	p := d.Pos()
	switch {
	case c == '[':
		d.seqs = append(d.seqs, seq{closer: ']', kind: Vector, first: true, pos: p})
	case c == '(' && !d.opts.JSON:
		d.seqs = append(d.seqs, seq{closer: ')', kind: List, first: true, pos: p})
	default:
		return d.Errorf(p, "expected '[' or '(', found %s", quoteByte(c))
	}
	d.p++
	return nil
}

// More reports whether another element follows in the collection opened by Enter. When it
// returns false it has consumed the closing bracket.
func (d *Decoder) More() (bool, error) {
	if len(d.seqs) == 0 {
		return false, errors.New("edn: More called outside Enter")
	}
	s := &d.seqs[len(d.seqs)-1]
	c, err := d.Peek()
	if err == io.EOF {
		return false, d.truncated(d.Pos(), "expected %q to close the %v opened at line %d, column %d", s.closer, s.kind, s.pos.Line, s.pos.Col)
	}
	if err != nil {
		return false, err
	}
	if c == s.closer {
		d.p++
		d.seqs = d.seqs[:len(d.seqs)-1]
		return false, nil
	}
	if d.opts.JSON && !s.first {
		if c != ',' {
			return false, d.Errorf(d.Pos(), "expected ',' or %q after an array element, found %s", s.closer, quoteByte(c))
		}
		d.p++
	}
	s.first = false
	return true, nil
}

// skip skips whitespace, comments and (EDN) #_ discarded forms.
func (d *Decoder) skip(depth int) error {
	if !d.started {
		d.skipBOM()
	}
	if d.opts.JSON {
		d.skipJSONSpace()
		return nil
	}
	for {
		for d.p < d.n {
			switch c := d.buf[d.p]; c {
			case ' ', '\t', '\r', ',', '\f', '\v':
				d.p++
			case '\n':
				d.newline(d.p)
				d.p++
			case ';':
				d.skipComment()
			case '#':
				if !d.ensure(2) || d.buf[d.p+1] != '_' {
					return nil
				}
				if err := d.discard(depth); err != nil {
					return err
				}
			default:
				return nil
			}
		}
		if !d.fill() {
			return nil
		}
	}
}

// skipBOM skips a UTF-8 byte order mark at the start of the input.
func (d *Decoder) skipBOM() {
	d.started = true
	if d.ensure(3) && d.buf[d.p] == 0xef && d.buf[d.p+1] == 0xbb && d.buf[d.p+2] == 0xbf {
		d.p += 3
		d.lineStart = d.base + int64(d.p)
	}
}

// skipComment skips a comment up to (not including) its newline.
func (d *Decoder) skipComment() {
	for {
		for d.p < d.n && d.buf[d.p] != '\n' {
			d.p++
		}
		if d.p < d.n || !d.fill() {
			return
		}
	}
}

// discard skips a #_ (at d.p) and the form it discards.
func (d *Decoder) discard(depth int) error {
	p := d.Pos()
	d.p += 2
	if err := d.skip(depth); err != nil {
		return err
	}
	if d.p >= d.n && !d.fill() {
		return d.truncated(p, "expected a form after #_")
	}
	_, err := d.value(depth + 1)
	return err
}

func (d *Decoder) skipJSONSpace() {
	for {
		for d.p < d.n {
			switch d.buf[d.p] {
			case ' ', '\t', '\r':
				d.p++
			case '\n':
				d.newline(d.p)
				d.p++
			default:
				return
			}
		}
		if !d.fill() {
			return
		}
	}
}

func quoteByte(c byte) string {
	if c >= ' ' && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// isSym reports whether c may appear inside a symbol, keyword or number token.
func isSym(c byte) bool {
	return symTable[c]
}

var symTable = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range ".*+!-_?$%&=<>/:#'|" {
		t[c] = true
	}
	for c := 0x80; c < 256; c++ {
		t[c] = true
	}
	return t
}()

// token returns the length of the run of symbol bytes starting at d.p+from, filling as needed.
// The bytes are d.buf[d.p : d.p+from+length] afterwards; d.p is not moved.
func (d *Decoder) token(from int) int {
	i := from
	for {
		for d.p+i < d.n && isSym(d.buf[d.p+i]) {
			i++
		}
		if d.p+i < d.n || !d.fill() {
			return i - from
		}
	}
}

// internBytes returns b as a string, sharing one copy of each frequent token. A small
// direct-mapped cache in front of the map catches the handful of keywords and strings that
// make up most of a history (:type, :invoke, :value, :append, ...).
func (d *Decoder) internBytes(b []byte) string {
	var h uint32
	if len(b) <= 7 {
		// Short tokens (:type, "ok", "k790") are compared as one word: 7 bytes and a length.
		var w uint64
		for i, c := range b {
			w |= uint64(c) << (8 * i)
		}
		w = 1<<63 | w<<4 | uint64(len(b))          // never 0, the w of a long string's slot
		h = uint32((w * 0x9e3779b97f4a7c15) >> 52) // 12 bits: len(d.recent) is 4096
		if e := &d.recent[h]; e.w == w {
			return e.s
		}
		s := d.lookup(b)
		d.recent[h] = recentEntry{s: s, w: w}
		return s
	}
	// The hash covers every byte: sampling a few sends similar names to a handful of slots.
	h = uint32(len(b))
	for _, c := range b {
		h = h*31 + uint32(c)
	}
	h = (h ^ h>>12) & uint32(len(d.recent)-1)
	if e := &d.recent[h]; e.s == string(b) {
		return e.s
	}
	s := d.lookup(b)
	d.recent[h] = recentEntry{s: s}
	return s
}

// recentEntry is a slot of the intern cache: the string and, for one of at most 7 bytes,
// its bytes and length packed into a word (w is 0 for longer strings).
type recentEntry struct {
	s string
	w uint64
}

func (d *Decoder) lookup(b []byte) string {
	s, ok := d.intern[string(b)]
	if !ok {
		s = string(b)
		if len(d.intern) < maxIntern {
			d.intern[s] = s
		}
	}
	return s
}

// value parses one form starting at the next non-space byte.
func (d *Decoder) value(depth int) (Value, error) {
	if d.opts.JSON {
		return d.jsonValue(depth)
	}
	if err := d.skip(depth); err != nil {
		return Value{}, err
	}
	p := d.Pos()
	if d.p >= d.n && !d.fill() {
		if err := d.readErr(); err != nil {
			return Value{}, err
		}
		return Value{}, d.truncated(p, "expected a form")
	}
	c := d.buf[d.p]
	if o := openers[c]; o.kind != Invalid {
		d.p++
		return d.coll(o.kind, o.closer, p, depth)
	}
	switch c {
	case '"':
		s, err := d.str(p)
		return Value{Kind: String, Pos: p, Str: s}, err
	case '\\':
		return d.char(p)
	case ':':
		return d.keyword(p)
	case '#':
		return d.dispatch(p, depth)
	case ')', ']', '}':
		return Value{}, d.Errorf(p, "unexpected %q: no collection is open here", c)
	default:
		return d.atom(p, c)
	}
}

// openers maps the bytes that open a list, vector or map to its kind and closing byte.
var openers = [256]struct {
	kind   Kind
	closer byte
}{'(': {List, ')'}, '[': {Vector, ']'}, '{': {Map, '}'}}

// keyword parses a keyword whose ':' is at d.p.
func (d *Decoder) keyword(p Pos) (Value, error) {
	n := d.token(1)
	tok := d.buf[d.p : d.p+1+n]
	if n == 0 || tok[1] == ':' || tok[1] == '/' && n > 1 {
		return Value{}, d.Errorf(p, "expected a keyword name after ':'")
	}
	s := d.internBytes(tok)
	d.p += len(tok)
	return Value{Kind: Keyword, Pos: p, Str: s}, nil
}

// atom parses a number, a symbol, nil, true or false starting with c at d.p.
func (d *Decoder) atom(p Pos, c byte) (Value, error) {
	if d.startsNumber(c) {
		return d.number(p)
	}
	if !isSym(c) || c == '\'' {
		return Value{}, d.Errorf(p, "unexpected %s: expected a form (map, vector, list, set, string, number, keyword, symbol, character or tagged literal)", quoteByte(c))
	}
	if c == '.' && d.ensure(2) && isDigit(d.buf[d.p+1]) {
		return Value{}, d.Errorf(p, "expected a digit before '.' in a number")
	}
	n := d.token(0)
	tok := d.buf[d.p : d.p+n]
	d.p += n
	if v, ok := ednWords[string(tok)]; ok {
		v.Pos = p
		return v, nil
	}
	return Value{Kind: Symbol, Pos: p, Str: d.internBytes(tok)}, nil
}

// ednWords are the EDN literals that are not symbols.
var ednWords = map[string]Value{"nil": {Kind: Nil}, "true": {Kind: Bool, Int: 1}, "false": {Kind: Bool}}

// startsNumber reports whether the form at d.p, which starts with c, is a number: a digit,
// or a sign and a digit.
func (d *Decoder) startsNumber(c byte) bool {
	return isDigit(c) || (c == '+' || c == '-') && d.ensure(2) && isDigit(d.buf[d.p+1])
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// coll parses the elements of a collection whose opening bracket (at p) was consumed.
func (d *Decoder) coll(kind Kind, closer byte, p Pos, depth int) (Value, error) {
	if depth >= d.opts.MaxDepth {
		return Value{}, d.Errorf(p, "collections nested deeper than %d", d.opts.MaxDepth)
	}
	start := len(d.stack)
	v, err := d.elems(kind, closer, p, depth, start)
	d.stack = d.stack[:start]
	return v, err
}

// elems parses a collection's elements onto d.stack[start:] and returns the collection.
func (d *Decoder) elems(kind Kind, closer byte, p Pos, depth, start int) (Value, error) {
	// One loop with its fast paths inline: split into steps (a string, vector or nil
	// element; the slow element; the collection), reading Elle's histories took 4 % more
	// instructions (cachegrind).
	for {
		// Fast paths for the common elements of Jepsen histories, taken only when the
		// whole token and the byte after it are in the buffer.
		if d.p < d.n {
			switch c := d.buf[d.p]; {
			case c == ' ' || c == ',':
				d.p++
				continue
			case c >= '0' && c <= '9':
				if n, i, ok := d.scanInt(); ok {
					v := d.push()
					v.Kind, v.Pos, v.Int = Int, d.Pos(), n
					d.p += i
					continue
				}
			case c == ':':
				if i, ok := d.scanKeyword(); ok {
					v := d.push()
					v.Kind, v.Pos, v.Str = Keyword, d.Pos(), d.internBytes(d.buf[d.p:d.p+i])
					d.p += i
					continue
				}
			case c == '"':
				p := d.Pos()
				str, err := d.str(p)
				if err != nil {
					return Value{}, err
				}
				v := d.push()
				v.Kind, v.Pos, v.Str = String, p, str
				continue
			case c == '[' && depth+1 < d.opts.MaxDepth: // a nested vector, as value parses it
				vp := d.Pos()
				d.p++
				v, err := d.coll(Vector, ']', vp, depth+1)
				if err != nil {
					return Value{}, err
				}
				d.stack = append(d.stack, v)
				continue
			case c == 'n' && !d.opts.JSON:
				if d.p+3 < d.n && d.buf[d.p+1] == 'i' && d.buf[d.p+2] == 'l' && !isSym(d.buf[d.p+3]) {
					v := d.push()
					v.Kind, v.Pos = Nil, d.Pos()
					d.p += 3
					continue
				}
			}
		}
		if err := d.skip(depth); err != nil {
			return Value{}, err
		}
		if d.p >= d.n && !d.fill() {
			if err := d.readErr(); err != nil {
				return Value{}, err
			}
			return Value{}, d.truncated(d.Pos(), "expected %q to close the %v opened at line %d, column %d", closer, kind, p.Line, p.Col)
		}
		c := d.buf[d.p]
		if c == closer {
			d.p++
			break
		}
		if c == ')' || c == ']' || c == '}' {
			return Value{}, d.Errorf(d.Pos(), "unexpected %q: expected %q to close the %v opened at line %d, column %d", c, closer, kind, p.Line, p.Col)
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return Value{}, err
		}
		d.stack = append(d.stack, v)
	}
	n := len(d.stack) - start
	if kind == Map && n%2 != 0 {
		return Value{}, d.Errorf(p, "map has an odd number of forms (%d): expected a value after every key", n)
	}
	items := d.alloc(n)
	copy(items, d.stack[start:])
	return Value{Kind: kind, Pos: p, Items: items}, nil
}

// wordAt reports whether the word w is at d.p, and the byte after it, which ends it, is in
// the buffer.
func (d *Decoder) wordAt(w string) bool {
	return d.p+len(w) < d.n && string(d.buf[d.p:d.p+len(w)]) == w && !isSym(d.buf[d.p+len(w)])
}

// push appends a zero value to d.stack and returns it, for filling in place: building a
// Value (80 bytes) elsewhere and copying it in costs more than the parsing.
func (d *Decoder) push() *Value {
	d.stack = append(d.stack, Value{})
	return &d.stack[len(d.stack)-1]
}

// scanInt scans an unsigned decimal of at most 18 digits at d.p, if it and its delimiter are
// in the buffer, without building a value: the number and its length.
func (d *Decoder) scanInt() (int64, int, bool) {
	b := d.buf[d.p:d.n]
	var n int64
	i := 0
	for ; i < len(b) && i <= 18; i++ {
		c := b[i]
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int64(c-'0')
	}
	if i == len(b) || i > 18 || isSym(b[i]) || i > 1 && b[0] == '0' {
		return 0, 0, false
	}
	return n, i, true
}

// scanKeyword scans a plain keyword at d.p, if it and its delimiter are in the buffer,
// without building a value: its length.
func (d *Decoder) scanKeyword() (int, bool) {
	b := d.buf[d.p:d.n]
	i := 1
	for i < len(b) && isSym(b[i]) {
		i++
	}
	if i == len(b) || i == 1 || b[1] == ':' || b[1] == '/' {
		return 0, false
	}
	return i, true
}

// dispatch parses what follows '#' (a set, a tag, or ##Inf/##-Inf/##NaN).
func (d *Decoder) dispatch(p Pos, depth int) (Value, error) {
	if !d.ensure(2) {
		return Value{}, d.truncated(p, "expected '{', '_', '#' or a tag after '#'")
	}
	c := d.buf[d.p+1]
	switch {
	case c == '{':
		d.p += 2
		return d.coll(Set, '}', p, depth)
	case c == '#':
		return d.symbolicFloat(p)
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		return d.tagged(p, depth)
	}
	return Value{}, d.Errorf(p, "unexpected %s after '#': expected '{' (set), '_' (discard), '#' (##Inf) or a tag", quoteByte(c))
}

// symbolicFloats are the values of ##Inf, ##-Inf and ##NaN.
var symbolicFloats = map[string]float64{"Inf": math.Inf(1), "-Inf": math.Inf(-1), "NaN": math.NaN()}

// symbolicFloat parses ##Inf, ##-Inf or ##NaN, whose first '#' is at d.p.
func (d *Decoder) symbolicFloat(p Pos) (Value, error) {
	n := d.token(2)
	f, ok := symbolicFloats[string(d.buf[d.p+2:d.p+2+n])]
	if !ok {
		return Value{}, d.Errorf(p, "expected ##Inf, ##-Inf or ##NaN")
	}
	d.p += 2 + n
	return Value{Kind: Float, Pos: p, Float: f}, nil
}

// tagged parses a tagged literal, #tag form, whose '#' is at d.p.
func (d *Decoder) tagged(p Pos, depth int) (Value, error) {
	n := d.token(1)
	tag := d.internBytes(d.buf[d.p+1 : d.p+1+n])
	d.p += 1 + n
	if depth >= d.opts.MaxDepth {
		return Value{}, d.Errorf(p, "forms nested deeper than %d", d.opts.MaxDepth)
	}
	if err := d.skip(depth); err != nil {
		return Value{}, err
	}
	if d.p >= d.n && !d.fill() {
		return Value{}, d.truncated(d.Pos(), "expected a form after the tag #%s", tag)
	}
	v, err := d.value(depth + 1)
	if err != nil {
		return Value{}, err
	}
	items := d.alloc(1)
	items[0] = v
	return Value{Kind: Tagged, Pos: p, Str: tag, Items: items}, nil
}

// number parses an EDN number token at d.p.
func (d *Decoder) number(p Pos) (Value, error) {
	n := d.token(0)
	tok := d.buf[d.p : d.p+n]
	if i, ok := smallInt(tok); ok {
		d.p += n
		return Value{Kind: Int, Pos: p, Int: i}, nil
	}
	v, err := parseNumber(tok)
	if err != nil {
		return Value{}, d.Errorf(p, "invalid number %q: %v", tok, err)
	}
	v.Pos = p
	d.p += n
	return v, nil
}

// smallInt parses the common case, an optionally signed decimal of at most 18 digits
// without leading zeros, without allocating.
func smallInt(tok []byte) (int64, bool) {
	tok, neg := cutSign(tok)
	if len(tok) == 0 || len(tok) > 18 || tok[0] == '0' && len(tok) > 1 {
		return 0, false
	}
	var n int64
	for _, c := range tok {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

var errNumSyntax = errors.New("expected digits with an optional sign, fraction, exponent, ratio or N/M suffix")

func digits(b []byte) int {
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// parseNumber parses [+-]digits, optionally followed by N; a float with optional M; or a ratio.
func parseNumber(tok []byte) (Value, error) {
	body, neg := cutSign(tok)
	if isHexPrefix(body) {
		return parseHex(body[2:], neg)
	}
	id := digits(body)
	if id == 0 {
		return Value{}, errNumSyntax
	}
	if id > 1 && body[0] == '0' {
		return Value{}, errors.New("leading zeros are not allowed")
	}
	sign := ""
	if neg {
		sign = "-"
	}
	if v, ok, err := parseExact(sign, body, id); ok {
		return v, err
	}
	return parseFloat(sign, body[:id], body[id:])
}

// cutSign removes a leading '+' or '-' from tok and reports whether it was '-'.
func cutSign(tok []byte) (body []byte, neg bool) {
	if len(tok) > 0 && (tok[0] == '+' || tok[0] == '-') {
		return tok[1:], tok[0] == '-'
	}
	return tok, false
}

func isHexPrefix(b []byte) bool {
	return len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X')
}

// parseHex parses the hexadecimal digits after 0x as an integer that fits in 64 bits.
func parseHex(hex []byte, neg bool) (Value, error) {
	u, err := strconv.ParseUint(string(hex), 16, 64)
	if err != nil || u > math.MaxInt64 {
		return Value{}, errors.New("expected a hexadecimal integer that fits in 64 bits")
	}
	if neg {
		return Value{Kind: Int, Int: -int64(u)}, nil
	}
	return Value{Kind: Int, Int: int64(u)}, nil
}

// parseExact parses the forms that are not floats: an integer (with N, a big integer), a
// decimal with M, or a ratio. body[:id] are the integer digits; ok is false for a float.
func parseExact(sign string, body []byte, id int) (v Value, ok bool, err error) {
	rest := body[id:]
	switch {
	case string(rest) == "M":
		return Value{Kind: BigDec, Str: sign + string(body[:id])}, true, nil
	case len(rest) == 0:
		return integer(sign + string(body[:id])), true, nil
	case string(rest) == "N":
		return Value{Kind: BigInt, Str: canonBig(sign + string(body[:id]))}, true, nil
	case rest[0] == '/':
		dn := digits(rest[1:])
		if dn == 0 || dn != len(rest)-1 {
			return Value{}, true, errNumSyntax
		}
		return Value{Kind: Ratio, Str: sign + string(body)}, true, nil
	}
	return Value{}, false, nil
}

// integer returns the integer of the decimal digits s (with a '-' if negative): an Int, or
// a BigInt beyond 64 bits.
func integer(s string) Value {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return Value{Kind: Int, Int: i}
	}
	return Value{Kind: BigInt, Str: canonBig(s)}
}

// parseFloat parses a float: integer digits, then in rest a fraction and/or exponent, then
// an optional M (a big decimal).
func parseFloat(sign string, intDigits, rest []byte) (Value, error) {
	i := floatTail(rest)
	if i == 0 {
		return Value{}, errNumSyntax
	}
	lit := sign + string(intDigits) + string(rest[:i])
	switch {
	case i == len(rest):
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return Value{}, errNumSyntax
		}
		return Value{Kind: Float, Float: f}, nil
	case i+1 == len(rest) && rest[i] == 'M':
		return Value{Kind: BigDec, Str: lit}, nil
	}
	return Value{}, errNumSyntax
}

// floatTail returns the length of the fraction and exponent at the start of rest, 0 if
// there is neither or the exponent has no digits.
func floatTail(rest []byte) int {
	i := 0
	if rest[0] == '.' {
		i = 1 + digits(rest[1:])
	}
	if i < len(rest) && (rest[i] == 'e' || rest[i] == 'E') {
		j := i + 1
		if j < len(rest) && (rest[j] == '+' || rest[j] == '-') {
			j++
		}
		k := digits(rest[j:])
		if k == 0 {
			return 0
		}
		i = j + k
	}
	return i
}

// canonBig drops a negative sign from zero so that -0N and 0N print alike.
func canonBig(s string) string {
	if s == "-0" {
		return "0"
	}
	return s
}

// str parses a string literal whose opening quote is at d.p.
// strSpecial marks the bytes a string's scan stops at: its end, an escape, a newline and the
// other control characters.
var strSpecial = func() (t [256]bool) {
	for c := range ' ' {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func (d *Decoder) str(p Pos) (string, error) {
	i := 1
	esc := false
	for {
	scan:
		for d.p+i < d.n {
			// Skip the plain bytes in a tight loop; the rest is looked at below.
			buf, j, n := d.buf, d.p+i, d.n
			for j < n && j < len(buf) && !strSpecial[buf[j]] {
				j++
			}
			i = j - d.p
			if j >= n {
				break
			}
			switch c := d.buf[d.p+i]; c {
			case '"':
				return d.strEnd(i, esc, p)
			case '\\':
				if d.p+i+1 >= d.n {
					break scan // read the escaped byte before looking at it (it may be a newline)
				}
				esc = true
				i++ // the escaped byte cannot end the string
				if d.buf[d.p+i] == '\n' {
					d.newline(d.p + i)
				}
			default:
				if err := d.strControl(c, i, p); err != nil {
					return "", err
				}
			}
			i++
		}
		if !d.fill() {
			if err := d.readErr(); err != nil {
				return "", err
			}
			return "", d.truncated(p, "expected '\"' to close the string opened here")
		}
	}
}

// strEnd returns the string opened at p whose closing quote is at d.p+i, which has
// escapes if esc, and moves past it. Short strings are interned.
func (d *Decoder) strEnd(i int, esc bool, p Pos) (string, error) {
	var s string
	if esc {
		var err error
		s, err = d.unescape(d.buf[d.p+1:d.p+i], p)
		if err != nil {
			return "", err
		}
	} else if i-1 <= 32 {
		s = d.internBytes(d.buf[d.p+1 : d.p+i])
	} else {
		s = string(d.buf[d.p+1 : d.p+i])
	}
	d.p += i + 1
	return s, nil
}

// strControl looks at the control character c at d.p+i inside the string opened at p: a
// newline is counted (and refused in JSON), other control characters refused in JSON.
func (d *Decoder) strControl(c byte, i int, p Pos) error {
	switch {
	case c == '\n':
		if d.opts.JSON {
			return d.Errorf(d.posAt(i), "unescaped newline in a string: expected '\"' to close the string opened at line %d, column %d", p.Line, p.Col)
		}
		d.newline(d.p + i)
	case d.opts.JSON:
		return d.Errorf(d.posAt(i), "control character 0x%02x in a string: expected it escaped", c)
	}
	return nil
}

func (d *Decoder) posAt(i int) Pos {
	off := d.base + int64(d.p+i)
	return Pos{Offset: off, Line: d.line, Col: int32(off-d.lineStart) + 1}
}

// unescape decodes the contents of a string literal with escapes (s excludes the quotes).
func (d *Decoder) unescape(s []byte, p Pos) (string, error) {
	out := d.scratch[:0]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(s) {
			return "", d.Errorf(p, "string ends in a lone backslash")
		}
		var err error
		if out, i, err = d.escape(out, s, i, p); err != nil {
			return "", err
		}
	}
	d.scratch = out
	return string(out), nil
}

// simpleEscapes maps the byte after a backslash to the byte it stands for, 0 if it is not
// a one-byte escape.
var simpleEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 'f': '\f'}

// escape appends the character of the escape whose letter is s[i] and returns the index of
// the escape's last byte.
func (d *Decoder) escape(out, s []byte, i int, p Pos) ([]byte, int, error) {
	e := s[i]
	switch {
	case e == '/' && !d.opts.JSON:
		// falls through to the error below
	case simpleEscapes[e] != 0:
		return append(out, simpleEscapes[e]), i, nil
	case e == 'u':
		r, n, ok := unicodeEscape(s[i+1:])
		if !ok {
			return nil, i, d.Errorf(p, "invalid \\u escape in string: expected four hex digits")
		}
		return utf8.AppendRune(out, r), i + n, nil
	case !d.opts.JSON && e >= '0' && e <= '7':
		return d.octalEscape(out, s, i, p)
	}
	if e == '/' {
		return nil, i, d.Errorf(p, "invalid escape \\%c in string: expected one of \\\" \\\\ \\n \\t \\r \\b \\f \\uXXXX", e)
	}
	return nil, i, d.Errorf(p, "invalid escape %s in string: expected one of \\\" \\\\ \\n \\t \\r \\b \\f \\uXXXX", strconv.Quote("\\"+string(e)))
}

// octalEscape appends the character of the octal escape whose first digit is s[i] and
// returns the index of its last digit.
func (d *Decoder) octalEscape(out, s []byte, i int, p Pos) ([]byte, int, error) {
	k := octalDigits(s[i:])
	r := octal(s[i : i+k])
	if r > 0377 {
		return nil, i, d.Errorf(p, "octal escape \\%s out of range: expected \\0 to \\377", s[i:i+k])
	}
	return utf8.AppendRune(out, r), i + k - 1, nil
}

// unicodeEscape decodes the four hex digits after \u, and a low surrogate's \uXXXX after a
// high one; a lone surrogate is U+FFFD. n is the number of bytes used.
func unicodeEscape(s []byte) (r rune, n int, ok bool) {
	r, ok = jsonscan.Hex4(s)
	if !ok {
		return 0, 0, false
	}
	if !utf16Surrogate(r) {
		return r, 4, true
	}
	if r < 0xdc00 && len(s) >= 10 && s[4] == '\\' && s[5] == 'u' {
		if r2, ok := jsonscan.Hex4(s[6:]); ok && r2 >= 0xdc00 && r2 < 0xe000 {
			return 0x10000 + (r-0xd800)<<10 + (r2 - 0xdc00), 10, true
		}
	}
	return utf8.RuneError, 4, true
}

// octalDigits returns the number of octal digits (at most 3) at the start of s.
func octalDigits(s []byte) int {
	k := 0
	for k < 3 && k < len(s) && s[k] >= '0' && s[k] <= '7' {
		k++
	}
	return k
}

func octal(digits []byte) rune {
	r := rune(0)
	for _, o := range digits {
		r = r*8 + rune(o-'0')
	}
	return r
}

func utf16Surrogate(r rune) bool { return r >= 0xd800 && r < 0xe000 }

// char parses a character literal whose backslash is at d.p.
func (d *Decoder) char(p Pos) (Value, error) {
	if !d.ensure(2) {
		return Value{}, d.truncated(p, "expected a character after '\\'")
	}
	c := d.buf[d.p+1]
	if strings.IndexByte(" \t\n\r,", c) >= 0 {
		return Value{}, d.Errorf(p, "expected a character after '\\', found whitespace (write \\space, \\tab or \\newline)")
	}
	n := 1
	if isSym(c) {
		if c >= utf8.RuneSelf {
			d.ensure(1 + utf8.UTFMax)
		}
		n = d.token(1)
	}
	r, err := charName(d.buf[d.p+1 : d.p+1+n])
	if err != "" {
		return Value{}, d.Errorf(p, "%s", err)
	}
	d.p += 1 + n
	return Value{Kind: Char, Pos: p, Int: int64(r)}, nil
}

// namedChars are the named character literals.
var namedChars = map[string]rune{
	"newline": '\n', "space": ' ', "tab": '\t', "return": '\r', "formfeed": '\f', "backspace": '\b',
}

// charName decodes the token after a character literal's backslash; a non-empty error
// message says why it is not a character.
func charName(tok []byte) (rune, string) {
	name := string(tok)
	if len(tok) == 1 {
		return rune(tok[0]), ""
	}
	if utf8.RuneCount(tok) == 1 {
		r, _ := utf8.DecodeRune(tok)
		return r, ""
	}
	if r, ok := namedChars[name]; ok {
		return r, ""
	}
	return charCode(tok, name)
}

// charCode decodes a character literal's token that gives the character's code, uXXXX or
// oNNN (name is tok as a string).
func charCode(tok []byte, name string) (rune, string) {
	switch {
	case len(tok) == 5 && tok[0] == 'u':
		r, ok := jsonscan.Hex4(tok[1:])
		if !ok {
			return 0, fmt.Sprintf("invalid character \\%s: expected \\uXXXX with four hex digits", name)
		}
		return r, ""
	case len(tok) >= 2 && len(tok) <= 4 && tok[0] == 'o':
		if octalDigits(tok[1:]) != len(tok)-1 {
			return 0, fmt.Sprintf("invalid character \\%s: expected \\oNNN with octal digits", name)
		}
		r := octal(tok[1:])
		if r > 0377 {
			return 0, fmt.Sprintf("invalid character \\%s: octal escapes go up to \\o377", name)
		}
		return r, ""
	}
	return 0, fmt.Sprintf("invalid character \\%s: expected a single character, \\newline, \\space, \\tab, \\return, \\formfeed, \\backspace, \\uXXXX or \\oNNN", name)
}
