package history

import (
	"math/rand/v2"
	"testing"
)

func TestIntIndexAgreesWithMap(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	x := newIntIndex()
	m := map[int64]int32{}
	for i := range 100_000 {
		var k int64
		switch i % 4 {
		case 0:
			k = int64(i) // sequential: the dense array
		case 1:
			k = rng.Int64() - rng.Int64() // anywhere, negatives too
		case 2:
			k = int64(rng.IntN(300_000)) // in the table first, the dense array's range later
		default:
			k = int64(rng.IntN(1000)) << 32 // collide in the low bits
		}
		got, ok := x.get(k)
		want, wok := m[k]
		if ok != wok || got != want {
			t.Fatalf("get(%d) = %d, %v; want %d, %v", k, got, ok, want, wok)
		}
		if !ok {
			id := int32(len(m))
			x.put(k, id)
			m[k] = id
		}
	}
	if len(x.dense) == 0 || x.nDense == 0 || x.n == 0 {
		t.Fatalf("dense array of %d (%d ids) and table of %d ids: want both used", len(x.dense), x.nDense, x.n)
	}
	if x.len() != len(m) {
		t.Fatalf("len() = %d, want %d", x.len(), len(m))
	}
}
