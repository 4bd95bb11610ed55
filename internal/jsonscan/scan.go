// Package jsonscan is the hand-written JSON scanner, datum type, interning memo and string
// encoder shared by the readers and writers of JSON history formats (format/native,
// format/chronos).
//
// A [Scanner] works over one record held in memory (a line, or a buffered object) and never
// allocates on the hot path: strings without escapes are returned as sub-slices of the
// record. It parses only what the formats use: objects, arrays, strings, integers (no
// fractions), true, false and null; [Scanner.Skip] passes over any other JSON value.
//
// Methods return false after the first problem; [Scanner.Err] and [Scanner.At] then say
// what was expected and where (a byte index in the record), for the reader to wrap with
// file, line and offset. [Scanner.HitEnd] says whether the scanner looked past the end of
// the record, so a streaming reader can tell "malformed" from "read more input and retry".
//
// # Local names
//
//	s Scanner   d Datum   in Interner   b history.Builder
package jsonscan

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/isovet/isovet/history"
)

// Scanner scans one JSON record. B is the record and I the index of the next byte; readers
// read and advance them directly on their fast paths.
type Scanner struct {
	B []byte
	I int
	// Err is the first problem, at byte index At of B.
	Err error
	At  int
	// HitEnd is set when the scanner looked past the end of B: the record may continue in
	// input not yet read.
	HitEnd bool
	// End names the end of B in messages ("found end of line"); "" means "end of input".
	End string
}

// Reset starts scanning b at index i, keeping End.
func (s *Scanner) Reset(b []byte, i int) { s.B, s.I, s.Err, s.At, s.HitEnd = b, i, nil, 0, false }

// Failf records the first problem at byte index at and returns false.
func (s *Scanner) Failf(at int, format string, args ...any) bool {
	if s.Err == nil {
		s.Err, s.At = fmt.Errorf(format, args...), at
	}
	return false
}

// Found describes the input at i for an error message ("a string", "end of line", ...).
func (s *Scanner) Found(i int) string {
	if i < len(s.B) {
		return found[s.B[i]]
	}
	if s.End != "" {
		return s.End
	}
	return "end of input"
}

// found describes each byte for Found: the kind of value it starts, else the byte.
var found = func() (t [256]string) {
	for c := range 256 {
		switch {
		case startsNumber(byte(c)):
			t[c] = "a number"
		case c >= 0x20 && c < 0x7f:
			t[c] = fmt.Sprintf("%q", byte(c))
		default:
			t[c] = fmt.Sprintf("byte 0x%02x", byte(c))
		}
	}
	t['"'], t['{'], t['['] = "a string", "an object", "an array"
	t['n'], t['t'], t['f'] = "null", "a boolean", "a boolean"
	return t
}()

// startsNumber reports whether c starts a JSON number: '-' or a digit.
func startsNumber(c byte) bool { return c == '-' || c >= '0' && c <= '9' }

// WS skips white space.
func (s *Scanner) WS() {
	for s.I < len(s.B) {
		switch s.B[s.I] {
		case ' ', '\t', '\r', '\n':
			s.I++
		default:
			return
		}
	}
	s.HitEnd = true
}

// Peek skips white space and returns the next byte, or 0 at the end.
func (s *Scanner) Peek() byte {
	if s.I < len(s.B) {
		if c := s.B[s.I]; c > ' ' {
			return c
		}
	}
	s.WS()
	if s.I < len(s.B) {
		return s.B[s.I]
	}
	return 0
}

// Expect skips white space and consumes c; what names it in the error.
func (s *Scanner) Expect(c byte, what string) bool {
	if s.Peek() == c {
		s.I++
		return true
	}
	return s.Failf(s.I, "expected %s, found %s", what, s.Found(s.I))
}

// More is called after an element of an array or object: it consumes ',' and returns true,
// or consumes the closing byte and returns false. ok is false on a syntax error.
func (s *Scanner) More(closing byte, what string) (more, ok bool) {
	switch s.Peek() {
	case ',':
		s.I++
		return true, true
	case closing:
		s.I++
		return false, true
	}
	return false, s.Failf(s.I, "expected ',' or '%c' %s, found %s", closing, what, s.Found(s.I))
}

// Str parses a string. The result aliases B unless the string has escapes.
func (s *Scanner) Str(what string) ([]byte, bool) {
	if s.Peek() != '"' {
		return nil, s.Failf(s.I, "expected %s, found %s", what, s.Found(s.I))
	}
	start := s.I
	s.I++
	j := s.I
	ascii := true
	for j < len(s.B) {
		c := s.B[j]
		if c == '"' {
			out := s.B[s.I:j]
			if !ascii && !utf8.Valid(out) {
				return nil, s.Failf(start, "invalid UTF-8 in string")
			}
			s.I = j + 1
			return out, true
		}
		if c == '\\' {
			return s.strEscaped(start)
		}
		if c < 0x20 {
			return nil, s.Failf(j, "control character 0x%02x in string (escape it)", c)
		}
		if c >= 0x80 {
			ascii = false
		}
		j++
	}
	s.HitEnd = true
	return nil, s.Failf(start, "unterminated string")
}

func (s *Scanner) strEscaped(start int) ([]byte, bool) {
	out := make([]byte, 0, 16)
	j := start + 1
	for j < len(s.B) {
		c := s.B[j]
		switch {
		case c == '"':
			if !utf8.Valid(out) {
				return nil, s.Failf(start, "invalid UTF-8 in string")
			}
			s.I = j + 1
			return out, true
		case c < 0x20:
			return nil, s.Failf(j, "control character 0x%02x in string (escape it)", c)
		case c != '\\':
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(s.B) {
			break
		}
		if j+12 > len(s.B) {
			s.HitEnd = true // an escape may continue past the end
		}
		var ok bool
		if out, j, ok = s.escape(out, j); !ok {
			return nil, false
		}
	}
	s.HitEnd = true
	return nil, s.Failf(start, "unterminated string")
}

// escapes maps the byte after a backslash to the byte it stands for, 0 for \u and for
// bytes that are not escapes.
var escapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// escape appends the character of the escape whose backslash is at j (j+1 < len(s.B)) and
// returns the index after the escape.
func (s *Scanner) escape(out []byte, j int) ([]byte, int, bool) {
	e := s.B[j+1]
	j += 2
	if b := escapes[e]; b != 0 {
		return append(out, b), j, true
	}
	if e != 'u' {
		return nil, j, s.Failf(j-2, "invalid escape '\\%c' in string", e)
	}
	r, ok := Hex4(s.B[min(j, len(s.B)):])
	if !ok {
		return nil, j, s.Failf(j-2, `expected four hex digits after \u`)
	}
	j += 4
	if utf16.IsSurrogate(r) {
		dec, ok := lowSurrogate(r, s.B[j:])
		if !ok {
			return nil, j, s.Failf(j-6, `unpaired surrogate \u%04x in string`, r)
		}
		r, j = dec, j+6
	}
	return utf8.AppendRune(out, r), j, true
}

// lowSurrogate decodes the surrogate r and the \uXXXX escape of its pair at the start of
// b; false if b has no such escape or the two are not a pair.
func lowSurrogate(r rune, b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	r2, ok := Hex4(b[2:])
	dec := utf16.DecodeRune(r, r2)
	return dec, ok && dec != utf8.RuneError
}

// Hex4 parses the four hex digits at the start of b.
func Hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		v := hexValues[c]
		if v < 0 {
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

// hexValues maps hex digits to their values, other bytes to -1.
var hexValues = func() (t [256]int8) {
	for c := range t {
		t[c] = -1
	}
	for i, c := range "0123456789abcdef" {
		t[c] = int8(i)
	}
	for i, c := range "ABCDEF" {
		t[c] = int8(10 + i)
	}
	return t
}()

// Int parses a JSON integer that fits in int64.
func (s *Scanner) Int(what string) (int64, bool) {
	if !startsNumber(s.Peek()) {
		return 0, s.Failf(s.I, "expected %s, found %s", what, s.Found(s.I))
	}
	return s.Number(what)
}

// Number parses an integer at I, which holds '-' or a digit.
func (s *Scanner) Number(what string) (int64, bool) {
	start := s.I
	neg := s.B[start] == '-'
	d0 := start
	if neg {
		d0++
	}
	u, j, over := decimal(s.B, d0)
	if over {
		return 0, s.Failf(start, "%s is out of the 64-bit integer range", what)
	}
	if j == len(s.B) {
		s.HitEnd = true
	}
	if !s.checkNumber(start, d0, j, neg, u, what) {
		return 0, false
	}
	s.I = j
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}

// decimal reads the digits at b[i:] and returns their value and the index after them;
// over is set (and the reading stops) when the value would pass 1<<63.
func decimal(b []byte, i int) (u uint64, j int, over bool) {
	for j = i; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
		if u > (1<<63)/10 {
			return u, j, true
		}
		u = u*10 + uint64(b[j]-'0')
	}
	return u, j, false
}

// checkNumber checks the integer at B[start:j] with digits from d0 and value u (negative
// if neg): it has digits, no leading zero, no fraction or exponent, and fits in int64.
func (s *Scanner) checkNumber(start, d0, j int, neg bool, u uint64, what string) bool {
	switch {
	case j == d0:
		return s.Failf(start, "expected %s, found %s", what, s.Found(start))
	case j-d0 > 1 && s.B[d0] == '0':
		return s.Failf(start, "expected %s without leading zeros", what)
	case j < len(s.B) && fractionByte[s.B[j]]:
		return s.Failf(start, "expected %s (an integer), found a fraction or exponent", what)
	case neg && u > 1<<63, !neg && u > 1<<63-1:
		return s.Failf(start, "%s is out of the 64-bit integer range", what)
	}
	return true
}

// fractionByte marks the bytes that start a number's fraction or exponent.
var fractionByte = [256]bool{'.': true, 'e': true, 'E': true}

// FastInt parses an integer at b[i:] that cannot overflow (at most 18 digits, or 19 with a
// leading digit up to 8, as nanosecond timestamps have) and returns it with the index after
// it. It returns false for anything else (no digits, leading zeros, larger numbers), leaving
// the input to [Scanner.Number] to parse or report. Fast paths use it on compact records.
func FastInt(b []byte, i int) (int64, int, bool) {
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	start := i
	var u int64
	// Eight bytes at a time: a word-wide test finds how many of them are digits (all
	// eight, or those before the first other byte), which three multiply-and-mask steps
	// then convert. Short keys and values take one step, timestamps three.
	for i+8 <= len(b) {
		w := binary.LittleEndian.Uint64(b[i:])
		// A byte is a digit iff its high nibble is 3, also after adding 6; bytes after the
		// first non-digit may be misjudged (a carry), which does not matter.
		other := (w&0xF0F0F0F0F0F0F0F0 ^ 0x3030303030303030) | ((w+0x0606060606060606)&0xF0F0F0F0F0F0F0F0 ^ 0x3030303030303030)
		n := 8
		w -= 0x3030303030303030
		if other != 0 {
			n = bits.TrailingZeros64(other) >> 3
			if n == 0 {
				break
			}
			w <<= uint(8-n) * 8 // the n digits become the low end of eight, after zeros
		}
		w = (w*10 + w>>8) & 0x00FF00FF00FF00FF
		w = (w*100 + w>>16) & 0x0000FFFF0000FFFF
		w = (w*10000 + w>>32) & 0x00000000FFFFFFFF
		u = u*pow10[n] + int64(w)
		i += n
		if n < 8 {
			return fastIntEnd(b, start, i, u, neg)
		}
		if i-start > 19 {
			return 0, i, false
		}
	}
	for i < len(b) && b[i] >= '0' && b[i] <= '9' && i-start <= 19 {
		u = u*10 + int64(b[i]-'0')
		i++
	}
	return fastIntEnd(b, start, i, u, neg)
}

var pow10 = [9]int64{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000}

// fastIntEnd checks the n = i-start digits FastInt read, whose value (if they fit) is u.
func fastIntEnd(b []byte, start, i int, u int64, neg bool) (int64, int, bool) {
	n := i - start
	if n == 0 || n > 19 || n == 19 && b[start] > '8' || n > 1 && b[start] == '0' {
		return 0, i, false
	}
	if neg {
		u = -u
	}
	return u, i, true
}

// Lit consumes the literal word w if it is next (no white space is skipped).
func (s *Scanner) Lit(w string) bool {
	if len(s.B)-s.I >= len(w) && string(s.B[s.I:s.I+len(w)]) == w {
		s.I += len(w)
		return true
	}
	if len(s.B)-s.I < len(w) {
		s.HitEnd = true
	}
	return false
}

// Boolean parses true or false.
func (s *Scanner) Boolean(what string) (bool, bool) {
	s.WS()
	switch {
	case s.Lit("true"):
		return true, true
	case s.Lit("false"):
		return false, true
	}
	return false, s.Failf(s.I, "expected %s (true or false), found %s", what, s.Found(s.I))
}

// Pair parses [a, b] of integers.
func (s *Scanner) Pair(what string) (a, b int64, ok bool) {
	if s.Peek() != '[' {
		return 0, 0, s.Expect('[', what+" ([a, b])")
	}
	if a, b, j, ok := FastPair(s.B, s.I); ok { // the compact form [a,b]
		s.I = j
		return a, b, true
	}
	s.I++
	if a, ok = s.pairElem(what, "first"); !ok {
		return 0, 0, false
	}
	if !s.Expect(',', "',' and a second element of "+what) {
		return 0, 0, false
	}
	if b, ok = s.pairElem(what, "second"); !ok {
		return 0, 0, false
	}
	if !s.Expect(']', "']' closing "+what+" (two elements)") {
		return 0, 0, false
	}
	return a, b, true
}

// pairElem parses the nth element of the pair what.
func (s *Scanner) pairElem(what, nth string) (int64, bool) {
	if !startsNumber(s.Peek()) {
		return 0, s.Failf(s.I, "expected %s %s element (an integer), found %s", what, nth, s.Found(s.I))
	}
	return s.Number("an integer")
}

// FastPair parses the compact pair [a,b] at b[i] with [FastInt] and returns the index
// after it; it returns false for anything else.
func FastPair(b []byte, i int) (x, y int64, j int, ok bool) {
	if i >= len(b) || b[i] != '[' {
		return 0, 0, i, false
	}
	if x, j, ok = FastInt(b, i+1); !ok || j >= len(b) || b[j] != ',' {
		return 0, 0, i, false
	}
	if y, j, ok = FastInt(b, j+1); !ok || j >= len(b) || b[j] != ']' {
		return 0, 0, i, false
	}
	return x, y, j + 1, true
}

// AtEnd reports whether only white space remains.
func (s *Scanner) AtEnd() bool {
	s.WS()
	return s.I >= len(s.B)
}

// IntLoose parses an integer written as a JSON number or as a string of digits (Chronos
// writers emit both, e.g. "p": "320316486").
func (s *Scanner) IntLoose(what string) (int64, bool) {
	if s.Peek() != '"' {
		return s.Int(what)
	}
	at := s.I
	v, ok := s.Str(what)
	if !ok {
		return 0, false
	}
	sub := Scanner{B: v}
	n, ok := sub.Int(what)
	if !ok || sub.I != len(v) {
		return 0, s.Failf(at, "expected %s (an integer or a string of digits), found %q", what, v)
	}
	return n, true
}

// Skip skips one JSON value of any type (for keys a reader does not use).
func (s *Scanner) Skip() bool {
	switch c := s.Peek(); {
	case c == '"':
		_, ok := s.Str("a string")
		return ok
	case c == '{':
		return s.skipItems('}', true)
	case c == '[':
		return s.skipItems(']', false)
	case startsNumber(c):
		return s.skipNumber()
	case literals[c] != "":
		return s.Lit(literals[c]) || s.failValue()
	}
	return s.failValue()
}

// literals are the JSON literals by their first byte.
var literals = [256]string{'t': "true", 'f': "false", 'n': "null"}

func (s *Scanner) failValue() bool {
	return s.Failf(s.I, "expected a value, found %s", s.Found(s.I))
}

// skipItems skips an object's members (keyed) or an array's elements up to and including
// closing; the opening bracket is at s.I.
func (s *Scanner) skipItems(closing byte, keyed bool) bool {
	s.I++
	if s.eat(closing) {
		return true
	}
	for {
		if keyed {
			if _, ok := s.key(); !ok {
				return false
			}
		}
		if !s.Skip() {
			return false
		}
		more, ok := s.More(closing, "in a value")
		if !more || !ok {
			return ok
		}
	}
}

// numberByte marks the bytes Skip takes as part of a number.
var numberByte = func() (t [256]bool) {
	for _, c := range "-+.eE0123456789" {
		t[c] = true
	}
	return t
}()

// skipNumber skips the run of number bytes at s.I; it fails if there is none.
func (s *Scanner) skipNumber() bool {
	start := s.I
	for s.I < len(s.B) && numberByte[s.B[s.I]] {
		s.I++
	}
	if s.I == len(s.B) {
		s.HitEnd = true
	}
	return s.I > start
}

// Object parses {"k": v, ...}, calling f with the scanner positioned at each value; kstart
// is the index of the key, for errors about it.
func (s *Scanner) Object(what string, f func(k []byte, kstart int) bool) bool {
	if !s.Expect('{', what) {
		return false
	}
	if s.eat('}') {
		return true
	}
	for {
		kstart := s.I
		k, ok := s.key()
		if !ok || !f(k, kstart) {
			return false
		}
		if more, ok := s.More('}', "in object"); !more || !ok {
			return ok
		}
	}
}

// key parses an object's key and the ':' after it.
func (s *Scanner) key() ([]byte, bool) {
	k, ok := s.Str("a key (a quoted string)")
	return k, ok && s.Expect(':', "':' after key")
}

// eat consumes c if it comes next, after white space, and reports whether it did.
func (s *Scanner) eat(c byte) bool {
	if s.Peek() == c {
		s.I++
		return true
	}
	return false
}

// Array parses [e, ...], calling elem with the scanner at each element; what names the
// array in errors and in where the separators are expected (e.g. "in the ops array").
func (s *Scanner) Array(what, in string, elem func() bool) bool {
	if !s.Expect('[', what) {
		return false
	}
	if s.eat(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if more, ok := s.More(']', in); !more || !ok {
			return ok
		}
	}
}

// Datum is a key, value or identifier as parsed, before interning. S aliases the record.
type Datum struct {
	Kind history.DatumKind
	I    int64
	S    []byte
}

// IntDatum returns the integer datum i.
func IntDatum(i int64) Datum { return Datum{Kind: history.DatumInt, I: i} }

// Datum returns d as a [history.Datum] (copying a string).
func (d Datum) Datum() history.Datum {
	switch d.Kind {
	case history.DatumInt:
		return history.Int(d.I)
	case history.DatumStr:
		return history.Str(string(d.S))
	}
	return history.NilDatum
}

// Datum parses an integer, a string or null.
func (s *Scanner) Datum(what string) (Datum, bool) {
	switch c := s.Peek(); {
	case c == '"':
		b, ok := s.Str(what)
		return Datum{Kind: history.DatumStr, S: b}, ok
	case startsNumber(c):
		i, ok := s.Number(what)
		return Datum{Kind: history.DatumInt, I: i}, ok
	case c == 'n':
		if s.Lit("null") {
			return Datum{}, true
		}
	}
	return Datum{}, s.Failf(s.I, "expected %s (an integer, a string or null), found %s", what, s.Found(s.I))
}

// Key parses a key: an integer or a string (not null).
func (s *Scanner) Key(what string) (Datum, bool) {
	s.WS()
	at := s.I
	d, ok := s.Datum(what)
	if ok && d.Kind == history.DatumNil {
		return d, s.Failf(at, "expected %s (an integer or a string), found null", what)
	}
	return d, ok
}

// List parses an array of datums, appending them to dst.
func (s *Scanner) List(dst []Datum, what string) ([]Datum, bool) {
	ok := s.Array(what, "in the list", func() bool {
		v, ok := s.Datum("a list element")
		if ok {
			dst = append(dst, v)
		}
		return ok
	})
	return dst, ok
}
