package jsonscan

import "github.com/isovet/isovet/history"

// Key interns d as a key of b.
func Key(b *history.Builder, d Datum) history.Key {
	if d.Kind == history.DatumInt {
		return b.IntKey(d.I)
	}
	return b.BytesKey(d.S)
}

// Value interns d as a value of b; null is [history.Nil].
func Value(b *history.Builder, d Datum) history.Value {
	switch d.Kind {
	case history.DatumInt:
		return b.IntValue(d.I)
	case history.DatumStr:
		return b.BytesValue(d.S)
	}
	return history.Nil
}

// Interner memoizes builder ids on the hot path: per key, the last integer value seen with
// it. A read usually returns the value the last write of its key installed, so most reads
// cost a slice lookup instead of an interning call. The zero value is ready for [Reset].
type Interner struct {
	b    *history.Builder
	last []lastValue // per Key
}

type lastValue struct {
	v  int64
	id history.Value // 0: none
}

// Reset points the interner at b, forgetting what it knew unless b is the builder it
// already serves.
func (in *Interner) Reset(b *history.Builder) {
	if in.b != b {
		*in = Interner{b: b, last: in.last[:0]}
	}
}

// Key interns d as a key.
func (in *Interner) Key(d Datum) history.Key { return Key(in.b, d) }

// Value interns d, a value seen with key k.
func (in *Interner) Value(k history.Key, d Datum) history.Value {
	if d.Kind != history.DatumInt {
		return Value(in.b, d)
	}
	return in.IntValue(k, d.I)
}

// IntValue interns the integer value i, seen with key k.
func (in *Interner) IntValue(k history.Key, i int64) history.Value {
	if int(k) < len(in.last) {
		if lv := in.last[k]; lv.id != 0 && lv.v == i {
			return lv.id
		}
	} else {
		in.last = append(in.last, make([]lastValue, int(k)+1-len(in.last))...)
	}
	v := in.b.IntValue(i)
	in.last[k] = lastValue{i, v}
	return v
}
