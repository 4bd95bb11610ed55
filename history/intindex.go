package history

// IntIndex maps 64-bit integers to ids (non-negative int32). The [Builder] interns integer
// keys and values with it, and readers use it to index their own numeric ids (Cobra's write
// ids, Vbox's transaction and op ids) by the million. The zero value is an empty index
// ready to use; it is not safe for concurrent use.
//
// It holds no pointers, so the garbage collector never scans it, and it is several times
// faster than a Go map at this size. Sources mostly number things 0, 1, 2, ...: such
// integers live in a plain array indexed by the integer, grown while it stays at least a
// quarter full, so that adding the next of a run of new ids touches one cache line. Every
// other integer goes to an open-addressing table with linear probing and Fibonacci hashing
// (which spreads keys differing only in their high bits, as tid<<32 | oid, as well as dense
// ones).
type IntIndex struct {
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

// Len returns the number of integers in the index.
func (x *IntIndex) Len() int { return x.nDense + x.n }

// Get returns the id of k and whether k is in the index.
func (x *IntIndex) Get(k int64) (int32, bool) {
	if uint64(k) < uint64(len(x.dense)) {
		if id := x.dense[k]; id != 0 {
			return id - 1, true
		}
	}
	if x.n == 0 {
		return 0, false
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

// Set sets the id of k, replacing any it had. id must be in [0, 2^31-2].
func (x *IntIndex) Set(k int64, id int32) {
	if uint64(k) < uint64(len(x.dense)) && x.dense[k] != 0 {
		x.dense[k] = id + 1
		return
	}
	if x.n > 0 {
		mask := len(x.slots) - 1
		for i := int(uint64(k) * fibMul >> x.shift); x.slots[i].id != 0; i = (i + 1) & mask {
			if x.slots[i].k == k {
				x.slots[i].id = id + 1
				return
			}
		}
	}
	x.add(k, id)
}

// add stores id for k, which must not be in the index.
func (x *IntIndex) add(k int64, id int32) {
	if uint64(k) >= uint64(len(x.dense)) && k >= 0 && k < maxDense {
		// Grow the array if it stays a quarter full; a run of new ids doubles it.
		if size := max(2*len(x.dense), int(k)+1, minDense); size <= 4*(x.Len()+1)+minDense {
			d := make([]int32, min(size, maxDense))
			copy(d, x.dense)
			x.dense = d
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

func (x *IntIndex) insert(k int64, id int32) {
	mask := len(x.slots) - 1
	i := int(uint64(k) * fibMul >> x.shift)
	for x.slots[i].id != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = intSlot{k, id + 1}
	x.n++
}

func (x *IntIndex) grow() {
	old := x.slots
	size := max(2*len(old), 16)
	x.slots, x.n, x.shift = make([]intSlot, size), 0, 64
	for ; size > 1; size >>= 1 {
		x.shift--
	}
	for _, s := range old {
		if s.id != 0 {
			x.insert(s.k, s.id-1)
		}
	}
}
