package native_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/cputime"
)

// eachTxn calls f with each of a seeded workload of n committed transactions in turn,
// reusing one Txn: 24 sessions, 8 ops each (half reads of the key's latest value, half
// writes of unique values) on 10,000 integer keys, with client intervals in ns.
func eachTxn(n int, f func(*native.Txn)) {
	r := rand.New(rand.NewPCG(1, 2))
	latest := make(map[int64]int64)
	var next int64
	now := int64(1_700_000_000_000_000_000)
	t := &native.Txn{Ops: make([]native.Op, 8)}
	for i := range n {
		t.Session = history.Int(int64(i % 24))
		t.ID = history.Int(int64(i))
		t.Outcome = history.OutcomeCommitted
		t.Time = history.Interval{Begin: now, End: now + 1_500_000}
		t.HasTime = true
		now += 200_000
		for j := range t.Ops {
			k := r.Int64N(10_000)
			if r.IntN(2) == 0 {
				v := history.NilDatum
				if x, ok := latest[k]; ok {
					v = history.Int(x)
				}
				t.Ops[j] = native.Op{Kind: history.OpRead, Key: history.Int(k), Value: v}
			} else {
				next++
				latest[k] = next
				t.Ops[j] = native.Op{Kind: history.OpWrite, Key: history.Int(k), Value: history.Int(next)}
			}
		}
		f(t)
	}
}

// genTxns returns eachTxn's workload as a slice.
func genTxns(n int) []native.Txn {
	txns := make([]native.Txn, 0, n)
	eachTxn(n, func(t *native.Txn) {
		c := *t
		c.Ops = slices.Clone(t.Ops)
		txns = append(txns, c)
	})
	return txns
}

// genNative returns eachTxn's workload in the native format. It encodes each transaction
// as it is generated, so that the benchmarks start with no garbage but the input.
func genNative(tb testing.TB, n int) []byte {
	var buf bytes.Buffer
	buf.Grow(240 * n)
	e := native.NewEncoder(&buf)
	if err := e.EncodeHeader(native.Header{}); err != nil {
		tb.Fatal(err)
	}
	eachTxn(n, func(t *native.Txn) {
		if err := e.EncodeTxn(t); err != nil {
			tb.Fatal(err)
		}
	})
	return buf.Bytes()
}

func BenchmarkRead(b *testing.B) { benchRead(b, "native", native.NewDecoder) }

// BenchmarkSerial reads on one goroutine even where Decode would use two stages, to
// compare their CPU cost.
func BenchmarkSerial(b *testing.B) { benchRead(b, "native-serial", native.NewSerialDecoder) }

func benchRead(b *testing.B, name string, newDecoder func() *native.Decoder) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("%s/txns=%d", name, n), func(b *testing.B) {
			data := genNative(b, n)
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			cpu0 := int64(cputime.Self())
			for b.Loop() {
				hb := history.NewBuilder()
				if err := newDecoder().Decode(bytes.NewReader(data), "bench", hb); err != nil {
					b.Fatal(err)
				}
				if _, err := hb.Build(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "txns/s")
			b.ReportMetric(float64(len(data))*float64(b.N)/float64(int64(cputime.Self())-cpu0)*1e3, "MB/cpu-s")
		})
	}
}

func BenchmarkWrite(b *testing.B) {
	data := genNative(b, 100_000)
	h, err := read(b, string(data))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var buf bytes.Buffer
		buf.Grow(len(data))
		if err := native.Write(&buf, h); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildOnly feeds the same workload straight into a history.Builder, with no
// parsing: the floor under any reader of this workload. MB/cpu-s is per byte of the
// native encoding of the workload, to compare with BenchmarkRead.
func BenchmarkBuildOnly(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("txns=%d", n), func(b *testing.B) {
			txns := genTxns(n)
			size := len(genNative(b, n))
			b.SetBytes(int64(size))
			b.ResetTimer()
			cpu0 := int64(cputime.Self())
			for b.Loop() {
				hb := history.NewBuilder()
				hb.Grow(n, 8*n)
				for i := range txns {
					t := &txns[i]
					s, _ := t.Session.Int()
					id, _ := t.ID.Int()
					hb.BeginTxn(hb.Session(history.Int(s)), history.Int(id), t.Outcome)
					cur := hb.Current()
					cur.Time, cur.HasTime = t.Time, true
					for _, o := range t.Ops {
						k, _ := o.Key.Int()
						kk := hb.IntKey(k)
						v := history.Nil
						if x, ok := o.Value.Int(); ok {
							v = hb.IntValue(x)
						}
						if o.Kind == history.OpRead {
							hb.Read(kk, v)
						} else {
							hb.Write(kk, v)
						}
					}
				}
				if _, err := hb.Build(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(size)*float64(b.N)/float64(int64(cputime.Self())-cpu0)*1e3, "MB/cpu-s")
		})
	}
}
