package history

import (
	"errors"
	"fmt"
	"slices"

	"github.com/isovet/isovet/internal/hugepage"
)

// Builder assembles a [History] incrementally: readers and the runner stream transactions into
// it. Keys and values are interned as they arrive. A Builder is not safe for concurrent use.
//
// The usual sequence per transaction is BeginTxn, then op adders (Read, Write, Append,
// ReadList, PredRead, PredWrite, Insert, Delete), optional setters, then EndTxn. Build
// returns the history and validates it.
type Builder struct {
	h History

	// Ops live in chunks of chunkOps; each transaction's Ops is a view into one chunk (a
	// transaction that outgrows its chunk gets its own array by append), so building never
	// copies the ops of earlier transactions.
	chunk  []Op
	used   int  // ops of chunk taken by closed transactions
	curOps []Op // the open transaction's ops (its Txn.Ops is set from them when read)
	curCap int  // cap of curOps when it began
	// Per-op intervals live in chunks the same way: curTimes views times[timesUsed:].
	curTimes  []Interval
	times     []Interval
	timesUsed int
	timesCap  int // cap of curTimes when it began

	keyInt  IntIndex
	keyStr  map[string]Key
	valInt  IntIndex
	valStr  strIndex
	sessInt map[int64]SessionID
	sessStr map[string]SessionID
	sessNil SessionID
	hasNil  bool
	cur     TxnID // open transaction, or -1
	touched int32 // keeps BytesValues' touching loads from being optimized away
}

const chunkOps = 1 << 16

// NewBuilder returns an empty builder.
func NewBuilder() *Builder {
	b := &Builder{
		keyStr:  make(map[string]Key),
		valStr:  newStrIndex(),
		sessInt: make(map[int64]SessionID),
		sessStr: make(map[string]SessionID),
		cur:     -1,
	}
	b.h.Values.add(NilDatum)
	return b
}

// Grow hints at the expected number of transactions and operations.
func (b *Builder) Grow(txns, ops int) {
	if txns > 0 {
		b.h.Txns = growAhead(b.h.Txns, txns)
	}
	_ = ops // ops are allocated in fixed chunks; nothing to reserve
}

// slicesGrow makes room for n more elements in s (hugepage.Make for a new table).
func slicesGrow[T any](s []T, n int) []T { return growBy(s, n, hugepage.Make[T]) }

// growAhead is slicesGrow for a caller's estimate of what is to come (Grow, GrowValues):
// the new table is backed with pages ahead of its filling, from another core
// (hugepage.MakeAhead). A doubling table is not, since half of it may never be used.
func growAhead[T any](s []T, n int) []T { return growBy(s, n, hugepage.MakeAhead[T]) }

// growBy makes room for n more elements in s, allocating with mk if it must.
func growBy[T any](s []T, n int, mk func(n, c int) []T) []T {
	if cap(s)-len(s) < n {
		t := mk(len(s), len(s)+n)
		copy(t, s)
		return t
	}
	return s
}

// Key interns an original key.
func (b *Builder) Key(d Datum) Key {
	switch d.kind {
	case DatumInt:
		return b.IntKey(d.i)
	case DatumStr:
		return b.StrKey(d.s)
	}
	return b.StrKey("nil") // a nil key is unusual; keep it distinct from no key
}

// IntKey interns the integer key i.
func (b *Builder) IntKey(i int64) Key {
	if d := b.keyInt.dense; uint64(i) < uint64(len(d)) { // inlined: the common case
		if id := d[i]; id > 0 {
			return Key(id - 1)
		}
	}
	return b.intKey(i)
}

func (b *Builder) intKey(i int64) Key {
	if k, ok := b.keyInt.Get(i); ok {
		return Key(k)
	}
	k := Key(len(b.h.Keys))
	b.h.Keys = append(b.h.Keys, Int(i))
	b.keyInt.add(i, int32(k))
	return k
}

// StrKey interns the string key s.
func (b *Builder) StrKey(s string) Key {
	if k, ok := b.keyStr[s]; ok {
		return k
	}
	k := Key(len(b.h.Keys))
	b.h.Keys = append(b.h.Keys, Str(s))
	b.keyStr[s] = k
	return k
}

// BytesKey interns the string key held in s without allocating when it is known.
func (b *Builder) BytesKey(s []byte) Key {
	if k, ok := b.keyStr[string(s)]; ok {
		return k
	}
	return b.StrKey(string(s))
}

// Value interns an original value. The nil datum is [Nil].
func (b *Builder) Value(d Datum) Value {
	switch d.kind {
	case DatumInt:
		return b.IntValue(d.i)
	case DatumStr:
		return b.StrValue(d.s)
	}
	return Nil
}

// IntValue interns the integer value i.
func (b *Builder) IntValue(i int64) Value {
	if d := b.valInt.dense; uint64(i) < uint64(len(d)) { // inlined: the common case
		if id := d[i]; id > 0 {
			return Value(id - 1)
		}
	}
	return b.intValue(i)
}

func (b *Builder) intValue(i int64) Value {
	if v, ok := b.valInt.Get(i); ok {
		return Value(v)
	}
	v := Value(b.h.Values.addInt(i))
	b.valInt.add(i, int32(v))
	return v
}

// StrValue interns the string value s.
func (b *Builder) StrValue(s string) Value {
	return b.BytesValue(bytesOf(s))
}

// BytesValue interns the string value held in s. It never allocates per call: the value
// table copies new strings into its arena and keeps no reference to s.
func (b *Builder) BytesValue(s []byte) Value {
	tag := b.valStr.tag(s)
	if v, ok := b.valStr.get(&b.h.Values, s, tag); ok {
		return Value(v)
	}
	return b.addStr(s, tag)
}

// addStr adds the new string value s, whose tag is tag.
func (b *Builder) addStr(s []byte, tag uint32) Value {
	v := Value(b.h.Values.addBytes(s))
	b.valStr.put(tag, int32(v))
	return v
}

// valueBatch is how many strings [Builder.BytesValues] looks up at once.
const valueBatch = 128

// BytesValues interns the string values ss in order and stores their ids in out, which must
// be at least as long as ss: out[i] is exactly what BytesValue(ss[i]) would return after
// BytesValue(ss[0]) ... BytesValue(ss[i-1]), whatever ss holds (strings repeated within the
// batch, strings already interned, the empty string). Like BytesValue it keeps no reference
// to ss and allocates only when the value table grows.
//
// It is faster than BytesValue one at a time when the strings' slots in the value index are
// unlikely to be in the processor's caches (a history with millions of distinct values): it
// reads the slot of every string of the batch before probing for any, so the memory fetches
// overlap instead of each waiting for the one before.
//
// A caller that puts string values aside to intern them in one batch keeps the ids that
// interning them as they came would have given only if it interns no other value (IntValue,
// Value, StrValue, BytesValue) between the first of them and the batch: new values get the
// next id in the order they are interned.
func (b *Builder) BytesValues(ss [][]byte, out []Value) {
	out = out[:len(ss)]
	x := &b.valStr
	var tags [valueBatch]uint32
	for len(ss) > 0 {
		n := min(len(ss), valueBatch)
		// Hash every string, then touch every home slot: the loads are independent, and
		// with nothing else in the loop the processor holds dozens of them at once, so their
		// misses overlap. (Touching each slot as its string is hashed overlapped a few: the
		// hashing filled the reorder buffer behind the first miss.)
		for i, s := range ss[:n] {
			tags[i] = x.tag(s)
		}
		var touch int32
		for _, tag := range tags[:n] {
			touch |= x.slots[x.home(tag)].id
		}
		b.touched += touch & 1
		for i, s := range ss[:n] {
			if v, ok := x.get(&b.h.Values, s, tags[i]); ok {
				out[i] = Value(v)
			} else {
				out[i] = b.addStr(s, tags[i]) // may grow the index; tags do not depend on its size
			}
		}
		ss, out = ss[n:], out[n:]
	}
}

// GrowValues hints that about n more distinct values, holding about size bytes of strings
// in all, are coming, so that the value table and the string index are sized once instead
// of doubling as they fill. A wrong hint costs memory or later growth, never correctness.
func (b *Builder) GrowValues(n, size int) {
	t := &b.h.Values
	if n > 0 {
		t.kinds = growAhead(t.kinds, n)
		t.words = growAhead(t.words, n)
		b.valStr.reserve(b.valStr.n + n)
	}
	if size > 0 {
		t.arena = growAhead(t.arena, size)
	}
}

// Session returns the session with source id d, creating it (in order of first appearance).
func (b *Builder) Session(d Datum) SessionID {
	var m map[int64]SessionID
	switch d.kind {
	case DatumInt:
		m = b.sessInt
		if s, ok := m[d.i]; ok {
			return s
		}
	case DatumStr:
		if s, ok := b.sessStr[d.s]; ok {
			return s
		}
	default:
		if b.hasNil {
			return b.sessNil
		}
	}
	s := SessionID(len(b.h.Sessions))
	b.h.Sessions = append(b.h.Sessions, Session{ID: s, Source: d})
	switch d.kind {
	case DatumInt:
		b.sessInt[d.i] = s
	case DatumStr:
		b.sessStr[d.s] = s
	default:
		b.sessNil, b.hasNil = s, true
	}
	return s
}

// NewSession always creates a fresh session with source id d (for formats where a source id
// may be reused by a different session, e.g. a Jepsen process after a crash is renumbered).
func (b *Builder) NewSession(d Datum) SessionID {
	s := SessionID(len(b.h.Sessions))
	b.h.Sessions = append(b.h.Sessions, Session{ID: s, Source: d})
	return s
}

// SetInitial sets the value of every key in the initial state.
func (b *Builder) SetInitial(v Value) { b.h.Initial = v }

// SetInitialKey sets the initial value of one key.
func (b *Builder) SetInitialKey(k Key, v Value) {
	if b.h.InitialByKey == nil {
		b.h.InitialByKey = make(map[Key]Value)
	}
	b.h.InitialByKey[k] = v
}

// Note records a decision the reader made that the source does not state ([History.Notes]).
func (b *Builder) Note(s string) { b.h.Notes = append(b.h.Notes, s) }

// BeginTxn opens a new transaction at the end of session s, with source id src and the given
// outcome. It returns the new transaction's id.
func (b *Builder) BeginTxn(s SessionID, src Datum, outcome Outcome) TxnID {
	if b.cur >= 0 {
		b.EndTxn()
	}
	t := TxnID(len(b.h.Txns))
	sess := &b.h.Sessions[s]
	if len(b.chunk)-b.used < 64 {
		// Chunks start small (a short history, a fuzz input, costs little) and double.
		b.chunk, b.used = make([]Op, min(max(2*len(b.chunk), 1024), chunkOps)), 0
	}
	b.curOps = b.chunk[b.used:b.used]
	b.curCap = cap(b.curOps)
	if len(b.h.Txns) == cap(b.h.Txns) {
		b.h.Txns = slicesGrow(b.h.Txns, max(len(b.h.Txns), 64)) // double: a Txn is large
	}
	// Fill the new element in place: the array beyond len is zero (it is only ever grown).
	b.h.Txns = b.h.Txns[:t+1]
	tx := &b.h.Txns[t]
	tx.ID, tx.Session, tx.Seq, tx.Outcome = t, s, int32(len(sess.Txns)), outcome
	if !src.IsNil() {
		tx.Source = src
	}
	sess.Txns = append(sess.Txns, t)
	b.cur = t
	return t
}

// EndTxn closes the open transaction. It is optional before the next BeginTxn or Build.
func (b *Builder) EndTxn() {
	if b.cur < 0 {
		return
	}
	t := &b.h.Txns[b.cur]
	n := len(b.curOps)
	if cap(b.curOps) == b.curCap {
		b.used += n // still in the chunk
	}
	t.Ops, b.curOps = b.curOps[:n:n], nil
	if b.curTimes != nil {
		for len(b.curTimes) < n {
			b.curTimes = append(b.curTimes, Interval{})
		}
		if cap(b.curTimes) == b.timesCap {
			b.timesUsed += len(b.curTimes)
		}
		t.OpTimes = b.curTimes[:n:n]
		b.curTimes = nil
	}
	b.cur = -1
}

// Current returns the open transaction for setters (outcome, time, timestamps). It returns nil
// when no transaction is open. The pointer is valid until the next BeginTxn; its Ops are the
// ops added before the call (use TxnOps for later ones).
func (b *Builder) Current() *Txn {
	if b.cur < 0 {
		return nil
	}
	return b.Txn(b.cur)
}

// Txn returns a transaction added earlier, for readers that fix up outcomes or times after
// the fact. The pointer is valid until the next BeginTxn.
func (b *Builder) Txn(t TxnID) *Txn {
	if t == b.cur {
		b.h.Txns[t].Ops = b.curOps[:len(b.curOps):len(b.curOps)] // the ops added so far
	}
	return &b.h.Txns[t]
}

// NumTxns returns the number of transactions added so far.
func (b *Builder) NumTxns() int { return len(b.h.Txns) }

// TxnOps returns the ops added so far to transaction t, for readers that resolve explicit
// sources after all input is read. Do not append to it.
func (b *Builder) TxnOps(t TxnID) []Op {
	if t == b.cur {
		return b.curOps[:len(b.curOps):len(b.curOps)]
	}
	return b.h.Txns[t].Ops
}

func (b *Builder) add(o Op) int32 {
	if b.cur < 0 {
		panic("history: op added with no open transaction") // a reader bug, not bad input
	}
	b.curOps = append(b.curOps, o)
	return int32(len(b.curOps) - 1)
}

// Read adds read(k) = v and returns the op's index in its transaction.
func (b *Builder) Read(k Key, v Value) int32 { return b.add(Op{Kind: OpRead, Key: k, Value: v}) }

// ReadFrom adds read(k) = v whose writer the source named.
func (b *Builder) ReadFrom(k Key, v Value, src Src) int32 {
	return b.add(Op{Kind: OpRead, Key: k, Value: v, Src: src})
}

// Write adds write(k, v).
func (b *Builder) Write(k Key, v Value) int32 { return b.add(Op{Kind: OpWrite, Key: k, Value: v}) }

// Append adds append(k, v).
func (b *Builder) Append(k Key, v Value) int32 { return b.add(Op{Kind: OpAppend, Key: k, Value: v}) }

// Insert adds insert(k, v).
func (b *Builder) Insert(k Key, v Value) int32 { return b.add(Op{Kind: OpInsert, Key: k, Value: v}) }

// Delete adds delete(k).
func (b *Builder) Delete(k Key) int32 { return b.add(Op{Kind: OpDelete, Key: k}) }

// ReadList adds read(k) = vs for a list key. vs is copied.
func (b *Builder) ReadList(k Key, vs []Value) int32 {
	off := int32(len(b.h.lists))
	b.h.lists = append(b.h.lists, vs...)
	return b.add(Op{Kind: OpListRead, Key: k, aux: off, auxLen: int32(len(vs))})
}

// PredRead adds a predicate read that returned rows. p.Rows is kept, not copied.
func (b *Builder) PredRead(p PredOp) int32 {
	i := int32(len(b.h.Preds))
	b.h.Preds = append(b.h.Preds, p)
	return b.add(Op{Kind: OpPredRead, aux: i})
}

// PredWrite adds a predicate write (UPDATE or DELETE ... WHERE) with the rows it evaluated.
func (b *Builder) PredWrite(p PredOp) int32 {
	i := int32(len(b.h.Preds))
	b.h.Preds = append(b.h.Preds, p)
	return b.add(Op{Kind: OpPredWrite, aux: i})
}

// SetOpFlags sets flags on op i of the open transaction.
func (b *Builder) SetOpFlags(i int32, f OpFlags) { b.curOps[i].Flags |= f }

// SetOpTime records the client interval of op i of the open transaction.
func (b *Builder) SetOpTime(i int32, iv Interval) {
	if b.curTimes == nil {
		if len(b.times)-b.timesUsed < 64 {
			b.times, b.timesUsed = make([]Interval, min(max(2*len(b.times), 1024), chunkOps)), 0
		}
		b.curTimes = b.times[b.timesUsed:b.timesUsed]
		b.timesCap = cap(b.curTimes)
	}
	for len(b.curTimes) <= int(i) {
		b.curTimes = append(b.curTimes, Interval{})
	}
	b.curTimes[i] = iv
}

// SetOp replaces op i of transaction t (for readers resolving explicit sources or values
// after all input is read). The kind must not change between item and list/predicate ops.
func (b *Builder) SetOp(t TxnID, i int32, o Op) {
	p := &b.TxnOps(t)[i]
	o.aux, o.auxLen = p.aux, p.auxLen
	*p = o
}

// Build finishes the history and validates it. The builder must not be used afterwards.
// A structurally invalid history returns the history and an error joining every problem.
func (b *Builder) Build() (*History, error) {
	b.EndTxn()
	h := &b.h
	b.chunk, b.times, b.keyStr, b.sessInt, b.sessStr = nil, nil, nil, nil, nil
	b.keyInt, b.valInt, b.valStr = IntIndex{}, IntIndex{}, strIndex{}
	if err := Validate(h); err != nil {
		return h, err
	}
	if h.Initial != Nil {
		emptyLists(h)
	}
	if len(h.Snapshots) > 0 {
		_, h.SnapshotErr = DeriveTimestamps(h)
	}
	h.timeOrigin = timeOrigin(h.Txns)
	return h, nil
}

// timeOrigin returns the earliest client begin time of txns, 0 when none has one.
func timeOrigin(txns []Txn) int64 {
	origin, found := int64(0), false
	for i := range txns {
		if t := &txns[i]; t.HasTime && (!found || t.Time.Begin < origin) {
			origin, found = t.Time.Begin, true
		}
	}
	return origin
}

// SetSnapshot records the database snapshot of transaction t ([History.Snapshots]).
func (b *Builder) SetSnapshot(t TxnID, s Snapshot) {
	if b.h.Snapshots == nil {
		b.h.Snapshots = make(map[TxnID]Snapshot)
	}
	b.h.Snapshots[t] = s
}

// emptyLists gives every list key the initial value Nil (the empty list) when the history's
// initial value for keys is something else: the source's initial value is a register's, and
// a list starts empty whatever it is. Validate has refused an explicit other one.
func emptyLists(h *History) {
	for k, list := range listKeys(h) {
		if _, ok := h.InitialByKey[Key(k)]; list && !ok {
			if h.InitialByKey == nil {
				h.InitialByKey = make(map[Key]Value)
			}
			h.InitialByKey[Key(k)] = Nil
		}
	}
}

// listKeys marks, per key, whether some op appends to it or reads it as a list.
func listKeys(h *History) []bool {
	isList := make([]bool, len(h.Keys))
	for ti := range h.Txns {
		for _, o := range h.Txns[ti].Ops {
			if o.Kind == OpAppend || o.Kind == OpListRead {
				isList[o.Key] = true
			}
		}
	}
	return isList
}

// Validation errors. Callers test with errors.Is.
var (
	ErrBadOp  = errors.New("history: malformed operation")
	ErrBadSrc = errors.New("history: read source out of range")
	ErrBadTxn = errors.New("history: malformed transaction")
)

// maxProblems caps how many problems Validate reports.
const maxProblems = 20

// Validate checks the structure of h: op kinds, interned ids in range, explicit sources
// pointing at writes of the same key, intervals with Begin <= End. It reports every problem
// (up to 20) with errors.Join.
func Validate(h *History) error {
	v := &validator{h: h, nk: Key(len(h.Keys)), nv: Value(h.Values.Len())}
	for ti := range h.Txns {
		if !v.txn(ti) {
			break
		}
	}
	for t := range h.Snapshots {
		if t < 0 || int(t) >= len(h.Txns) {
			v.errs = append(v.errs, fmt.Errorf("%w: a snapshot names transaction %d of %d", ErrBadTxn, t, len(h.Txns)))
			break
		}
	}
	if v.lists && len(v.errs) == 0 {
		v.errs = append(v.errs, validateListKeys(h)...)
	}
	return errors.Join(v.errs...)
}

// validator is the state of one Validate.
type validator struct {
	h     *History
	nk    Key
	nv    Value
	errs  []error
	lists bool // some op appends or reads a list
	// Per key: 1 + the index of the predicate payload that last listed it, and where.
	rowSeen, rowAt []int32
}

// add records a problem and reports whether there is room for more.
func (v *validator) add(err error) bool {
	v.errs = append(v.errs, err)
	return len(v.errs) < maxProblems
}

// txn validates transaction ti: its id, session and times, then its ops. It reports false
// when Validate must stop.
func (v *validator) txn(ti int) bool {
	h := v.h
	t := &h.Txns[ti]
	if t.ID != TxnID(ti) || int(t.Session) >= len(h.Sessions) || t.Session < 0 {
		return v.add(fmt.Errorf("%w: txn %s has id %d, session %d", ErrBadTxn, h.Name(TxnID(ti)), t.ID, t.Session))
	}
	if t.HasTime && t.Time.Begin > t.Time.End {
		if !v.add(fmt.Errorf("%w: txn %s ends (%d) before it begins (%d)", ErrBadTxn, h.Name(t.ID), t.Time.End, t.Time.Begin)) {
			return false
		}
	}
	if t.HasTimestamps && t.Commit.Less(t.Start) {
		if !v.add(fmt.Errorf("%w: txn %s commits (%v) before it starts (%v)", ErrBadTxn, h.Name(t.ID), t.Commit, t.Start)) {
			return false
		}
	}
	v.ops(t)
	return true
}

// ops validates t's ops, up to the one that fills the problems.
func (v *validator) ops(t *Txn) {
	for oi, o := range t.Ops {
		if err := validateOp(v.h, o, v.nk, v.nv); err != nil {
			if !v.add(fmt.Errorf("txn %s op %d: %w", v.h.Name(t.ID), oi, err)) {
				return
			}
			continue
		}
		if o.Kind == OpPredRead || o.Kind == OpPredWrite {
			v.predRows(t, oi, o)
		}
		v.lists = v.lists || o.Kind == OpAppend || o.Kind == OpListRead
	}
}

// predRows checks that predicate op o (op oi of t) lists no row twice, differently. A
// predicate evaluates each row once: a row listed twice with different values or outcomes
// says two things about one evaluation, and checkers would each believe one of them.
// (Listed twice alike, it says one.)
func (v *validator) predRows(t *Txn, oi int, o Op) {
	h := v.h
	if v.rowSeen == nil {
		v.rowSeen, v.rowAt = make([]int32, v.nk), make([]int32, v.nk)
	}
	stamp := o.aux + 1
	rows := h.Preds[o.aux].Rows
	for i, r := range rows {
		if v.rowSeen[r.Key] == stamp {
			if prev := rows[v.rowAt[r.Key]]; prev.Value != r.Value || prev.Match != r.Match {
				v.add(fmt.Errorf("txn %s op %d: %w: the predicate operation lists row %v twice, differently", h.Name(t.ID), oi, ErrBadOp, h.Keys[r.Key]))
				return
			}
			continue
		}
		v.rowSeen[r.Key], v.rowAt[r.Key] = stamp, int32(i)
	}
}

// validateListKeys checks that a key appended to or read as a list is never written,
// inserted, deleted or read as a single value, nor a predicate's row: the checkers take a
// list's version to be its last element, so a plain value on such a key would be read as
// one, and a history mixing the two means nothing they can check. A plain read of nil, or a
// predicate row of nil, is allowed: a list that does not exist yet. So is the history's
// initial value for all keys, which Build replaces by Nil on list keys; an initial value
// given for a list key itself must be Nil. It reports the first misuse of each key (at most
// 20 in all).
func validateListKeys(h *History) []error {
	c := &listKeyCheck{h: h, isList: listKeys(h), reported: make(map[Key]bool)}
	c.initial()
	for ti := range h.Txns {
		t := &h.Txns[ti]
		for oi, o := range t.Ops {
			if !c.op(t, oi, o) {
				return c.errs
			}
		}
	}
	return c.errs
}

// listKeyCheck is the state of one validateListKeys.
type listKeyCheck struct {
	h        *History
	isList   []bool
	reported map[Key]bool
	errs     []error
}

// initial reports the list keys given an initial value other than Nil.
func (c *listKeyCheck) initial() {
	h, isList := c.h, c.isList
	for k, v := range h.InitialByKey {
		if k >= 0 && int(k) < len(isList) && isList[k] && v != Nil && len(c.errs) < maxProblems {
			c.reported[k] = true
			c.errs = append(c.errs, fmt.Errorf("%w: key %v is a list (appended to or read as a list), but its initial value is %v: a list starts empty", ErrBadOp, h.Keys[k], h.Value(v)))
		}
	}
}

// plainUses says what an op of a single-value kind does to its key, for validateListKeys
// ("" for the other kinds): a table indexed by kind, as it is read once per op.
var plainUses = [...]string{
	OpWrite:  "writes a single value",
	OpInsert: "inserts a row",
	OpDelete: "deletes a row",
}

// op reports the list keys op o (op oi of t) uses as single values; it reports false when
// there is no room for more problems.
func (c *listKeyCheck) op(t *Txn, oi int, o Op) bool {
	h := c.h
	if int(o.Kind) < len(plainUses) && plainUses[o.Kind] != "" {
		return c.misuse(t, oi, o.Key, plainUses[o.Kind])
	}
	switch o.Kind {
	case OpRead:
		if o.Value != Nil {
			return c.misuse(t, oi, o.Key, fmt.Sprintf("reads a single value (%v), not a list", h.Value(o.Value)))
		}
	case OpPredRead, OpPredWrite:
		for _, r := range h.Pred(o).Rows {
			if r.Value == Nil {
				continue
			}
			if !c.misuse(t, oi, r.Key, fmt.Sprintf("has it as a predicate's row with value %v", h.Value(r.Value))) {
				return false
			}
		}
	}
	return true
}

// misuse reports k's use by op oi of t (what it does) if k is a list key not reported yet;
// it reports false when there is no room for more problems.
func (c *listKeyCheck) misuse(t *Txn, oi int, k Key, what string) bool {
	if !c.isList[k] || c.reported[k] {
		return true
	}
	c.reported[k] = true
	c.errs = append(c.errs, fmt.Errorf("txn %s op %d: %w: key %v is a list elsewhere (appended to or read as a list), but this op %s", c.h.Name(t.ID), oi, ErrBadOp, c.h.Keys[k], what))
	return len(c.errs) < maxProblems
}

// validateOp checks op o of h, whose keys are below nk and values below nv. It runs once per
// op of every history read, so the common case (an item op in range, its source found by
// value) calls nothing: the steps it skips cost 2.6 % of reading a Vbox history.
func validateOp(h *History, o Op, nk Key, nv Value) error {
	switch o.Kind {
	case OpRead, OpWrite, OpAppend, OpInsert, OpDelete, OpListRead:
		if o.Key < 0 || o.Key >= nk || o.Value < 0 || o.Value >= nv {
			return validateItem(o, nk, nv)
		}
	case OpPredRead, OpPredWrite:
		if err := validatePred(h, o, nk, nv); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: kind %d", ErrBadOp, o.Kind)
	}
	if o.Kind == OpListRead || o.Kind == OpAppend {
		if err := validateElems(h, o); err != nil {
			return err
		}
	}
	if o.Src.Kind == SrcByValue {
		return nil
	}
	return validateSrc(h, o.Src, o.Key)
}

// validateItem says which of an item op's key and value is out of range (nil if neither).
func validateItem(o Op, nk Key, nv Value) error {
	if o.Key < 0 || o.Key >= nk {
		return fmt.Errorf("%w: key %d out of range", ErrBadOp, o.Key)
	}
	if o.Value < 0 || o.Value >= nv {
		return fmt.Errorf("%w: value %d out of range", ErrBadOp, o.Value)
	}
	return nil
}

// validatePred checks a predicate op: its payload, rows and row sources in range.
func validatePred(h *History, o Op, nk Key, nv Value) error {
	if int(o.aux) >= len(h.Preds) || o.aux < 0 {
		return fmt.Errorf("%w: predicate %d out of range", ErrBadOp, o.aux)
	}
	p := &h.Preds[o.aux]
	for _, r := range p.Rows {
		if r.Key < 0 || r.Key >= nk || r.Value < 0 || r.Value >= nv {
			return fmt.Errorf("%w: predicate row out of range", ErrBadOp)
		}
	}
	return validateRowSrcs(h, p)
}

// validateRowSrcs checks a predicate payload's row sources: one per row (or none), each
// naming a write of its row.
func validateRowSrcs(h *History, p *PredOp) error {
	if p.Srcs != nil && len(p.Srcs) != len(p.Rows) {
		return fmt.Errorf("%w: %d row sources for %d predicate rows", ErrBadSrc, len(p.Srcs), len(p.Rows))
	}
	for i, src := range p.Srcs {
		if err := validateSrc(h, src, p.Rows[i].Key); err != nil {
			return fmt.Errorf("predicate row %d: %w", i, err)
		}
	}
	return nil
}

// validateElems checks a list read's list is in range and an append's or a list's
// elements are values. A list's version is its last element, and nil is the empty list's:
// a nil element would make a non-empty list look empty.
func validateElems(h *History, o Op) error {
	if o.Kind == OpListRead {
		if o.aux < 0 || int(o.aux)+int(o.auxLen) > len(h.lists) {
			return fmt.Errorf("%w: list out of range", ErrBadOp)
		}
		if slices.Contains(h.List(o), Nil) {
			return fmt.Errorf("%w: a list read of key %v holds null: list elements must be values", ErrBadOp, h.Keys[o.Key])
		}
	}
	if o.Kind == OpAppend && o.Value == Nil {
		return fmt.Errorf("%w: an append of null to key %v: list elements must be values", ErrBadOp, h.Keys[o.Key])
	}
	return nil
}

// validateSrc checks that an explicit source of a read of key k names a write of k (or a
// predicate write) in h.
func validateSrc(h *History, src Src, k Key) error {
	if src.Kind > SrcNone {
		return fmt.Errorf("%w: source kind %d", ErrBadSrc, src.Kind)
	}
	if src.Kind != SrcTxn {
		return nil
	}
	if src.Txn < 0 || int(src.Txn) >= len(h.Txns) {
		return fmt.Errorf("%w: txn %d", ErrBadSrc, src.Txn)
	}
	return validateSrcOp(h, src, k)
}

// validateSrcOp checks that the op an explicit source names, in a transaction of h, is a
// write of key k or a predicate write.
func validateSrcOp(h *History, src Src, k Key) error {
	w := h.Txns[src.Txn].Ops
	if src.Op < 0 || int(src.Op) >= len(w) {
		return fmt.Errorf("%w: op %d of txn %s", ErrBadSrc, src.Op, h.Name(src.Txn))
	}
	if wo := w[src.Op]; !wo.Kind.IsWrite() && wo.Kind != OpPredWrite {
		return fmt.Errorf("%w: op %d of txn %s is of kind %v, not a write", ErrBadSrc, src.Op, h.Name(src.Txn), wo.Kind)
	} else if wo.Kind != OpPredWrite && wo.Key != k {
		return fmt.Errorf("%w: op %d of txn %s writes key %v, not %v", ErrBadSrc, src.Op, h.Name(src.Txn), h.Keys[wo.Key], h.Keys[k])
	}
	return nil
}
