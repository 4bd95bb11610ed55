package native

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"isovet/history"
)

// TestValueCacheAgreesWithBuilder interns a seeded stream of string values, with keys
// beyond the cache's bound, values beyond its length, the empty string and more distinct
// values per key than it has ways, through the cache into one builder and straight into
// another: every id must be the same.
func TestValueCacheAgreesWithBuilder(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{1, 2, 3} {
		r := rand.New(rand.NewPCG(seed, 9))
		cached, plain := history.NewBuilder(), history.NewBuilder()
		var c valueCache
		c.reset(cached)
		for i := range 50_000 {
			k := history.Key(r.IntN(40))
			if r.IntN(50) == 0 {
				k = cacheKeys + history.Key(r.IntN(3))
			}
			var s string
			switch r.IntN(10) {
			case 0:
				s = ""
			case 1:
				s = strings.Repeat("x", 20+r.IntN(15)) // around the 27-byte bound
			default:
				s = fmt.Sprintf("v1=%d,w=%d", r.IntN(8), r.IntN(3))
			}
			got, want := c.value(k, []byte(s)), plain.BytesValue([]byte(s))
			if got != want {
				t.Fatalf("seed %d, value %d (%q with key %d): cache gave id %d, the builder %d", seed, i, s, k, got, want)
			}
		}
	}
}

// TestValueCacheForgetsOtherBuilders checks that a decoder reading into a second builder
// does not hand it ids from the first.
func TestValueCacheForgetsOtherBuilders(t *testing.T) {
	t.Parallel()
	d := NewDecoder()
	b1, b2 := history.NewBuilder(), history.NewBuilder()
	if err := d.DecodeLine([]byte(`{"s":1,"ops":[["w",1,"a"],["w",1,"b"]]}`), b1); err != nil {
		t.Fatal(err)
	}
	if err := d.DecodeLine([]byte(`{"s":1,"ops":[["w",1,"b"],["pr",{},[[1,"a"],[1,"b"]]]]}`), b2); err != nil {
		t.Fatal(err)
	}
	h, err := b2.Build()
	if err != nil {
		t.Fatal(err)
	}
	o := h.Txns[0].Ops
	p := h.Pred(o[1])
	got := []string{h.Value(o[0].Value).String(), h.Value(p.Rows[0].Value).String(), h.Value(p.Rows[1].Value).String()}
	if want := []string{"b", "a", "b"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("second builder's values = %q, want %q", got, want)
	}
}

// TestRowSlab checks that rows handed out do not overlap and that none is shared.
func TestRowSlab(t *testing.T) {
	t.Parallel()
	var s rowSlab
	var all [][]history.Row
	for i := range 3000 {
		n := i % 200
		rows := s.take(n)
		if len(rows) != n || cap(rows) != n {
			t.Fatalf("take(%d) gave len %d cap %d", n, len(rows), cap(rows))
		}
		for j := range rows {
			if rows[j] != (history.Row{}) {
				t.Fatalf("take(%d) gave a used row", n)
			}
			rows[j].Key = history.Key(i)
		}
		all = append(all, rows)
	}
	for i, rows := range all {
		for _, r := range rows {
			if r.Key != history.Key(i) {
				t.Fatalf("rows of take %d were overwritten by take %d", i, r.Key)
			}
		}
	}
}
