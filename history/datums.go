package history

import (
	"encoding/binary"
	"hash/maphash"
	"iter"
	"unsafe"
)

// Datums is a table of original values, indexed by [Value]: [History.Values]. It holds no Go
// pointers, so the garbage collector never scans it however many millions of values a
// history has: integers are stored inline, strings in one byte arena.
//
// A Datums is immutable once its history is built and safe for concurrent reads. The zero
// value is an empty table.
type Datums struct {
	kinds []DatumKind
	// words holds the integer of a DatumInt, and for a DatumStr the offset in arena of the
	// string's uvarint length, followed by its bytes.
	words []int64
	arena []byte
}

// Len returns the number of datums in the table.
func (t *Datums) Len() int { return len(t.kinds) }

// At returns datum i. A string datum shares memory with the table, which never changes
// bytes it has written, so the string stays valid and immutable.
func (t *Datums) At(i int) Datum {
	switch t.kinds[i] {
	case DatumInt:
		return Datum{kind: DatumInt, i: t.words[i]}
	case DatumStr:
		return Datum{kind: DatumStr, s: t.str(i)}
	}
	return NilDatum
}

// All iterates over the table in index order.
func (t *Datums) All() iter.Seq2[Value, Datum] {
	return func(yield func(Value, Datum) bool) {
		for i := range t.kinds {
			if !yield(Value(i), t.At(i)) {
				return
			}
		}
	}
}

// bytes returns the bytes of string datum i, aliasing the arena.
func (t *Datums) bytes(i int) []byte {
	off := t.words[i]
	n, w := binary.Uvarint(t.arena[off:])
	start := off + int64(w)
	return t.arena[start : start+int64(n) : start+int64(n)]
}

func (t *Datums) str(i int) string {
	b := t.bytes(i)
	if len(b) == 0 {
		return ""
	}
	// The arena is append-only: bytes once written are never changed, and a reallocation
	// leaves the old array (which the string keeps alive) as it was.
	return unsafe.String(&b[0], len(b))
}

// add appends d and returns its index.
func (t *Datums) add(d Datum) int {
	switch d.kind {
	case DatumInt:
		return t.addInt(d.i)
	case DatumStr:
		return t.addBytes(bytesOf(d.s))
	}
	t.reserve()
	t.kinds = append(t.kinds, DatumNil)
	t.words = append(t.words, 0)
	return len(t.kinds) - 1
}

func (t *Datums) addInt(i int64) int {
	t.reserve()
	t.kinds = append(t.kinds, DatumInt)
	t.words = append(t.words, i)
	return len(t.kinds) - 1
}

func (t *Datums) addBytes(s []byte) int {
	t.reserve()
	if cap(t.arena)-len(t.arena) < len(s)+binary.MaxVarintLen64 {
		t.arena = slicesGrow(t.arena, max(len(t.arena), len(s)+binary.MaxVarintLen64, 4096))
	}
	t.kinds = append(t.kinds, DatumStr)
	t.words = append(t.words, int64(len(t.arena)))
	t.arena = binary.AppendUvarint(t.arena, uint64(len(s)))
	t.arena = append(t.arena, s...)
	return len(t.kinds) - 1
}

// bytesOf views the bytes of s, which the caller must not change.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// reserve makes room for one more datum, doubling the table when it is full (append grows
// large slices by only 1.25x, which copies a table of millions several times over).
func (t *Datums) reserve() {
	if len(t.kinds) == cap(t.kinds) || len(t.words) == cap(t.words) {
		n := max(len(t.kinds), 256)
		t.kinds = slicesGrow(t.kinds, n)
		t.words = slicesGrow(t.words, n)
	}
}

// strIndex maps strings to ids for a [Datums] that holds them, with open addressing keyed by
// a hash of the bytes. Like intIndex it holds no pointers, and looking up a []byte never
// allocates: the strings themselves are only in the table's arena.
type strIndex struct {
	slots []strSlot
	n     int
	shift uint
	seed  maphash.Seed
}

type strSlot struct {
	hash uint64
	id   int32 // id+1; 0 marks an empty slot
}

func newStrIndex() strIndex {
	return strIndex{slots: make([]strSlot, 16), shift: 64 - 4, seed: maphash.MakeSeed()}
}

func (x *strIndex) hash(b []byte) uint64 { return maphash.Bytes(x.seed, b) }

// get returns the id of the string b (hash h) held in t.
func (x *strIndex) get(t *Datums, b []byte, h uint64) (int32, bool) {
	mask := len(x.slots) - 1
	for i := int(h * fibMul >> x.shift); ; i = (i + 1) & mask {
		s := x.slots[i]
		if s.id == 0 {
			return 0, false
		}
		if s.hash == h && string(t.bytes(int(s.id-1))) == string(b) {
			return s.id - 1, true
		}
	}
}

// put stores id for hash h; the string must not be present.
func (x *strIndex) put(h uint64, id int32) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow()
	}
	mask := len(x.slots) - 1
	i := int(h * fibMul >> x.shift)
	for x.slots[i].id != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = strSlot{h, id + 1}
	x.n++
}

func (x *strIndex) grow() {
	old := x.slots
	x.slots, x.shift, x.n = make([]strSlot, 2*len(old)), x.shift-1, 0
	for _, s := range old {
		if s.id != 0 {
			x.put(s.hash, s.id-1)
		}
	}
}
