package hugepage

import "testing"

func TestMakeIsAnOrdinarySlice(t *testing.T) {
	for _, on := range []bool{false, true} {
		SetEnabled(on)
		makeOrdinary(t, Make[uint64])
		makeOrdinary(t, MakeAhead[uint64])
	}
	SetEnabled(false)
}

func makeOrdinary(t *testing.T, mk func(n, c int) []uint64) {
	t.Helper()
	for _, c := range []struct{ n, c int }{{0, 0}, {3, 10}, {Min, Min}, {Min / 8, 2 * Min}} {
		s := mk(c.n, c.c)
		if len(s) != c.n || cap(s) != c.c {
			t.Fatalf("Make(%d, %d): len %d cap %d", c.n, c.c, len(s), cap(s))
		}
		for i, v := range s {
			if v != 0 {
				t.Fatalf("Make(%d, %d)[%d] = %d, want 0", c.n, c.c, i, v)
			}
		}
		s = s[:cap(s)]
		for i := range s {
			s[i] = uint64(i)
		}
		for i, v := range s {
			if v != uint64(i) {
				t.Fatalf("Make(%d, %d)[%d] = %d after writing %d", c.n, c.c, i, v, i)
			}
		}
	}
}
