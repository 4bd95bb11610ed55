package workload

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGeneratorsDeterministic(t *testing.T) {
	t.Parallel()
	for _, g := range Generators() {
		t.Run(g.Name, func(t *testing.T) {
			t.Parallel()
			o := Options{Seed: 7, Sessions: 3, TxnsPerSess: 20}
			a, err := Generate(g.Name, o)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := Generate(g.Name, o)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("Generate(%s) differs between runs with one seed:\n%s", g.Name, cmp.Diff(a, b))
			}
			o.Seed = 8
			c, _ := Generate(g.Name, o)
			if reflect.DeepEqual(a.Sessions, c.Sessions) { // cmp.Equal would diff the slices: slow
				t.Errorf("Generate(%s) ignores the seed", g.Name)
			}
			if a.NumTxns() != 60 || len(a.Keys)+len(a.Lists) == 0 && len(a.Load) == 0 {
				t.Errorf("Generate(%s): %d txns, %d keys, %d lists", g.Name, a.NumTxns(), len(a.Keys), len(a.Lists))
			}
			for _, s := range a.Sessions {
				for _, tx := range s {
					for i, op := range tx.Ops {
						want := OpRead
						if op.Row != nil {
							want = OpPredRead // conditional inserts and deletes
						}
						if op.From >= i || (op.From >= 0 && tx.Ops[op.From].Kind != want) {
							t.Fatalf("%s: op %d of %s builds on op %d, which is not an earlier read", g.Name, i, tx.Name, op.From)
						}
					}
				}
			}
		})
	}
}

func TestValueEncoding(t *testing.T) {
	t.Parallel()
	for _, p := range []int64{-5, -1, 0, 1, 250} {
		for _, tag := range []int64{0, 1, TagBase - 1} {
			if got := Payload(Encode(p, tag)); got != p {
				t.Errorf("Payload(Encode(%d, %d)) = %d, want %d", p, tag, got, p)
			}
		}
	}
	o := Op{Kind: OpWrite, From: 0, Delta: -3}
	if got := o.Value([]int64{Encode(10, 4)}, 9); got != Encode(7, 9) {
		t.Errorf("rmw value = %d, want %d", got, Encode(7, 9))
	}
}

func TestDistributions(t *testing.T) {
	t.Parallel()
	const n, draws = 100, 20000
	for _, tc := range []struct {
		dist        DistKind
		minTop10Pct float64 // share of draws landing on keys 0..9
	}{
		{Uniform, 0.05},
		{Zipfian, 0.4},
		{Hotspot, 0.85},
	} {
		t.Run(tc.dist.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			p := newPicker(r, n, func() Options { o := Options{Dist: tc.dist}; o.EnsureDefaults(); return o }())
			top := 0
			for range draws {
				k := p.pick()
				if k < 0 || k >= n {
					t.Fatalf("pick() = %d, out of range", k)
				}
				if k < 10 {
					top++
				}
			}
			if got := float64(top) / draws; got < tc.minTop10Pct {
				t.Errorf("%s: share of the 10 first keys = %.2f, want >= %.2f", tc.dist, got, tc.minTop10Pct)
			}
			if tc.dist == Uniform && float64(top)/draws > 0.15 {
				t.Errorf("uniform: share of the 10 first keys = %.2f, want about 0.10", float64(top)/draws)
			}
		})
	}
}

func TestMixesAndDuplicates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mix  string
		want float64
	}{{"RH", 0.95}, {"BL", 0.5}, {"WH", 0.3}} {
		w, err := Generate("rw-register", Options{Seed: 1, Mix: tc.mix, Sessions: 4, TxnsPerSess: 200})
		if err != nil {
			t.Fatal(err)
		}
		reads, all := 0, 0
		for _, s := range w.Sessions {
			for _, tx := range s {
				for _, o := range tx.Ops {
					all++
					if o.Kind == OpRead {
						reads++
					}
				}
			}
		}
		if got := float64(reads) / float64(all); got < tc.want-0.05 || got > tc.want+0.05 {
			t.Errorf("mix %s: read share %.2f, want %.2f", tc.mix, got, tc.want)
		}
	}
	w, _ := Generate("rw-register", Options{Seed: 1, Duplicates: true, Keys: 10})
	dups := 0
	for _, s := range w.Sessions {
		for _, tx := range s {
			for _, o := range tx.Ops {
				if o.Dup {
					dups++
					if o.Delta < 1 || o.Delta > 100 {
						t.Fatalf("duplicate value %d outside [1, 100]", o.Delta)
					}
				}
			}
		}
	}
	if dups == 0 {
		t.Error("Duplicates: no duplicate-value writes generated")
	}
}

func TestUnknownWorkload(t *testing.T) {
	if _, err := Generate("nope", Options{}); err == nil {
		t.Fatal("Generate(nope) succeeded")
	}
}

func ExampleGenerate() {
	w, _ := Generate("write-skew", Options{Seed: 1, Sessions: 2, TxnsPerSess: 1})
	for s, txns := range w.Sessions {
		for _, t := range txns {
			fmt.Print("session ", s, " ", t.Name, ":")
			for _, o := range t.Ops {
				fmt.Print(" ", o.Kind, "(", o.Key, ")")
			}
			fmt.Println()
		}
	}
	fmt.Println(w.Keys)
	// Output:
	// session 0 take-y: read(x1) read(y1) write(y1)
	// session 1 take-x: read(x1) read(y1) write(x1)
	// [x1 y1]
}
