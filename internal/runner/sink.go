package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/history"
)

// Sink receives a run's transactions as they complete, for a service that checks them
// online (`isovet run --serve`, --nats).
type Sink interface {
	// Open is called once, before the workload starts, with the value every key starts
	// at; an error stops the run before anything runs.
	Open(ctx context.Context, initial history.Datum) error
	// Add takes one transaction, committed, aborted or of unknown outcome, as a native
	// JSON line with its id and the database's timestamps; it keeps a copy. It is called
	// in the order transactions are recorded and must not block for long.
	Add(line []byte)
	// Close is called once the workload has stopped: it sends what is left and says what
	// failed. The run then fails with that error, after its recording and its checks.
	Close() error
}

// Timestamper is implemented by a DB that can say whether its transactions carry the
// database's start and commit timestamps as they complete, which a [Sink] needs.
type Timestamper interface {
	// Timestamps is nil when they do; otherwise an error saying why not.
	Timestamps() error
}

// Timestamps is nil unless the URL turned memdb's timestamps off.
func (m *MemDB) Timestamps() error {
	if m.NoTimestamps {
		return errors.New("memdb runs with timestamps=off, so its transactions carry no start and commit timestamps for the online checker")
	}
	return nil
}

// streamable says why the run of db (described by desc) on schema s cannot be streamed to
// an online checker, or returns the value every key starts at.
func streamable(db DB, desc string, s Schema) (history.Datum, error) {
	ts, ok := db.(Timestamper)
	if !ok {
		return history.NilDatum, fmt.Errorf("%s gives no start and commit timestamps as each transaction completes, which the online checker places every transaction by (PostgreSQL gives snapshots, from which isovet derives timestamps only once the whole history is known); isovet sends no guessed timestamps, which could raise false alarms or hide violations: run with --out, then send the history with isovet replay, which sends the derived timestamps where there are some", desc)
	}
	if err := ts.Timestamps(); err != nil {
		return history.NilDatum, err
	}
	if s.Table != nil {
		return history.NilDatum, errors.New("row workloads record predicate reads and writes, which the online checker does not read: a violation through them would be missed; check them offline (isovet run checks the history at the end)")
	}
	vals := map[history.Datum]bool{}
	for _, k := range s.Keys {
		vals[history.Int(s.Initial[k])] = true
	}
	if len(s.Lists) > 0 {
		vals[history.NilDatum] = true
	}
	if len(vals) > 1 {
		var vs []string
		for v := range vals {
			vs = append(vs, v.String())
		}
		slices.Sort(vs)
		return history.NilDatum, fmt.Errorf("the workload's keys start at different values (%s), and the online checker starts every key at one value (serve --initial-value)", strings.Join(vs, ", "))
	}
	for v := range vals {
		return v, nil
	}
	return history.Int(0), nil
}

// streamID is the id a transaction without one is sent with: "T<n>", n its position in
// the history, which is how reports name it (and what isovet replay assigns).
func streamID(n int) history.Datum { return history.Str("T" + strconv.Itoa(n)) }

// streamLine encodes t, transaction n of the history, for the sink: with an id.
func streamLine(enc *native.Encoder, buf *batchBuf, t *native.Txn, n int) ([]byte, error) {
	id := t.ID
	if id.IsNil() {
		t.ID = streamID(n)
		defer func() { t.ID = id }()
	}
	buf.b = buf.b[:0]
	if err := enc.EncodeTxn(t); err != nil {
		return nil, err
	}
	return buf.b, nil
}
