package chronos

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/jsonscan"
)

// ErrUnrepresentable is wrapped by [Write] when a history holds what Chronos JSON cannot.
var ErrUnrepresentable = errors.New("chronos: cannot write")

// Write writes h as a Chronos JSON array, one transaction object per line. Chronos holds
// committed transactions with reads, writes, appends and list reads only; anything else
// is an error wrapping [ErrUnrepresentable]. Sessions are written by source id ("sid"), or
// numbered by position when their ids repeat, so that distinct sessions never merge.
func Write(w io.Writer, h *history.History) error {
	bw := bufio.NewWriterSize(w, 1<<18)
	sids := sessionIDs(h)
	var b []byte
	b = append(b, '[')
	for i := range h.Txns {
		t := &h.Txns[i]
		if t.Outcome != history.OutcomeCommitted {
			return fmt.Errorf("%w: txn %s is %v (Chronos histories hold committed transactions only)", ErrUnrepresentable, h.Name(t.ID), t.Outcome)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = appendTxnHead(append(b, "\n{"...), t, sids[t.Session])
		var err error
		if b, err = appendOps(append(b, `"ops":[`...), h, t); err != nil {
			return err
		}
		b = append(b, "]}"...)
		if len(b) > 1<<16 {
			if _, err := bw.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	b = append(b, "\n]\n"...)
	if _, err := bw.Write(b); err != nil {
		return err
	}
	return bw.Flush()
}

// opPrefix is the start of each kind of operation object the format holds, up to its key.
var opPrefix = map[history.OpKind]string{
	history.OpRead:     `{"t":"r","k":`,
	history.OpWrite:    `{"t":"w","k":`,
	history.OpAppend:   `{"t":"a","k":`,
	history.OpListRead: `{"t":"r","k":`,
}

// appendTxnHead appends the members of t's object before "ops", each followed by a comma:
// "tid" and "sid" when t has them (sid is its session's), "sts" and "cts" when it has
// timestamps.
func appendTxnHead(b []byte, t *history.Txn, sid history.Datum) []byte {
	if !t.Source.IsNil() {
		b = append(jsonscan.AppendDatum(append(b, `"tid":`...), t.Source), ',')
	}
	if !sid.IsNil() {
		b = append(jsonscan.AppendDatum(append(b, `"sid":`...), sid), ',')
	}
	if t.HasTimestamps {
		b = appendHLC(append(b, `"sts":`...), t.Start)
		b = append(appendHLC(append(b, `,"cts":`...), t.Commit), ',')
	}
	return b
}

// appendOps appends the objects of t's ops, separated by commas.
func appendOps(b []byte, h *history.History, t *history.Txn) ([]byte, error) {
	for j, o := range t.Ops {
		if j > 0 {
			b = append(b, ',')
		}
		prefix, ok := opPrefix[o.Kind]
		if !ok {
			return b, fmt.Errorf("%w: txn %s op %d is of kind %v (Chronos has reads, writes, appends and list reads)", ErrUnrepresentable, h.Name(t.ID), j, o.Kind)
		}
		b = appendOp(append(b, prefix...), h, o)
	}
	return b, nil
}

// appendOp appends the key and value of o and closes its object.
func appendOp(b []byte, h *history.History, o history.Op) []byte {
	b = jsonscan.AppendDatum(b, h.Key(o.Key))
	b = append(b, `,"v":`...)
	if o.Kind != history.OpListRead {
		return append(jsonscan.AppendDatum(b, h.Value(o.Value)), '}')
	}
	b = append(b, '[')
	for n, v := range h.List(o) {
		if n > 0 {
			b = append(b, ',')
		}
		b = jsonscan.AppendDatum(b, h.Value(v))
	}
	return append(b, "]}"...)
}

func appendHLC(b []byte, t history.Timestamp) []byte {
	b = strconv.AppendInt(append(b, `{"p":`...), t.Physical, 10)
	b = strconv.AppendInt(append(b, `,"l":`...), t.Logical, 10)
	return append(b, '}')
}

// sessionIDs returns the "sid" to write for each session: its source id when the
// sessions' ids are distinct (nil, no "sid", counts as one id), else its index.
func sessionIDs(h *history.History) []history.Datum {
	ids := make([]history.Datum, len(h.Sessions))
	seen := make(map[history.Datum]bool, len(h.Sessions))
	for i, s := range h.Sessions {
		if len(s.Txns) == 0 {
			continue
		}
		if seen[s.Source] {
			for i := range ids {
				ids[i] = history.Int(int64(i))
			}
			return ids
		}
		seen[s.Source] = true
		ids[i] = s.Source
	}
	return ids
}
