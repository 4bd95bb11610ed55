package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"isovet/format/native"
	"isovet/history"
	"isovet/internal/workload"
)

// writer owns the on-disk history and the in-memory builder. It runs in one goroutine.
type writer struct {
	ch      chan record
	out     io.Writer
	sidecar io.Writer
	enc     *native.Encoder
	batch   batchBuf
	b       *history.Builder
	schema  Schema
	total   int
	start   time.Time

	progress      func(done, aborted, total int, elapsed time.Duration)
	progressEvery time.Duration
	lastProgress  time.Time

	done, committed, aborted, unknown int
}

// batchBuf collects encoded lines until the writer flushes them with one Write.
type batchBuf struct{ b []byte }

func (bb *batchBuf) Write(p []byte) (int, error) { bb.b = append(bb.b, p...); return len(p), nil }

func newWriter(o RunOptions, w *workload.Workload, s Schema) *writer {
	wr := &writer{
		ch: make(chan record, 1024), out: o.Out, sidecar: o.Sidecar, b: history.NewBuilder(), schema: s,
		total: w.NumTxns(), progress: o.Progress, progressEvery: o.ProgressEvery,
	}
	wr.enc = native.NewEncoder(&wr.batch)
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

// loop records transactions until the channel closes. After a write error it keeps
// draining (so sessions never block) and returns the first error.
func (wr *writer) loop() error {
	var first error
	for rec := range wr.ch {
		first = wr.one(&rec, first)
		// Group whatever else is already waiting into the same write.
		for more := true; more; {
			select {
			case r, ok := <-wr.ch:
				if !ok {
					more = false
					break
				}
				first = wr.one(&r, first)
			default:
				more = false
			}
		}
		if err := wr.flush(); err != nil && first == nil {
			first = err
		}
		if wr.progress != nil {
			if now := time.Now(); now.Sub(wr.lastProgress) >= wr.progressEvery {
				wr.lastProgress = now
				wr.progress(wr.done, wr.aborted, wr.total, now.Sub(wr.start))
			}
		}
	}
	if err := wr.flush(); err != nil && first == nil {
		first = err
	}
	if wr.progress != nil {
		wr.progress(wr.done, wr.aborted, wr.total, time.Since(wr.start))
	}
	return first
}

func (wr *writer) one(rec *record, first error) error {
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
		if err := wr.enc.EncodeTxn(&rec.txn); err != nil && first == nil {
			first = fmt.Errorf("encoding transaction %d: %w", wr.done-1, err)
		}
	}
	if wr.sidecar != nil && (rec.info.CommitTime != 0 || !rec.info.ID.IsNil()) {
		line := struct {
			Txn        int    `json:"txn"`
			DBID       string `json:"db_id,omitempty"`
			CommitTime int64  `json:"commit_time_ns,omitempty"`
		}{Txn: wr.done - 1, CommitTime: rec.info.CommitTime}
		if !rec.info.ID.IsNil() {
			line.DBID = rec.info.ID.String()
		}
		b, _ := json.Marshal(line)
		if _, err := wr.sidecar.Write(append(b, '\n')); err != nil && first == nil {
			first = fmt.Errorf("writing the sidecar: %w", err)
		}
	}
	return first
}

// add appends t to the builder.
func (wr *writer) add(t *native.Txn) {
	b := wr.b
	s := b.Session(t.Session)
	b.BeginTxn(s, t.ID, t.Outcome)
	cur := b.Current()
	cur.Time, cur.HasTime = t.Time, t.HasTime
	cur.Start, cur.Commit, cur.HasTimestamps = t.Start, t.Commit, t.HasTimestamps
	for j := range t.Ops {
		o := &t.Ops[j]
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
			p := history.PredOp{Pred: o.Pred.Pred, Rows: make([]history.Row, len(o.Pred.Rows))}
			for x, r := range o.Pred.Rows {
				p.Rows[x] = history.Row{Key: b.Key(r.Key), Value: b.Value(r.Value), Src: r.Src, Match: r.Match}
			}
			if o.Kind == history.OpPredRead {
				b.PredRead(p)
			} else {
				b.PredWrite(p)
			}
		}
	}
	b.EndTxn()
}
