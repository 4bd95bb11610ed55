package ts

import (
	"slices"

	"github.com/isovet/isovet/history"
)

// Txn is one committed transaction as the online checker receives it: self-contained, with
// the source's own keys and values, so that batches decoded separately agree.
type Txn struct {
	ID      history.Datum // unique; a second arrival with the same ID is ignored
	Session history.Datum
	// Seq is the transaction's position in its session; negative means "arrival order"
	// (the paper's assumption that delivery preserves session order).
	Seq           int64
	Start, Commit history.Timestamp
	Ops           []Op
}

// Op is one operation of a [Txn]: read, write, insert, delete, append or list read.
type Op struct {
	Kind  history.OpKind
	Key   history.Datum
	Value history.Datum   // read or written value
	List  []history.Datum // OpListRead: the list read
}

// FromHistory returns transaction t of h as a [Txn]. Its ID is the source id, or "T<id>"
// when the source gave none, and Seq is its position in its session.
func FromHistory(h *history.History, t history.TxnID) Txn {
	tt := &h.Txns[t]
	x := Txn{ID: nameDatum(h, t), Session: h.Sessions[tt.Session].Source, Seq: int64(tt.Seq), Start: tt.Start, Commit: tt.Commit}
	x.Ops = make([]Op, 0, len(tt.Ops))
	for _, o := range tt.Ops {
		op := Op{Kind: o.Kind}
		if o.Kind == history.OpPredRead || o.Kind == history.OpPredWrite || o.Failed() {
			continue // a failed statement took no effect
		}
		op.Key, op.Value = h.Key(o.Key), h.Value(o.Value)
		if o.Kind == history.OpListRead {
			l := h.List(o)
			op.List = make([]history.Datum, len(l))
			for i, v := range l {
				op.List[i] = h.Value(v)
			}
		}
		x.Ops = append(x.Ops, op)
	}
	return x
}

// oread is an external read tracked online, with its provisional verdict.
type oread struct {
	t    *otxn
	key  *okey
	v    history.Datum
	list []history.Datum
	isL  bool
	ok   bool
	done bool // settled

	prev     *oread // the read of the same key that arrived before this one (see okey)
	maxBelow pos    // the highest snapshot of this read and of every earlier read of its key
}

// ocompile derives t's external reads and final writes, on the keys of shard of shards;
// INT findings go to ints.
//
// The keys of the reads are returned apart (rkeys[i] is the key of reads[i]): the checker
// keeps a read's key in its okey. With own set, writes and rkeys are carved from sc.wbuf and
// sc.kbuf, valid until the next batch (see [Compiler]); otherwise they are sc's scratch,
// valid until the next call.
func ocompile(t *Txn, sc *scratch, ints []intFinding2, shard, shards int, own bool) (reads []oread, rkeys []history.Datum, writes []owrite, _ []intFinding2) {
	// One view per key touched, at most one per operation: sized once, not grown step by
	// step (a transaction of 150,000 operations would copy its views a dozen times).
	c := ocompiler{txnView: txnView[history.Datum, history.Datum]{loc: slices.Grow(sc.loc[:0], len(t.Ops))}, ints: ints}
	c.alloc(t, sc, shard, shards, own)
	for oi := range t.Ops {
		o := &t.Ops[oi]
		if shards > 1 && KeyShard(o.Key, shards) != shard {
			continue
		}
		switch o.Kind {
		case history.OpRead:
			c.read(o)
		case history.OpWrite, history.OpInsert:
			c.write(o.Key, o.Value)
		case history.OpDelete:
			c.write(o.Key, history.NilDatum)
		case history.OpAppend:
			c.append(o.Key, o.Value)
		case history.OpListRead:
			c.listRead(o)
		}
	}
	c.detach()
	sc.loc = c.loc
	if !own {
		sc.writes, sc.rkeys = c.writes, c.rkeys
	}
	return c.reads, c.rkeys, c.writes, c.ints
}

// alloc gives c the memory for t's reads, read keys and writes on the keys of shard of
// shards: carved from sc's batch buffers with own, else sc's scratch.
func (c *ocompiler) alloc(t *Txn, sc *scratch, shard, shards int, own bool) {
	nr, nw := countOps(t, shard, shards)
	if nr > 0 {
		c.reads = sc.reads.take(nr)
	}
	if !own {
		c.writes, c.rkeys = sc.writes[:0], sc.rkeys[:0]
		return
	}
	// nw and nr bound the keys written and read: appends stay in these.
	c.writes, c.rkeys = bump(&sc.wbuf, nw), bump(&sc.kbuf, nr)
}

// countOps counts the reads and the writes of t's operations on keys of the shard.
func countOps(t *Txn, shard, shards int) (nr, nw int) {
	for i := range t.Ops {
		if shards > 1 && KeyShard(t.Ops[i].Key, shards) != shard {
			continue
		}
		switch t.Ops[i].Kind {
		case history.OpRead, history.OpListRead:
			nr++
		default:
			nw++
		}
	}
	return nr, nw
}

// ocompiler is the state of one [ocompile]: the transaction's view of each key so far, and
// the external reads, writes and INT findings collected.
type ocompiler struct {
	txnView[history.Datum, history.Datum]
	reads []oread
	rkeys []history.Datum
	ints  []intFinding2
}

// read is a register read: external the first time the key is seen, else checked against
// the transaction's own view.
func (c *ocompiler) read(o *Op) {
	first, want, bad := c.txnView.read(o.Key, o.Value)
	if first {
		c.reads, c.rkeys = append(c.reads, oread{v: o.Value}), append(c.rkeys, o.Key)
	}
	if bad {
		c.ints = append(c.ints, intFinding2{o.Key, o.Value.String(), want.String()})
	}
}

// listRead is a list read: external (less the transaction's own appends, which must end
// it) the first time the key is read, else checked against the transaction's own view.
func (c *ocompiler) listRead(o *Op) {
	obs := o.List
	ext, first, bad, want := c.txnView.listRead(o.Key, obs)
	if bad {
		expected := renderDatums(want)
		if first {
			expected = "… " + expected
		}
		c.ints = append(c.ints, intFinding2{o.Key, renderDatums(obs), expected})
	}
	if first {
		c.reads, c.rkeys = append(c.reads, oread{list: ext, isL: true}), append(c.rkeys, o.Key)
	}
}

// scratch is memory reused across [Online.Observe] calls: the compile-time view of keys
// and the write list (dead once the versions are installed), and a slab for external reads
// (which die in arrival order, so a chunk is freed once its transactions are forgotten).
type scratch struct {
	loc    []view[history.Datum, history.Datum]
	writes []owrite
	reads  slab[oread]
	txns   slab[otxn]
	rkeys  []history.Datum
	// The writes and read keys of a compiled batch (see [Compiler]).
	wbuf []owrite
	kbuf []history.Datum
}

// slab hands out small slices carved from shared chunks.
type slab[T any] struct{ buf []T }

func (s *slab[T]) take(n int) []T {
	if n > 64 {
		return make([]T, 0, n)
	}
	if cap(s.buf)-len(s.buf) < n {
		s.buf = make([]T, 0, 1024)
	}
	i := len(s.buf)
	s.buf = s.buf[:i+n]
	return s.buf[i : i : i+n]
}

// Compiled is a transaction made ready by [Compile] for [Online.ObserveCompiled]: its
// external reads, final writes and INT findings on one shard's keys, and the memory the
// checker keeps for it. This part of checking needs no checker state, so a server compiles
// on the goroutines that decode batches, in parallel, and leaves the checker's goroutine
// only the work that needs its state.
type Compiled struct {
	in            *Txn
	t             *otxn  // nil once observed
	nvs           []over // the versions it will install, one per write
	writes        []owrite
	rkeys         []history.Datum // the keys of t.reads
	ints          []intFinding2
	shard, shards int
}

// Compiler is memory that [Compiler.Compile] reuses from one batch to the next: the
// transactions' writes and the keys they read, which the checker copies and does not keep.
// A batch it compiled must have been observed (or abandoned) before it compiles the next.
// The zero value is ready.
type Compiler struct{ sc scratch }

// Compile compiles txs for the checker that is shard of shards (as in [OnlineOptions]; 0
// of 1 for an unsharded one), reusing out's memory. It may run on any goroutine, several
// at a time. txs must not change until they are observed; what the checker keeps of them
// (ids, keys, values) it copies.
func Compile(txs []Txn, shard, shards int, out []Compiled) []Compiled {
	var c Compiler
	return c.Compile(txs, shard, shards, out)
}

// Compile is [Compile] with c's memory.
func (c *Compiler) Compile(txs []Txn, shard, shards int, out []Compiled) []Compiled {
	if shards <= 1 {
		shard, shards = 0, 1
	}
	out = slices.Grow(out[:0], len(txs))[:len(txs)]
	// The slabs are sized to the batch (one transaction compiled alone takes a few bytes,
	// not a chunk of 1,024).
	nops := 0
	for i := range txs {
		nops += len(txs[i].Ops)
	}
	// What the checker keeps is fresh memory; the rest is c's, reused.
	sc := &c.sc
	sc.txns.buf = make([]otxn, 0, len(txs))
	sc.reads.buf = make([]oread, 0, min(nops, 1024))
	sc.wbuf, sc.kbuf = slices.Grow(sc.wbuf[:0], nops), slices.Grow(sc.kbuf[:0], nops)
	for i := range txs {
		out[i] = compileOne(&txs[i], sc, shard, shards, true)
	}
	return out
}

// compileOne compiles in with sc's memory. Unless own is set, its writes are sc's scratch,
// valid until the next call.
func compileOne(in *Txn, sc *scratch, shard, shards int, own bool) Compiled {
	c := Compiled{in: in, shard: shard, shards: shards}
	c.t = &sc.txns.take(1)[:1][0]
	var reads []oread
	reads, c.rkeys, c.writes, c.ints = ocompile(in, sc, nil, shard, shards, own)
	*c.t = otxn{id: in.ID, start: in.Start, commit: in.Commit, reads: reads}
	for i := range reads {
		reads[i].t = c.t
	}
	// The transaction's versions are allocated together: one object instead of one per
	// key (a version that outlives its siblings keeps the few others' bytes alive).
	if len(c.writes) > 0 {
		c.nvs = make([]over, len(c.writes))
	}
	return c
}

// bump carves n elements (length 0, capacity n) from the end of *buf, growing it if needed
// (slices already carved keep the old array).
func bump[T any](buf *[]T, n int) []T {
	if n == 0 {
		return nil
	}
	if cap(*buf)-len(*buf) < n {
		*buf = make([]T, 0, max(2*cap(*buf), n, 256))
	}
	i := len(*buf)
	*buf = (*buf)[:i+n]
	return (*buf)[i : i : i+n]
}

// intFinding2 is an INT violation over datums.
type intFinding2 struct {
	k                  history.Datum
	observed, expected string
}

func renderDatums(ds []history.Datum) string {
	return renderList(func(i int) history.Datum { return ds[i] }, len(ds))
}
