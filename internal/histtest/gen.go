package histtest

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/isovet/isovet/history"
)

// GenOptions shape a generated history. The zero value is usable: 20 transactions over 3
// sessions and 4 keys, 4 ops each, half reads, a serial execution, nothing perturbed.
type GenOptions struct {
	Txns      int     // transactions (default 20)
	Sessions  int     // sessions (default 3)
	Keys      int     // keys (default 4)
	OpsPerTxn int     // ops per transaction, exactly (default 4)
	ReadRatio float64 // fraction of ops that read (default 0.5; negative: no reads)

	// Concurrency is how many transactions may be open at once. 0 or 1 executes serially
	// (the history is strict serializable); more simulates snapshot isolation with
	// first-committer-wins (the history is strong SI, and may show write skew).
	Concurrency int

	DupRatio     float64 // fraction of writes that reuse a value already written to the key
	AbortRatio   float64 // fraction of transactions that abort of their own accord
	UnknownRatio float64 // fraction of transactions whose outcome is recorded as unknown
	ListAppend   bool    // appends and list reads instead of writes and reads
	Intervals    bool    // record client intervals [begin, commit]
	Timestamps   bool    // record database start and commit timestamps

	// EarlyGiveUp (with Intervals) records each transaction of unknown outcome as ending
	// at a random time between its begin and its commit: the client gave up before the
	// database committed (or aborted) it, so transactions that began after the recorded
	// end may still precede it.
	EarlyGiveUp bool
	// NoIntervalRatio (with Intervals) is the fraction of transactions recorded without a
	// client interval.
	NoIntervalRatio float64

	// FailedRatio is the fraction of transactions in which one statement fails, recorded
	// as a buggy recorder does: the statement is marked failed (history.OpFailed) and the
	// transaction logged as committed. The database either rolled the transaction back
	// (PostgreSQL, CockroachDB) or committed it without the statement (MySQL, Galera), one
	// or the other at random; a failed read records a value the statement never returned.
	FailedRatio float64

	// Perturb is the fraction of reads whose result is corrupted after the fact (another
	// written value, a thin-air value, or for lists a dropped or swapped element), making
	// the history likely invalid. Zero keeps the execution's own results.
	Perturb float64
}

func (o *GenOptions) ensureDefaults() {
	if o.Txns == 0 {
		o.Txns = 20
	}
	if o.Sessions <= 0 {
		o.Sessions = 3
	}
	if o.Keys <= 0 {
		o.Keys = 4
	}
	if o.OpsPerTxn <= 0 {
		o.OpsPerTxn = 4
	}
	if o.ReadRatio == 0 {
		o.ReadRatio = 0.5
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 1
	}
	if o.Concurrency > o.Sessions {
		o.Concurrency = o.Sessions
	}
}

type version struct {
	commit int64
	v      history.Value // register: the value; list: the list length after this commit
}

type genOp struct {
	kind history.OpKind
	key  int32
	val  history.Value // register: the value; list read: index into genTxn.lists
}

type openTxn struct {
	sess  int
	start int64
}

type gen struct {
	o    GenOptions
	rng  *rand.Rand
	b    *history.Builder
	keys []history.Key
	sess []history.SessionID
	// versions per key (committed, in commit order); lists per key (committed elements).
	versions [][]version
	lists    [][]history.Value
	written  [][]history.Value // every value written to each key, for duplicates and perturbing
	nextVal  int64
	clock    int64
	out      []genTxn // executed transactions, in commit order, emitted at the end
}

// genTxn is an executed transaction before it is perturbed and recorded.
type genTxn struct {
	sess          int
	outcome       history.Outcome
	start, commit int64
	ops           []genOp
	lists         [][]history.Value // list-read results; genOp.val indexes them
	failed        int               // index in ops of the failed statement (FailedRatio), or -1
}

// Gen returns a random history from seed (math/rand/v2 PCG), as GenOptions describe. The
// same seed and options always give the same history.
func Gen(seed uint64, o GenOptions) *history.History {
	o.ensureDefaults()
	g := &gen{o: o, rng: rand.New(rand.NewPCG(seed, 0x15073e7)), b: history.NewBuilder()}
	g.b.Grow(o.Txns, o.Txns*o.OpsPerTxn)
	for s := range o.Sessions {
		g.sess = append(g.sess, g.b.Session(history.Int(int64(s))))
	}
	for k := range o.Keys {
		g.keys = append(g.keys, g.b.IntKey(int64(k)))
	}
	g.versions = make([][]version, o.Keys)
	g.lists = make([][]history.Value, o.Keys)
	g.written = make([][]history.Value, o.Keys)

	g.interleave()
	g.perturb()
	g.emit()
	h, err := g.b.Build()
	if err != nil {
		panic(fmt.Sprintf("histtest: generated an invalid history (seed %d): %v", seed, err))
	}
	return h
}

// interleave executes the transactions: each step either begins one (on a free session,
// while fewer than Concurrency are open, always when none is) or commits an open one picked
// at random.
func (g *gen) interleave() {
	o := &g.o
	var open []openTxn
	busy := make([]bool, o.Sessions)
	begun := 0
	for begun < o.Txns || len(open) > 0 {
		canBegin := begun < o.Txns && len(open) < o.Concurrency
		if canBegin && (len(open) == 0 || g.rng.IntN(2) == 0) {
			s := g.rng.IntN(o.Sessions)
			for busy[s] {
				s = (s + 1) % o.Sessions
			}
			busy[s] = true
			g.clock++
			open = append(open, openTxn{sess: s, start: g.clock})
			begun++
			continue
		}
		i := g.rng.IntN(len(open))
		t := open[i]
		open[i] = open[len(open)-1]
		open = open[:len(open)-1]
		busy[t.sess] = false
		g.clock++
		g.run(t)
	}
}

// snapshot returns the register value of key k at time ts.
func (g *gen) snapshot(k int, ts int64) history.Value {
	vs := g.versions[k]
	i := sort.Search(len(vs), func(i int) bool { return vs[i].commit > ts })
	if i == 0 {
		if g.o.ListAppend {
			return 0
		}
		return history.Nil
	}
	return vs[i-1].v
}

func (g *gen) newValue(k int) history.Value {
	if w := g.written[k]; len(w) > 0 && g.o.DupRatio > 0 && g.rng.Float64() < g.o.DupRatio {
		return w[g.rng.IntN(len(w))]
	}
	g.nextVal++
	v := g.b.IntValue(g.nextVal)
	g.written[k] = append(g.written[k], v)
	return v
}

// run executes one transaction that began at t.start and commits now.
func (g *gen) run(t openTxn) {
	failed, rollback := -1, false
	if g.o.FailedRatio > 0 && g.rng.Float64() < g.o.FailedRatio {
		failed, rollback = g.rng.IntN(g.o.OpsPerTxn), g.rng.IntN(2) == 0
	}
	ops, own, lists := g.execute(t.start, failed)
	aborted := g.o.AbortRatio > 0 && g.rng.Float64() < g.o.AbortRatio || rollback || g.loses(t.start, own)
	outcome := history.OutcomeCommitted
	if aborted && !rollback {
		outcome = history.OutcomeAborted
	}
	if g.o.UnknownRatio > 0 && g.rng.Float64() < g.o.UnknownRatio {
		outcome = history.OutcomeUnknown
	}
	if !aborted {
		g.install(own)
	}
	g.out = append(g.out, genTxn{sess: t.sess, outcome: outcome, start: t.start, commit: g.clock, ops: ops, lists: lists, failed: failed})
}

// execute draws the transaction's statements on the snapshot taken at start: the one at
// index failed fails, the others read or write. It returns them, the writes among them in
// order, and the lists its list reads returned (a list read's val indexes them).
func (g *gen) execute(start int64, failed int) (ops, own []genOp, lists [][]history.Value) {
	ops = make([]genOp, 0, g.o.OpsPerTxn)
	for i := range g.o.OpsPerTxn {
		k := g.rng.IntN(g.o.Keys)
		switch {
		case i == failed:
			ops = append(ops, g.failedOp(k, &lists))
		case g.rng.Float64() < g.o.ReadRatio:
			ops = append(ops, g.readOp(k, start, own, &lists))
		default:
			w := genOp{kind: g.writeKind(), key: int32(k), val: g.newValue(k)}
			ops = append(ops, w)
			own = append(own, w)
		}
	}
	return ops, own, lists
}

// writeKind is the kind of the generated writes: appends in list-append histories.
func (g *gen) writeKind() history.OpKind {
	if g.o.ListAppend {
		return history.OpAppend
	}
	return history.OpWrite
}

// readOp reads key k in the snapshot taken at start, overlaid with the transaction's own
// writes so far; a list read's list goes to lists.
func (g *gen) readOp(k int, start int64, own []genOp, lists *[][]history.Value) genOp {
	if g.o.ListAppend {
		n := g.snapshot(k, start)
		l := append([]history.Value(nil), g.lists[k][:n]...)
		for _, w := range own {
			if int(w.key) == k {
				l = append(l, w.val)
			}
		}
		*lists = append(*lists, l)
		return genOp{kind: history.OpListRead, key: int32(k), val: history.Value(len(*lists) - 1)}
	}
	v := g.snapshot(k, start)
	for _, w := range own {
		if int(w.key) == k {
			v = w.val
		}
	}
	return genOp{kind: history.OpRead, key: int32(k), val: v}
}

// loses says whether a transaction that began at start and wrote own loses to a concurrent
// one that committed a write to one of its keys first (first committer wins).
func (g *gen) loses(start int64, own []genOp) bool {
	for _, w := range own {
		if vs := g.versions[w.key]; len(vs) > 0 && vs[len(vs)-1].commit > start {
			return true
		}
	}
	return false
}

// install commits the writes own at the current clock: a new version of each key (a
// list's new length, for appends).
func (g *gen) install(own []genOp) {
	for _, w := range own {
		if g.o.ListAppend {
			g.lists[w.key] = append(g.lists[w.key], w.val)
			g.versions[w.key] = append(g.versions[w.key], version{g.clock, history.Value(len(g.lists[w.key]))})
		} else {
			g.versions[w.key] = append(g.versions[w.key], version{g.clock, w.val})
		}
	}
}

// failedOp returns a statement on key k that fails: a write that installs nothing, or a read
// whose recorded result is a value written to k (or none) that it never returned.
func (g *gen) failedOp(k int, lists *[][]history.Value) genOp {
	if g.rng.Float64() >= g.o.ReadRatio {
		return genOp{kind: g.writeKind(), key: int32(k), val: g.newValue(k)}
	}
	var v history.Value
	if w := g.written[k]; len(w) > 0 {
		v = w[g.rng.IntN(len(w))]
	}
	if g.o.ListAppend {
		var l []history.Value
		if v != history.Nil {
			l = []history.Value{v}
		}
		*lists = append(*lists, l)
		return genOp{kind: history.OpListRead, key: int32(k), val: history.Value(len(*lists) - 1)}
	}
	return genOp{kind: history.OpRead, key: int32(k), val: v}
}

// perturb corrupts a fraction of the reads, now that every written value is known: a read
// may return another value written to the key (perhaps later, perhaps by an aborted
// transaction) or one nobody wrote.
func (g *gen) perturb() {
	if g.o.Perturb <= 0 {
		return
	}
	for i := range g.out {
		t := &g.out[i]
		for j := range t.ops {
			op := &t.ops[j]
			if !op.kind.IsRead() || g.rng.Float64() >= g.o.Perturb {
				continue
			}
			k := int(op.key)
			if op.kind == history.OpListRead {
				t.lists[op.val] = g.perturbList(k, t.lists[op.val])
				continue
			}
			if w := g.written[k]; len(w) > 0 && g.rng.IntN(8) != 0 {
				op.val = w[g.rng.IntN(len(w))]
			} else {
				g.nextVal++
				op.val = g.b.IntValue(g.nextVal) // thin air
			}
		}
	}
}

// emit records the executed transactions in the builder. The random choices of
// EarlyGiveUp and NoIntervalRatio are drawn here, after every other, so histories generated
// without them are unchanged.
func (g *gen) emit() {
	for _, t := range g.out {
		g.b.BeginTxn(g.sess[t.sess], history.NilDatum, t.outcome)
		g.times(g.b.Current(), t)
		for i, op := range t.ops {
			j := g.emitOp(op, t.lists)
			if i == t.failed {
				g.b.SetOpFlags(j, history.OpFailed)
			}
		}
		g.b.EndTxn()
	}
}

// times records t's client interval (with Intervals) and timestamps (with Timestamps) in
// cur: an unknown transaction's interval may end early (EarlyGiveUp), and some are left
// out (NoIntervalRatio).
func (g *gen) times(cur *history.Txn, t genTxn) {
	if g.o.Intervals {
		end := t.commit
		if g.o.EarlyGiveUp && t.outcome == history.OutcomeUnknown {
			end = t.start + g.rng.Int64N(t.commit-t.start+1)
		}
		cur.Time, cur.HasTime = history.Interval{Begin: t.start, End: end}, true
		if g.o.NoIntervalRatio > 0 && g.rng.Float64() < g.o.NoIntervalRatio {
			cur.Time, cur.HasTime = history.Interval{}, false
		}
	}
	if g.o.Timestamps {
		cur.Start, cur.Commit, cur.HasTimestamps = history.Timestamp{Physical: t.start}, history.Timestamp{Physical: t.commit}, true
	}
}

// emitOp adds op to the builder's current transaction and returns its index; a list read's
// list is in lists.
func (g *gen) emitOp(op genOp, lists [][]history.Value) int32 {
	k := g.keys[op.key]
	switch op.kind {
	case history.OpRead:
		return g.b.Read(k, op.val)
	case history.OpListRead:
		return g.b.ReadList(k, lists[op.val])
	case history.OpWrite:
		return g.b.Write(k, op.val)
	case history.OpAppend:
		return g.b.Append(k, op.val)
	}
	return 0
}

func (g *gen) perturbList(k int, l []history.Value) []history.Value {
	switch g.rng.IntN(5) {
	case 0: // drop an element
		if len(l) > 0 {
			i := g.rng.IntN(len(l))
			return append(l[:i:i], l[i+1:]...)
		}
	case 1: // swap two adjacent elements
		if len(l) >= 2 {
			i := g.rng.IntN(len(l) - 1)
			l[i], l[i+1] = l[i+1], l[i]
			return l
		}
	case 2: // repeat an element
		if len(l) > 0 {
			return append(l, l[g.rng.IntN(len(l))])
		}
	case 3: // add an element appended elsewhere (aborted, later, or already there)
		if w := g.written[k]; len(w) > 0 {
			return append(l, w[g.rng.IntN(len(w))])
		}
	}
	g.nextVal++
	return append(l, g.b.IntValue(g.nextVal)) // thin air
}

// Seeds runs f as a subtest for seeds 1..n ("seed=7" names each, so -run reproduces one)
// and logs the seed of each failure.
func Seeds(t *testing.T, n int, f func(t *testing.T, seed uint64)) {
	t.Helper()
	for seed := uint64(1); seed <= uint64(n); seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("failed with seed %d", seed)
				}
			})
			f(t, seed)
		})
	}
}

// GenT is [Gen] for tests: if t fails, it logs the seed, the options and the history in the
// DSL (up to 200 transactions), ready to paste into a fixture.
func GenT(t testing.TB, seed uint64, o GenOptions) *history.History {
	t.Helper()
	h := Gen(seed, o)
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		text := Format(h)
		if lines := strings.SplitAfter(text, "\n"); len(lines) > 200 {
			text = strings.Join(lines[:200], "") + "...\n"
		}
		t.Logf("generated history (seed %d, options %+v):\n%s", seed, o, text)
	})
	return h
}
