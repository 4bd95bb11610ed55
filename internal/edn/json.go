package edn

import (
	"errors"
	"strconv"
)

// jsonValue parses one JSON value starting at the next non-space byte.
func (d *Decoder) jsonValue(depth int) (Value, error) {
	d.skipJSONSpace()
	p := d.Pos()
	if d.p >= d.n && !d.fill() {
		if err := d.readErr(); err != nil {
			return Value{}, err
		}
		return Value{}, d.truncated(p, "expected a JSON value")
	}
	c := d.buf[d.p]
	switch {
	case c == '{':
		d.p++
		return d.jsonObject(p, depth)
	case c == '[':
		d.p++
		return d.jsonArray(p, depth)
	case c == '"':
		s, err := d.str(p)
		return Value{Kind: String, Pos: p, Str: s}, err
	case c == '-' || c >= '0' && c <= '9':
		return d.jsonNumber(p)
	case c >= 'a' && c <= 'z':
		return d.jsonWord(p)
	}
	return Value{}, d.Errorf(p, "unexpected %s: expected a JSON value (object, array, string, number, true, false or null)", quoteByte(c))
}

// jsonWords are the JSON literals.
var jsonWords = map[string]Value{"null": {Kind: Nil}, "true": {Kind: Bool, Int: 1}, "false": {Kind: Bool}}

// jsonWord parses the word at d.p, a JSON literal.
func (d *Decoder) jsonWord(p Pos) (Value, error) {
	n := d.token(0)
	tok := d.buf[d.p : d.p+n]
	v, ok := jsonWords[string(tok)]
	if !ok {
		return Value{}, d.Errorf(p, "unexpected %q: expected a JSON value (object, array, string, number, true, false or null)", tok)
	}
	v.Pos = p
	d.p += n
	return v, nil
}

// jsonNumber parses the JSON number token at d.p.
func (d *Decoder) jsonNumber(p Pos) (Value, error) {
	n := d.token(0)
	tok := d.buf[d.p : d.p+n]
	if i, ok := smallInt(tok); ok && tok[0] != '+' {
		d.p += n
		return Value{Kind: Int, Pos: p, Int: i}, nil
	}
	v, err := parseJSONNumber(tok)
	if err != nil {
		return Value{}, d.Errorf(p, "invalid number %q: %v", tok, err)
	}
	v.Pos = p
	d.p += n
	return v, nil
}

func (d *Decoder) jsonPeek() (byte, bool) {
	if d.p < d.n && d.buf[d.p] > ' ' { // the common case, inlined
		return d.buf[d.p], true
	}
	return d.jsonPeekSlow()
}

func (d *Decoder) jsonPeekSlow() (byte, bool) {
	d.skipJSONSpace()
	if d.p >= d.n && !d.fill() {
		return 0, false
	}
	return d.buf[d.p], true
}

func (d *Decoder) jsonEOF(open Pos, closer byte, what string) error {
	if err := d.readErr(); err != nil {
		return err
	}
	return d.truncated(d.Pos(), "expected %q to close the %s opened at line %d, column %d", closer, what, open.Line, open.Col)
}

// jsonFast pushes the value starting with c at d.p onto d.stack if it is a string, a small
// unsigned integer or null whose delimiter is in the buffer (the common elements of Jepsen
// histories), as jsonValue would parse it, and reports whether it did.
func (d *Decoder) jsonFast(c byte) (bool, error) {
	switch {
	case c == '"':
		p := d.Pos()
		str, err := d.str(p)
		if err != nil {
			return false, err
		}
		v := d.push()
		v.Kind, v.Pos, v.Str = String, p, str
		return true, nil
	case c >= '0' && c <= '9':
		if n, i, ok := d.scanInt(); ok {
			v := d.push()
			v.Kind, v.Pos, v.Int = Int, d.Pos(), n
			d.p += i
			return true, nil
		}
	case c == 'n':
		if d.wordAt("null") {
			v := d.push()
			v.Kind, v.Pos = Nil, d.Pos()
			d.p += 4
			return true, nil
		}
	}
	return false, nil
}

func (d *Decoder) jsonArray(p Pos, depth int) (Value, error) {
	if depth >= d.opts.MaxDepth {
		return Value{}, d.Errorf(p, "arrays and objects nested deeper than %d", d.opts.MaxDepth)
	}
	start := len(d.stack)
	defer func() { d.stack = d.stack[:start] }()
	for first := true; ; first = false {
		c, ok := d.jsonPeek()
		if !ok {
			return Value{}, d.jsonEOF(p, ']', "array")
		}
		if c == ']' && first {
			d.p++
			break
		}
		if c == '[' { // a nested array (a micro-op), as jsonValue would parse it
			ap := d.Pos()
			d.p++
			v, err := d.jsonArray(ap, depth+1)
			if err != nil {
				return Value{}, err
			}
			d.stack = append(d.stack, v)
		} else if ok, err := d.jsonFast(c); err != nil {
			return Value{}, err
		} else if !ok {
			v, err := d.jsonValue(depth + 1)
			if err != nil {
				return Value{}, err
			}
			d.stack = append(d.stack, v)
		}
		c, ok = d.jsonPeek()
		if !ok {
			return Value{}, d.jsonEOF(p, ']', "array")
		}
		d.p++
		if c == ']' {
			break
		}
		if c != ',' {
			d.p--
			return Value{}, d.Errorf(d.Pos(), "unexpected %s: expected ',' or ']' after an element of the array opened at line %d, column %d", quoteByte(c), p.Line, p.Col)
		}
	}
	items := d.alloc(len(d.stack) - start)
	copy(items, d.stack[start:])
	return Value{Kind: Vector, Pos: p, Items: items}, nil
}

func (d *Decoder) jsonObject(p Pos, depth int) (Value, error) {
	if depth >= d.opts.MaxDepth {
		return Value{}, d.Errorf(p, "arrays and objects nested deeper than %d", d.opts.MaxDepth)
	}
	start := len(d.stack)
	defer func() { d.stack = d.stack[:start] }()
	for first := true; ; first = false {
		c, ok := d.jsonPeek()
		if !ok {
			return Value{}, d.jsonEOF(p, '}', "object")
		}
		if c == '}' && first {
			d.p++
			break
		}
		kp := d.Pos()
		if c != '"' {
			return Value{}, d.Errorf(kp, "unexpected %s: expected a string key in the object opened at line %d, column %d", quoteByte(c), p.Line, p.Col)
		}
		k, err := d.str(kp)
		if err != nil {
			return Value{}, err
		}
		kv := d.push()
		kv.Kind, kv.Pos, kv.Str = String, kp, k
		c, ok = d.jsonPeek()
		if !ok {
			return Value{}, d.jsonEOF(p, '}', "object")
		}
		if c != ':' {
			return Value{}, d.Errorf(d.Pos(), "unexpected %s: expected ':' after the key %q", quoteByte(c), k)
		}
		d.p++
		if c, ok := d.jsonPeek(); ok {
			if ok, err := d.jsonFast(c); err != nil {
				return Value{}, err
			} else if ok {
				goto next
			}
		}
		if v, err := d.jsonValue(depth + 1); err != nil {
			return Value{}, err
		} else {
			d.stack = append(d.stack, v)
		}
	next:
		c, ok = d.jsonPeek()
		if !ok {
			return Value{}, d.jsonEOF(p, '}', "object")
		}
		d.p++
		if c == '}' {
			break
		}
		if c != ',' {
			d.p--
			return Value{}, d.Errorf(d.Pos(), "unexpected %s: expected ',' or '}' after a member of the object opened at line %d, column %d", quoteByte(c), p.Line, p.Col)
		}
	}
	items := d.alloc(len(d.stack) - start)
	copy(items, d.stack[start:])
	return Value{Kind: Map, Pos: p, Items: items}, nil
}

var errJSONNum = errors.New("expected -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?")

// parseJSONNumber parses a JSON number: integers become Int (BigInt beyond int64), the rest
// Float.
func parseJSONNumber(tok []byte) (Value, error) {
	frac, exp, ok := jsonNumberShape(tok)
	if !ok {
		return Value{}, errJSONNum
	}
	if frac == 0 && exp == 0 {
		return integer(string(tok)), nil
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return Value{}, errJSONNum
	}
	return Value{Kind: Float, Float: f}, nil
}

// jsonNumberShape checks that tok is a JSON number and returns the lengths of its
// fraction and exponent (0 for none).
func jsonNumberShape(tok []byte) (frac, exp int, ok bool) {
	i := 0
	if i < len(tok) && tok[i] == '-' {
		i++
	}
	id := digits(tok[i:])
	if id == 0 || id > 1 && tok[i] == '0' {
		return 0, 0, false
	}
	i += id
	if frac, ok = jsonFraction(tok[i:]); !ok {
		return 0, 0, false
	}
	i += frac
	exp, ok = jsonExponent(tok[i:])
	return frac, exp, ok && i+exp == len(tok)
}

// jsonFraction returns the length of the fraction ('.' and digits) at the start of b, 0 if
// there is none; ok is false for a '.' without digits.
func jsonFraction(b []byte) (n int, ok bool) {
	if len(b) == 0 || b[0] != '.' {
		return 0, true
	}
	k := digits(b[1:])
	return 1 + k, k > 0
}

// jsonExponent returns the length of the exponent ([eE][+-]?digits) at the start of b, 0
// if there is none; ok is false for an exponent without digits.
func jsonExponent(b []byte) (n int, ok bool) {
	if len(b) == 0 || b[0] != 'e' && b[0] != 'E' {
		return 0, true
	}
	i := 1
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	k := digits(b[i:])
	return i + k, k > 0
}
