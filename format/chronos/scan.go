package chronos

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"isovet/history"
)

// scanner is a hand-written JSON scanner over one record (a line). It never allocates on
// the hot path: strings without escapes are returned as sub-slices of the record.
//
// Methods return false after the first problem; err and at then say what was expected
// and where (byte index in b).
type scanner struct {
	b   []byte
	i   int
	err error
	at  int
	// hitEnd is set when the scanner looked past the end of b: the record may continue in
	// input not yet read.
	hitEnd bool
}

func (s *scanner) reset(b []byte, i int) { s.b, s.i, s.err, s.at, s.hitEnd = b, i, nil, 0, false }

// failf records the first problem at byte index at.
func (s *scanner) failf(at int, format string, args ...any) bool {
	if s.err == nil {
		s.err, s.at = fmt.Errorf(format, args...), at
	}
	return false
}

// found describes the input at i for an error message.
func (s *scanner) found(i int) string {
	if i >= len(s.b) {
		return "end of input"
	}
	c := s.b[i]
	switch {
	case c == '"':
		return "a string"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	case c == 'n':
		return "null"
	case c == 't' || c == 'f':
		return "a boolean"
	case c >= 0x20 && c < 0x7f:
		return fmt.Sprintf("%q", c)
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
	s.hitEnd = true
}

// peek skips white space and returns the next byte, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// expect skips white space and consumes c.
func (s *scanner) expect(c byte, what string) bool {
	if s.peek() == c {
		s.i++
		return true
	}
	return s.failf(s.i, "expected %s, found %s", what, s.found(s.i))
}

// more is called after an element of an array or object: it consumes ',' and returns true,
// or consumes the closing byte and returns false. ok is false on a syntax error.
func (s *scanner) more(closing byte, what string) (more, ok bool) {
	switch s.peek() {
	case ',':
		s.i++
		return true, true
	case closing:
		s.i++
		return false, true
	}
	return false, s.failf(s.i, "expected ',' or '%c' %s, found %s", closing, what, s.found(s.i))
}

// str parses a string. The result aliases b unless the string has escapes.
func (s *scanner) str(what string) ([]byte, bool) {
	if s.peek() != '"' {
		return nil, s.failf(s.i, "expected %s, found %s", what, s.found(s.i))
	}
	start := s.i
	s.i++
	j := s.i
	ascii := true
	for j < len(s.b) {
		c := s.b[j]
		if c == '"' {
			out := s.b[s.i:j]
			if !ascii && !utf8.Valid(out) {
				return nil, s.failf(start, "invalid UTF-8 in string")
			}
			s.i = j + 1
			return out, true
		}
		if c == '\\' {
			return s.strEscaped(start)
		}
		if c < 0x20 {
			return nil, s.failf(j, "control character 0x%02x in string (escape it)", c)
		}
		if c >= 0x80 {
			ascii = false
		}
		j++
	}
	s.hitEnd = true
	return nil, s.failf(start, "unterminated string")
}

func (s *scanner) strEscaped(start int) ([]byte, bool) {
	out := make([]byte, 0, 16)
	j := start + 1
	for j < len(s.b) {
		c := s.b[j]
		switch {
		case c == '"':
			if !utf8.Valid(out) {
				return nil, s.failf(start, "invalid UTF-8 in string")
			}
			s.i = j + 1
			return out, true
		case c < 0x20:
			return nil, s.failf(j, "control character 0x%02x in string (escape it)", c)
		case c != '\\':
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(s.b) {
			break
		}
		if j+12 > len(s.b) {
			s.hitEnd = true // an escape may continue past the end
		}
		e := s.b[j+1]
		j += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(s.b, j)
			if !ok {
				return nil, s.failf(j-2, `expected four hex digits after \u`)
			}
			j += 4
			if utf16.IsSurrogate(r) {
				r2, ok := rune(-1), false
				if j+6 <= len(s.b) && s.b[j] == '\\' && s.b[j+1] == 'u' {
					r2, ok = hex4(s.b, j+2)
				}
				if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
					r = dec
					j += 6
				} else {
					return nil, s.failf(j-6, `unpaired surrogate \u%04x in string`, r)
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, s.failf(j-2, "invalid escape '\\%c' in string", e)
		}
	}
	s.hitEnd = true
	return nil, s.failf(start, "unterminated string")
}

func hex4(b []byte, j int) (rune, bool) {
	if j+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[j : j+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// int parses a JSON integer that fits in int64.
func (s *scanner) int(what string) (int64, bool) {
	c := s.peek()
	if c != '-' && (c < '0' || c > '9') {
		return 0, s.failf(s.i, "expected %s, found %s", what, s.found(s.i))
	}
	return s.number(what)
}

// number parses an integer at s.i (which holds '-' or a digit).
func (s *scanner) number(what string) (int64, bool) {
	start := s.i
	j := s.i
	neg := false
	if s.b[j] == '-' {
		neg = true
		j++
	}
	d0 := j
	var u uint64
	for j < len(s.b) {
		c := s.b[j]
		if c < '0' || c > '9' {
			break
		}
		if u > (1<<63)/10 {
			return 0, s.failf(start, "%s is out of the 64-bit integer range", what)
		}
		u = u*10 + uint64(c-'0')
		j++
	}
	if j == len(s.b) {
		s.hitEnd = true
	}
	switch {
	case j == d0:
		return 0, s.failf(start, "expected %s, found %s", what, s.found(start))
	case j-d0 > 1 && s.b[d0] == '0':
		return 0, s.failf(start, "expected %s without leading zeros", what)
	case j < len(s.b) && (s.b[j] == '.' || s.b[j] == 'e' || s.b[j] == 'E'):
		return 0, s.failf(start, "expected %s (an integer), found a fraction or exponent", what)
	case neg && u > 1<<63, !neg && u > 1<<63-1:
		return 0, s.failf(start, "%s is out of the 64-bit integer range", what)
	}
	s.i = j
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}

// datum is a key, value or identifier as parsed, before interning.
type datum struct {
	kind history.DatumKind
	i    int64
	s    []byte
}

func (d datum) datum() history.Datum {
	switch d.kind {
	case history.DatumInt:
		return history.Int(d.i)
	case history.DatumStr:
		return history.Str(string(d.s))
	}
	return history.NilDatum
}

// datum parses an integer, a string or null.
func (s *scanner) datum(what string) (datum, bool) {
	switch c := s.peek(); {
	case c == '"':
		b, ok := s.str(what)
		return datum{kind: history.DatumStr, s: b}, ok
	case c == '-' || c >= '0' && c <= '9':
		i, ok := s.number(what)
		return datum{kind: history.DatumInt, i: i}, ok
	case c == 'n':
		if s.lit("null") {
			return datum{}, true
		}
	}
	return datum{}, s.failf(s.i, "expected %s (an integer, a string or null), found %s", what, s.found(s.i))
}

// lit consumes the literal word w if it is next.
func (s *scanner) lit(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	if len(s.b)-s.i < len(w) {
		s.hitEnd = true
	}
	return false
}

// intLoose parses an integer written as a JSON number or as a string of digits (Chronos
// writers emit both, e.g. "p": "320316486").
func (s *scanner) intLoose(what string) (int64, bool) {
	if s.peek() != '"' {
		return s.int(what)
	}
	at := s.i
	v, ok := s.str(what)
	if !ok {
		return 0, false
	}
	sub := scanner{b: v}
	n, ok := sub.int(what)
	if !ok || sub.i != len(v) {
		return 0, s.failf(at, "expected %s (an integer or a string of digits), found %q", what, v)
	}
	return n, true
}

// skip skips one JSON value of any type (for keys this reader does not use).
func (s *scanner) skip() bool {
	switch c := s.peek(); {
	case c == '"':
		_, ok := s.str("a string")
		return ok
	case c == '{' || c == '[':
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		s.i++
		if s.peek() == closing {
			s.i++
			return true
		}
		for {
			if c == '{' {
				if _, ok := s.str("a key (a quoted string)"); !ok || !s.expect(':', "':' after key") {
					return false
				}
			}
			if !s.skip() {
				return false
			}
			more, ok := s.more(closing, "in a value")
			if !ok {
				return false
			}
			if !more {
				return true
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		start := s.i
		for s.i < len(s.b) && (s.b[s.i] == '-' || s.b[s.i] == '+' || s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E' || s.b[s.i] >= '0' && s.b[s.i] <= '9') {
			s.i++
		}
		if s.i == len(s.b) {
			s.hitEnd = true
		}
		return s.i > start
	case c == 't':
		return s.lit("true") || s.failf(s.i, "expected a value, found %s", s.found(s.i))
	case c == 'f':
		return s.lit("false") || s.failf(s.i, "expected a value, found %s", s.found(s.i))
	case c == 'n':
		return s.lit("null") || s.failf(s.i, "expected a value, found %s", s.found(s.i))
	}
	return s.failf(s.i, "expected a value, found %s", s.found(s.i))
}
