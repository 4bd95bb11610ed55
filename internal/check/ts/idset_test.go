package ts

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/isovet/isovet/history"
)

// TestIDSet drives the id set and a map with the same random operations (ids rising with
// jitter, some far away, some strings; expiry in the order of forgetting) and compares
// every lookup, so that the sliding window, its growth and its spills to the map agree
// with plain set semantics.
func TestIDSet(t *testing.T) {
	t.Parallel()
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var m idset
		if seed%2 == 1 {
			m.max = 1 << 17 // spills ids still held to the map
		}
		model := map[history.Datum]bool{}
		var gone []history.Datum
		var at []time.Time
		t0 := time.Unix(0, 0)
		next := int64(rng.IntN(1000)) - 500
		span := []int64{10, 1000, 100_000, 3_000_000}[seed%4]
		for step := range 100_000 {
			var d history.Datum
			switch r := rng.IntN(100); {
			case r < 2:
				d = history.Str("s" + itoa(rng.IntN(5000)))
			case r < 4:
				d = history.Int(rng.Int64N(1<<40) - 1<<39) // far away
			case r < 20:
				d = history.Int(next - rng.Int64N(span)) // late, or a duplicate
			default:
				next += 1 + rng.Int64N(3)
				d = history.Int(next)
			}
			if got, want := m.has(d), model[d]; got != want {
				t.Fatalf("seed %d step %d: has(%v) = %v, want %v", seed, step, d, got, want)
			}
			if !model[d] {
				m.add(d)
				model[d] = true
				m.forget(d, t0.Add(time.Duration(step)))
				gone, at = append(gone, d), append(at, t0.Add(time.Duration(step)))
			}
			if step%1000 == 999 {
				keep := int(span/2) + 1
				if len(gone) > keep {
					cut := len(gone) - keep
					// expire drops exactly the ids forgotten before the given time.
					m.expire(at[cut])
					for _, g := range gone[:cut] {
						delete(model, g)
					}
					gone, at = gone[cut:], at[cut:]
				}
			}
			if m.n != len(model) {
				t.Fatalf("seed %d step %d: %d ids, want %d", seed, step, m.n, len(model))
			}
		}
		for d := range model {
			if !m.has(d) {
				t.Fatalf("seed %d: lost %v", seed, d)
			}
		}
	}
}
