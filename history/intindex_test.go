package history

import (
	"math/rand/v2"
	"testing"
)

func TestIntIndexAgreesWithMap(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	var x IntIndex
	m := map[int64]int32{}
	for i := range 200_000 {
		var k int64
		switch i % 5 {
		case 0:
			k = int64(i) // sequential: the dense array
		case 1:
			k = rng.Int64() - rng.Int64() // anywhere, negatives too
		case 2:
			k = int64(rng.IntN(300_000)) // in the table first, the dense array's range later
		case 3:
			k = int64(rng.IntN(1000)) << 32 // collide in the low bits
		default:
			k = int64(rng.IntN(100)) // present: Set replaces
		}
		got, ok := x.Get(k)
		want, wok := m[k]
		if ok != wok || got != want {
			t.Fatalf("Get(%d) = %d, %v; want %d, %v", k, got, ok, want, wok)
		}
		id := int32(rng.IntN(1 << 30))
		x.Set(k, id)
		m[k] = id
	}
	if len(x.dense) == 0 || x.nDense == 0 || x.n == 0 {
		t.Fatalf("dense array of %d (%d ids) and table of %d ids: want both used", len(x.dense), x.nDense, x.n)
	}
	if x.Len() != len(m) {
		t.Fatalf("Len() = %d, want %d", x.Len(), len(m))
	}
	for k, want := range m {
		if got, ok := x.Get(k); !ok || got != want {
			t.Fatalf("Get(%d) = %d, %v at the end; want %d", k, got, ok, want)
		}
	}
}
