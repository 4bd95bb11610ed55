package memdb

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
)

// Mode is an isolation mode. The zero value is invalid.
type Mode uint8

// Modes.
const (
	ModeInvalid Mode = iota
	Serializable
	SnapshotIsolation
	ReadCommitted
	ReadUncommitted
)

var modeNames = [...]string{"invalid", "serializable", "snapshot-isolation", "read-committed", "read-uncommitted"}

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "invalid"
}

// Modes returns every valid mode, strongest first.
func Modes() []Mode {
	ms := make([]Mode, 0, len(modeNames)-1)
	for i := 1; i < len(modeNames); i++ {
		ms = append(ms, Mode(i))
	}
	return ms
}

// ParseMode parses a mode name (also "ser", "si", "rc", "ru").
func ParseMode(s string) (Mode, error) {
	switch s {
	case "ser":
		return Serializable, nil
	case "si":
		return SnapshotIsolation, nil
	case "rc":
		return ReadCommitted, nil
	case "ru":
		return ReadUncommitted, nil
	}
	for i, n := range modeNames[1:] {
		if n == s {
			return Mode(i + 1), nil
		}
	}
	return ModeInvalid, fmt.Errorf("unknown memdb mode %q (modes: %s)", s, strings.Join(modeNames[1:], ", "))
}

// Fault is a set of injected faults.
type Fault uint8

// Faults; see the package documentation for the anomaly each must cause.
const (
	LostUpdate Fault = 1 << iota
	StaleRead
	FracturedRead
	LongFork
	AbortedRead
	IntermediateRead
	Phantom
	numFaults = iota
)

var faultNames = [numFaults]string{"lost-update", "stale-read", "fractured-read", "long-fork", "aborted-read", "intermediate-read", "phantom"}

// Faults returns every single fault, in order.
func Faults() []Fault {
	fs := make([]Fault, numFaults)
	for i := range fs {
		fs[i] = 1 << i
	}
	return fs
}

func (f Fault) String() string {
	if f == 0 {
		return "none"
	}
	var parts []string
	for i := range numFaults {
		if f&(1<<i) != 0 {
			parts = append(parts, faultNames[i])
		}
	}
	return strings.Join(parts, ",")
}

// ParseFault parses a comma-separated list of fault names.
func ParseFault(s string) (Fault, error) {
	var f Fault
	for name := range strings.SplitSeq(s, ",") {
		i := slices.Index(faultNames[:], strings.TrimSpace(name))
		if i < 0 {
			return 0, fmt.Errorf("unknown memdb fault %q (faults: %s)", name, strings.Join(faultNames[:], ", "))
		}
		f |= 1 << i
	}
	return f, nil
}

// Options configure a DB.
type Options struct {
	Mode   Mode // default SnapshotIsolation
	Faults Fault
	// Seed seeds the fault choices (which transactions abort, how stale a snapshot is).
	Seed uint64
	// Initial gives keys a starting register value other than 0.
	Initial map[string]int64
	// KeepVersions is how many versions of a key are kept (default 64).
	KeepVersions int
	_            struct{}
}

// Errors.
var (
	// ErrConflict is a serialization failure: the transaction was aborted to keep the mode's
	// guarantees and may be retried as a new transaction.
	ErrConflict = errors.New("memdb: serialization failure, transaction aborted")
	// ErrInjectedAbort is returned at commit by the aborted-read fault.
	ErrInjectedAbort = errors.New("memdb: injected abort")
	// ErrDone is returned when a finished transaction is used.
	ErrDone = errors.New("memdb: transaction already finished")
	// ErrType is returned when a key is used as a register and as a list.
	ErrType = errors.New("memdb: key holds the other type")
)

// DB is an in-memory multi-version store. It is safe for concurrent use.
type DB struct {
	mu     sync.Mutex
	active map[uint64]uint64 // snapshots of the active transactions, by id
	opts   Options
	clock  uint64 // timestamp of the last commit
	items  map[string]*item
	tables map[string]*table
	rnd    *rand.Rand
	txns   uint64
}

type version struct {
	ts   uint64 // commit timestamp; 0 while uncommitted (read-uncommitted mode)
	txn  uint64
	val  int64
	list []int64 // list value (immutable once installed)
	isL  bool
	row  []int64 // a table row's column values (immutable); nil: the row does not exist
}

type item struct {
	vs      []version // oldest first
	locked  uint64    // read-uncommitted: the active transaction writing it
	dropped bool      // old versions were trimmed
}

// New returns an empty database.
func New(opts Options) *DB {
	if opts.Mode == ModeInvalid {
		opts.Mode = SnapshotIsolation
	}
	if opts.KeepVersions <= 0 {
		opts.KeepVersions = 64
	}
	db := &DB{opts: opts, items: make(map[string]*item), rnd: rand.New(rand.NewPCG(opts.Seed, 0x5eed))}
	for k, v := range opts.Initial {
		db.items[k] = &item{vs: []version{{ts: 0, val: v}}}
	}
	return db
}

// Mode returns the database's mode.
func (db *DB) Mode() Mode { return db.opts.Mode }

// Faults returns the injected faults.
func (db *DB) Faults() Fault { return db.opts.Faults }

type write struct {
	k    string
	val  int64
	isL  bool // an append of val
	seq  int  // position among the txn's writes
	list []int64
	// Row writes: the table, the row's key and its new column values (nil: deleted).
	tbl *table
	rk  int64
	row []int64
}

// Tx is a transaction. Use it from one goroutine.
type Tx struct {
	db     *DB
	id     uint64
	snap   [2]uint64 // snapshot per key half (equal unless the long-fork fault is on)
	start  uint64    // reported start timestamp
	commit uint64
	writes []write  // in program order
	reads  []string // keys read before being written (validation); may repeat
	// rowW indexes the latest write of each row in writes; preds are the predicates read
	// (validation in serializable mode).
	rowW  map[rowRef]int
	preds []predRead
	done  bool
}

// last returns the index in tx.writes of the latest write of k. Transactions are small, so
// a backward scan beats a map.
func (tx *Tx) last(k string) (int, bool) {
	for i := len(tx.writes) - 1; i >= 0; i-- {
		if tx.writes[i].k == k {
			return i, true
		}
	}
	return -1, false
}

// final reports whether write i is the last write of its key.
func (tx *Tx) final(i int) bool {
	if w := &tx.writes[i]; w.tbl != nil {
		return tx.rowW[rowRef{w.tbl, w.rk}] == i
	}
	j, _ := tx.last(tx.writes[i].k)
	return j == i
}

func half(k string) int {
	h := uint32(2166136261)
	for i := 0; i < len(k); i++ {
		h = (h ^ uint32(k[i])) * 16777619
	}
	return int(h & 1)
}

// Begin starts a transaction.
func (db *DB) Begin() *Tx { return db.BeginAfter(0) }

// BeginAfter starts a transaction whose snapshot includes at least every commit up to
// timestamp ts. A client passes its own last commit timestamp, as a session of a database
// that guarantees read-your-writes would: the stale-read fault then never hides a session's
// own writes from it, only other sessions' writes. (The long-fork fault ignores ts: its
// parallel snapshots are what it is about.)
func (db *DB) BeginAfter(ts uint64) *Tx {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.txns++
	tx := &Tx{db: db, id: db.txns, start: db.clock}
	tx.snap[0], tx.snap[1] = db.clock, db.clock
	f := db.opts.Faults
	if f&StaleRead != 0 {
		lag := 1 + db.rnd.Uint64N(8)
		tx.start = db.clock - min(lag, db.clock)
		tx.snap[0], tx.snap[1] = tx.start, tx.start
	}
	ts = min(ts, db.clock)
	tx.start = max(tx.start, ts)
	tx.snap[0], tx.snap[1] = max(tx.snap[0], ts), max(tx.snap[1], ts)
	if f&LongFork != 0 {
		lag := 1 + db.rnd.Uint64N(6)
		tx.snap[tx.id&1] = db.clock - min(lag, db.clock)
	}
	if db.active == nil {
		db.active = make(map[uint64]uint64)
	}
	db.active[tx.id] = min(tx.snap[0], tx.snap[1])
	return tx
}

// maxLag bounds how far behind the clock the faults take a snapshot.
const maxLag = 10

// finish marks tx done and forgets its snapshot; db.mu is held.
func (tx *Tx) finish() {
	tx.done = true
	delete(tx.db.active, tx.id)
}

// oldestSnapshot returns the oldest snapshot an active or future transaction can read at;
// db.mu is held. With few transactions active the scan is cheap.
func (db *DB) oldestSnapshot() uint64 {
	o := db.clock - min(db.clock, maxLag)
	for _, s := range db.active {
		o = min(o, s)
	}
	return o
}

// Timestamps returns the transaction's start (snapshot) timestamp and, once committed, its
// commit timestamp (0 before).
func (tx *Tx) Timestamps() (start, commit uint64) { return tx.start, tx.commit }

// visible returns the version of it tx sees, or nil.
func (tx *Tx) visible(k string, it *item) *version {
	db := tx.db
	switch {
	case db.opts.Mode == ReadUncommitted:
		if n := len(it.vs); n > 0 {
			return &it.vs[n-1]
		}
		return nil
	case db.opts.Mode == ReadCommitted || db.opts.Faults&FracturedRead != 0:
		return it.committedAt(math.MaxUint64)
	}
	return it.committedAt(tx.snapOf(k))
}

// committedAt is the latest committed version of it (or the initial one) at timestamp ts
// or before, or nil.
func (it *item) committedAt(ts uint64) *version {
	for i := len(it.vs) - 1; i >= 0; i-- {
		v := &it.vs[i]
		if (v.ts > 0 || v.txn == 0) && v.ts <= ts {
			return v
		}
	}
	return nil
}

// snapOf returns the snapshot tx reads k at (the halves differ only under long-fork).
func (tx *Tx) snapOf(k string) uint64 {
	if tx.db.opts.Faults&LongFork == 0 {
		return tx.snap[0]
	}
	return tx.snap[half(k)]
}

// trimmed reports whether the version tx needs of it may have been dropped.
func (tx *Tx) trimmed(it *item) bool { return it.dropped }

func (tx *Tx) read(k string, wantList bool) (int64, []int64, error) {
	if tx.done {
		return 0, nil, ErrDone
	}
	if i, ok := tx.last(k); ok && tx.db.opts.Mode != ReadUncommitted {
		return tx.readOwn(&tx.writes[i], wantList)
	}
	db := tx.db
	db.mu.Lock()
	defer db.mu.Unlock()
	if _, wrote := tx.last(k); !wrote {
		tx.reads = append(tx.reads, k)
	}
	it := db.items[k]
	if it == nil {
		return 0, nil, nil
	}
	v := tx.visible(k, it)
	if v == nil {
		if tx.trimmed(it) {
			tx.abortLocked()
			return 0, nil, fmt.Errorf("%w: snapshot too old for key %s", ErrConflict, k)
		}
		return 0, nil, nil
	}
	if v.isL != wantList && !(v.txn == 0 && v.ts == 0) {
		return 0, nil, fmt.Errorf("%w: %s", ErrType, k)
	}
	return v.val, v.list, nil
}

// readOwn reads back w, tx's last write of its key.
func (tx *Tx) readOwn(w *write, wantList bool) (int64, []int64, error) {
	if w.isL != wantList {
		return 0, nil, fmt.Errorf("%w: %s", ErrType, w.k)
	}
	if w.isL && tx.db.opts.Mode == ReadCommitted {
		// As SQL's UPDATE ... SET l = l || x under read committed: the list read back
		// is the latest committed one plus this transaction's appends.
		tx.db.mu.Lock()
		defer tx.db.mu.Unlock()
		return 0, tx.rebase(w.k), nil
	}
	return w.val, w.list, nil
}

// Read returns the register value of k (0 if never written).
func (tx *Tx) Read(k string) (int64, error) {
	v, _, err := tx.read(k, false)
	return v, err
}

// ReadList returns the list at k (nil if never appended to). The slice must not be modified.
func (tx *Tx) ReadList(k string) ([]int64, error) {
	_, l, err := tx.read(k, true)
	return l, err
}

// Write sets the register k to v.
func (tx *Tx) Write(k string, v int64) error { return tx.put(k, v, false) }

// Append appends v to the list at k.
func (tx *Tx) Append(k string, v int64) error { return tx.put(k, v, true) }

func (tx *Tx) put(k string, v int64, isList bool) error {
	if tx.done {
		return ErrDone
	}
	w := write{k: k, val: v, isL: isList, seq: len(tx.writes)}
	if isList {
		base, err := tx.listBase(k)
		if err != nil {
			return err
		}
		w.list = append(slices.Clip(base), v)
	}
	return tx.putW(w)
}

// putW takes the write lock (read committed) or installs the dirty version
// (read-uncommitted) and adds w to the transaction's writes.
func (tx *Tx) putW(w write) error {
	w.seq = len(tx.writes)
	switch tx.db.opts.Mode {
	case ReadUncommitted:
		if err := tx.putDirty(w); err != nil {
			return err
		}
	case ReadCommitted:
		if err := tx.lock(&w); err != nil {
			return err
		}
	}
	if w.tbl != nil {
		if tx.rowW == nil {
			tx.rowW = make(map[rowRef]int)
		}
		tx.rowW[rowRef{w.tbl, w.rk}] = len(tx.writes)
	}
	tx.writes = append(tx.writes, w)
	return nil
}

// itemFor returns the item w writes, creating (and, for a row, registering) it; db.mu is
// held.
func (db *DB) itemFor(w *write) *item {
	it := db.items[w.k]
	if it == nil {
		it = &item{}
		db.items[w.k] = it
		if w.tbl != nil {
			w.tbl.register(w.rk, w.k, it)
		}
	}
	return it
}

// listBase returns the list an append at k extends: the txn's own latest, else what it sees.
func (tx *Tx) listBase(k string) ([]int64, error) {
	if i, ok := tx.last(k); ok {
		if !tx.writes[i].isL {
			return nil, fmt.Errorf("%w: %s", ErrType, k)
		}
		return tx.writes[i].list, nil
	}
	db := tx.db
	db.mu.Lock()
	defer db.mu.Unlock()
	it := db.items[k]
	if it == nil {
		return nil, nil
	}
	if db.opts.Mode == ReadUncommitted {
		// Appends extend the latest version under the write lock (checked in putDirty).
		if n := len(it.vs); n > 0 {
			return it.vs[n-1].list, nil
		}
		return nil, nil
	}
	if v := tx.visible(k, it); v != nil {
		return v.list, nil
	}
	return nil, nil
}

// lock takes the write lock on w's key (read committed: no dirty writes), no-wait.
func (tx *Tx) lock(w *write) error {
	db := tx.db
	db.mu.Lock()
	defer db.mu.Unlock()
	k := w.k
	it := db.itemFor(w)
	if it.locked != 0 && it.locked != tx.id {
		tx.abortLocked()
		return fmt.Errorf("%w: key %s is being written by another transaction", ErrConflict, k)
	}
	it.locked = tx.id
	return nil
}

// unlock releases tx's write locks; db.mu is held.
func (tx *Tx) unlock() {
	for _, w := range tx.writes {
		if it := tx.db.items[w.k]; it != nil && it.locked == tx.id {
			it.locked = 0
		}
	}
}

// putDirty installs an uncommitted version at once (read-uncommitted).
func (tx *Tx) putDirty(w write) error {
	db := tx.db
	db.mu.Lock()
	defer db.mu.Unlock()
	it := db.itemFor(&w)
	if it.locked != 0 && it.locked != tx.id {
		tx.abortLocked()
		return fmt.Errorf("%w: key %s is being written by another transaction", ErrConflict, w.k)
	}
	it.locked = tx.id
	if w.isL && len(it.vs) > 0 {
		w.list = append(slices.Clip(it.vs[len(it.vs)-1].list), w.val)
	}
	it.vs = append(it.vs, version{txn: tx.id, val: w.val, list: w.list, isL: w.isL, row: w.row})
	if w.tbl != nil {
		w.tbl.indexRow(w.rk, w.row)
	}
	return nil
}

// Commit commits the transaction. On [ErrConflict] or [ErrInjectedAbort] it has aborted.
func (tx *Tx) Commit() error {
	if tx.done {
		return ErrDone
	}
	db := tx.db
	db.mu.Lock()
	defer db.mu.Unlock()
	f := db.opts.Faults
	if f&AbortedRead != 0 && len(tx.writes) > 0 && db.rnd.IntN(8) == 0 {
		// The bug: the rollback installs the writes instead of discarding them.
		tx.install()
		tx.finish()
		tx.commit = 0
		return ErrInjectedAbort
	}
	if err := tx.validate(); err != nil {
		tx.abortLocked()
		return err
	}
	tx.install()
	tx.finish()
	return nil
}

// validate applies first-committer-wins and, in serializable mode, read validation.
func (tx *Tx) validate() error {
	mode, f := tx.db.opts.Mode, tx.db.opts.Faults
	if mode != Serializable && mode != SnapshotIsolation {
		return nil
	}
	if f&LostUpdate == 0 {
		for _, w := range tx.writes {
			if k := w.k; tx.newer(k) {
				return fmt.Errorf("%w: key %s was written by a concurrent transaction that committed first", ErrConflict, k)
			}
		}
	}
	if mode == Serializable && !(f&StaleRead != 0 && len(tx.writes) == 0) {
		return tx.validateReads()
	}
	return nil
}

// newer says whether a transaction committed a version of k after tx's snapshot of it.
func (tx *Tx) newer(k string) bool {
	it := tx.db.items[k]
	if it == nil || len(it.vs) == 0 {
		return false
	}
	return it.vs[len(it.vs)-1].ts > tx.snapOf(k)
}

// validateReads is serializable mode's read validation: no key tx read, nor any row its
// predicates covered, was overwritten since its snapshot (with LostUpdate, keys it also
// wrote are not checked).
func (tx *Tx) validateReads() error {
	for _, k := range tx.reads {
		if _, wrote := tx.last(k); wrote && tx.db.opts.Faults&LostUpdate != 0 {
			continue
		}
		if tx.newer(k) {
			return fmt.Errorf("%w: key %s, read by this transaction, was overwritten before it committed", ErrConflict, k)
		}
	}
	for i := range tx.preds {
		if err := tx.validatePred(&tx.preds[i]); err != nil {
			return err
		}
	}
	return nil
}

// install makes the writes visible at a new commit timestamp.
func (tx *Tx) install() {
	db := tx.db
	db.clock++
	tx.commit = db.clock
	if db.opts.Mode == ReadUncommitted {
		tx.stampUncommitted()
		return
	}
	defer tx.unlock()
	order := tx.writes
	if db.opts.Faults&IntermediateRead == 0 {
		// Only each key's last write becomes a version.
		for i := range tx.writes {
			if !tx.final(i) {
				continue
			}
			w := &tx.writes[i]
			v := version{ts: db.clock, txn: tx.id, val: w.val, list: w.list, isL: w.isL, row: w.row}
			if w.isL {
				v.list = tx.rebase(w.k)
			}
			db.installOne(w, v)
		}
		return
	}
	// The bug: every write is installed, last write first, so the first one wins.
	for i := len(order) - 1; i >= 0; i-- {
		w := &order[i]
		db.installOne(w, version{ts: db.clock, txn: tx.id, val: w.val, list: w.list, isL: w.isL, row: w.row})
	}
}

// stampUncommitted commits under read uncommitted, where writes were installed as they
// were made: it gives tx's versions of each key it wrote the commit timestamp and unlocks
// the key.
func (tx *Tx) stampUncommitted() {
	db := tx.db
	for wi, w := range tx.writes {
		if !tx.final(wi) {
			continue
		}
		it := db.items[w.k]
		for i := range it.vs {
			if it.vs[i].txn == tx.id {
				it.vs[i].ts = db.clock
			}
		}
		it.locked = 0
	}
}

// rebase returns the list at k after this transaction: the latest installed list plus the
// elements the transaction appended, so that appends commute like SQL's l = l || x.
func (tx *Tx) rebase(k string) []int64 {
	var base []int64
	if it := tx.db.items[k]; it != nil && len(it.vs) > 0 {
		base = it.vs[len(it.vs)-1].list
	}
	out := slices.Clip(base)
	for _, w := range tx.writes {
		if w.k == k && w.isL {
			out = append(out, w.val)
		}
	}
	return slices.Clip(out)
}

func (db *DB) installOne(w *write, v version) {
	it := db.itemFor(w)
	if len(it.vs) >= db.opts.KeepVersions {
		keep := db.opts.KeepVersions / 2
		it.vs = append(it.vs[:0], it.vs[len(it.vs)-keep:]...)
		it.dropped = true
		if w.tbl != nil {
			w.tbl.horizon = max(w.tbl.horizon, it.vs[0].ts)
		}
	}
	it.vs = append(it.vs, v)
	if w.tbl != nil {
		w.tbl.indexRow(w.rk, v.row)
		// Rows keep only the versions some snapshot can still read, so that the range
		// index stays small: drop every version older than the newest one at or before
		// the oldest snapshot.
		o := db.oldestSnapshot()
		for j := len(it.vs) - 1; j > 0; j-- {
			if it.vs[j].ts <= o {
				it.vs = append(it.vs[:0], it.vs[j:]...)
				break
			}
		}
	}
}

// Rollback aborts the transaction. It is a no-op on a finished transaction.
func (tx *Tx) Rollback() {
	if tx.done {
		return
	}
	tx.db.mu.Lock()
	defer tx.db.mu.Unlock()
	if tx.db.opts.Faults&AbortedRead != 0 && len(tx.writes) > 0 {
		tx.install()
		tx.commit = 0
		tx.finish()
		return
	}
	tx.abortLocked()
}

// abortLocked discards the transaction; db.mu is held.
func (tx *Tx) abortLocked() {
	tx.finish()
	tx.unlock()
	if tx.db.opts.Mode != ReadUncommitted {
		return
	}
	for _, w := range tx.writes {
		it := tx.db.items[w.k]
		if it == nil {
			continue
		}
		it.vs = slices.DeleteFunc(it.vs, func(v version) bool { return v.txn == tx.id && v.ts == 0 })
		if it.locked == tx.id {
			it.locked = 0
		}
	}
}
