// Package record records the history of a concurrent test against a real database, for
// package check to judge. Each client (a goroutine with its own connection) tells a
// [Recorder] what its transactions did, as it does it: [Recorder.Begin], then [Txn.Read]
// and [Txn.Write] with the values the database returned and the values written, then
// [Txn.Commit], [Txn.Abort], or [Txn.Unknown] when the commit's result never came back.
// [Recorder.History] returns what was recorded as a [history.History]:
//
//	rec := record.New(record.Options{})
//	rec.Init("x", 0)                 // the row the test created before the clients ran
//	// in each client goroutine:
//	tx := rec.Begin("c1")
//	tx.Read("x", v)                  // v: what SELECT returned
//	tx.Write("x", v+1)               // what UPDATE wrote
//	tx.Commit()                      // after COMMIT succeeded
//	// then:
//	h, err := rec.History()
//	rep, err := check.Check(ctx, h, check.Serializable, check.Options{})
//
// # What it records
//
// Each client is a session: its transactions, in the order it began them, are the session
// order. Each transaction gets the client interval [begin, end] from the recorder's clock
// (ns since [New], monotonic): begin when [Recorder.Begin] is called, end when the outcome
// is recorded. Call Begin before the database transaction begins and record the outcome
// after the database answered, so the interval covers what the database did; then the
// strict levels (strict serializability, strong snapshot isolation) can be checked too.
//
// Transactions are named T1, T2, ... in the order they began, and reports use these names.
// Keys are strings and values integers. Give every write of a key a value no other write
// of that key uses (a counter incremented by distinct amounts, or a client's id folded into
// the value): a read then names the one write it saw, and the checker need not guess.
//
// A transaction still open when History is called, or when its client begins another, is
// recorded as of unknown outcome (it may or may not have committed), and the history notes
// it.
//
// # Concurrency
//
// A Recorder and its Txns are safe for concurrent use: any number of clients may record at
// once. A Txn belongs to the client that began it; its operations are recorded in the order
// its calls are made.
package record

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/isovet/isovet/history"
)

// Options configure a [Recorder]. The zero value is usable.
type Options struct {
	// Now is the clock client intervals are read from; nil means time.Now. Only the
	// differences between its readings are kept.
	Now func() time.Time

	_ struct{}
}

// Recorder collects the transactions of concurrent clients into one history. Create it with
// [New]; it is safe for concurrent use.
type Recorder struct {
	mu    sync.Mutex
	now   func() time.Time
	epoch time.Time
	init  []kv
	txns  []*Txn          // in the order they began
	open  map[string]*Txn // each client's open transaction
}

// kv is a key's initial value.
type kv struct {
	key   string
	value int64
}

// New returns an empty recorder whose clock starts now.
func New(opts Options) *Recorder {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Recorder{now: now, epoch: now(), open: make(map[string]*Txn)}
}

// Init records that key held value before any recorded transaction ran (the rows a test
// creates before its clients start). A key never given one starts absent: a read of it
// before any write is [Txn.ReadMissing].
func (r *Recorder) Init(key string, value int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.init = append(r.init, kv{key, value})
}

// ticks is the recorder's clock: ns since New. The caller holds r.mu.
func (r *Recorder) ticks() int64 { return r.now().Sub(r.epoch).Nanoseconds() }

// Begin records that client begins a transaction and returns it. Call it before the
// database transaction begins. A transaction the client left open is recorded as of
// unknown outcome.
func (r *Recorder) Begin(client string) *Txn {
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev := r.open[client]; prev != nil {
		prev.end(history.OutcomeUnknown)
		prev.note = fmt.Sprintf("client %s began another transaction before %s ended: %s is taken as of unknown outcome", client, prev.name, prev.name)
	}
	t := &Txn{r: r, client: client, name: fmt.Sprintf("T%d", len(r.txns)+1), begin: r.ticks()}
	r.txns = append(r.txns, t)
	r.open[client] = t
	return t
}

// History returns what has been recorded, as a new history the caller owns: one session per
// client (named as the client), its transactions in the order they began, each with its
// operations, outcome and client interval. Transactions still open are of unknown outcome.
// It may be called again, also while clients are still recording.
func (r *Recorder) History() (*history.History, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.txns) == 0 {
		return nil, ErrEmpty
	}
	now := r.ticks()
	b := history.NewBuilder()
	for _, i := range r.init {
		b.SetInitialKey(b.StrKey(i.key), b.IntValue(i.value))
	}
	for _, t := range r.txns {
		t.build(b, now)
	}
	return b.Build()
}

// ErrEmpty is returned by [Recorder.History] when no transaction was recorded: an empty
// history would pass every level, which proves nothing.
var ErrEmpty = errors.New("record: no transaction was recorded")

// Txn is one client's transaction as it is being recorded. Its methods record what the
// client did, in program order; after Commit, Abort or Unknown it records nothing more.
type Txn struct {
	r          *Recorder
	client     string
	name       string
	ops        []op
	begin, fin int64
	ended      bool
	outcome    history.Outcome // valid once ended
	note       string          // why the outcome is what it is, when the recorder decided it
}

// opKind is what an op did.
type opKind uint8

const (
	opRead opKind = iota
	opReadMissing
	opWrite
)

// op is one recorded operation.
type op struct {
	kind  opKind
	key   string
	value int64
}

// Name is the transaction's name in the history and in reports: T1, T2, ... in the order
// the transactions began.
func (t *Txn) Name() string { return t.name }

// Read records that the transaction read value from key.
func (t *Txn) Read(key string, value int64) { t.add(op{opRead, key, value}) }

// ReadMissing records that the transaction read key and found nothing (no row).
func (t *Txn) ReadMissing(key string) { t.add(op{kind: opReadMissing, key: key}) }

// Write records that the transaction wrote value to key. Record it once the database
// accepted the write; a write it refused was not made.
func (t *Txn) Write(key string, value int64) { t.add(op{opWrite, key, value}) }

// Commit records that the transaction committed: the database acknowledged the commit.
func (t *Txn) Commit() { t.finish(history.OutcomeCommitted) }

// Abort records that the transaction did not commit: it was rolled back, or the database
// refused it (a serialization failure, a deadlock, a failed commit that says so).
func (t *Txn) Abort() { t.finish(history.OutcomeAborted) }

// Unknown records that the transaction's outcome is not known: the commit was sent but its
// result never came back (a lost connection, a timeout). The checker considers both
// outcomes.
func (t *Txn) Unknown() { t.finish(history.OutcomeUnknown) }

func (t *Txn) add(o op) {
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	if t.ended {
		panic(fmt.Sprintf("record: %s of client %s recorded an operation after it ended", t.name, t.client))
	}
	t.ops = append(t.ops, o)
}

func (t *Txn) finish(o history.Outcome) {
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	if t.ended {
		if t.note != "" { // the recorder ended it when its client moved on
			return
		}
		panic(fmt.Sprintf("record: %s of client %s ended twice", t.name, t.client))
	}
	t.end(o)
}

// end ends t with outcome o now. The caller holds t.r.mu.
func (t *Txn) end(o history.Outcome) {
	t.ended, t.outcome, t.fin = true, o, t.r.ticks()
	if t.r.open[t.client] == t {
		delete(t.r.open, t.client)
	}
}

// build adds t to b; a transaction still open at now is of unknown outcome. The caller
// holds t.r.mu.
func (t *Txn) build(b *history.Builder, now int64) {
	outcome, fin, note := t.outcome, t.fin, t.note
	if !t.ended {
		outcome, fin = history.OutcomeUnknown, now
		note = fmt.Sprintf("%s of client %s was still open when the history was taken: it is taken as of unknown outcome", t.name, t.client)
	}
	if note != "" {
		b.Note(note)
	}
	b.BeginTxn(b.Session(history.Str(t.client)), history.Str(t.name), outcome)
	for _, o := range t.ops {
		k := b.StrKey(o.key)
		switch o.kind {
		case opRead:
			b.Read(k, b.IntValue(o.value))
		case opReadMissing:
			b.Read(k, history.Nil)
		case opWrite:
			b.Write(k, b.IntValue(o.value))
		}
	}
	cur := b.Current()
	cur.Time, cur.HasTime = history.Interval{Begin: t.begin, End: fin}, true
	b.EndTxn()
}
