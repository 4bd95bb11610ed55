package ts

import (
	"slices"

	"isovet/history"
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

// owrite is a transaction's final effect on one key.
type owrite struct {
	k   history.Datum
	v   history.Datum
	app []history.Datum
	isL bool
}

type olocal struct {
	k       history.Datum
	v       history.Datum
	read    bool
	base    []history.Datum
	extra   []history.Datum
	written int
}

// ocompile derives t's external reads and final writes, on the keys of shard of shards;
// INT findings go to ints.
//
// The keys of the reads are returned apart (rkeys[i] is the key of reads[i]): the checker
// keeps a read's key in its okey. With own set, writes and rkeys are carved from sc.wbuf and
// sc.kbuf, valid until the next batch (see [Compiler]); otherwise they are sc's scratch,
// valid until the next call.
func ocompile(t *Txn, sc *scratch, ints []intFinding2, shard, shards int, own bool) (reads []oread, rkeys []history.Datum, writes []owrite, _ []intFinding2) {
	loc := sc.loc
	nr, nw := 0, 0
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
	if nr > 0 {
		reads = sc.reads.take(nr)
	}
	if !own {
		writes, rkeys = sc.writes[:0], sc.rkeys[:0]
	} else {
		// nw and nr bound the keys written and read: appends stay in these.
		writes, rkeys = bump(&sc.wbuf, nw), bump(&sc.kbuf, nr)
	}
	loc = loc[:0]
	find := func(k history.Datum) int {
		for i := range loc {
			if loc[i].k == k {
				return i
			}
		}
		return -1
	}
	for oi := range t.Ops {
		o := &t.Ops[oi]
		if shards > 1 && KeyShard(o.Key, shards) != shard {
			continue
		}
		switch o.Kind {
		case history.OpRead:
			i := find(o.Key)
			if i < 0 {
				reads, rkeys = append(reads, oread{v: o.Value}), append(rkeys, o.Key)
				loc = append(loc, olocal{k: o.Key, v: o.Value, read: true, written: -1})
				continue
			}
			l := &loc[i]
			if l.v != o.Value {
				ints = append(ints, intFinding2{o.Key, o.Value.String(), l.v.String()})
			}
			l.v, l.read = o.Value, true
		case history.OpWrite, history.OpInsert, history.OpDelete:
			v := o.Value
			if o.Kind == history.OpDelete {
				v = history.NilDatum
			}
			i := find(o.Key)
			if i < 0 {
				loc = append(loc, olocal{k: o.Key, written: -1})
				i = len(loc) - 1
			}
			l := &loc[i]
			l.v = v
			if l.written < 0 {
				l.written = len(writes)
				writes = append(writes, owrite{k: o.Key})
			}
			writes[l.written].v = v
		case history.OpAppend:
			i := find(o.Key)
			if i < 0 {
				loc = append(loc, olocal{k: o.Key, written: -1})
				i = len(loc) - 1
			}
			l := &loc[i]
			l.extra = append(l.extra, o.Value)
			if l.written < 0 {
				l.written = len(writes)
				writes = append(writes, owrite{k: o.Key, isL: true})
			}
			w := &writes[l.written]
			w.isL = true
			w.app = append(w.app, o.Value)
		case history.OpListRead:
			obs := o.List
			i := find(o.Key)
			if i < 0 || !loc[i].read {
				var extra []history.Datum
				if i >= 0 {
					extra = loc[i].extra
				}
				n := len(obs) - len(extra)
				if n < 0 || !slices.Equal(obs[max(n, 0):], extra) {
					ints = append(ints, intFinding2{o.Key, renderDatums(obs), "… " + renderDatums(extra)})
					n = max(n, 0)
				}
				reads, rkeys = append(reads, oread{list: obs[:n:n], isL: true}), append(rkeys, o.Key)
				if i < 0 {
					loc = append(loc, olocal{k: o.Key, read: true, written: -1})
					i = len(loc) - 1
				}
			} else {
				l := &loc[i]
				if len(obs) != len(l.base)+len(l.extra) || !slices.Equal(obs[:len(l.base)], l.base) || !slices.Equal(obs[len(l.base):], l.extra) {
					want := append(append([]history.Datum{}, l.base...), l.extra...)
					ints = append(ints, intFinding2{o.Key, renderDatums(obs), renderDatums(want)})
				}
			}
			l := &loc[i]
			l.read, l.base, l.extra = true, obs, nil
		}
	}
	for i := range loc {
		loc[i].base, loc[i].extra = nil, nil
	}
	sc.loc = loc
	if !own {
		sc.writes, sc.rkeys = writes, rkeys
	}
	return reads, rkeys, writes, ints
}

// scratch is memory reused across [Online.Observe] calls: the compile-time view of keys
// and the write list (dead once the versions are installed), and a slab for external reads
// (which die in arrival order, so a chunk is freed once its transactions are forgotten).
type scratch struct {
	loc    []olocal
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
