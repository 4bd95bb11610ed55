package workload

import "math/rand/v2"

// Row workloads: a table t(k, v1, v2, w) filled by logged loader transactions, then
// predicate reads and writes over it.

// loadChunk is how many rows one loader transaction inserts.
const loadChunk = 1000

// predTable returns the table of the row workloads, with payloads in [0, domain).
func predTable(domain int64) *Table {
	return &Table{Name: "t", Cols: []string{"v1", "v2"}, TagCol: "w", Domain: domain}
}

// load returns loader transactions inserting rows 0..n-1, with payloads drawn by vals.
func load(n int, vals func(k int) []int64) []Txn {
	var txns []Txn
	for lo := 0; lo < n; lo += loadChunk {
		t := Txn{Name: "load"}
		for k := lo; k < min(lo+loadChunk, n); k++ {
			t.add(Op{Kind: OpInsert, From: -1, Row: &RowOp{Key: int64(k), Vals: vals(k)}})
		}
		txns = append(txns, t)
	}
	return txns
}

func predRead(col int, lo, hi int64) Op {
	return Op{Kind: OpPredRead, From: -1, Row: &RowOp{Range: Range{Col: col, Lo: lo, Hi: hi}}}
}

// coprime returns a multiplier in [1, d) with no factor in common with d, so that k*m mod d
// is a permutation of the keys modulo d.
func coprime(r *rand.Rand, d int64) int64 {
	if d <= 2 {
		return 1
	}
	for {
		m := 1 + r.Int64N(d-1)
		a, b := m, d
		for b != 0 {
			a, b = b, a%b
		}
		if a == 1 {
			return m
		}
	}
}

// genBlindWPred is Vbox's BlindW-Pred: a table of Keys rows (default 10,000) with v1 and v2
// uniform over a domain as large as the table; half the transactions are predicate reads
// (SELECT k, v1, v2, w WHERE v1 or v2 BETWEEN lo AND hi), half predicate writes (UPDATE ...
// SET v1, v2, w WHERE v1 or v2 BETWEEN lo AND hi). Range widths are uniform in
// [1, RangeMax], so about that many rows qualify. Updates scatter the rows they change over
// the domain again ([Assign]), which keeps the values uniform as the run goes.
func genBlindWPred(o Options) *Workload {
	n := keysOr(o, 10_000)
	d := int64(n)
	rmax := o.RangeMax
	if rmax <= 0 {
		rmax = max(1, n/10)
	}
	rmax = min(rmax, n)
	ops := o.PredOps
	if ops <= 0 {
		ops = 1
	}
	lr := newRand(o.Seed, 1<<32)
	w := &Workload{Table: predTable(d), Load: load(n, func(int) []int64 { return []int64{lr.Int64N(d), lr.Int64N(d)} })}
	rng := func(r *rand.Rand) (int, int64, int64) {
		width := 1 + r.Int64N(int64(rmax))
		lo := r.Int64N(d - width + 1)
		return r.IntN(2), lo, lo + width - 1
	}
	w.Sessions = perSessionPicker(o, n, func(r *rand.Rand, _ *picker, _ int) Txn {
		if r.IntN(2) == 0 {
			t := Txn{Name: "pred-read"}
			for range ops {
				t.add(predRead(rng(r)))
			}
			return t
		}
		t := Txn{Name: "pred-write"}
		for range ops {
			col, lo, hi := rng(r)
			set := []Assign{{Mul: coprime(r, d), Add: r.Int64N(d)}, {Mul: coprime(r, d), Add: r.Int64N(d)}}
			t.add(Op{Kind: OpPredWrite, From: -1, Row: &RowOp{Range: Range{Col: col, Lo: lo, Hi: hi}, Set: set}})
		}
		return t
	})
	return w
}

// predGroup is the width of the v1 ranges pred-write-skew reads, and predCap the number of
// rows each range should hold.
const (
	predGroup = 10
	predCap   = 3
)

// genPredWriteSkew: Keys groups (default 2) of v1 values, each a range of 10 that starts
// with 2 rows. A transaction reads one group's range (SELECT ... WHERE v1 BETWEEN 10g AND
// 10g+9) and keeps it at about 3 rows: if it saw fewer, it inserts a new row (a fresh key)
// into the range, else it deletes one of the rows it saw. Two concurrent transactions that
// both miss the other's insert are a phantom, a predicate write skew: serializability
// forbids it, snapshot isolation (PostgreSQL's REPEATABLE READ) allows it.
func genPredWriteSkew(o Options) *Workload {
	groups := keysOr(o, 2)
	d := int64(groups * predGroup)
	rows := 2 * groups
	lr := newRand(o.Seed, 1<<32)
	w := &Workload{Table: predTable(d), Load: load(rows, func(k int) []int64 {
		return []int64{int64(k%groups*predGroup) + lr.Int64N(predGroup), lr.Int64N(d)}
	})}
	w.Sessions = make([][]Txn, o.Sessions)
	for s := range w.Sessions {
		r := newRand(o.Seed, uint64(s))
		p := newPicker(r, groups, o)
		w.Sessions[s] = make([]Txn, o.TxnsPerSess)
		for i := range w.Sessions[s] {
			// Fresh keys follow the loaded rows, one per template.
			g := int64(p.pick())
			lo := g * predGroup
			key := int64(rows + s*o.TxnsPerSess + i)
			w.Sessions[s][i] = txn("book",
				predRead(0, lo, lo+predGroup-1),
				Op{Kind: OpInsert, From: 0, Row: &RowOp{Key: key, Vals: []int64{lo + r.Int64N(predGroup), r.Int64N(d)}, Cond: predCap}},
				Op{Kind: OpDelete, From: 0, Row: &RowOp{Cond: predCap, Pick: r.IntN(predCap + 1)}},
			)
		}
	}
	return w
}
