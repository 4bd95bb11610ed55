package sat

import "unsafe"

// asLits reinterprets arena words as literals; Lit is a uint32.
func asLits(w []uint32) []Lit {
	if len(w) == 0 {
		return nil
	}
	return unsafe.Slice((*Lit)(unsafe.Pointer(&w[0])), len(w))
}
