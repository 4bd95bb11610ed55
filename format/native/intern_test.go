package native

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/isovet/isovet/history"
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
	if err := d.DecodeLine([]byte(`{"s":1,"ops":[["w",1,"b"],["pr",{},[[1,"a"],[2,"b"]]]]}`), b2); err != nil {
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

// TestAbortedWritesNotCached: an aborted transaction's predicate write interns its rows'
// images (a committed read of one is an aborted read to report) but leaves the value cache
// to the versions later reads can see, while still counting the images for the builder's
// size estimate.
func TestAbortedWritesNotCached(t *testing.T) {
	t.Parallel()
	src := `{"isovet":1}
{"s":0,"ops":[["pw",{"expr":"v BETWEEN 0 AND 9","range":["v",0,9]},[[1,"v=1,w=1"]]]]}
{"s":1,"o":"a","ops":[["pw",{"expr":"v BETWEEN 0 AND 9","range":["v",0,9]},[[1,"v=2,w=2"]]]]}
{"s":2,"ops":[["pr",{"expr":"v BETWEEN 0 AND 9","range":["v",0,9]},[[1,"v=1,w=1"]]]]}
`
	d := NewDecoder()
	b := history.NewBuilder()
	if err := d.Decode(strings.NewReader(src), "h.jsonl", b); err != nil {
		t.Fatal(err)
	}
	// (These lines take the fast path; the general one caches every value it interns.)
	var cached []string
	for _, e := range d.vc.ways[:cacheWays] { // key 1 is the first key
		if e.id != 0 {
			cached = append(cached, string(e.s[:e.n]))
		}
	}
	if fmt.Sprint(cached) != "[v=1,w=1]" {
		t.Errorf("key 1's cache holds %q, want only the committed image", cached)
	}
	if d.vc.misses != 2 {
		t.Errorf("misses counted %d, want 2 (both new images)", d.vc.misses)
	}
	h, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range h.Txns {
		got = append(got, h.Value(h.Pred(h.Txns[i].Ops[0]).Rows[0].Value).String())
	}
	if want := "[v=1,w=1 v=2,w=2 v=1,w=1]"; fmt.Sprint(got) != want {
		t.Errorf("row values %v, want %s", got, want)
	}
}
