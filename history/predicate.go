package history

import (
	"strconv"
	"strings"
)

// Truth is what a predicate says about one version of a row.
type Truth uint8

// Truth values. TruthUnset and TruthUnknown are the two ways of not knowing: the first can
// be resolved from the versions around it, the second cannot.
const (
	TruthFalse Truth = iota
	TruthTrue
	// TruthUnset: the version's image does not set the predicate's field (a partial update,
	// "SET v1 = 5" evaluated against a predicate on v2); the field keeps the value it had in
	// the version before, which depends on the version order.
	TruthUnset
	// TruthUnknown: the predicate or the value cannot be evaluated (a predicate given only as
	// text, a value that is not a row image).
	TruthUnknown
)

var truthNames = [...]string{"false", "true", "unset", "unknown"}

func (t Truth) String() string {
	if int(t) < len(truthNames) {
		return truthNames[t]
	}
	return "unknown"
}

// Eval evaluates the predicate on one version of a row, given the version's value. Values
// are read as row images:
//
//   - nil: the row does not exist (unborn, or deleted); no predicate holds on it;
//   - an integer: a row with one value column; a range predicate compares it whatever its
//     field is called;
//   - a string "col=int,col=int,…": the row's columns after the write (the Vbox reader's
//     "field=value" text and the runner's full row images), compared by field name; a
//     column missing from the image is TruthUnset.
//
// Anything else, and a predicate that is not a range, is TruthUnknown.
func (p *Predicate) Eval(v Datum) Truth {
	if v.IsNil() {
		return TruthFalse
	}
	if !p.IsRange {
		return TruthUnknown
	}
	if i, ok := v.Int(); ok {
		return p.in(i)
	}
	s, ok := v.Str()
	if !ok {
		return TruthUnknown
	}
	field := p.Field.String()
	if p.Field.IsNil() || field == "" {
		return TruthUnknown
	}
	i, found, ok := ImageInt(s, field)
	switch {
	case !ok:
		return TruthUnknown
	case !found:
		return TruthUnset
	}
	return p.in(i)
}

func (p *Predicate) in(i int64) Truth {
	if p.Lo <= i && i <= p.Hi {
		return TruthTrue
	}
	return TruthFalse
}

// ImageInt finds column field in a row image "col=int,col=int" (see [Predicate.Eval]):
// found says whether the image sets it; ok is false when s is not such an image or the
// field's value is not an integer. It reads the grammar of [CutImageColumn] in one loop of
// its own: predicate evaluation calls it for every version, and the call per item costs
// it 13 %.
func ImageInt(s, field string) (v int64, found, ok bool) {
	for len(s) > 0 {
		item := s
		if i := strings.IndexByte(s, ','); i >= 0 {
			item, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		eq := strings.IndexByte(item, '=')
		if eq <= 0 {
			return 0, false, false
		}
		if item[:eq] != field {
			continue
		}
		n, err := strconv.ParseInt(item[eq+1:], 10, 64)
		if err != nil {
			return 0, true, false
		}
		return n, true, true
	}
	return 0, false, true
}

// CutImageColumn cuts the first "col=value" item off the non-empty row image s, returning
// its name and value and the rest of the image; ok is false when the item has no '=' or an
// empty name.
func CutImageColumn(s string) (name, val, rest string, ok bool) {
	item := s
	if i := strings.IndexByte(s, ','); i >= 0 {
		item, rest = s[:i], s[i+1:]
	}
	eq := strings.IndexByte(item, '=')
	if eq <= 0 {
		return "", "", "", false
	}
	return item[:eq], item[eq+1:], rest, true
}
