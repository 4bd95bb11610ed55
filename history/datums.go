package history

import (
	"encoding/binary"
	"hash/maphash"
	"iter"
	"unsafe"

	"github.com/isovet/isovet/internal/hugepage"
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
//
// A slot is 8 bytes: the id and a 32-bit tag, the high half of the string's mixed hash
// (h*fibMul). A slot's home is the top bits of the tag, so growing the table moves slots
// without reading any string again, and a probe reads a string only when the tags agree: the
// string's own, or (rarely) another with the same home and the same tag bits below it.
type strIndex struct {
	slots []strSlot
	n     int
	shift uint // 32 - log2(len(slots)): a tag's home is tag >> shift
	seed  maphash.Seed
}

type strSlot struct {
	tag uint32 // uint32(h * fibMul >> 32) of the string's hash h
	id  int32  // id+1; 0 marks an empty slot
}

func newStrIndex() strIndex {
	return strIndex{slots: make([]strSlot, 16), shift: 32 - 4, seed: maphash.MakeSeed()}
}

// tag returns the tag of the string b.
func (x *strIndex) tag(b []byte) uint32 { return uint32(maphash.Bytes(x.seed, b) * fibMul >> 32) }

// home returns the slot where probing for tag starts.
func (x *strIndex) home(tag uint32) int { return int(tag >> x.shift) }

// get returns the id of the string b (tag tag) held in t.
func (x *strIndex) get(t *Datums, b []byte, tag uint32) (int32, bool) {
	mask := len(x.slots) - 1
	for i := x.home(tag); ; i = (i + 1) & mask {
		s := x.slots[i]
		if s.id == 0 {
			return 0, false
		}
		if s.tag == tag && string(t.bytes(int(s.id-1))) == string(b) {
			return s.id - 1, true
		}
	}
}

// put stores id for tag; the string must not be present.
func (x *strIndex) put(tag uint32, id int32) {
	if 2*(x.n+1) > len(x.slots) {
		x.resize(2 * len(x.slots))
	}
	x.place(tag, id)
}

func (x *strIndex) place(tag uint32, id int32) {
	mask := len(x.slots) - 1
	i := x.home(tag)
	for x.slots[i].id != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = strSlot{tag, id + 1}
	x.n++
}

// reserve makes room for n strings in all, so that they go in without growing the table
// (up to 2^29 strings: a larger hint is taken as that, and put grows the table past it).
func (x *strIndex) reserve(n int) {
	size := len(x.slots)
	for 2*n > size && size < 1<<30 {
		size *= 2
	}
	if size > len(x.slots) {
		x.resize(size)
	}
}

// resize moves the slots into a table of size slots, a larger power of two.
func (x *strIndex) resize(size int) {
	old := x.slots
	x.slots, x.n = hugepage.MakeAhead[strSlot](size, size), 0
	for size > len(old) {
		x.shift--
		size /= 2
	}
	for _, s := range old {
		if s.id != 0 {
			x.place(s.tag, s.id-1)
		}
	}
}
