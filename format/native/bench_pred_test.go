package native_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/cputime"
)

// eachPredTxn calls f with each of a seeded predicate workload shaped like the runner's
// blindw-pred histories: nkeys rows inserted by a load transaction, then n transactions,
// each one predicate read or predicate write over a range of v1 or v2 of width up to
// rangeMax, returning the rows whose image "v1=…,v2=…,w=…" falls in the range (about
// rangeMax/20 rows each). A predicate write rewrites w to the transaction's number, so its
// row images are new values; a predicate read sees images written before. About a third of
// the transactions abort, and a few rows carry a "src" or "match":false option.
func eachPredTxn(n, nkeys, rangeMax int, f func(*native.Txn)) {
	r := rand.New(rand.NewPCG(3, 4))
	const span = 10_000
	v1 := make([]int64, nkeys)
	v2 := make([]int64, nkeys)
	w := make([]int64, nkeys)
	image := func(k int) history.Datum {
		return history.Str(fmt.Sprintf("v1=%d,v2=%d,w=%d", v1[k], v2[k], w[k]))
	}
	now := int64(1_000_000)
	t := &native.Txn{}
	load := &native.Txn{Session: history.Str("load"), Outcome: history.OutcomeCommitted}
	for k := range nkeys {
		v1[k], v2[k], w[k] = r.Int64N(span), r.Int64N(span), int64(k+1)
		load.Ops = append(load.Ops, native.Op{Kind: history.OpInsert, Key: history.Int(int64(k)), Value: image(k)})
	}
	f(load)
	var rows []native.Row
	for i := range n {
		t.Session = history.Int(int64(i % 8))
		t.ID = history.NilDatum
		t.Outcome = history.OutcomeCommitted
		if r.IntN(3) == 0 {
			t.Outcome = history.OutcomeAborted
		}
		t.Time, t.HasTime = history.Interval{Begin: now, End: now + 300_000}, true
		t.Start, t.Commit, t.HasTimestamps = history.Timestamp{Physical: int64(i)}, history.Timestamp{Physical: int64(i + 1)}, true
		now += 100_000
		field, col := "v1", v1
		if r.IntN(2) == 0 {
			field, col = "v2", v2
		}
		lo := r.Int64N(span)
		hi := lo + r.Int64N(int64(rangeMax))
		rows = rows[:0]
		write := r.IntN(2) == 0
		for k := range nkeys {
			if col[k] < lo || col[k] > hi {
				continue
			}
			row := native.Row{Key: history.Int(int64(k)), Match: true}
			if write && t.Outcome == history.OutcomeCommitted {
				w[k] = int64(nkeys + i + 1)
			}
			row.Value = image(k)
			switch r.IntN(200) {
			case 0:
				row.Match = false
			case 1:
				row.Src = history.Src{Kind: history.SrcInit}
			}
			rows = append(rows, row)
		}
		kind := history.OpPredRead
		if write {
			kind = history.OpPredWrite
		}
		p := &native.Pred{
			Pred: history.Predicate{Relation: "t", Expr: fmt.Sprintf("%s BETWEEN %d AND %d", field, lo, hi), Field: history.Str(field), Lo: lo, Hi: hi, IsRange: true},
			Rows: rows,
		}
		t.Ops = append(t.Ops[:0], native.Op{Kind: kind, Pred: p})
		f(t)
	}
}

// genPredNative returns eachPredTxn's workload in the native format.
func genPredNative(tb testing.TB, n, nkeys, rangeMax int) []byte {
	var buf bytes.Buffer
	e := native.NewEncoder(&buf)
	if err := e.EncodeHeader(native.Header{}); err != nil {
		tb.Fatal(err)
	}
	eachPredTxn(n, nkeys, rangeMax, func(t *native.Txn) {
		if err := e.EncodeTxn(t); err != nil {
			tb.Fatal(err)
		}
	})
	return buf.Bytes()
}

// BenchmarkReadPred reads predicate workloads of 2,000 transactions over 10,000 rows with
// ranges up to 100 and 1000 wide (about 5 and 50 rows per op), serially and in two stages.
func BenchmarkReadPred(b *testing.B) {
	for _, rangeMax := range []int{100, 1000} {
		data := genPredNative(b, 2000, 10_000, rangeMax)
		for _, d := range []struct {
			name string
			new  func() *native.Decoder
		}{{"native", native.NewDecoder}, {"native-serial", native.NewSerialDecoder}, {"general", native.NewGeneralDecoder}} {
			b.Run(fmt.Sprintf("%s/range=%d", d.name, rangeMax), func(b *testing.B) { benchReadData(b, data, 2000, d.new) })
		}
	}
}

// BenchmarkReadFile reads the native history named by $ISOVET_NATIVE_FILE (such as a
// runner's blindw-pred history.jsonl), to profile reading real histories.
func BenchmarkReadFile(b *testing.B) {
	name := os.Getenv("ISOVET_NATIVE_FILE")
	if name == "" {
		b.Skip("set ISOVET_NATIVE_FILE to a native history to read")
	}
	data, err := os.ReadFile(name)
	if err != nil {
		b.Fatal(err)
	}
	n := bytes.Count(data, []byte{'\n'})
	for _, d := range []struct {
		name string
		new  func() *native.Decoder
	}{{"native", native.NewDecoder}, {"native-serial", native.NewSerialDecoder}} {
		b.Run(d.name, func(b *testing.B) { benchReadData(b, data, n, d.new) })
	}
}

func benchReadData(b *testing.B, data []byte, n int, newDecoder func() *native.Decoder) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
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
}
