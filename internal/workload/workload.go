package workload

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// TagBase separates a value's payload from its tag: value = payload*TagBase + tag, with
// 0 <= tag < TagBase.
const TagBase = 1_000_000_000

// Encode returns the stored value for payload and tag.
func Encode(payload, tag int64) int64 { return payload*TagBase + tag }

// Payload returns the payload of a stored value (floor division, so negative payloads work).
func Payload(v int64) int64 {
	p := v / TagBase
	if v%TagBase < 0 {
		p--
	}
	return p
}

// OpKind is the kind of a template operation. The zero value is invalid.
type OpKind uint8

// Operation kinds.
const (
	OpInvalid  OpKind = iota
	OpRead            // read a register
	OpWrite           // write a register
	OpAppend          // append an element to a list
	OpReadList        // read a whole list
	// Row operations on the workload's [Table]; their details are in [Op.Row].
	OpPredRead  // SELECT every row whose column Row.Range.Col lies in [Lo, Hi]
	OpPredWrite // UPDATE every column of those rows (Row.Set)
	OpInsert    // INSERT row Row.Key with payloads Row.Vals, maybe only under a condition
	OpDelete    // DELETE a row an earlier predicate read returned, maybe only under a condition
)

var opNames = [...]string{"invalid", "read", "write", "append", "read-list", "pred-read", "pred-write", "insert", "delete"}

func (k OpKind) String() string {
	if int(k) < len(opNames) {
		return opNames[k]
	}
	return "invalid"
}

// Op is one templated operation.
type Op struct {
	Kind OpKind
	Key  string
	// From is the index of an earlier OpRead in the same transaction whose payload the
	// written payload builds on (-1: none); the written payload is then
	// Payload(read value) + Delta, else Delta.
	From  int
	Delta int64
	// Dup: write Delta itself as the value (a duplicate-value workload), with no fresh tag.
	Dup bool
	// Row holds the details of a row operation (OpPredRead, OpPredWrite, OpInsert,
	// OpDelete); nil for key-value operations. For a conditional OpInsert or OpDelete, From
	// is the index of the predicate read of the same transaction it depends on.
	Row *RowOp
}

// RowOp details a row operation on the workload's [Table].
type RowOp struct {
	// Range is the predicate of OpPredRead and OpPredWrite.
	Range Range
	// Set gives the new payload of every value column (not the tag column) of each row an
	// OpPredWrite updates.
	Set []Assign
	// Key and Vals are the row an OpInsert inserts: its primary key and the payload of every
	// value column (the tag column gets the write's fresh tag).
	Key  int64
	Vals []int64
	// Cond makes an OpInsert or OpDelete conditional on the predicate read From: an insert
	// runs only when that read returned fewer than Cond rows, a delete only when it returned
	// at least Cond rows. 0: unconditional (an insert; a delete needs From).
	Cond int
	// Pick chooses the row an OpDelete deletes: the (Pick mod n)-th of the n rows the
	// predicate read From returned, in key order.
	Pick int
}

// Range is a range predicate Lo <= column Col <= Hi over a value column of the [Table]
// (Col indexes Table.Cols).
type Range struct {
	Col    int
	Lo, Hi int64
}

// Assign is the new payload of one column in an UPDATE: (k*Mul + Add) mod Domain for the row
// with key k (Mul 0: the constant Add mod Domain). A per-row function of the key keeps the
// rows an update touches spread over the domain, so range sizes keep their meaning, and the
// new image stays fully known: the runner computes it from the keys the UPDATE returns.
type Assign struct{ Mul, Add int64 }

// Value returns the payload Assign a gives the row with key k in a domain of size d.
func (a Assign) Value(k, d int64) int64 {
	v := (k*a.Mul + a.Add) % d
	if v < 0 {
		v += d
	}
	return v
}

// Table describes the relational table row workloads use: an int64 primary key k, the value
// columns Cols (int64 payloads in [0, Domain)) and a tag column TagCol that every insert and
// update sets to a number drawn fresh for that write, so that every row image written is
// unique per key (the checker identifies versions by value).
type Table struct {
	Name   string   // relation name recorded in predicates, e.g. "t"
	Cols   []string // value columns, e.g. v1, v2
	TagCol string   // e.g. "w"
	Domain int64
}

// Value returns the value op o writes given the values its transaction has read so far
// (indexed like the template's ops) and a fresh tag.
func (o *Op) Value(reads []int64, tag int64) int64 {
	if o.Dup {
		return o.Delta
	}
	p := o.Delta
	if o.From >= 0 {
		p += Payload(reads[o.From])
	}
	if o.Kind == OpAppend {
		return tag // list elements are unique tags
	}
	return Encode(p, tag)
}

// Txn is one transaction template.
type Txn struct {
	Name string // the transaction type, e.g. "new-order"
	Ops  []Op
}

// Workload is a generated workload: one list of transactions per session.
type Workload struct {
	Name     string
	Sessions [][]Txn
	// Initial holds initial payloads of keys that do not start at 0 (bank balances).
	Initial map[string]int64
	// Keys lists every register key and Lists every list key the workload touches, sorted.
	Keys, Lists []string
	// Invariant, when set, is the sum of the payloads of Keys in every consistent state
	// (the bank's total balance).
	Invariant *int64
	// Table, when set, is the table row operations work on; Load then holds the
	// transactions that fill it (unconditional inserts), which the runner runs and records,
	// in order, in a session of their own before the sessions start.
	Table *Table
	Load  []Txn
}

// NumTxns returns the number of transaction templates.
func (w *Workload) NumTxns() int {
	n := 0
	for _, s := range w.Sessions {
		n += len(s)
	}
	return n
}

// DistKind is a key distribution.
type DistKind uint8

// Distributions. The zero value is uniform.
const (
	Uniform DistKind = iota
	Zipfian
	Hotspot
)

var distNames = [...]string{"uniform", "zipfian", "hotspot"}

func (d DistKind) String() string {
	if int(d) < len(distNames) {
		return distNames[d]
	}
	return "invalid"
}

// ParseDist parses a distribution name.
func ParseDist(s string) (DistKind, error) {
	for i, n := range distNames {
		if n == s {
			return DistKind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown key distribution %q (uniform, zipfian, hotspot)", s)
}

// Options configure a generator. The zero value is usable: EnsureDefaults fills it in.
type Options struct {
	Seed        uint64
	Sessions    int // default 8
	TxnsPerSess int // default 100
	OpsPerTxn   int // default 8 (rw-register, blindw, list-append)
	Keys        int // default depends on the workload
	// ReadRatio is the share of reads for rw-register (0: the Mix decides).
	ReadRatio float64
	// Mix is rw-register's preset: "RH" (95% reads), "BL" (50%), "WH" (30%). Default BL.
	Mix  string
	Dist DistKind
	// Theta is the Zipfian skew (default 0.99); HotFraction and HotProb shape the hotspot
	// distribution (defaults: 10% of the keys get 90% of the accesses).
	Theta       float64
	HotFraction float64
	HotProb     float64
	Duplicates  bool    // write duplicate values on a share of the keys
	DupKeyShare float64 // share of keys with duplicate values (default 0.5)
	DupValues   int     // value space for duplicates (default 100)
	DupTheta    float64 // Zipf skew of duplicate values (default 0.5)
	// RangeMax bounds the rows a blindw-pred predicate is expected to match: the range width
	// is uniform in [1, RangeMax] over a domain as large as the table, so the number of
	// qualifying rows is roughly uniform in [1, RangeMax] (default Keys/10: [1, 1000] for
	// Vbox's 10,000 rows).
	RangeMax int
	// PredOps is the number of predicate operations per blindw-pred transaction (default 1).
	PredOps int
	_       struct{}
}

// EnsureDefaults fills in zero fields.
func (o *Options) EnsureDefaults() {
	if o.Sessions <= 0 {
		o.Sessions = 8
	}
	if o.TxnsPerSess <= 0 {
		o.TxnsPerSess = 100
	}
	if o.OpsPerTxn <= 0 {
		o.OpsPerTxn = 8
	}
	o.Theta = cmp.Or(o.Theta, 0.99)
	o.HotFraction = cmp.Or(o.HotFraction, 0.1)
	o.HotProb = cmp.Or(o.HotProb, 0.9)
	o.DupKeyShare = cmp.Or(o.DupKeyShare, 0.5)
	o.DupValues = cmp.Or(o.DupValues, 100)
	o.DupTheta = cmp.Or(o.DupTheta, 0.5)
}

// Validate reports nonsensical options.
func (o *Options) Validate() error {
	var errs []error
	if o.ReadRatio < 0 || o.ReadRatio > 1 {
		errs = append(errs, fmt.Errorf("read ratio %v is not in [0, 1]", o.ReadRatio))
	}
	if o.Theta < 0 || o.DupTheta < 0 {
		errs = append(errs, errors.New("zipfian theta must not be negative"))
	}
	if o.HotFraction <= 0 || o.HotFraction > 1 || o.HotProb < 0 || o.HotProb > 1 {
		errs = append(errs, errors.New("hotspot fraction and probability must be in (0, 1]"))
	}
	if o.RangeMax < 0 || o.PredOps < 0 {
		errs = append(errs, errors.New("range size and predicate operations per transaction must not be negative"))
	}
	return errors.Join(errs...)
}

// Generator makes a workload from options.
type Generator struct {
	Name    string
	Summary string
	Gen     func(o Options) *Workload
}

var generators = []Generator{
	{"rw-register", "YCSB-like register reads and writes; --mix RH, BL or WH (VeriStrong)", genRegister},
	{"blindw", "BlindW-RW (Cobra): half read-only, half write-only transactions", genBlindW},
	{"list-append", "Elle's list-append: unique appends and whole-list reads", genListAppend},
	{"bank", "transfers between accounts and whole-bank reads; the total balance is invariant", genBank},
	{"tpcc", "TPC-C subset, 1 warehouse: new-order, payment, order-status, delivery, stock-level", genTPCC},
	{"twitter", "C-Twitter: tweet, follow, timeline", genTwitter},
	{"rubis", "RUBiS subset: register, bid, buy-now, view-item, comment", genRUBiS},
	{"write-skew", "pairs of keys; each transaction reads both and writes one (write skew under SI)", genWriteSkew},
	{"rmw", "read-modify-write increments of a few counters (lost updates)", genRMW},
	{"blindw-pred", "BlindW-Pred (Vbox): range reads and range updates over a (k, v1, v2) table", genBlindWPred},
	{"pred-write-skew", "range reads that insert into (or delete from) the range they read: phantoms under SI", genPredWriteSkew},
}

// Generators returns the registered generators.
func Generators() []Generator { return generators }

// Names returns the generator names.
func Names() []string {
	var ns []string
	for _, g := range generators {
		ns = append(ns, g.Name)
	}
	return ns
}

// Generate runs the generator called name.
func Generate(name string, o Options) (*Workload, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("workload %s: %w", name, err)
	}
	for _, g := range generators {
		if g.Name == name {
			w := g.Gen(o)
			w.Name = name
			w.finish()
			return w, nil
		}
	}
	return nil, fmt.Errorf("unknown workload %q (workloads: %s)", name, strings.Join(Names(), ", "))
}

// finish collects the key sets.
func (w *Workload) finish() {
	regs, lists := map[string]bool{}, map[string]bool{}
	for _, s := range w.Sessions {
		for _, t := range s {
			for _, o := range t.Ops {
				switch o.Kind {
				case OpRead, OpWrite:
					regs[o.Key] = true
				case OpAppend, OpReadList:
					lists[o.Key] = true
				}
			}
		}
	}
	for k := range w.Initial {
		regs[k] = true
	}
	for k := range regs {
		w.Keys = append(w.Keys, k)
	}
	for k := range lists {
		w.Lists = append(w.Lists, k)
	}
	slices.Sort(w.Keys)
	slices.Sort(w.Lists)
}

// picker draws key indexes in [0, n) from a distribution.
type picker struct {
	r    *rand.Rand
	n    int
	kind DistKind
	zipf *zipf
	hotN int
	hotP float64
}

func newPicker(r *rand.Rand, n int, o Options) *picker {
	p := &picker{r: r, n: n, kind: o.Dist, hotP: o.HotProb}
	switch o.Dist {
	case Zipfian:
		p.zipf = newZipf(n, o.Theta)
	case Hotspot:
		p.hotN = max(1, int(float64(n)*o.HotFraction))
	}
	return p
}

func (p *picker) pick() int {
	switch p.kind {
	case Zipfian:
		return p.zipf.next(p.r)
	case Hotspot:
		if p.hotN >= p.n || p.r.Float64() < p.hotP {
			return p.r.IntN(p.hotN)
		}
		return p.hotN + p.r.IntN(p.n-p.hotN)
	}
	return p.r.IntN(p.n)
}

// zipf draws ranks in [0, n) with P(i) proportional to 1/(i+1)^theta, by inverse transform
// over the precomputed cumulative distribution (any theta >= 0, unlike math/rand's Zipf which
// needs s > 1).
type zipf struct{ cdf []float64 }

func newZipf(n int, theta float64) *zipf {
	z := &zipf{cdf: make([]float64, n)}
	sum := 0.0
	for i := range n {
		sum += 1 / math.Pow(float64(i+1), theta)
		z.cdf[i] = sum
	}
	for i := range z.cdf {
		z.cdf[i] /= sum
	}
	return z
}

func (z *zipf) next(r *rand.Rand) int {
	u := r.Float64()
	i, _ := slices.BinarySearch(z.cdf, u)
	return min(i, len(z.cdf)-1)
}

func newRand(seed uint64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream^0x9e3779b97f4a7c15))
}

func key(prefix string, i int) string { return prefix + strconv.Itoa(i) }

func read(k string) Op                   { return Op{Kind: OpRead, Key: k, From: -1} }
func write(k string) Op                  { return Op{Kind: OpWrite, Key: k, From: -1} }
func rmw(k string, from int, d int64) Op { return Op{Kind: OpWrite, Key: k, From: from, Delta: d} }
func appendOp(k string) Op               { return Op{Kind: OpAppend, Key: k, From: -1} }
func readList(k string) Op               { return Op{Kind: OpReadList, Key: k, From: -1} }
func txn(name string, ops ...Op) Txn     { return Txn{Name: name, Ops: ops} }
func (t *Txn) add(ops ...Op) int         { t.Ops = append(t.Ops, ops...); return len(t.Ops) - 1 }
