package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strconv"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/memdb"
)

// MemDB adapts the embedded reference database to [DB]. Transactions report memdb's logical
// start and commit timestamps unless NoTimestamps is set.
type MemDB struct {
	Opts         memdb.Options
	NoTimestamps bool
	db           *memdb.DB
	table        string
}

// memdbLevels are the levels memdb's modes claim; read-uncommitted claims none.
var memdbLevels = map[memdb.Mode]check.Level{
	memdb.Serializable:      check.Serializable,
	memdb.SnapshotIsolation: check.SnapshotIsolation,
	memdb.ReadCommitted:     check.ReadCommitted,
}

// LevelOf returns the level a memdb mode claims (read-uncommitted claims none: 0).
func LevelOf(m memdb.Mode) check.Level { return memdbLevels[m] }

// openMemDB parses memdb://MODE?fault=F,G&seed=N&timestamps=off.
func openMemDB(_ context.Context, dsn string, o OpenOptions) (DB, Target, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, Target{}, fmt.Errorf("parsing %q: %w", dsn, err)
	}
	mode, err := memdbMode(u.Host+u.Opaque, o.Isolation)
	if err != nil {
		return nil, Target{}, err
	}
	m := &MemDB{Opts: memdb.Options{Mode: mode, Seed: o.Seed}}
	if err := m.options(u.Query()); err != nil {
		return nil, Target{}, err
	}
	desc := "memdb " + mode.String()
	if m.Opts.Faults != 0 {
		desc += " with fault " + m.Opts.Faults.String()
	}
	return m, Target{Claim: LevelOf(mode), Description: desc}, nil
}

// memdbMode is the mode of a memdb URL whose mode part is inURL, run with --isolation iso:
// the URL's mode, else iso, else snapshot isolation. An iso that names another mode than
// the URL's is an error: memdb cannot be asked for a level apart from its URL.
func memdbMode(inURL, iso string) (memdb.Mode, error) {
	mode, err := memdb.ParseMode(cmp.Or(inURL, iso, "snapshot-isolation"))
	if err != nil || inURL == "" || iso == "" {
		return mode, err
	}
	m, err := memdb.ParseMode(iso)
	if err != nil {
		return 0, fmt.Errorf("memdb://%s runs at %s, and memdb takes its mode from the URL, not --isolation %s, which is no memdb mode: drop --isolation (%w)", inURL, mode, iso, err)
	}
	if m != mode {
		return 0, fmt.Errorf("memdb://%s runs at %s, and memdb takes its mode from the URL, not --isolation %s: drop --isolation, or run memdb://%s", inURL, mode, iso, m)
	}
	return mode, nil
}

// options reads the URL's query: fault=F,G, seed=N and timestamps=off.
func (m *MemDB) options(q url.Values) error {
	var err error
	if f := q.Get("fault"); f != "" {
		if m.Opts.Faults, err = memdb.ParseFault(f); err != nil {
			return err
		}
	}
	if s := q.Get("seed"); s != "" {
		if m.Opts.Seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			return fmt.Errorf("memdb seed %q: %w", s, err)
		}
	}
	m.NoTimestamps = q.Get("timestamps") == "off"
	return nil
}

// Prepare creates a fresh store with the schema's initial values.
func (m *MemDB) Prepare(_ context.Context, s Schema) error {
	o := m.Opts
	o.Initial = s.Initial
	m.db = memdb.New(o)
	if t := s.Table; t != nil {
		m.table = t.Name
		return m.db.CreateTable(t.Name, len(t.Cols))
	}
	return nil
}

// Session returns a session; memdb sessions are free.
func (m *MemDB) Session(context.Context) (Session, error) {
	if m.db == nil {
		return nil, errors.New("memdb: Prepare was not called")
	}
	return &memSession{m: m}, nil
}

// Close does nothing.
func (m *MemDB) Close() error { return nil }

// memSession is a client session. Its transactions begin after the session's own last
// commit ([memdb.DB.BeginAfter]): memdb's stale snapshots then miss other sessions' writes
// only, so the stale-read fault causes exactly stale reads (a cycle through a real-time
// edge), never a read-your-writes violation (a cycle through the session order, which the
// serializability checker classifies by its anti-dependency alone, as G-single).
type memSession struct {
	m    *MemDB
	last uint64 // commit timestamp of the session's last committed transaction
}

func (s *memSession) Begin(context.Context) (Tx, error) {
	return &memTx{tx: s.m.db.BeginAfter(s.last), s: s, ts: !s.m.NoTimestamps, table: s.m.table}, nil
}
func (*memSession) Close() error { return nil }

// pause yields the processor between transactions (the executor calls it before it takes a
// transaction's begin time), as the time a client spends between transactions does: other
// sessions commit and finish meanwhile, so the session's next snapshot (never older than
// its own last commit) has commits that ended before it began to miss under the stale-read
// fault. Without it a session went from one COMMIT straight to its next BEGIN, and stale
// reads across sessions were rare.
func (*memSession) pause() { runtime.Gosched() }

type memTx struct {
	tx    *memdb.Tx
	s     *memSession
	ts    bool
	table string
}

func classifyMem(err error) error {
	if errors.Is(err, memdb.ErrConflict) || errors.Is(err, memdb.ErrInjectedAbort) {
		return fmt.Errorf("%w: %w", ErrAborted, err)
	}
	return err
}

// Every operation yields the processor first, so that sessions interleave as clients of a
// server do; without it a session often runs whole transactions in one time slice and
// concurrency anomalies would rarely have a chance to occur.
func (t *memTx) Read(_ context.Context, k string) (int64, error) {
	runtime.Gosched()
	v, err := t.tx.Read(k)
	return v, classifyMem(err)
}
func (t *memTx) Write(_ context.Context, k string, v int64) error {
	runtime.Gosched()
	return classifyMem(t.tx.Write(k, v))
}
func (t *memTx) Append(_ context.Context, k string, v int64) error {
	runtime.Gosched()
	return classifyMem(t.tx.Append(k, v))
}
func (t *memTx) ReadList(_ context.Context, k string) ([]int64, error) {
	runtime.Gosched()
	l, err := t.tx.ReadList(k)
	return l, classifyMem(err)
}
func (t *memTx) PredRead(_ context.Context, p Range) ([]Row, error) {
	runtime.Gosched()
	rows, err := t.tx.Scan(t.table, p.Col, p.Lo, p.Hi)
	out := make([]Row, len(rows))
	for i, r := range rows {
		out[i] = Row{Key: r.Key, Vals: r.Vals}
	}
	return out, classifyMem(err)
}
func (t *memTx) PredWrite(_ context.Context, p Range, set []Assign) ([]int64, error) {
	runtime.Gosched()
	keys, err := t.tx.Update(t.table, p.Col, p.Lo, p.Hi, func(k int64, _ []int64) []int64 {
		vals := make([]int64, len(set))
		for c, a := range set {
			vals[c] = a.Value(k)
		}
		return vals
	})
	return keys, classifyMem(err)
}
func (t *memTx) Insert(_ context.Context, rows []Row) error {
	runtime.Gosched()
	for _, r := range rows {
		if err := t.tx.Insert(t.table, r.Key, r.Vals); err != nil {
			return classifyMem(err)
		}
	}
	return nil
}
func (t *memTx) Delete(_ context.Context, k int64) (bool, error) {
	runtime.Gosched()
	ok, err := t.tx.Delete(t.table, k)
	return ok, classifyMem(err)
}
func (t *memTx) Commit(context.Context) error {
	err := t.tx.Commit()
	if _, c := t.tx.Timestamps(); err == nil {
		t.s.last = c
	}
	return classifyMem(err)
}
func (t *memTx) Rollback(context.Context) error { t.tx.Rollback(); return nil }

// Info reports memdb's logical timestamps (start = snapshot, commit = commit counter).
func (t *memTx) Info() Info {
	if !t.ts {
		return Info{}
	}
	st, ct := t.tx.Timestamps()
	if ct == 0 {
		// Aborted: a point at its snapshot, so that every transaction carries timestamps
		// (the timestamp checker skips transactions that did not commit).
		ts := history.Timestamp{Physical: int64(2*st + 1)}
		return Info{Start: ts, Commit: ts, HasTimestamps: true}
	}
	// Start 2s+1 and commit 2c keep every timestamp distinct: a transaction sees exactly the
	// commits with a smaller timestamp than its start.
	return Info{Start: history.Timestamp{Physical: int64(2*st + 1)}, Commit: history.Timestamp{Physical: int64(2 * ct)}, HasTimestamps: true}
}
