package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/workload"
)

// writer owns the on-disk history and the in-memory builder. Sessions hand it their finished
// transactions themselves ([writer.record]), under its lock: no goroutine of its own, so
// recording a transaction wakes nobody (on a server the sessions sleep in the network between
// statements, and waking a writer goroutine for every transaction cost more client CPU than
// the recording itself).
type writer struct {
	mu      sync.Mutex
	out     io.Writer
	sidecar io.Writer
	enc     *native.Encoder
	batch   batchBuf
	spare   []byte // the other buffer while one is being written outside the lock
	writing bool   // a session is writing a batch to out (outside the lock)
	err     error  // the first write or encoding error
	b       *history.Builder
	schema  Schema
	total   int
	start   time.Time

	progress      func(done, aborted, total int, elapsed time.Duration)
	progressEvery time.Duration
	lastProgress  time.Duration

	// sink, when set, receives every transaction as it is recorded, encoded by senc into
	// sbuf.
	sink Sink
	senc *native.Encoder
	sbuf batchBuf

	// side holds the sidecar lines until the end of the run, when commit times that the
	// database reports in bulk ([CommitTimer]) are filled in.
	side []sideLine

	done, committed, aborted, unknown int
}

// sideLine is one line of the sidecar: a transaction's database id and commit time.
type sideLine struct {
	txn        int
	id         history.Datum
	committed  bool
	commitTime int64
}

// batchBuf collects encoded lines until the writer flushes them with one Write.
type batchBuf struct{ b []byte }

func (bb *batchBuf) Write(p []byte) (int, error) { bb.b = append(bb.b, p...); return len(p), nil }

func newWriter(o RunOptions, w *workload.Workload, s Schema) *writer {
	wr := &writer{
		out: o.Out, sidecar: o.Sidecar, b: history.NewBuilder(), schema: s,
		total: w.NumTxns(), progress: o.Progress, progressEvery: o.ProgressEvery,
		lastProgress: -o.ProgressEvery, // report the first transaction at once
	}
	wr.enc = native.NewEncoder(&wr.batch)
	if o.Sink != nil {
		wr.sink = o.Sink
		wr.senc = native.NewEncoder(&wr.sbuf)
	}
	wr.b.Grow(w.NumTxns(), w.NumTxns()*4)
	return wr
}

// header writes the native header (initial values) and sets them on the builder.
func (wr *writer) header() error {
	hd := native.Header{Initial: history.Int(0)}
	keys := make([]string, 0, len(wr.schema.Initial))
	for k := range wr.schema.Initial {
		keys = append(keys, k)
	}
	if wr.schema.Table != nil {
		// Rows do not exist before they are inserted: the initial value is nil, and
		// registers say their 0 explicitly.
		hd.Initial = history.NilDatum
		for _, k := range wr.schema.Keys {
			if _, ok := wr.schema.Initial[k]; !ok {
				keys = append(keys, k)
			}
		}
	}
	wr.b.SetInitial(wr.b.Value(hd.Initial))
	slices.Sort(keys)
	for _, k := range keys {
		v := wr.schema.Initial[k]
		hd.InitialKeys = append(hd.InitialKeys, native.KeyValue{Key: history.Str(k), Value: history.Int(v)})
		wr.b.SetInitialKey(wr.b.StrKey(k), wr.b.IntValue(v))
	}
	// Lists start empty, which reads as nil, not as the registers' 0.
	for _, k := range wr.schema.Lists {
		hd.InitialKeys = append(hd.InitialKeys, native.KeyValue{Key: history.Str(k), Value: history.NilDatum})
		wr.b.SetInitialKey(wr.b.StrKey(k), history.Nil)
	}
	if err := wr.enc.EncodeHeader(hd); err != nil {
		return fmt.Errorf("writing the history header: %w", err)
	}
	return wr.flush()
}

func (wr *writer) flush() error {
	if len(wr.batch.b) == 0 {
		return nil
	}
	var err error
	if wr.out != nil {
		if _, err = wr.out.Write(wr.batch.b); err != nil {
			err = fmt.Errorf("writing the history: %w", err)
		}
	}
	wr.batch.b = wr.batch.b[:0]
	return err
}

// record records one finished transaction: it adds it to the builder and writes it to out,
// from the calling session's goroutine. Transactions that finish while another session is
// writing are grouped into that session's next write, so under load one write carries many
// and out sees them in the order they were recorded. After a write error it keeps recording
// (sessions never block) and [writer.finish] returns the error. It keeps nothing that rec
// points to: the caller reuses it.
func (wr *writer) record(rec *record) {
	wr.mu.Lock()
	wr.one(rec)
	if wr.progress != nil {
		if el := time.Duration(rec.txn.Time.End); el-wr.lastProgress >= wr.progressEvery {
			wr.lastProgress = el
			wr.progress(wr.done, wr.aborted, wr.total, el)
		}
	}
	if wr.writing {
		wr.mu.Unlock()
		return // the session writing now takes this one too
	}
	wr.writing = true
	for len(wr.batch.b) > 0 {
		buf := wr.batch.b
		wr.batch.b = wr.spare[:0]
		wr.mu.Unlock()
		_, err := wr.out.Write(buf)
		wr.mu.Lock()
		wr.spare = buf[:0]
		if err != nil && wr.err == nil {
			wr.err = fmt.Errorf("writing the history: %w", err)
		}
	}
	wr.writing = false
	wr.mu.Unlock()
}

// finish is called once every session has stopped: it asks ct (when not nil) for the commit
// times of the committed transactions with ids, writes the sidecar, reports progress a last
// time, and returns the first error.
func (wr *writer) finish(ctx context.Context, ct CommitTimer, log *slog.Logger) error {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	err := wr.err
	if ferr := wr.flush(); ferr != nil && err == nil {
		err = ferr
	}
	if wr.progress != nil {
		wr.progress(wr.done, wr.aborted, wr.total, time.Since(wr.start))
	}
	if wr.sidecar == nil || len(wr.side) == 0 {
		return err
	}
	if werr := wr.writeSidecar(ctx, ct, log); werr != nil && err == nil {
		err = werr
	}
	return err
}

// writeSidecar writes the sidecar, a JSON line per recorded transaction with its database
// id and commit time, after asking ct (when not nil) for the commit times.
func (wr *writer) writeSidecar(ctx context.Context, ct CommitTimer, log *slog.Logger) error {
	if ct != nil {
		if cerr := wr.commitTimes(ctx, ct); cerr != nil {
			// The ids are still written; only the times are missing.
			log.Warn("could not read the commit times", "err", cerr)
		}
	}
	var buf []byte
	for _, l := range wr.side {
		line := struct {
			Txn        int    `json:"txn"`
			DBID       string `json:"db_id,omitempty"`
			CommitTime int64  `json:"commit_time_ns,omitempty"`
		}{Txn: l.txn, CommitTime: l.commitTime}
		if !l.id.IsNil() {
			line.DBID = l.id.String()
		}
		b, _ := json.Marshal(line)
		buf = append(append(buf, b...), '\n')
	}
	if _, err := wr.sidecar.Write(buf); err != nil {
		return fmt.Errorf("writing the sidecar: %w", err)
	}
	return nil
}

// commitTimes asks ct for the commit times of the committed transactions that have an id and
// none yet, in chunks.
func (wr *writer) commitTimes(ctx context.Context, ct CommitTimer) error {
	const chunk = 10_000
	var idx []int
	var ids []history.Datum
	ask := func() error {
		if len(ids) == 0 {
			return nil
		}
		ts, err := ct.CommitTimes(ctx, ids)
		if err != nil {
			return err
		}
		if len(ts) != len(ids) {
			return fmt.Errorf("asked for %d commit times, got %d", len(ids), len(ts))
		}
		for j, i := range idx {
			wr.side[i].commitTime = ts[j]
		}
		idx, ids = idx[:0], ids[:0]
		return nil
	}
	for i, l := range wr.side {
		if !l.committed || l.id.IsNil() || l.commitTime != 0 {
			continue
		}
		idx, ids = append(idx, i), append(ids, l.id)
		if len(ids) == chunk {
			if err := ask(); err != nil {
				return err
			}
		}
	}
	return ask()
}

func (wr *writer) one(rec *record) {
	wr.done++
	switch rec.txn.Outcome {
	case history.OutcomeCommitted:
		wr.committed++
	case history.OutcomeAborted:
		wr.aborted++
	default:
		wr.unknown++
	}
	wr.add(&rec.txn)
	if wr.out != nil {
		if err := wr.enc.EncodeTxn(&rec.txn); err != nil && wr.err == nil {
			wr.err = fmt.Errorf("encoding transaction %d: %w", wr.done-1, err)
		}
	}
	if wr.sink != nil {
		line, err := streamLine(wr.senc, &wr.sbuf, &rec.txn, wr.done-1)
		if err != nil && wr.err == nil {
			wr.err = fmt.Errorf("encoding transaction %d for the service: %w", wr.done-1, err)
		}
		if err == nil {
			wr.sink.Add(line)
		}
	}
	if wr.sidecar != nil && (rec.info.CommitTime != 0 || !rec.info.ID.IsNil()) {
		wr.side = append(wr.side, sideLine{txn: wr.done - 1, id: rec.info.ID, committed: rec.txn.Outcome == history.OutcomeCommitted, commitTime: rec.info.CommitTime})
	}
}

// add appends t to the builder.
func (wr *writer) add(t *native.Txn) {
	b := wr.b
	s := b.Session(t.Session)
	b.BeginTxn(s, t.ID, t.Outcome)
	cur := b.Current()
	cur.Time, cur.HasTime = t.Time, t.HasTime
	cur.Start, cur.Commit, cur.HasTimestamps = t.Start, t.Commit, t.HasTimestamps
	if t.HasSnapshot {
		b.SetSnapshot(cur.ID, t.Snapshot)
	}
	for j := range t.Ops {
		addOp(b, &t.Ops[j])
	}
	b.EndTxn()
}

// addOp appends the recorded op o to b's current transaction.
func addOp(b *history.Builder, o *native.Op) {
	var k history.Key
	if !o.Key.IsNil() {
		k = b.Key(o.Key)
	}
	switch o.Kind {
	case history.OpRead:
		b.Read(k, b.Value(o.Value))
	case history.OpWrite:
		b.Write(k, b.Value(o.Value))
	case history.OpAppend:
		b.Append(k, b.Value(o.Value))
	case history.OpListRead:
		vs := make([]history.Value, len(o.List))
		for x, d := range o.List {
			vs[x] = b.Value(d)
		}
		b.ReadList(k, vs)
	case history.OpInsert:
		b.Insert(k, b.Value(o.Value))
	case history.OpDelete:
		b.Delete(k)
	case history.OpPredRead, history.OpPredWrite:
		addPredOp(b, o)
	}
}

// addPredOp appends the recorded predicate read or write o, with its rows and their
// sources, to b's current transaction.
func addPredOp(b *history.Builder, o *native.Op) {
	p := history.PredOp{Pred: o.Pred.Pred, Rows: make([]history.Row, len(o.Pred.Rows))}
	for x, r := range o.Pred.Rows {
		p.Rows[x] = history.Row{Key: b.Key(r.Key), Value: b.Value(r.Value), Match: r.Match}
		p.SetSrc(x, r.Src)
	}
	if o.Kind == history.OpPredRead {
		b.PredRead(p)
	} else {
		b.PredWrite(p)
	}
}
