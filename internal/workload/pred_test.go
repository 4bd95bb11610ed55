package workload

import (
	"testing"
)

// TestBlindWPredShape: the table is loaded by logged loader transactions, half the
// transactions read and half write through predicates, and range widths are uniform in
// [1, RangeMax].
func TestBlindWPredShape(t *testing.T) {
	t.Parallel()
	w, err := Generate("blindw-pred", Options{Seed: 1, Sessions: 4, TxnsPerSess: 500})
	if err != nil {
		t.Fatal(err)
	}
	if w.Table == nil || w.Table.Domain != 10_000 || len(w.Table.Cols) != 2 || w.Table.TagCol == "" {
		t.Fatalf("table %+v, want (k, v1, v2) over 10,000 values and a tag column", w.Table)
	}
	seen := map[int64]bool{}
	for _, tx := range w.Load {
		if len(tx.Ops) > loadChunk {
			t.Fatalf("a loader transaction inserts %d rows", len(tx.Ops))
		}
		for _, o := range tx.Ops {
			if o.Kind != OpInsert || o.From >= 0 || len(o.Row.Vals) != 2 || seen[o.Row.Key] {
				t.Fatalf("loader op %+v", o)
			}
			for _, v := range o.Row.Vals {
				if v < 0 || v >= w.Table.Domain {
					t.Fatalf("loaded value %d outside the domain", v)
				}
			}
			seen[o.Row.Key] = true
		}
	}
	if len(seen) != 10_000 {
		t.Fatalf("the loader inserts %d rows, want 10,000", len(seen))
	}
	reads, writes := 0, 0
	var widths [10]int
	for _, s := range w.Sessions {
		for _, tx := range s {
			if len(tx.Ops) != 1 {
				t.Fatalf("%s has %d ops, want 1", tx.Name, len(tx.Ops))
			}
			o := tx.Ops[0]
			r := o.Row.Range
			width := r.Hi - r.Lo + 1
			if width < 1 || width > 1000 || r.Lo < 0 || r.Hi >= w.Table.Domain || r.Col < 0 || r.Col > 1 {
				t.Fatalf("range %+v", r)
			}
			widths[(width-1)/100]++
			switch o.Kind {
			case OpPredRead:
				reads++
			case OpPredWrite:
				writes++
				if len(o.Row.Set) != 2 {
					t.Fatalf("update sets %d columns", len(o.Row.Set))
				}
			default:
				t.Fatalf("op %v", o.Kind)
			}
		}
	}
	if reads < 900 || writes < 900 {
		t.Errorf("%d predicate reads and %d writes, want about 1000 each", reads, writes)
	}
	for i, n := range widths {
		if n < 120 || n > 280 {
			t.Errorf("%d of 2000 ranges have width in [%d, %d], want about 200 (uniform)", n, 100*i+1, 100*i+100)
		}
	}
}

// TestAssignSpreads: an update's per-row values are a permutation of the keys modulo the
// domain, so a range of the domain keeps matching about its width in rows.
func TestAssignSpreads(t *testing.T) {
	t.Parallel()
	r := newRand(1, 2)
	const d = 1000
	a := Assign{Mul: coprime(r, d), Add: r.Int64N(d)}
	seen := map[int64]bool{}
	for k := range int64(d) {
		v := a.Value(k, d)
		if v < 0 || v >= d || seen[v] {
			t.Fatalf("Assign %+v gives key %d the value %d (seen twice or out of range)", a, k, v)
		}
		seen[v] = true
	}
}

// TestPredWriteSkewShape: every transaction reads one group's range, then inserts a fresh
// row into it or deletes one of the rows it saw.
func TestPredWriteSkewShape(t *testing.T) {
	t.Parallel()
	w, err := Generate("pred-write-skew", Options{Seed: 1, Sessions: 3, TxnsPerSess: 20})
	if err != nil {
		t.Fatal(err)
	}
	keys := map[int64]bool{}
	for _, tx := range w.Load {
		for _, o := range tx.Ops {
			keys[o.Row.Key] = true
		}
	}
	for _, s := range w.Sessions {
		for _, tx := range s {
			if len(tx.Ops) != 3 || tx.Ops[0].Kind != OpPredRead || tx.Ops[1].Kind != OpInsert || tx.Ops[2].Kind != OpDelete {
				t.Fatalf("%s: %v", tx.Name, tx.Ops)
			}
			r, ins := tx.Ops[0].Row.Range, tx.Ops[1].Row
			if r.Col != 0 || r.Hi-r.Lo+1 != predGroup || ins.Vals[0] < r.Lo || ins.Vals[0] > r.Hi || keys[ins.Key] {
				t.Fatalf("range %+v, insert %+v: want a fresh key inside the range", r, ins)
			}
			keys[ins.Key] = true
			if tx.Ops[1].From != 0 || tx.Ops[2].From != 0 || ins.Cond != predCap || tx.Ops[2].Row.Cond != predCap {
				t.Fatalf("insert and delete must depend on the read: %+v", tx.Ops)
			}
		}
	}
}
