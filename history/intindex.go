package history

// intIndex maps int64 to int32 with open addressing and linear probing. It interns integer
// keys and values for the Builder: pointer-free, so the garbage collector never scans it,
// and about twice as fast as a Go map for the millions of entries a large history has.
type intIndex struct {
	keys  []int64
	vals  []int32 // id+1; 0 marks an empty slot
	n     int
	shift uint // 64 - log2(len(keys))
}

const fibMul = 0x9E3779B97F4A7C15 // 2^64 / golden ratio: Fibonacci hashing

func newIntIndex() intIndex {
	return intIndex{keys: make([]int64, 16), vals: make([]int32, 16), shift: 64 - 4}
}

// get returns the id stored for k.
func (x *intIndex) get(k int64) (int32, bool) {
	mask := len(x.keys) - 1
	for i := int(uint64(k) * fibMul >> x.shift); ; i = (i + 1) & mask {
		v := x.vals[i]
		if v == 0 {
			return 0, false
		}
		if x.keys[i] == k {
			return v - 1, true
		}
	}
}

// put stores id for k, which must not be present.
func (x *intIndex) put(k int64, id int32) {
	if 2*(x.n+1) > len(x.keys) {
		x.grow()
	}
	mask := len(x.keys) - 1
	i := int(uint64(k) * fibMul >> x.shift)
	for x.vals[i] != 0 {
		i = (i + 1) & mask
	}
	x.keys[i], x.vals[i] = k, id+1
	x.n++
}

func (x *intIndex) grow() {
	old := *x
	size := 2 * len(old.keys)
	*x = intIndex{keys: make([]int64, size), vals: make([]int32, size), shift: old.shift - 1}
	for i, v := range old.vals {
		if v != 0 {
			x.put(old.keys[i], v-1)
		}
	}
}
