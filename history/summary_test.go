package history_test

import (
	"math/rand/v2"
	"testing"

	"github.com/isovet/isovet/history"
)

// TestSummarizeCountsDuplicateWritesAsAMapWould builds random histories in which values
// are written to several keys, several times, and by every write kind, and compares the
// duplicate-write count with a plain map of (key, value) pairs.
func TestSummarizeCountsDuplicateWritesAsAMapWould(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	for range 200 {
		b := history.NewBuilder()
		s := b.Session(history.Int(1))
		type kv struct {
			k history.Key
			v history.Value
		}
		seen := map[kv]bool{}
		dups := 0
		for range r.IntN(30) {
			b.BeginTxn(s, history.NilDatum, history.OutcomeCommitted)
			for range r.IntN(6) {
				op := r.IntN(4)
				// Lists (appends) on keys 4-7, registers on 0-3: a key is one or the other.
				base := int64(0)
				if op == 2 {
					base = 4
				}
				k, v := b.IntKey(base+r.Int64N(4)), b.IntValue(r.Int64N(6))
				switch op {
				case 0:
					b.Read(k, v)
					continue
				case 1:
					b.Write(k, v)
				case 2:
					b.Append(k, v)
				case 3:
					b.Insert(k, v)
				}
				if seen[kv{k, v}] {
					dups++
				}
				seen[kv{k, v}] = true
			}
		}
		h, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		if got := history.Summarize(h); got.DuplicateWrites != dups || got.UniqueWrites != (dups == 0) {
			t.Fatalf("Summarize() counts %d duplicate writes (unique %v), want %d", got.DuplicateWrites, got.UniqueWrites, dups)
		}
	}
}
