package history

// intIndex maps int64 to int32. It interns integer keys and values for the Builder:
// pointer-free, so the garbage collector never scans it, and several times faster than a Go
// map for the millions of entries a large history has.
//
// Histories mostly number their values (and often their keys) 0, 1, 2, ...: such integers
// live in a plain array indexed by the integer, which is grown as long as it stays at least
// a quarter full, so that appending the next of a run of new values touches one cache line.
// Every other integer goes to an open-addressing table with linear probing.
type intIndex struct {
	dense  []int32 // id+1 of k for 0 <= k < len(dense); 0: not there (but maybe in slots)
	nDense int     // ids held in dense
	slots  []intSlot
	n      int  // ids held in slots
	shift  uint // 64 - log2(len(slots))
}

type intSlot struct {
	k  int64
	id int32 // id+1; 0 marks an empty slot
}

const (
	fibMul = 0x9E3779B97F4A7C15 // 2^64 / golden ratio: Fibonacci hashing

	minDense = 1 << 12
	maxDense = 1 << 28 // 1 GiB of int32: beyond it, the table
)

func newIntIndex() intIndex {
	return intIndex{slots: make([]intSlot, 16), shift: 64 - 4}
}

// get returns the id stored for k.
func (x *intIndex) get(k int64) (int32, bool) {
	if uint64(k) < uint64(len(x.dense)) {
		if id := x.dense[k]; id != 0 {
			return id - 1, true
		}
		if x.n == 0 {
			return 0, false
		}
	}
	mask := len(x.slots) - 1
	for i := int(uint64(k) * fibMul >> x.shift); ; i = (i + 1) & mask {
		s := &x.slots[i]
		if s.id == 0 {
			return 0, false
		}
		if s.k == k {
			return s.id - 1, true
		}
	}
}

// put stores id for k, which must not be present.
func (x *intIndex) put(k int64, id int32) {
	if uint64(k) >= uint64(len(x.dense)) && k >= 0 && k < maxDense {
		// Grow the array if it stays a quarter full; a run of new values doubles it.
		if size := max(2*len(x.dense), int(k)+1, minDense); size <= 4*(x.nDense+x.n+1)+minDense {
			x.growDense(min(size, maxDense))
		}
	}
	if uint64(k) < uint64(len(x.dense)) {
		x.dense[k] = id + 1
		x.nDense++
		return
	}
	if 2*(x.n+1) > len(x.slots) {
		x.grow()
	}
	x.insert(k, id)
}

func (x *intIndex) insert(k int64, id int32) {
	mask := len(x.slots) - 1
	i := int(uint64(k) * fibMul >> x.shift)
	for x.slots[i].id != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = intSlot{k, id + 1}
	x.n++
}

func (x *intIndex) growDense(size int) {
	d := make([]int32, size)
	copy(d, x.dense)
	x.dense = d
}

func (x *intIndex) grow() {
	old := x.slots
	x.slots, x.shift, x.n = make([]intSlot, 2*len(old)), x.shift-1, 0
	for _, s := range old {
		if s.id != 0 {
			x.insert(s.k, s.id-1)
		}
	}
}

// len returns the number of ids stored.
func (x *intIndex) len() int { return x.nDense + x.n }
