package elle

import (
	"bytes"
	"errors"
	"slices"
	"strconv"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/edn"
)

// ErrAmbiguousDatum: two keys (or two values) that Elle tells apart would be one datum in
// isovet, e.g. the string "[:anti 1]" and the vector [:anti 1], or the string ":x" and the
// keyword :x.
var ErrAmbiguousDatum = errors.New("two different EDN values share one rendering")

// class says which kind of EDN value a string datum was read from. A datum's text may come
// from one class only: keywords keep their colon and composite values render as EDN, so only
// a string whose contents look like another kind's rendering can collide.
type class uint8

const (
	classNone class = iota
	classString
	classKeyword
	classSymbol
	classOther // everything else: rendered canonically by appendCanon
)

func (c class) String() string {
	switch c {
	case classString:
		return "a string"
	case classKeyword:
		return "a keyword"
	case classSymbol:
		return "a symbol"
	}
	return "a composite value"
}

func classOf(k edn.Kind) class {
	switch k {
	case edn.String:
		return classString
	case edn.Keyword:
		return classKeyword
	case edn.Symbol:
		return classSymbol
	}
	return classOther
}

// classes records the class of each interned datum (indexed by Key or Value) that came from
// a string-like or composite EDN value.
type classes []class

// claim records that datum i came from class c, or says which class it came from before.
func (cs *classes) claim(i int, c class) (class, bool) {
	if i >= len(*cs) {
		*cs = slices.Grow(*cs, i+1-len(*cs))
		*cs = (*cs)[:cap(*cs)]
	}
	switch prev := (*cs)[i]; prev {
	case classNone:
		(*cs)[i] = c
		return c, true
	case c:
		return c, true
	default:
		return prev, false
	}
}

// bigInt returns the value of a big integer literal that fits in 64 bits: Clojure compares
// 1N and 1 equal, so they are one key.
func bigInt(v *edn.Value) (int64, bool) {
	if v.Kind != edn.BigInt {
		return 0, false
	}
	n, err := strconv.ParseInt(v.Str, 10, 64)
	return n, err == nil
}

// appendCanon appends the canonical rendering of v as EDN: equal (in Clojure's sense) values
// render alike. Lists render as vectors (Clojure's [1 2] equals (1 2)), map entries and set
// elements are sorted by their rendering, big integers that fit in 64 bits render as plain
// integers, strings are quoted. It refuses, returning the offending value and why, what isovet
// cannot compare as Elle does: floats, ratios and big decimals (whose equality their text
// does not decide), tagged literals, and maps or sets that repeat an entry.
func appendCanon(dst []byte, v *edn.Value) ([]byte, *edn.Value, string) {
	switch v.Kind {
	case edn.Int:
		return strconv.AppendInt(dst, v.Int, 10), nil, ""
	case edn.BigInt:
		if n, ok := bigInt(v); ok {
			return strconv.AppendInt(dst, n, 10), nil, ""
		}
		return edn.Append(dst, *v), nil, ""
	case edn.Nil, edn.Bool, edn.Char, edn.String, edn.Keyword, edn.Symbol:
		return edn.Append(dst, *v), nil, ""
	case edn.Float, edn.BigDec, edn.Ratio:
		return dst, v, "a non-integer number"
	case edn.List, edn.Vector:
		return appendCanonItems(dst, v.Items)
	case edn.Set:
		return appendCanonColl(dst, v, 1, "a set with a repeated element")
	case edn.Map:
		return appendCanonColl(dst, v, 2, "a map with a repeated key")
	}
	return dst, v, "a tagged literal"
}

// appendCanonItems appends the canonical rendering of a list's or vector's items, as a
// vector.
func appendCanonItems(dst []byte, items []edn.Value) ([]byte, *edn.Value, string) {
	dst = append(dst, '[')
	for i := range items {
		if i > 0 {
			dst = append(dst, ' ')
		}
		var bad *edn.Value
		var why string
		if dst, bad, why = appendCanon(dst, &items[i]); bad != nil {
			return dst, bad, why
		}
	}
	return append(dst, ']'), nil, ""
}

// appendCanonColl appends the canonical rendering of a set (its elements, n = 1) or a map
// (its entries, n = 2), sorted by their rendering; repeated says why one that repeats an
// element or key is refused.
func appendCanonColl(dst []byte, v *edn.Value, n int, repeated string) ([]byte, *edn.Value, string) {
	parts, bad, why := canonParts(v.Items, n)
	if bad != nil {
		return dst, bad, why
	}
	slices.SortFunc(parts, func(a, b [][]byte) int { return bytes.Compare(a[0], b[0]) })
	for i := 1; i < len(parts); i++ {
		if bytes.Equal(parts[i-1][0], parts[i][0]) {
			return dst, v, repeated
		}
	}
	if n == 1 {
		dst = append(dst, '#', '{')
		for i, p := range parts {
			if i > 0 {
				dst = append(dst, ' ')
			}
			dst = append(dst, p[0]...)
		}
		return append(dst, '}'), nil, ""
	}
	dst = append(dst, '{')
	for i, p := range parts {
		if i > 0 {
			dst = append(dst, ',', ' ')
		}
		dst = append(append(append(dst, p[0]...), ' '), p[1]...)
	}
	return append(dst, '}'), nil, ""
}

// canonParts renders items in groups of n (1 for set elements, 2 for map entries).
func canonParts(items []edn.Value, n int) ([][][]byte, *edn.Value, string) {
	parts := make([][][]byte, 0, len(items)/n)
	for i := 0; i+n <= len(items); i += n {
		p := make([][]byte, n)
		for j := range n {
			var bad *edn.Value
			var why string
			if p[j], bad, why = appendCanon(nil, &items[i+j]); bad != nil {
				return nil, bad, why
			}
		}
		parts = append(parts, p)
	}
	return parts, nil, ""
}

// datumKey interns a micro-op's key. Integers (and big integers that fit) are integer
// keys; strings, keywords (with their colon) and symbols are string keys holding their text;
// any other EDN value is a string key holding its canonical rendering ([appendCanon]).
func (d *Decoder) datumKey(v *edn.Value, b *history.Builder) (history.Key, error) {
	switch v.Kind {
	case edn.Int:
		return b.IntKey(v.Int), nil
	case edn.Keyword, edn.String, edn.Symbol:
		return d.strKey(v, b)
	}
	if n, ok := bigInt(v); ok {
		return b.IntKey(n), nil
	}
	var bad *edn.Value
	var why string
	d.canon, bad, why = appendCanon(d.canon[:0], v)
	if bad != nil {
		return 0, d.errorf(bad.Pos, "expected a key: any EDN value but %s, found %s", why, d.show(*bad))
	}
	k := b.BytesKey(d.canon)
	return k, d.claimKey(k, classOther, v)
}

// strKey interns the key of a string, keyword or symbol, through a small cache of the
// keys last seen.
func (d *Decoder) strKey(v *edn.Value, b *history.Builder) (history.Key, error) {
	c := classOf(v.Kind)
	h := uint32(len(v.Str)) + uint32(c)
	for i := 0; i < len(v.Str); i++ {
		h = h*31 + uint32(v.Str[i])
	}
	e := &d.skeys[(h^h>>11)&uint32(len(d.skeys)-1)]
	if e.ok && e.s == v.Str && e.c == c {
		return e.k, nil
	}
	k := b.StrKey(v.Str)
	if err := d.claimKey(k, c, v); err != nil {
		return 0, err
	}
	*e = strKey{s: v.Str, k: k, c: c, ok: true}
	return k, nil
}

func (d *Decoder) claimKey(k history.Key, c class, v *edn.Value) error {
	if prev, ok := d.keyClasses.claim(int(k), c); !ok {
		return d.errorf(v.Pos, "%w: key %s is %v, and %v earlier in the history renders as the same key: expected keys that differ as text", ErrAmbiguousDatum, d.show(*v), c, prev)
	}
	return nil
}

// datumValue interns a written or read value: as keys are, except that nil is refused (it is
// the absent value, [history.Nil]).
func (d *Decoder) datumValue(v *edn.Value, b *history.Builder, what string) (history.Value, error) {
	var val history.Value
	c := classOther
	switch v.Kind {
	case edn.Int:
		e := &d.vals[uint64(v.Int)&uint64(len(d.vals)-1)]
		if !e.ok || e.i != v.Int {
			*e = valEntry{i: v.Int, v: b.IntValue(v.Int), ok: true}
		}
		return e.v, nil
	case edn.Nil:
		return 0, d.errorf(v.Pos, "expected the %s to be a value other than nil (nil is the absent value), found nil", what)
	case edn.Keyword, edn.String, edn.Symbol:
		val, c = b.StrValue(v.Str), classOf(v.Kind)
	default:
		if n, ok := bigInt(v); ok {
			return b.IntValue(n), nil
		}
		var bad *edn.Value
		var why string
		d.canon, bad, why = appendCanon(d.canon[:0], v)
		if bad != nil {
			return 0, d.errorf(bad.Pos, "expected the %s to be any EDN value but %s, found %s", what, why, d.show(*bad))
		}
		val = b.BytesValue(d.canon)
	}
	if prev, ok := d.valClasses.claim(int(val), c); !ok {
		return 0, d.errorf(v.Pos, "%w: value %s is %v, and %v earlier in the history renders as the same value: expected values that differ as text", ErrAmbiguousDatum, d.show(*v), c, prev)
	}
	return val, nil
}
