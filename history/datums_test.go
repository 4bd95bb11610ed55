package history

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestBuilderValuesAgreeWithMap(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	b := NewBuilder()
	want := map[Datum]Value{NilDatum: Nil}
	order := []Datum{NilDatum}
	for i := range 50_000 {
		var d Datum
		switch i % 4 {
		case 0:
			d = Int(int64(rng.IntN(5000)) - 100)
		case 1:
			d = Str(strconv.Itoa(rng.IntN(5000)))
		case 2:
			d = Str(strings.Repeat("x", rng.IntN(300))) // long, and "" too
		default:
			d = Str("k=" + strconv.Itoa(rng.IntN(20000)) + "\x00é")
		}
		var v Value
		if s, ok := d.Str(); ok && i%2 == 0 {
			v = b.BytesValue([]byte(s))
		} else {
			v = b.Value(d)
		}
		if w, ok := want[d]; ok {
			if v != w {
				t.Fatalf("Value(%#v) = %d, want %d as before", d, v, w)
			}
			continue
		}
		if int(v) != len(order) {
			t.Fatalf("new Value(%#v) = %d, want the next id %d", d, v, len(order))
		}
		want[d] = v
		order = append(order, d)
	}
	h, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if h.Values.Len() != len(order) {
		t.Fatalf("Values.Len() = %d, want %d", h.Values.Len(), len(order))
	}
	for v, d := range h.Values.All() {
		if d != order[v] || h.Value(v) != d {
			t.Fatalf("Values[%d] = %#v, Value() = %#v, want %#v", v, d, h.Value(v), order[v])
		}
	}
}

func TestDatumsStringsSurviveGrowth(t *testing.T) {
	t.Parallel()
	var tab Datums
	first := tab.At(tab.add(Str("first")))
	s, _ := first.Str()
	for i := range 100_000 {
		tab.add(Str(strconv.Itoa(i)))
	}
	if s != "first" || tab.At(0) != Str("first") {
		t.Fatalf("after growth: %q and %#v, want \"first\"", s, tab.At(0))
	}
	if d := tab.At(tab.add(Str(""))); d != Str("") {
		t.Fatalf("empty string: %#v", d)
	}
}

// TestBytesValuesAgreesWithBytesValue interns the same random stream in two builders, one
// value at a time and with string runs in batches, and wants the same ids and tables: runs
// that repeat strings within themselves, repeat earlier strings, cross the batch size and
// grow the index mid-batch, between integers and nils, with and without GrowValues hints.
func TestBytesValuesAgreesWithBytesValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		grow func(b *Builder) // hint, before anything is interned
		seed uint64
	}{
		{"no-hint", func(*Builder) {}, 1},
		{"hint", func(b *Builder) { b.GrowValues(40_000, 1<<20) }, 2},
		{"small-hint", func(b *Builder) { b.GrowValues(100, 10) }, 3},
		{"zero-hint", func(b *Builder) { b.GrowValues(0, 0) }, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(tc.seed, 7))
			one, batch := NewBuilder(), NewBuilder()
			tc.grow(batch)
			var seen []string
			str := func() string {
				switch r := rng.IntN(10); {
				case r < 3 && len(seen) > 0:
					return seen[rng.IntN(len(seen))] // interned before, or earlier in the run
				case r == 3:
					return strings.Repeat("y", rng.IntN(40)) // "" too
				default:
					s := "v=" + strconv.Itoa(rng.IntN(1<<20)) + ",w=" + strconv.Itoa(rng.IntN(100))
					seen = append(seen, s)
					return s
				}
			}
			var ss [][]byte
			var out []Value
			for step := range 3000 {
				switch rng.IntN(6) {
				case 0:
					i := int64(rng.IntN(2000)) - 10
					if v, w := batch.IntValue(i), one.IntValue(i); v != w {
						t.Fatalf("step %d: IntValue(%d) = %d after batches, %d one at a time", step, i, v, w)
					}
				case 1:
					if v, w := batch.Value(NilDatum), one.Value(NilDatum); v != w || v != Nil {
						t.Fatalf("step %d: Value(nil) = %d after batches, %d one at a time", step, v, w)
					}
				default:
					n := rng.IntN(2*valueBatch + 3) // empty, short, and across the batch size
					if rng.IntN(4) == 0 {
						n = rng.IntN(3)
					}
					ss = ss[:0]
					for range n {
						ss = append(ss, []byte(str()))
					}
					out = append(out[:0], make([]Value, n+1)...)
					out[n] = -1 // beyond the batch: must stay untouched
					batch.BytesValues(ss, out)
					for i, s := range ss {
						if w := one.BytesValue(s); out[i] != w {
							t.Fatalf("step %d: BytesValues gave %q id %d (%d of %d), BytesValue %d", step, s, out[i], i, n, w)
						}
						clear(s) // the builder keeps no reference to the caller's bytes
					}
					if out[n] != -1 {
						t.Fatalf("step %d: BytesValues wrote past its %d strings", step, n)
					}
				}
			}
			hb, err := batch.Build()
			if err != nil {
				t.Fatal(err)
			}
			ho, err := one.Build()
			if err != nil {
				t.Fatal(err)
			}
			if hb.Values.Len() != ho.Values.Len() || hb.Values.Len() < 10_000 {
				t.Fatalf("value tables hold %d and %d values, want the same and at least 10,000", hb.Values.Len(), ho.Values.Len())
			}
			for v, d := range ho.Values.All() {
				if got := hb.Values.At(int(v)); got != d {
					t.Fatalf("Values[%d] = %#v after batches, %#v one at a time", v, got, d)
				}
			}
		})
	}
}

// TestStrIndexComparesStringsOnEqualTags gives different strings the same tag, as a 32-bit
// collision would, and wants each found by its bytes, across growth of the index.
func TestStrIndexComparesStringsOnEqualTags(t *testing.T) {
	t.Parallel()
	var d Datums
	x := newStrIndex()
	const tag = 0xdeadbeef
	words := []string{"a", "b", "", "ab", "ba", "c"}
	for i, w := range words {
		if _, ok := x.get(&d, []byte(w), tag); ok {
			t.Fatalf("get(%q) found it before it was put", w)
		}
		id := int32(d.addBytes([]byte(w)))
		x.put(tag, id)
		x.put(uint32(i)<<28, int32(d.addBytes([]byte("other"+w)))) // spread over homes
		for _, w2 := range words[:i+1] {
			got, ok := x.get(&d, []byte(w2), tag)
			if !ok || string(d.bytes(int(got))) != w2 {
				t.Fatalf("after putting %q: get(%q) = %d, %v", w, w2, got, ok)
			}
		}
	}
	x.reserve(1000)
	for _, w := range words {
		if got, ok := x.get(&d, []byte(w), tag); !ok || string(d.bytes(int(got))) != w {
			t.Fatalf("after reserve: get(%q) = %d, %v", w, got, ok)
		}
	}
	if _, ok := x.get(&d, []byte("d"), tag); ok {
		t.Fatal(`get("d") found a string never put`)
	}
}

// TestKV pins how reports write a key and its value: a row image goes in parentheses so the
// row's key stands apart from its columns; everything else is key=value.
func TestKV(t *testing.T) {
	for _, c := range []struct {
		k, v Datum
		want string
	}{
		{Str("x"), Int(3), "x=3"},
		{Int(7), Str("abc"), "7=abc"},
		{Str("x"), Datum{}, "x=nil"},
		{Int(101), Str("v1=0,v2=16,w=83"), "101=(v1=0,v2=16,w=83)"},
		{Str("k"), Str("a3=5"), "k=(a3=5)"},
		{Str("k"), Str("a,b"), "k=a,b"},
	} {
		if got := KV(c.k, c.v); got != c.want {
			t.Errorf("KV(%#v, %#v) = %q, want %q", c.k, c.v, got, c.want)
		}
	}
}

func TestShowValue(t *testing.T) {
	for v, want := range map[Datum]string{Int(-2): "-2", Str("abc"): "abc", {}: "nil", Str("v1=0,w=3"): "(v1=0,w=3)"} {
		if got := ShowValue(v); got != want {
			t.Errorf("ShowValue(%#v) = %q, want %q", v, got, want)
		}
	}
}
