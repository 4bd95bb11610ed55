package history

import (
	"fmt"
	"strconv"
	"strings"
)

// DatumKind is the type of an original key, value or identifier.
type DatumKind uint8

// Datum kinds. The zero Datum is [DatumNil].
const (
	DatumNil DatumKind = iota
	DatumInt
	DatumStr
)

// Datum is an original key, value or identifier as the source wrote it: nil, an integer or a
// string (keywords and symbols keep their text, e.g. ":x"). Datums are comparable.
type Datum struct {
	kind DatumKind
	i    int64
	s    string
}

// Int returns the integer datum i.
func Int(i int64) Datum { return Datum{kind: DatumInt, i: i} }

// Str returns the string datum s.
func Str(s string) Datum { return Datum{kind: DatumStr, s: s} }

// NilDatum is the absent value.
var NilDatum = Datum{}

// Kind reports the datum's type.
func (d Datum) Kind() DatumKind { return d.kind }

// IsNil reports whether d is the absent value.
func (d Datum) IsNil() bool { return d.kind == DatumNil }

// Int returns the integer and whether d is one.
func (d Datum) Int() (int64, bool) { return d.i, d.kind == DatumInt }

// Str returns the string and whether d is one.
func (d Datum) Str() (string, bool) { return d.s, d.kind == DatumStr }

// String renders d for people: nil, 42, or the string itself.
func (d Datum) String() string {
	switch d.kind {
	case DatumInt:
		return strconv.FormatInt(d.i, 10)
	case DatumStr:
		return d.s
	default:
		return "nil"
	}
}

// KV renders key k holding value v as reports write it: "x=3", or, for a row image,
// "101=(v1=0,v2=16,w=83)" ([ShowValue]).
func KV(k, v Datum) string { return k.String() + "=" + ShowValue(v) }

// ShowValue renders a value as reports write it. A value that is itself a list of columns
// (a row image such as "v1=0,v2=16,w=83", or Vbox's "<field>=<value>") is put in
// parentheses, so that a row's key stands apart from its columns ("101=(v1=0,v2=16,w=83)",
// "ins(101,(v1=0,v2=16,w=83))"); anything else is its String.
func ShowValue(v Datum) string {
	if v.kind == DatumStr && strings.Contains(v.s, "=") {
		return "(" + v.s + ")"
	}
	return v.String()
}

// GoString renders d unambiguously (strings quoted).
func (d Datum) GoString() string {
	if d.kind == DatumStr {
		return strconv.Quote(d.s)
	}
	return d.String()
}

// Compare orders datums: nil < integers < strings, integers numerically, strings bytewise.
func (d Datum) Compare(e Datum) int {
	if d.kind != e.kind {
		if d.kind < e.kind {
			return -1
		}
		return 1
	}
	switch d.kind {
	case DatumInt:
		switch {
		case d.i < e.i:
			return -1
		case d.i > e.i:
			return 1
		}
	case DatumStr:
		switch {
		case d.s < e.s:
			return -1
		case d.s > e.s:
			return 1
		}
	}
	return 0
}

// Format implements fmt.Formatter so %v prints String and %#v GoString.
func (d Datum) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, d.GoString())
		return
	}
	fmt.Fprint(f, d.String())
}
