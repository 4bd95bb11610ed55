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
