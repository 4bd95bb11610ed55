package certify

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/histtest"
)

// stampTimestamps gives every transaction of h database timestamps in the order it was
// generated (GenPred runs its transactions one after another), swapping a neighbouring pair
// now and then so that some orders are wrong, and making some transactions read-only
// snapshots that start before the last commit.
func stampTimestamps(h *history.History, rng *rand.Rand) {
	ts := make([]int64, len(h.Txns))
	for i := range ts {
		ts[i] = int64(10 * (i + 1))
	}
	if len(ts) > 1 && rng.IntN(3) == 0 {
		i := rng.IntN(len(ts) - 1)
		ts[i], ts[i+1] = ts[i+1], ts[i]
	}
	for i := range h.Txns {
		x := &h.Txns[i]
		x.HasTimestamps = true
		x.Start = history.Timestamp{Physical: ts[i] - 1 - int64(rng.IntN(15))}
		x.Commit = history.Timestamp{Physical: ts[i]}
	}
}

// TestRowCertOracle: whatever the row certificate proves, the brute-force oracle confirms,
// at every level, over random predicate histories of which a good share are not
// serializable; and it proves most of those that are (else it would be a certificate in
// name only).
func TestRowCertOracle(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	defer func(v uint64) { maxDirectSpan = v }(maxDirectSpan)
	defer func(v int) { parallelDecodeMin = v }(parallelDecodeMin)
	ctx := context.Background()
	proved := map[anomaly.Level]int{}
	refuted := map[anomaly.Level]int{}
	var accepted, rejected, byStamps, searched int
	for seed := range n {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		h := histtest.GenPred(rng)
		if seed%4 >= 2 {
			h = twoColumns(t, h, rng)
		}
		if seed%2 == 1 {
			stampTimestamps(h, rng)
		}
		// A third of the seeds decode their images in two halves, as millions would.
		parallelDecodeMin = 1 << 16
		if seed%3 == 0 {
			parallelDecodeMin = 0
		}
		maxDirectSpan = 1 << 22
		if seed%3 == 0 {
			maxDirectSpan = 0 // number the values by sorting
		}
		rc, ok := certifyRows(ctx, h, 0)
		if histtest.SerialOracle(h, anomaly.Serializable, 0, false) {
			accepted++
		} else {
			rejected++
		}
		if ok && slices.Contains([]string{"database commit timestamps", "database commit timestamps, read-only transactions at their start timestamps"}, rc.By) {
			byStamps++
		}
		if ok && strings.Contains(rc.By, "moved") {
			searched++
		}
		for _, lv := range []anomaly.Level{anomaly.Serializable, anomaly.StrongSessionSerializable, anomaly.StrictSerializable} {
			info := lv.Info()
			holds := histtest.SerialOracle(h, lv, 0, false)
			if !holds {
				refuted[lv]++
			}
			if !ok || !rc.Proves(info.Session, info.Realtime) {
				continue
			}
			proved[lv]++
			if !holds {
				t.Fatalf("seed %d: the row certificate (%s) proved %s, which the oracle refutes\n%s", seed, rc.By, lv, histtest.Format(h))
			}
		}
	}
	t.Logf("oracle: %d serializable, %d not (refuted per level: %v); the certificate proved %v (%d by database timestamps, %d after a search)", accepted, rejected, refuted, proved, byStamps, searched)
	if rejected < n/20 || refuted[anomaly.StrictSerializable] < n/5 || proved[anomaly.Serializable] < accepted*9/10 || searched < n/10 || proved[anomaly.StrictSerializable] == 0 || byStamps == 0 {
		t.Fatalf("generator too narrow or certificate too timid: %d serializable, %d not, proved %v, %d by timestamps", accepted, rejected, proved, byStamps)
	}
}

// twoColumns rewrites a GenPred history (integer values, ranges over them) as one over
// row images with two columns, "v1=3-x,v2=x", each predicate a range over
// either column that selects the same rows: the verdicts stay, and the replay's
// per-column numbering is exercised.
func twoColumns(t *testing.T, h *history.History, rng *rand.Rand) *history.History {
	b := history.NewBuilder()
	image := func(v history.Value) history.Value {
		d := h.Value(v)
		if d.IsNil() {
			return history.Nil
		}
		x, ok := d.Int()
		if !ok {
			t.Fatalf("GenPred value %v is not an integer", d)
		}
		return b.StrValue(fmt.Sprintf("v1=%d,v2=%d", 3-x, x))
	}
	if h.Initial != history.Nil {
		b.SetInitial(image(h.Initial))
	}
	for k := range h.Keys {
		b.Key(h.Keys[k])
	}
	for i := range h.Txns {
		x := &h.Txns[i]
		b.BeginTxn(b.Session(h.Sessions[x.Session].Source), x.Source, x.Outcome)
		cur := b.Current()
		cur.Time, cur.HasTime = x.Time, x.HasTime
		for _, o := range x.Ops {
			switch o.Kind {
			case history.OpRead:
				b.Read(o.Key, image(o.Value))
			case history.OpWrite:
				b.Write(o.Key, image(o.Value))
			case history.OpInsert:
				b.Insert(o.Key, image(o.Value))
			case history.OpDelete:
				b.Delete(o.Key)
			case history.OpPredRead, history.OpPredWrite:
				po := h.Pred(o)
				p := po.Pred
				p.Field = history.Str("v2")
				if rng.IntN(2) == 0 {
					p.Field, p.Lo, p.Hi = history.Str("v1"), 3-po.Pred.Hi, 3-po.Pred.Lo
				}
				rows := make([]history.Row, len(po.Rows))
				for j, r := range po.Rows {
					rows[j] = history.Row{Key: r.Key, Value: image(r.Value), Match: r.Match}
				}
				if o.Kind == history.OpPredRead {
					b.PredRead(history.PredOp{Pred: p, Rows: rows})
				} else {
					b.PredWrite(history.PredOp{Pred: p, Rows: rows})
				}
			default:
				t.Fatalf("GenPred made a %v", o.Kind)
			}
		}
		b.EndTxn()
	}
	out, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRowCertDeclines: histories outside what the replay models exactly are declined, not
// passed.
func TestRowCertDeclines(t *testing.T) {
	pred := history.Predicate{Expr: "v1 in [0, 9]", Field: history.Str("v1"), Lo: 0, Hi: 9, IsRange: true}
	build := func(edit func(b *history.Builder, x, y history.Key)) *history.History {
		b := history.NewBuilder()
		x, y := b.StrKey("x"), b.StrKey("y")
		s := b.Session(history.Int(0))
		b.BeginTxn(s, history.Str("T1"), history.OutcomeCommitted)
		b.Current().Time, b.Current().HasTime = history.Interval{Begin: 0, End: 10}, true
		b.Write(x, b.StrValue("v1=1,v2=1"))
		b.Write(y, b.StrValue("v1=2,v2=2"))
		b.EndTxn()
		b.BeginTxn(s, history.Str("T2"), history.OutcomeCommitted)
		b.Current().Time, b.Current().HasTime = history.Interval{Begin: 20, End: 30}, true
		edit(b, x, y)
		b.EndTxn()
		h, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	both := func(b *history.Builder, x, y history.Key) []history.Row {
		return []history.Row{{Key: x, Value: b.StrValue("v1=1,v2=1"), Match: true}, {Key: y, Value: b.StrValue("v1=2,v2=2"), Match: true}}
	}
	ctx := context.Background()
	// The control: a read that returns both rows passes.
	if rc, ok := certifyRows(ctx, build(func(b *history.Builder, x, y history.Key) {
		b.PredRead(history.PredOp{Pred: pred, Rows: both(b, x, y)})
	}), 0); !ok || !rc.Proves(true, true) {
		t.Fatalf("the control history did not pass: %+v", rc)
	}
	// And one that names the writer it read from.
	if rc, ok := certifyRows(ctx, build(func(b *history.Builder, x, y history.Key) {
		b.ReadFrom(x, b.StrValue("v1=1,v2=1"), history.Src{Kind: history.SrcTxn, Txn: 0, Op: 0})
	}), 0); !ok || !rc.Proves(true, true) {
		t.Fatalf("the control history with a named writer did not pass: %+v", rc)
	}
	cases := map[string]func(b *history.Builder, x, y history.Key){
		"a read of its own write naming another writer": func(b *history.Builder, x, y history.Key) {
			b.Write(x, b.StrValue("v1=5,v2=5"))
			b.ReadFrom(x, b.StrValue("v1=5,v2=5"), history.Src{Kind: history.SrcTxn, Txn: 0, Op: 0})
		},
		"a read naming the initial state": func(b *history.Builder, x, y history.Key) {
			b.ReadFrom(x, b.StrValue("v1=1,v2=1"), history.Src{Kind: history.SrcInit})
		},
		"a row left out": func(b *history.Builder, x, y history.Key) {
			b.PredRead(history.PredOp{Pred: pred, Rows: both(b, x, y)[:1]})
		},
		"a row listed twice": func(b *history.Builder, x, y history.Key) {
			r := both(b, x, y)
			b.PredRead(history.PredOp{Pred: pred, Rows: []history.Row{r[0], r[0], r[1]}})
		},
		"a stale value": func(b *history.Builder, x, y history.Key) {
			r := both(b, x, y)
			r[0].Value = b.StrValue("v1=3,v2=1")
			b.PredRead(history.PredOp{Pred: pred, Rows: r})
		},
		"an unmatched row in a read": func(b *history.Builder, x, y history.Key) {
			r := both(b, x, y)
			r[1].Match = false
			b.PredRead(history.PredOp{Pred: pred, Rows: r})
		},
		"a predicate that is not a range": func(b *history.Builder, x, y history.Key) {
			b.PredRead(history.PredOp{Pred: history.Predicate{Expr: "v1 like '1%'"}, Rows: both(b, x, y)})
		},
		"a partial image": func(b *history.Builder, x, y history.Key) {
			b.Write(x, b.StrValue("v2=7"))
			b.PredRead(history.PredOp{Pred: pred, Rows: both(b, x, y)[1:]})
		},
		"an insert over a live row": func(b *history.Builder, x, y history.Key) {
			b.Insert(x, b.StrValue("v1=20,v2=1"))
		},
		"a predicate write that missed a row": func(b *history.Builder, x, y history.Key) {
			b.PredWrite(history.PredOp{Pred: pred, Rows: []history.Row{{Key: x, Value: b.StrValue("v1=5,v2=1"), Match: true}}})
		},
		"a failed operation": func(b *history.Builder, x, y history.Key) {
			b.SetOpFlags(b.Read(x, b.StrValue("v1=1,v2=1")), history.OpFailed)
		},
	}
	for name, edit := range cases {
		h := build(edit)
		rc, ok := certifyRows(ctx, h, 0)
		if name == "an insert over a live row" {
			// Serializable with the insert first, but not in session or real-time order.
			if ok && (rc.Session || rc.Realtime || !histtest.SerialOracle(h, anomaly.Serializable, 0, false)) {
				t.Errorf("%s: %+v", name, rc)
			}
			continue
		}
		if ok {
			t.Errorf("%s: the certificate passed (%+v)", name, rc)
		}
	}
	// Unknown outcomes are declined.
	b := history.NewBuilder()
	x := b.StrKey("x")
	b.BeginTxn(b.Session(history.Int(0)), history.Str("T1"), history.OutcomeUnknown)
	b.Current().Time, b.Current().HasTime = history.Interval{Begin: 0, End: 10}, true
	b.Write(x, b.IntValue(1))
	b.EndTxn()
	h, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if rc, ok := certifyRows(ctx, h, 0); ok {
		t.Errorf("unknown outcome: the certificate passed (%+v)", rc)
	}
}

// TestDecodeImage: the replay reads row images as history.ImageInt does, or declines.
func TestDecodeImage(t *testing.T) {
	fields := []string{"v1", "v2"}
	rng := rand.New(rand.NewPCG(1, 2))
	parts := []string{"v1=3", "v2=-4", "v1=+5", "w=x", "v2=", "v1=99999999999999999999", "=1", "v3=7", "v2=12", "v1", "v2=0x1"}
	for range 20000 {
		var s string
		for j := range 1 + rng.IntN(4) {
			if j > 0 {
				s += ","
			}
			s += parts[rng.IntN(len(parts))]
		}
		out := make([]int64, 2)
		got := decodeImage(history.Str(s), fields, out)
		want := true
		for f, name := range fields {
			v, found, ok := history.ImageInt(s, name)
			if !found || !ok {
				want = false
				break
			}
			if got && out[f] != v {
				t.Fatalf("%q: column %s read as %d, ImageInt reads %d", s, name, out[f], v)
			}
		}
		if got && !want {
			t.Fatalf("%q: decoded, but ImageInt does not read every column", s)
		}
	}
	out := make([]int64, 2)
	if !decodeImage(history.Int(7), fields, out) || out[0] != 7 || out[1] != 7 {
		t.Errorf("an integer value: %v", out)
	}
	if !decodeImage(history.Str("w=1,v2=10,v1=-3"), fields, out) || fmt.Sprint(out) != "[-3 10]" {
		t.Errorf("a whole image: %v", out)
	}
}

// TestSearchSplit fits read-only transactions into the writing transactions' order: a
// long read-only transaction saw the state between two writers that both ended inside its
// client interval, which its begin time (where the clocks put it) does not give.
func TestSearchSplit(t *testing.T) {
	pred := history.Predicate{Expr: "v1 in [0, 9]", Field: history.Str("v1"), Lo: 0, Hi: 9, IsRange: true}
	build := func(saw []string) *history.History {
		b := history.NewBuilder()
		x, y := b.StrKey("x"), b.StrKey("y")
		w, r := b.Session(history.Int(0)), b.Session(history.Int(1))
		txn := func(s history.SessionID, id string, begin, end int64, body func()) {
			b.BeginTxn(s, history.Str(id), history.OutcomeCommitted)
			b.Current().Time, b.Current().HasTime = history.Interval{Begin: begin, End: end}, true
			body()
			b.EndTxn()
		}
		txn(w, "W1", 0, 10, func() { b.Write(x, b.StrValue("v1=1")); b.Write(y, b.StrValue("v1=1")) })
		txn(r, "R", 5, 100, func() {
			var rows []history.Row
			for i, k := range []history.Key{x, y} {
				if saw[i] != "" {
					rows = append(rows, history.Row{Key: k, Value: b.StrValue(saw[i]), Match: true})
				}
			}
			b.PredRead(history.PredOp{Pred: pred, Rows: rows})
		})
		txn(w, "W2", 20, 30, func() { b.Write(x, b.StrValue("v1=2")) })
		txn(w, "W3", 40, 50, func() { b.Write(y, b.StrValue("v1=20")) })
		h, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	split := func(h *history.History, rt bool) []int32 {
		rs, ok := newReplayDB(h)
		if !ok {
			t.Fatal("out of the certificate's scope")
		}
		rs.sess = sessionLinks(h, nil)
		readOnly := []bool{false, true, false, false}
		order, _ := rs.searchSplit(context.Background(), []int32{0, 1, 2, 3}, readOnly, rt)
		if order != nil && !rs.replay(context.Background(), order) {
			t.Fatalf("searchSplit found %v, which does not replay", order)
		}
		return order
	}
	// R saw x as W2 left it and y before W3: its place is between W2 and W3.
	between := build([]string{"v1=2", "v1=1"})
	for _, rt := range []bool{true, false} {
		if got := split(between, rt); !slices.Equal(got, []int32{0, 2, 1, 3}) {
			t.Errorf("rt=%v: searchSplit = %v, want [0 2 1 3]", rt, got)
		}
	}
	if rc, ok := certifyRows(context.Background(), between, 0); !ok || !rc.Proves(true, true) {
		t.Errorf("certifyRows = %+v, %v; want a strict proof", rc, ok)
	}
	// R saw x before W2 and y after W3: no state gives both.
	if got := split(build([]string{"v1=1", ""}), false); got != nil {
		t.Errorf("searchSplit = %v for a read no state gives, want nil", got)
	}
	// R saw the state after W3; when W3 began after R ended, only a search without real
	// time may place R there.
	late := build([]string{"v1=2", ""})
	late.Txns[3].Time = history.Interval{Begin: 200, End: 210}
	if got := split(late, true); got != nil {
		t.Errorf("rt: searchSplit = %v, which puts R after a writer that began after it ended", got)
	}
	if got := split(late, false); !slices.Equal(got, []int32{0, 2, 3, 1}) {
		t.Errorf("searchSplit = %v, want [0 2 3 1]", got)
	}
	// Two readers of one state go by begin time, so that the one that ended before the
	// other began comes first.
	b := history.NewBuilder()
	x := b.StrKey("x")
	for i, tx := range []struct {
		sess         int64
		begin, end   int64
		write, reads string
	}{{0, 0, 10, "v1=1", ""}, {1, 50, 60, "", "v1=1"}, {2, 20, 30, "", "v1=1"}, {0, 200, 210, "v1=2", ""}} {
		b.BeginTxn(b.Session(history.Int(tx.sess)), history.Int(int64(i)), history.OutcomeCommitted)
		b.Current().Time, b.Current().HasTime = history.Interval{Begin: tx.begin, End: tx.end}, true
		if tx.write != "" {
			b.Write(x, b.StrValue(tx.write))
		} else {
			b.PredRead(history.PredOp{Pred: pred, Rows: []history.Row{{Key: x, Value: b.StrValue(tx.reads), Match: true}}})
		}
		b.EndTxn()
	}
	two, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := newReplayDB(two)
	rs.sess = sessionLinks(two, nil)
	got, _ := rs.searchSplit(context.Background(), []int32{0, 1, 2, 3}, []bool{false, true, true, false}, true)
	if !slices.Equal(got, []int32{0, 2, 1, 3}) || !keepsRealTime(two, got, 0) {
		t.Errorf("searchSplit = %v, want [0 2 1 3], which keeps real time", got)
	}
}

// TestColIndexCounts checks the per-column counts against a plain count, on columns wide
// enough for every level (ranks, 64-rank and 4,096-rank blocks) to matter.
func TestColIndexCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for _, n := range []int{1, 63, 64, 65, 4095, 4096, 4097, 20000} {
		c := colIndex{n: n}
		c.alloc()
		plain := make([]int, n)
		for step := range 3000 {
			r := rng.IntN(n)
			d := int32(1)
			if plain[r] > 0 && rng.IntN(2) == 0 {
				d = -1
			}
			c.add(int32(r), d)
			plain[r] += int(d)
			if step%10 == 0 {
				x := rng.IntN(n + 1)
				want := 0
				for _, k := range plain[:x] {
					want += k
				}
				if got := c.prefix(x); got != want {
					t.Fatalf("n=%d step %d: prefix(%d) = %d, want %d", n, step, x, got, want)
				}
			}
		}
		if got, want := c.prefix(n), func() (s int) {
			for _, k := range plain {
				s += k
			}
			return
		}(); got != want {
			t.Fatalf("n=%d: prefix(n) = %d, want %d", n, got, want)
		}
		c.reset()
		if c.prefix(n) != 0 {
			t.Fatalf("n=%d: counts left after reset", n)
		}
	}
}

// TestParallelDecodeAgrees checks that decoding the images in two halves gives the replay
// the same tables as decoding them in one pass.
func TestParallelDecodeAgrees(t *testing.T) {
	defer func(v int) { parallelDecodeMin = v }(parallelDecodeMin)
	for seed := range 300 {
		rng := rand.New(rand.NewPCG(uint64(seed), 5))
		h := histtest.GenPred(rng)
		if seed%2 == 1 {
			h = twoColumns(t, h, rng)
		}
		parallelDecodeMin = 1 << 30
		one, ok1 := newReplayDB(h)
		parallelDecodeMin = 0
		two, ok2 := newReplayDB(h)
		if ok1 != ok2 {
			t.Fatalf("seed %d: in scope %v in one pass, %v in two halves", seed, ok1, ok2)
		}
		if !ok1 {
			continue
		}
		if !slices.Equal(one.slot, two.slot) || !slices.Equal(one.images, two.images) || !slices.Equal(one.init, two.init) {
			t.Fatalf("seed %d: the tables differ\nslot %v\n     %v\nimages %v\n       %v", seed, one.slot, two.slot, one.images, two.images)
		}
	}
}
