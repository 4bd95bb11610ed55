package edn

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Kind is the type of a [Value].
type Kind uint8

// Value kinds. The zero Kind is Invalid.
const (
	Invalid Kind = iota
	Nil
	Bool    // Int is 1 for true, 0 for false
	Int     // Int holds the value
	BigInt  // Str holds the decimal digits (with a leading '-' when negative), no N suffix
	Float   // Float holds the value
	BigDec  // Str holds the literal without its M suffix
	Ratio   // Str holds the literal, e.g. "1/2"
	Char    // Int holds the rune
	String  // Str holds the decoded contents
	Keyword // Str holds the text including the leading colon, e.g. ":type"
	Symbol  // Str holds the text
	List    // Items holds the elements
	Vector  // Items holds the elements
	Map     // Items holds keys and values alternately: k0, v0, k1, v1, ...
	Set     // Items holds the elements
	Tagged  // Str holds the tag without '#', Items[0] the tagged value
)

var kindNames = [...]string{"invalid", "nil", "boolean", "integer", "big integer", "float", "big decimal", "ratio", "character", "string", "keyword", "symbol", "list", "vector", "map", "set", "tagged literal"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

// IsColl reports whether values of kind k hold Items.
func (k Kind) IsColl() bool { return k >= List }

// Pos is a position in the input: the byte offset (0-based), the line (1-based) and the
// column (1-based, counted in bytes).
type Pos struct {
	Offset int64
	Line   int32
	Col    int32
}

// Value is one decoded form. Which fields are meaningful depends on Kind (see the Kind
// constants). Items of a value returned by a decoder with [Options.Reuse] are valid only
// until the decoder's next call.
type Value struct {
	Kind  Kind
	Pos   Pos
	Int   int64
	Float float64
	Str   string
	Items []Value
}

// Len returns the number of entries of a map, or of elements of another collection.
func (v Value) Len() int {
	if v.Kind == Map {
		return len(v.Items) / 2
	}
	return len(v.Items)
}

// String renders v as EDN.
func (v Value) String() string { return string(Append(nil, v)) }

// Append appends v printed as EDN to dst and returns the extended slice. Decoding the output
// gives back v (positions aside; a float prints in the shortest form that reads back exactly).
func Append(dst []byte, v Value) []byte {
	switch v.Kind {
	case Bool:
		return strconv.AppendBool(dst, v.Int != 0)
	case Int:
		return strconv.AppendInt(dst, v.Int, 10)
	case BigInt, BigDec, Ratio, Keyword, Symbol:
		return append(append(dst, v.Str...), textSuffixes[v.Kind]...)
	case Float:
		return appendFloat(dst, v.Float)
	case Char:
		return appendChar(dst, rune(v.Int))
	case String:
		return AppendString(dst, v.Str)
	case List, Vector, Set:
		b := brackets[v.Kind]
		return appendItems(append(dst, b.open...), v.Items, ' ', b.close)
	case Map:
		return appendMap(dst, v.Items)
	case Tagged:
		return appendTagged(dst, v)
	}
	return append(dst, "nil"...)
}

// textSuffixes are what follows the text (Str) of the kinds Append writes as text: N
// after a big integer's digits, M after a big decimal's.
var textSuffixes = [...]string{BigInt: "N", BigDec: "M", Ratio: "", Keyword: "", Symbol: ""}

// brackets are the opening and closing brackets of the sequences and sets.
var brackets = [...]struct {
	open  string
	close byte
}{List: {"(", ')'}, Vector: {"[", ']'}, Set: {"#{", '}'}}

// appendMap appends a map's keys and values, items.
func appendMap(dst []byte, items []Value) []byte {
	dst = append(dst, '{')
	for i := 0; i+1 < len(items); i += 2 {
		if i > 0 {
			dst = append(dst, ',', ' ')
		}
		dst = Append(dst, items[i])
		dst = append(dst, ' ')
		dst = Append(dst, items[i+1])
	}
	return append(dst, '}')
}

// appendTagged appends a tagged literal, #tag value (nil if it has none).
func appendTagged(dst []byte, v Value) []byte {
	dst = append(dst, '#')
	dst = append(dst, v.Str...)
	dst = append(dst, ' ')
	if len(v.Items) > 0 {
		return Append(dst, v.Items[0])
	}
	return append(dst, "nil"...)
}

func appendItems(dst []byte, items []Value, sep, closer byte) []byte {
	for i, it := range items {
		if i > 0 {
			dst = append(dst, sep)
		}
		dst = Append(dst, it)
	}
	return append(dst, closer)
}

func appendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "##NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "##Inf"...)
	case math.IsInf(f, -1):
		return append(dst, "##-Inf"...)
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'g', -1, 64)
	for _, c := range dst[start:] {
		if c == '.' || c == 'e' || c == 'E' {
			return dst
		}
	}
	return append(dst, '.', '0')
}

var charNames = map[rune]string{'\n': "newline", ' ': "space", '\t': "tab", '\r': "return", '\f': "formfeed", '\b': "backspace"}

func appendChar(dst []byte, r rune) []byte {
	dst = append(dst, '\\')
	if n, ok := charNames[r]; ok {
		return append(dst, n...)
	}
	// A comma is whitespace in EDN, so \, would not read back: spell it \u002c.
	if r > ' ' && r < utf8.RuneSelf && r != 0x7f && r != ',' {
		return append(dst, byte(r))
	}
	return appendU4(append(dst, 'u'), r)
}

func appendU4(dst []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	if r > 0xffff || r < 0 {
		r = utf8.RuneError
	}
	return append(dst, hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}

// AppendString appends s as a quoted EDN string literal (also valid JSON when s is valid
// UTF-8). Control characters are escaped; other bytes are copied as they are.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !escaped[c] {
			continue
		}
		dst = append(dst, s[start:i]...)
		if e := shortEscapes[c]; e != "" {
			dst = append(dst, e...)
		} else {
			dst = appendU4(append(dst, '\\', 'u'), rune(c))
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// escaped marks the bytes AppendString escapes: the quote, the backslash and the control
// characters.
var escaped = func() (t [256]bool) {
	for c := range ' ' {
		t[c] = true
	}
	t['"'], t['\\'], t[0x7f] = true, true, true
	return t
}()

// shortEscapes are the escapes of the bytes with a one-letter escape; the other escaped
// bytes are written \uXXXX.
var shortEscapes = [256]string{'"': `\"`, '\\': `\\`, '\n': `\n`, '\t': `\t`, '\r': `\r`}
