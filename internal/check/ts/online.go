package ts

import (
	"fmt"
	"slices"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
)

// OnlineOptions configure an [Online] checker. The zero value checks snapshot isolation
// with a 5 s settle timeout and no memory bound.
type OnlineOptions struct {
	// Level is SnapshotIsolation (default), StrongSessionSI, Serializable or
	// StrongSessionSerializable.
	Level   anomaly.Level
	Session SessionCheck
	// Initial is the value of every key before any transaction (list keys start empty).
	Initial history.Datum
	// Settle is how long after its arrival a transaction's EXT verdicts stay provisional
	// (default 5 s). Writers arriving later cannot change them.
	Settle time.Duration
	// Retain is how long after settling a transaction's snapshot still pins the versions it
	// could read, so that transactions arriving that much later are still checked
	// (default: Settle).
	Retain time.Duration
	// MaxBytes bounds the checker's estimated memory (0: unbounded). Over it, the oldest
	// unsettled transactions are dropped unchecked and an [EventDropped] says so.
	MaxBytes int64
	// Shards > 1 makes this checker one of Shards that split the work by key: it keeps
	// only the operations on keys k with KeyShard(k, Shards) == Shard. EXT, INT and
	// NOCONFLICT are judged per key, so the shards together find exactly what one checker
	// finds. What belongs to a whole transaction (SESSION, and the EventRejected and
	// EventDuplicate events) is left to shard 0. Every shard must be given every
	// transaction, at the same times, so that they agree on what is held and what is new.
	Shard, Shards int
	_             struct{}
}

// KeyShard returns the shard, in [0, n), that owns key k. It is a fixed function of the
// key (no per-process seed), so sharded runs are reproducible.
func KeyShard(k history.Datum, n int) int {
	if n <= 1 {
		return 0
	}
	var h uint64
	if i, ok := k.Int(); ok {
		h = uint64(i) * 0x9e3779b97f4a7c15
	} else {
		s, _ := k.Str()
		h = 0xcbf29ce484222325 // FNV-1a
		for j := 0; j < len(s); j++ {
			h = (h ^ uint64(s[j])) * 0x100000001b3
		}
		h *= 0x9e3779b97f4a7c15
	}
	return int((h >> 32) % uint64(n))
}

// EventKind is the kind of an [Event].
type EventKind uint8

// Event kinds.
const (
	EventInvalid   EventKind = iota
	EventViolation           // a final violation
	EventDropped             // a warning: transactions were dropped unchecked (memory bound)
	EventLate                // a transaction arrived after the state it needs was collected; unchecked
	EventDuplicate           // a transaction with an ID already seen was ignored
	EventRejected            // a transaction was refused (commit before start); see Violation
)

var eventNames = [...]string{"invalid", "violation", "dropped", "late", "duplicate", "rejected"}

func (k EventKind) String() string {
	if int(k) < len(eventNames) {
		return eventNames[k]
	}
	return "invalid"
}

// Event is something the online checker reports.
type Event struct {
	Kind      EventKind
	Violation Violation // EventViolation, EventRejected
	Txn       string    // EventLate, EventDuplicate
	Count     int       // EventDropped: how many transactions
	Message   string
}

// OnlineStats are the online checker's counters.
type OnlineStats struct {
	Observed   int64 // transactions applied
	Settled    int64 // transactions whose verdicts are final
	Duplicates int64
	Late       int64
	Dropped    int64 // dropped unchecked under the memory bound
	Violations int64
	Flips      int64 // provisional EXT verdicts that changed
	Pending    int   // transactions not yet settled
	InMemory   int   // transactions held (pending or retained)
	Keys       int
	Versions   int
	Reads      int   // external reads held
	Bytes      int64 // estimated memory
	// OldestPending is the arrival time of the oldest unsettled transaction (zero if none).
	OldestPending time.Time
	// Horizon is the position below which versions were collected.
	Horizon history.Timestamp
}

// opos is a total position: pos, then the transaction's ID.
type opos struct {
	p  pos
	id history.Datum
}

func (a opos) cmp(b opos) int {
	if c := a.p.cmp(b.p); c != 0 {
		return c
	}
	return a.id.Compare(b.id)
}

// otxn is a transaction held online.
type otxn struct {
	id            history.Datum
	start, commit history.Timestamp
	ck, snap      opos
	arrived       time.Time
	seq           int64 // arrival sequence number (1, 2, ...)
	reads         []oread
	settled       bool
}

// over is one committed version of a key. It is kept small (the checker allocates one per
// key written and is bound by memory traffic): the writer's id is stored once, its commit
// timestamp is ck's, and list contents sit behind a pointer.
//
// Its positions are stored flat (timestamps, then the two phases together) so that it is
// 128 bytes: the four versions of a typical transaction are then one 512-byte object, the
// largest size the Go allocator serves without a per-object type header.
type over struct {
	cts, sts history.Timestamp // commit and snapshot timestamps
	start    history.Timestamp
	id       history.Datum // the writer's
	v        history.Datum
	list     *olist // list keys only
	cph, sph uint8  // commit and snapshot phases
}

// olist is what a version of a list key holds.
type olist struct {
	app []history.Datum
	// base is the list content before this version, kept when older versions were collected.
	base []history.Datum
}

func (x *over) ckO() opos                 { return opos{pos{x.cts, x.cph}, x.id} }
func (x *over) snapO() opos               { return opos{pos{x.sts, x.sph}, x.id} }
func (x *over) commit() history.Timestamp { return x.cts }

func (x *over) app() []history.Datum {
	if x.list == nil {
		return nil
	}
	return x.list.app
}

func (x *over) base() []history.Datum {
	if x.list == nil {
		return nil
	}
	return x.list.base
}

// setBase sets the list content before x.
func (x *over) setBase(b []history.Datum) {
	if x.list == nil {
		if b == nil {
			return
		}
		x.list = &olist{}
	}
	x.list.base = b
}

// searchVS returns the index of the first version in vs whose commit is at or after p.
func searchVS(vs []vent, p opos) int {
	n := len(vs)
	if n == 0 || vs[n-1].cmp(p) < 0 {
		return n
	}
	lo, hi := 0, n-1 // vs[hi] is at or after p
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if vs[m].cmp(p) >= 0 {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// vent is a version in a key's list, with its commit position inline.
type vent struct {
	ck pos
	v  *over
}

func (e vent) cmp(p opos) int {
	if c := e.ck.cmp(p.p); c != 0 {
		return c
	}
	return e.v.id.Compare(p.id)
}

// okey is a key's versions, by commit position, and its pending reads.
//
// It caches the position and value of its last version: arrivals come mostly in commit
// order, so most searches end at the last element, and answering them here saves a cache
// miss on the array (the checker's main cost).
//
// The reads pending on the key form a list through the reads themselves, newest arrival
// first (lastRead, oread.prev), each read carrying the highest snapshot of itself and every
// read of the key that arrived before it (oread.maxBelow). Linking a read touches nothing
// but the key, already in cache (an array of reads by snapshot cost a cache miss per read
// to append to). A writer arriving after readers whose snapshot follows its commit walks
// the list from the newest read back to the first whose maxBelow is not above its commit
// (or the first settled one: reads settle in arrival order) and judges those again while
// they are still in cache. In commit order no writer is ever late and nothing is walked.
type okey struct {
	// What every arrival touches comes first, so that it shares as few cache lines as it can.
	vs     []vent
	lastCk pos           // vs[len(vs)-1].ck, when vs is not empty
	lastV  history.Datum // vs[len(vs)-1].v.v

	maxSnap  pos    // the highest snapshot position of any read of the key (when hasSnap)
	lastRead *oread // the newest read of the key, nil or settled if none is pending
	hasSnap  bool
	isL      bool

	k history.Datum
}

// vsIndex is searchVS(key.vs, p).
func (key *okey) vsIndex(p opos) int {
	if n := len(key.vs); n == 0 || key.lastCk.cmp(p.p) < 0 {
		return n
	}
	return searchVS(key.vs, p)
}

type osess struct {
	next int64 // arrival sequence for Seq < 0
	m    map[int64]sessEntry
}

type sessEntry struct {
	name      string
	ck, snap  opos
	start, cm history.Timestamp
	checked   uint8 // bit 0: with predecessor, bit 1: with successor
}

// Online is Aion / Aion-SER: an incremental checker fed one transaction at a time, in any
// order. It is a pure state machine: time advances only through [Online.Advance]; the
// arrival time of a transaction is the time last given to Advance. Not safe for
// concurrent use.
type Online struct {
	o   OnlineOptions
	m   mode
	now time.Time

	keys  map[history.Datum]*okey // keys that are not integers
	ikeys map[int64]*okey         // integer keys outside [0, len(dense))
	dense []*okey                 // small non-negative integer keys, by value: an 8-byte slot each
	nkeys int                     // keys in dense
	ids   idset                   // ids held, and ids recently forgotten (for deduplication)
	sess  map[history.Datum]*osess

	fifo    []*otxn // by arrival
	settled int     // fifo[:settled] are settled
	minq    []*otxn // monotonic deque of fifo by snapshot, for the horizon

	klist    []*okey // every key, in order of creation: the collector's round
	sweep    int     // the next key of klist the collector visits
	swept    time.Time
	horizon  opos
	hasHoriz bool

	seq int64 // arrivals so far

	ks      []*okey // the keys of the transaction being observed
	touched int     // a sum over the keys' state, so that loading it is not optimised away

	st    OnlineStats
	sc    scratch
	reads int
	elems int64
}

// NewOnline returns an online checker.
func NewOnline(o OnlineOptions) (*Online, error) {
	if o.Level == 0 {
		o.Level = anomaly.SnapshotIsolation
	}
	m, err := modeOf(o.Level, o.Session)
	if err != nil {
		return nil, err
	}
	if o.Shards <= 1 {
		o.Shard, o.Shards = 0, 1
	}
	if o.Shard < 0 || o.Shard >= o.Shards {
		return nil, fmt.Errorf("ts: shard %d out of range [0, %d)", o.Shard, o.Shards)
	}
	if o.Shard > 0 {
		m.session = false
	}
	if o.Settle <= 0 {
		o.Settle = 5 * time.Second
	}
	if o.Retain <= 0 {
		o.Retain = o.Settle
	}
	return &Online{o: o, m: m, keys: map[history.Datum]*okey{}, ikeys: map[int64]*okey{}, sess: map[history.Datum]*osess{}}, nil
}

// Now returns the time last given to Advance.
func (o *Online) Now() time.Time { return o.now }

// Stats returns the counters.
func (o *Online) Stats() OnlineStats {
	s := o.st
	s.Pending = len(o.fifo) - o.settled
	s.InMemory = len(o.fifo)
	s.Keys = len(o.keys) + len(o.ikeys) + o.nkeys
	s.Reads = o.reads
	s.Bytes = o.bytes()
	if s.Pending > 0 {
		s.OldestPending = o.fifo[o.settled].arrived
	}
	s.Horizon = o.horizon.p.ts
	return s
}

func (o *Online) bytes() int64 {
	return int64(o.st.Versions)*200 + int64(len(o.fifo))*260 + int64(o.reads)*112 + int64(len(o.keys)+len(o.ikeys)+o.nkeys)*160 + int64(cap(o.dense))*8 +
		o.elems*40 + int64(o.ids.goneLen())*60
}

func (o *Online) viol(k anomaly.Kind, t *otxn) Violation {
	return Violation{Kind: k, Txn: history.TxnName(t.id), TxnID: -1, OtherID: -1, TxnStart: t.start, TxnCommit: t.commit}
}

// Observe applies one transaction and returns what can be said at once: INT, SESSION,
// NOCONFLICT and timestamp-order violations, which no later arrival can undo. EXT
// verdicts are provisional and reported by [Online.Advance] once settled.
func (o *Online) Observe(in Txn) []Event {
	if o.ids.has(in.ID) {
		return o.duplicate(in.ID)
	}
	c := compileOne(&in, &o.sc, o.o.Shard, o.o.Shards, false)
	return o.observe(&c)
}

// ObserveCompiled is [Online.Observe] of a transaction compiled by [Compile], which must
// not have changed since. Each Compiled is observed at most once.
func (o *Online) ObserveCompiled(c *Compiled) []Event {
	if o.ids.has(c.in.ID) {
		return o.duplicate(c.in.ID)
	}
	if c.t == nil || c.shard != o.o.Shard || c.shards != o.o.Shards {
		// Compiled for another shard, or already observed: compile it again.
		x := compileOne(c.in, &o.sc, o.o.Shard, o.o.Shards, false)
		return o.observe(&x)
	}
	t := c.t
	c.t = nil
	return o.observe(&Compiled{in: c.in, t: t, nvs: c.nvs, writes: c.writes, rkeys: c.rkeys, ints: c.ints})
}

func (o *Online) duplicate(id history.Datum) []Event {
	o.st.Duplicates++
	if o.o.Shard > 0 {
		return nil
	}
	return []Event{{Kind: EventDuplicate, Txn: history.TxnName(id)}}
}

// observe applies c, whose id is new.
func (o *Online) observe(c *Compiled) []Event {
	in := c.in
	o.ids.add(in.ID)
	t := c.t
	o.seq++
	t.arrived, t.seq = o.now, o.seq
	evs, lateReads, ok := o.admit(in, t)
	if !ok {
		return evs
	}
	o.st.Observed++
	for _, f := range c.ints {
		v := o.viol(anomaly.Internal, t)
		v.Key, v.HasKey, v.Observed, v.Expected = f.k, true, f.observed, f.expected
		evs = o.emit(evs, v)
	}
	if o.m.session {
		evs = o.session(evs, in, t)
	}
	if lateReads {
		t.reads = nil
	}
	ks := o.loadKeys(c, t)
	for i := range c.writes {
		evs = o.write(evs, t, &c.writes[i], &c.nvs[i], ks[i])
	}
	o.addReads(t, ks[len(c.writes):])
	o.fifo = append(o.fifo, t)
	for n := len(o.minq); n > 0 && o.minq[n-1].snap.cmp(t.snap) >= 0; n-- {
		o.minq = o.minq[:n-1]
	}
	o.minq = append(o.minq, t)
	return evs
}

// admit places t (in, compiled) in the order and decides whether it is applied: not when
// it commits before it starts (rejected) or below the horizon (late). Its reads are
// checked (lateReads false) unless its snapshot lies below the horizon: a late or very
// long transaction still installs its writes, so that later readers are judged correctly,
// but its own reads cannot be verified any more.
func (o *Online) admit(in *Txn, t *otxn) (evs []Event, lateReads, ok bool) {
	if in.Commit.Less(in.Start) {
		o.forget(in.ID)
		if o.o.Shard > 0 {
			return nil, false, false
		}
		return append(evs, Event{Kind: EventRejected, Violation: o.viol(anomaly.TimestampOrder, t)}), false, false
	}
	ck, snap := positions(in.Start, in.Commit, o.m.ser)
	t.ck, t.snap = opos{ck, in.ID}, opos{snap, in.ID}
	if o.hasHoriz && t.ck.cmp(o.horizon) < 0 {
		o.st.Late++
		o.forget(in.ID)
		return append(evs, Event{Kind: EventLate, Txn: history.TxnName(in.ID), Message: fmt.Sprintf("transaction %v (commit %v) arrived after the versions around its commit were collected (horizon %v); not checked and not applied", in.ID, in.Commit, o.horizon.p.ts)}), false, false
	}
	lateReads = o.hasHoriz && t.snap.cmp(o.horizon) < 0
	if lateReads {
		o.st.Late++
		evs = append(evs, Event{Kind: EventLate, Txn: history.TxnName(in.ID), Message: fmt.Sprintf("transaction %v (start %v) arrived after the versions its snapshot needs were collected (horizon %v); its writes are applied but its reads are not checked", in.ID, in.Start, o.horizon.p.ts)})
	}
	return evs, lateReads, true
}

// loadKeys returns the keys of c's writes, then of t's reads. They are found first, in one
// loop of independent loads, so that the processor overlaps their cache misses (the
// checker is bound by them); the loops after it then find each key's state in cache.
func (o *Online) loadKeys(c *Compiled, t *otxn) []*okey {
	ks := o.ks[:0]
	touch := 0
	for i := range c.writes {
		key := o.key(c.writes[i].k)
		touch += len(key.vs)
		ks = append(ks, key)
	}
	for i := range t.reads {
		key := o.key(c.rkeys[i])
		touch += len(key.vs)
		ks = append(ks, key)
	}
	o.ks, o.touched = ks, o.touched+touch
	return ks
}

// addReads adds t's reads to their keys (ks[i] is the key of t.reads[i]) with their
// provisional verdicts.
func (o *Online) addReads(t *otxn, ks []*okey) {
	for i := range t.reads {
		r := &t.reads[i]
		key := ks[i]
		r.key = key
		if r.isL {
			key.isL = true
		}
		if !key.hasSnap || key.maxSnap.cmp(t.snap.p) < 0 {
			key.maxSnap, key.hasSnap = t.snap.p, true
		}
		r.prev, r.maxBelow, key.lastRead = key.lastRead, key.maxSnap, r
		o.reads++
		o.elems += int64(len(r.list))
		r.ok = o.verdict(r)
	}
}

func (o *Online) forget(id history.Datum) {
	o.ids.forget(id, o.now)
}

func (o *Online) emit(evs []Event, v Violation) []Event {
	o.st.Violations++
	return append(evs, Event{Kind: EventViolation, Violation: v})
}

// denseMax bounds the integer keys held in the dense table (8 MiB of slots at most).
const denseMax = 1 << 20

func (o *Online) key(k history.Datum) *okey {
	if i, ok := k.Int(); ok {
		// Small keys index a slice: the table of a workload's keys then fits in cache,
		// where a map's groups do not.
		if uint64(i) < uint64(len(o.dense)) {
			if key := o.dense[i]; key != nil {
				return key
			}
		} else if i >= 0 && i < denseMax {
			o.growDense(i)
		}
		if uint64(i) < uint64(len(o.dense)) {
			key := o.newKey(k)
			o.dense[i] = key
			o.nkeys++
			return key
		}
		key := o.ikeys[i]
		if key == nil {
			key = o.newKey(k)
			o.ikeys[i] = key
		}
		return key
	}
	key := o.keys[k]
	if key == nil {
		key = o.newKey(k)
		o.keys[k] = key
	}
	return key
}

// growDense grows the dense table to hold key i; keys held in the map that the table then
// covers move into it.
func (o *Online) growDense(i int64) {
	o.dense = slices.Grow(o.dense, int(i)+1-len(o.dense))
	o.dense = o.dense[:cap(o.dense)]
	for j, key := range o.ikeys {
		if uint64(j) < uint64(len(o.dense)) {
			o.dense[j] = key
			o.nkeys++
			delete(o.ikeys, j)
		}
	}
}

func (o *Online) newKey(k history.Datum) *okey {
	key := &okey{k: k}
	o.klist = append(o.klist, key)
	return key
}

// session checks t against its neighbours in its session.
func (o *Online) session(evs []Event, in *Txn, t *otxn) []Event {
	s := o.sess[in.Session]
	if s == nil {
		s = &osess{m: map[int64]sessEntry{}}
		o.sess[in.Session] = s
	}
	seq := in.Seq
	if seq < 0 {
		seq = s.next
	}
	s.next = max(s.next, seq+1)
	e := sessEntry{name: history.TxnName(t.id), ck: t.ck, snap: t.snap, start: t.start, cm: t.commit}
	check := func(prev, cur sessEntry) {
		snap := cur.snap
		if o.m.ser {
			snap = cur.ck
		}
		if prev.ck.cmp(snap) >= 0 {
			v := Violation{Kind: anomaly.SessionViolation, Txn: cur.name, Other: prev.name, TxnID: -1, OtherID: -1,
				TxnStart: cur.start, TxnCommit: cur.cm, OtherStart: prev.start, OtherCommit: prev.cm}
			evs = o.emit(evs, v)
		}
	}
	if p, ok := s.m[seq-1]; ok {
		check(p, e)
		e.checked |= 1
		p.checked |= 2
		o.sessPut(s, seq-1, p)
	} else if seq == 0 {
		e.checked |= 1
	}
	if n, ok := s.m[seq+1]; ok {
		check(e, n)
		e.checked |= 2
		n.checked |= 1
		o.sessPut(s, seq+1, n)
	}
	o.sessPut(s, seq, e)
	return evs
}

func (o *Online) sessPut(s *osess, seq int64, e sessEntry) {
	if e.checked == 3 {
		delete(s.m, seq)
		return
	}
	s.m[seq] = e
}

// write inserts t's version of w.k: NOCONFLICT and equal commit timestamps against the
// versions already there, then marks the key for re-checking if the write may precede the
// snapshot of a read of it.
func (o *Online) write(evs []Event, t *otxn, w *owrite, nv *over, key *okey) []Event {
	if w.isL {
		key.isL = true
	}
	i := key.vsIndex(t.ck)
	if !o.m.ser {
		evs = o.noConflicts(evs, t, w, key)
	}
	evs = o.ties(evs, t, w, key, i)
	o.insertVersion(t, w, nv, key, i)
	// Pending reads of the key whose snapshot lies after this commit may now be judged
	// otherwise (see okey).
	if key.hasSnap && t.ck.p.cmp(key.maxSnap) <= 0 {
		o.rejudge(t, key)
	}
	return evs
}

// noConflicts reports NOCONFLICT against the versions of the key whose commit is not below
// t's snapshot and that start before t commits.
func (o *Online) noConflicts(evs []Event, t *otxn, w *owrite, key *okey) []Event {
	j := key.vsIndex(t.snap)
	for _, e := range key.vs[j:] {
		x := e.v
		if x.snapO().cmp(t.ck) >= 0 || x.id == t.id {
			continue
		}
		v := Violation{Kind: anomaly.NoConflict, Key: w.k, HasKey: true, TxnID: -1, OtherID: -1}
		if x.ckO().cmp(t.ck) < 0 {
			v.Txn, v.TxnStart, v.TxnCommit = history.TxnName(x.id), x.start, x.commit()
			v.Other, v.OtherStart, v.OtherCommit = history.TxnName(t.id), t.start, t.commit
		} else {
			v.Txn, v.TxnStart, v.TxnCommit = history.TxnName(t.id), t.start, t.commit
			v.Other, v.OtherStart, v.OtherCommit = history.TxnName(x.id), x.start, x.commit()
		}
		evs = o.emit(evs, v)
	}
	return evs
}

// ties reports the versions of the key committed at t's commit timestamp, on either side
// of i, where t's version goes.
func (o *Online) ties(evs []Event, t *otxn, w *owrite, key *okey, i int) []Event {
	vs := key.vs
	for j := i - 1; j >= 0 && (j < len(vs)-1 || key.lastCk.ts == t.commit) && vs[j].ck.ts == t.commit; j-- {
		x := vs[j].v
		evs = o.tie(evs, w.k, history.TxnName(t.id), t.start, t.commit, history.TxnName(x.id), x.start, x.commit())
	}
	for j := i; j < len(vs) && vs[j].ck.ts == t.commit; j++ {
		x := vs[j].v
		evs = o.tie(evs, w.k, history.TxnName(x.id), x.start, x.commit(), history.TxnName(t.id), t.start, t.commit)
	}
	return evs
}

// insertVersion fills in nv, t's version of the key, and inserts it at i.
func (o *Online) insertVersion(t *otxn, w *owrite, nv *over, key *okey, i int) {
	vs := key.vs
	*nv = over{cts: t.ck.p.ts, cph: t.ck.p.ph, sts: t.snap.p.ts, sph: t.snap.p.ph, start: t.start, id: t.id, v: w.v}
	if w.isL {
		nv.list = &olist{app: w.app}
	}
	if i == 0 && len(vs) > 0 && vs[0].v.base() != nil {
		// Inserted below the collected prefix cannot happen (late arrivals are refused);
		// keep the base on the first version regardless.
		nv.setBase(vs[0].v.base())
		vs[0].v.setBase(nil)
	}
	if i == len(vs) {
		key.vs = append(vs, vent{t.ck.p, nv})
		key.lastCk, key.lastV = t.ck.p, nv.v
	} else {
		key.vs = slices.Insert(vs, i, vent{t.ck.p, nv})
	}
	o.st.Versions++
	o.elems += int64(len(w.app))
}

// rejudge judges again the pending reads of the key whose snapshot lies after t's commit.
func (o *Online) rejudge(t *otxn, key *okey) {
	for r := key.lastRead; r != nil && !r.done && r.maxBelow.cmp(t.ck.p) >= 0; r = r.prev {
		if r.t.snap.cmp(t.ck) <= 0 {
			continue
		}
		if ok := o.verdict(r); ok != r.ok {
			r.ok = ok
			o.st.Flips++
		}
	}
}

func (o *Online) tie(evs []Event, k history.Datum, later string, ls, lc history.Timestamp, earlier string, es, ec history.Timestamp) []Event {
	v := Violation{Kind: anomaly.TimestampOrder, Key: k, HasKey: true, Txn: later, Other: earlier, TxnID: -1, OtherID: -1,
		TxnStart: ls, TxnCommit: lc, OtherStart: es, OtherCommit: ec}
	return o.emit(evs, v)
}

// visible returns the versions of key visible at snap (a prefix of key.vs).
func visible(key *okey, snap opos) []vent {
	return key.vs[:key.vsIndex(snap)]
}

// verdict reports whether r returns what its snapshot requires.
func (o *Online) verdict(r *oread) bool {
	if !r.isL {
		return o.itemVerdict(r)
	}
	return listVerdict(r)
}

// itemVerdict is verdict for an item read: it read the last version before its snapshot
// (the initial value if there is none).
func (o *Online) itemVerdict(r *oread) bool {
	key := r.key
	switch i := key.vsIndex(r.t.snap); {
	case i == 0:
		return r.v == o.o.Initial
	case i == len(key.vs):
		return r.v == key.lastV
	default:
		return r.v == key.vs[i-1].v.v
	}
}

// listVerdict is verdict for a list read: it read the base of the key's oldest version
// held, then the appends of every version visible at its snapshot, and nothing more.
func listVerdict(r *oread) bool {
	vis := visible(r.key, r.t.snap)
	obs := r.list
	if len(vis) > 0 {
		b := r.key.vs[0].v.base()
		if len(b) > len(obs) || !slices.Equal(obs[:len(b)], b) {
			return false
		}
		obs = obs[len(b):]
	}
	for _, e := range vis {
		x := e.v
		app := x.app()
		if len(app) > len(obs) || !slices.Equal(obs[:len(app)], app) {
			return false
		}
		obs = obs[len(app):]
	}
	return len(obs) == 0
}

// expected renders what r should have returned and names the writer.
func (o *Online) expected(r *oread) (string, string) {
	vis := visible(r.key, r.t.snap)
	if !r.isL {
		if len(vis) == 0 {
			return o.o.Initial.String(), Initial
		}
		x := vis[len(vis)-1].v
		return x.v.String(), history.TxnName(x.id)
	}
	var l []history.Datum
	if len(r.key.vs) > 0 {
		l = append(l, r.key.vs[0].v.base()...)
	}
	for _, e := range vis {
		l = append(l, e.v.app()...)
	}
	w := Initial
	if len(vis) > 0 {
		w = history.TxnName(vis[len(vis)-1].v.id)
	}
	return renderDatums(l), w
}

// Advance moves time to now: settles transactions that arrived at least Settle ago
// (reporting their EXT violations), forgets those past Settle+Retain, collects versions no
// held snapshot can read, and enforces the memory bound.
func (o *Online) Advance(now time.Time) []Event {
	var evs []Event
	if now.After(o.now) {
		o.now = now
	}
	for o.settled < len(o.fifo) && !o.fifo[o.settled].arrived.Add(o.o.Settle).After(o.now) {
		evs = o.settle(evs, o.fifo[o.settled], true)
		o.settled++
	}
	retire := o.o.Settle + o.o.Retain
	n := 0
	for n < o.settled && !o.fifo[n].arrived.Add(retire).After(o.now) {
		n++
	}
	o.retire(n)
	if o.o.MaxBytes > 0 && o.bytes() > o.o.MaxBytes {
		evs = o.dropOverBound(evs)
	}
	o.collect(false)
	// Deduplication ids are kept for three settle+retain windows after they are forgotten.
	o.ids.expire(o.now.Add(-3 * retire))
	return evs
}

// dropOverBound enforces the memory bound, which the checker is over: it settles the
// oldest pending transactions without verifying their reads, and forgets them, until it
// is under nine tenths of the bound.
func (o *Online) dropOverBound(evs []Event) []Event {
	dropped := 0
	var first, last string
	for o.settled < len(o.fifo) && o.bytes() > o.o.MaxBytes*9/10 {
		t := o.fifo[o.settled]
		if dropped == 0 {
			first = history.TxnName(t.id)
		}
		last = history.TxnName(t.id)
		evs = o.settle(evs, t, false)
		o.settled++
		dropped++
		if dropped%64 == 0 || o.settled == len(o.fifo) {
			// Collecting visits every key: do it after a few drops, not after each.
			o.retire(o.settled)
			o.collect(true)
		}
	}
	if o.bytes() > o.o.MaxBytes*9/10 {
		o.retire(o.settled)
	}
	if dropped > 0 {
		o.st.Dropped += int64(dropped)
		evs = append(evs, Event{Kind: EventDropped, Count: dropped, Message: fmt.Sprintf(
			"memory bound %d bytes reached: %d transactions (%s … %s) were dropped before their reads were verified", o.o.MaxBytes, dropped, first, last)})
	}
	return evs
}

// Flush settles every pending transaction now, as if its timeout had fired (for the end of
// a replay).
func (o *Online) Flush() []Event {
	var evs []Event
	for o.settled < len(o.fifo) {
		evs = o.settle(evs, o.fifo[o.settled], true)
		o.settled++
	}
	return evs
}

// settle freezes t's reads, reporting violations when report is set. A settled read is
// the end of its key's list of pending reads: it lets go of the older ones.
func (o *Online) settle(evs []Event, t *otxn, report bool) []Event {
	t.settled = true
	o.st.Settled++
	for i := range t.reads {
		r := &t.reads[i]
		r.done, r.prev = true, nil
		if report && !r.ok {
			evs = o.emit(evs, o.extViolation(r))
		}
		o.reads--
		o.elems -= int64(len(r.list))
	}
	return evs
}

// retire forgets fifo[:n] (already settled).
func (o *Online) retire(n int) {
	if n == 0 {
		return
	}
	for _, t := range o.fifo[:n] {
		o.forget(t.id)
		if len(o.minq) > 0 && o.minq[0] == t {
			o.minq = o.minq[1:]
		}
		t.reads = nil
	}
	o.fifo = o.fifo[n:]
	o.settled -= n
	if len(o.minq) > 0 {
		o.setHorizon(o.minq[0].snap)
	} else if len(o.fifo) == 0 {
		o.hasHoriz = false
		o.horizonAll()
	}
}

func (o *Online) setHorizon(h opos) {
	if !o.hasHoriz || h.cmp(o.horizon) > 0 {
		o.horizon, o.hasHoriz = h, true
	}
}

// horizonAll raises the horizon above every version: nothing in memory pins old versions.
func (o *Online) horizonAll() {
	for _, key := range o.klist {
		if n := len(key.vs); n > 0 {
			o.setHorizon(key.vs[n-1].v.ckO())
		}
	}
}

// collect drops versions below the horizon except the latest one of each key. It visits
// the keys in turn, as many as keep each key visited about four times per settle+retain
// window (all of them when all is set), so that its cost follows the number of keys, not
// the number of versions written. A version below the horizon, which no transaction that
// will still be checked can read, is kept at most a quarter of a window longer.
func (o *Online) collect(all bool) {
	if !o.hasHoriz || len(o.klist) == 0 {
		return
	}
	n := len(o.klist)
	if !all {
		el := o.now.Sub(o.swept)
		if el <= 0 {
			return
		}
		period := max((o.o.Settle+o.o.Retain)/4, time.Millisecond)
		if el < period {
			n = min(n, int(float64(n)*float64(el)/float64(period))+1)
		}
	}
	o.swept = o.now
	for range n {
		if o.sweep >= len(o.klist) {
			o.sweep = 0
		}
		o.prune(o.klist[o.sweep])
		o.sweep++
	}
}

func (o *Online) prune(key *okey) {
	if r := key.lastRead; r != nil && r.done {
		key.lastRead = nil // lets the settled read and its transaction go
	}
	vs := key.vs
	if len(vs) < 2 || vs[1].cmp(o.horizon) >= 0 {
		return // at most one version below the horizon: nothing to drop
	}
	n := searchVS(vs, o.horizon)
	if n <= 1 {
		return
	}
	if key.isL {
		o.foldBase(vs[:n])
	}
	o.st.Versions -= n - 1
	if m := len(vs) - (n - 1); m <= 32 {
		copy(vs, vs[n-1:])
		clear(vs[m:])
		key.vs = vs[:m]
		return
	}
	// A long chain: drop the prefix without moving the rest (the next growth of the
	// slice copies only what is live).
	clear(vs[:n-1])
	key.vs = vs[n-1:]
}

// foldBase makes the list before the last of vs (the versions a prune drops, then the one
// it keeps) the kept version's base: the dropped ones' base and appends, in order.
func (o *Online) foldBase(vs []vent) {
	dropped := vs[:len(vs)-1]
	var base []history.Datum
	base = append(base, vs[0].v.base()...)
	for _, e := range dropped {
		base = append(base, e.v.app()...)
	}
	vs[len(vs)-1].v.setBase(base)
	for _, e := range dropped {
		o.elems -= int64(len(e.v.app()))
	}
}

// extViolation builds the final EXT violation of r, classifying where its value came from.
func (o *Online) extViolation(r *oread) Violation {
	t := r.t
	v := o.viol(anomaly.ExtViolation, t)
	v.Key, v.HasKey = r.key.k, true
	v.Expected, v.Writer = o.expected(r)
	val, initial := r.v, false
	if r.isL {
		v.Observed = renderDatums(r.list)
		if len(r.list) == 0 {
			initial = true
		} else {
			val = r.list[len(r.list)-1]
		}
	} else {
		v.Observed = r.v.String()
		initial = r.v == o.o.Initial
	}
	before, unc, after := o.writersOf(r, val)
	pick := func(x *over, k ExtKind) {
		v.Ext, v.Other, v.OtherStart, v.OtherCommit = k, history.TxnName(x.id), x.start, x.commit()
	}
	switch {
	case before != nil:
		pick(before, ExtBefore)
	case initial:
		v.Ext, v.Other = ExtBefore, Initial
	case unc != nil:
		pick(unc, ExtUncommitted)
	case after != nil:
		pick(after, ExtAfter)
	default:
		v.Ext = ExtNever
	}
	return v
}

// writersOf returns the versions of r's key, not its reader's, that hold val (a list: that
// have it among their appends): the last one committed before the reader's snapshot, the
// first one committed after it by a transaction that started before it (uncommitted at
// the snapshot), and the first one that started after it.
func (o *Online) writersOf(r *oread, val history.Datum) (before, unc, after *over) {
	t := r.t
	for _, e := range r.key.vs {
		x := e.v
		if x.id == t.id {
			continue
		}
		match := false
		if r.isL {
			match = slices.Contains(x.app(), val)
		} else {
			match = x.v == val
		}
		if !match {
			continue
		}
		switch {
		case x.ckO().cmp(t.snap) < 0:
			before = x // versions ascend: the last one wins
		case x.snapO().cmp(t.snap) < 0:
			if unc == nil {
				unc = x
			}
		default:
			if after == nil {
				after = x
			}
		}
	}
	return before, unc, after
}
