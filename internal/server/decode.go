package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/check/ts"
)

// inputError is bad input: it becomes a 4xx with a JSON body {error, code}.
type inputError struct {
	status int
	code   string
	err    error
}

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

func badInput(status int, code string, format string, args ...any) *inputError {
	return &inputError{status: status, code: code, err: fmt.Errorf(format, args...)}
}

// decodeBatch decodes a batch of transactions: a Chronos JSON array (first non-blank byte
// '[') or isovet native JSON Lines. Every transaction is validated before any is applied,
// so a bad batch changes nothing.
func decodeBatch(body []byte) ([]ts.Txn, error) {
	b, err := decodeBuf(body)
	if err != nil {
		return nil, err
	}
	return b.txs, nil
}

// decodeBuf is [decodeBatch] into a buffer that the caller releases once the batch has been
// applied. Native JSON lines of the common shape take the allocation-free [decodeFast].
func decodeBuf(body []byte) (*batchBuf, error) {
	trim := bytes.TrimLeft(body, " \t\r\n")
	if len(trim) == 0 {
		return nil, badInput(400, "empty", "empty body: expected a JSON array of transactions or JSON lines")
	}
	var b *batchBuf
	var err error
	if trim[0] == '[' {
		b = &batchBuf{}
		b.txs, err = decodeChronos(trim)
	} else if b = getBatchBuf(); !decodeFast(body, b) {
		b.release()
		b = &batchBuf{}
		b.txs, err = decodeNative(body)
	}
	if err != nil {
		return nil, err
	}
	txs := b.txs
	for i := range txs {
		if txs[i].Commit.Less(txs[i].Start) {
			b.release()
			return nil, badInput(422, "timestamps_backwards", "transaction %v (#%d in the batch) commits at %v, before it starts at %v", txs[i].ID, i, txs[i].Commit, txs[i].Start)
		}
		if txs[i].ID.IsNil() {
			b.release()
			return nil, badInput(400, "missing_id", "transaction #%d in the batch has no id", i)
		}
	}
	return b, nil
}

// chronosTxn is one object of the authors' format.
type chronosTxn struct {
	Tid  json.RawMessage `json:"tid"`
	Sid  json.RawMessage `json:"sid"`
	Sno  *int64          `json:"sno"`
	Sts  *chronosHLC     `json:"sts"`
	Cts  *chronosHLC     `json:"cts"`
	Ops  []chronosOp     `json:"ops"`
	Rtts json.RawMessage `json:"rtts"`
}

type chronosHLC struct {
	P json.RawMessage `json:"p"`
	L json.RawMessage `json:"l"`
}

type chronosOp struct {
	T string          `json:"t"`
	K json.RawMessage `json:"k"`
	V json.RawMessage `json:"v"`
}

// decodeChronos decodes a Chronos JSON array. It is strict where format/chronos is lenient:
// a service refuses unknown fields rather than silently ignoring them. It accepts the
// online extras "sno" (position in the session) and "rtts".
func decodeChronos(body []byte) ([]ts.Txn, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var raw []chronosTxn
	if err := dec.Decode(&raw); err != nil {
		return nil, jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badInput(400, "bad_json", "unexpected data after the JSON array")
	}
	txs := make([]ts.Txn, len(raw))
	for i := range raw {
		if what := raw[i].decode(&txs[i]); what != "" {
			return nil, badInput(400, "bad_field", "transaction #%d: %s", i, what)
		}
	}
	return txs, nil
}

// decode decodes r into t; a non-empty result says what is wrong with it.
func (r *chronosTxn) decode(t *ts.Txn) string {
	var err error
	if t.ID, err = scalar(r.Tid); err != nil || t.ID.IsNil() {
		return `"tid" must be a string or an integer`
	}
	if t.Session, err = scalar(r.Sid); err != nil {
		return `"sid" must be a string or an integer`
	}
	t.Seq = -1
	if r.Sno != nil {
		t.Seq = *r.Sno
	}
	if what := r.decodeTimes(t); what != "" {
		return what
	}
	t.Ops = make([]ts.Op, len(r.Ops))
	for j := range r.Ops {
		if what := r.Ops[j].decode(&t.Ops[j]); what != "" {
			return fmt.Sprintf("op %d: %s", j, what)
		}
	}
	return ""
}

// decodeTimes decodes the required start and commit timestamps of r into t; a non-empty
// result says what is wrong with them.
func (r *chronosTxn) decodeTimes(t *ts.Txn) string {
	if r.Sts == nil || r.Cts == nil {
		return `"sts" and "cts" are required`
	}
	var err error
	if t.Start, err = hlc(r.Sts); err != nil {
		return `"sts": ` + err.Error()
	}
	if t.Commit, err = hlc(r.Cts); err != nil {
		return `"cts": ` + err.Error()
	}
	return ""
}

// decode decodes o into op; a non-empty result says what is wrong with it.
func (o *chronosOp) decode(op *ts.Op) string {
	var err error
	if op.Key, err = scalar(o.K); err != nil {
		return "key must be a string or an integer"
	}
	switch o.T {
	case "r", "read":
		if len(o.V) > 0 && o.V[0] == '[' {
			op.Kind = history.OpListRead
			return decodeList(o.V, op)
		}
		op.Kind = history.OpRead
	case "w", "write":
		op.Kind = history.OpWrite
	case "a", "append":
		op.Kind = history.OpAppend
	default:
		return fmt.Sprintf(`unknown type %q (expected "r", "w" or "a")`, o.T)
	}
	if op.Value, err = scalar(o.V); err != nil {
		return "value must be null, a string or an integer"
	}
	return ""
}

// decodeList decodes the list a list read observed into op.List.
func decodeList(v json.RawMessage, op *ts.Op) string {
	var vs []json.RawMessage
	if err := json.Unmarshal(v, &vs); err != nil {
		return "bad list"
	}
	op.List = make([]history.Datum, len(vs))
	for m, v := range vs {
		var err error
		if op.List[m], err = scalar(v); err != nil {
			return "list element must be a string or an integer"
		}
	}
	return ""
}

func jsonError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return badInput(400, "bad_json", "malformed JSON at byte %d: %v", se.Offset, err)
	case errors.As(err, &te):
		return badInput(400, "bad_field", "field %q at byte %d: expected %v, found %s", te.Field, te.Offset, te.Type, te.Value)
	case bytes.HasPrefix([]byte(err.Error()), []byte("json: unknown field")):
		return badInput(400, "unknown_field", "%v", err)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return badInput(400, "bad_json", "truncated JSON")
	}
	return badInput(400, "bad_json", "%v", err)
}

// scalar decodes null, an integer or a string (integers given as strings stay strings).
func scalar(r json.RawMessage) (history.Datum, error) {
	if len(r) == 0 || string(r) == "null" {
		return history.NilDatum, nil
	}
	if r[0] == '"' {
		var s string
		if err := json.Unmarshal(r, &s); err != nil {
			return history.NilDatum, err
		}
		return history.Str(s), nil
	}
	n, err := strconv.ParseInt(string(r), 10, 64)
	if err != nil {
		return history.NilDatum, err
	}
	return history.Int(n), nil
}

// hlc decodes {"p": int|"int", "l": int|"int"}.
func hlc(h *chronosHLC) (history.Timestamp, error) {
	num := func(r json.RawMessage) (int64, error) {
		if len(r) == 0 || string(r) == "null" {
			return 0, nil
		}
		s := string(r)
		if r[0] == '"' {
			if err := json.Unmarshal(r, &s); err != nil {
				return 0, err
			}
		}
		return strconv.ParseInt(s, 10, 64)
	}
	p, err := num(h.P)
	if err != nil {
		return history.Timestamp{}, fmt.Errorf("physical part: %w", err)
	}
	l, err := num(h.L)
	if err != nil {
		return history.Timestamp{}, fmt.Errorf("logical part: %w", err)
	}
	return history.Timestamp{Physical: p, Logical: l}, nil
}

// decodeNative decodes native JSON Lines through the native reader into a batch-local
// history. Only committed transactions with timestamps are kept; session order is arrival
// order (Seq -1) because positions inside one batch mean nothing across batches.
func decodeNative(body []byte) ([]ts.Txn, error) {
	h, err := readNative(body)
	if err != nil {
		return nil, err
	}
	txs := make([]ts.Txn, 0, len(h.Txns))
	for i := range h.Txns {
		t := &h.Txns[i]
		if !t.Committed() {
			continue
		}
		if err := checkOnline(h, t, i); err != nil {
			return nil, err
		}
		x := ts.FromHistory(h, t.ID)
		x.Seq = -1
		txs = append(txs, x)
	}
	return txs, nil
}

// readNative reads body, native JSON Lines, into a history; its errors are bad input, and
// so are timestamps derived from the batch's own snapshots.
func readNative(body []byte) (*history.History, error) {
	b := history.NewBuilder()
	if err := native.NewDecoder().Decode(bytes.NewReader(body), "body", b); err != nil {
		code := "bad_json"
		if strings.Contains(err.Error(), "unknown key") {
			code = "unknown_field"
		}
		return nil, badInput(400, code, "%v", err)
	}
	h, err := b.Build()
	if err != nil {
		if errors.Is(err, history.ErrBadTxn) {
			return nil, badInput(422, "timestamps_backwards", "%v", err)
		}
		return nil, badInput(400, "bad_history", "%v", err)
	}
	if h.DerivedTimestamps() {
		// Timestamps derived from one batch's snapshots order that batch only.
		return nil, badInput(400, "missing_timestamps", "the transactions carry snapshots (\"snap\") but no start and commit timestamps (\"sts\", \"cts\"): timestamps derived from snapshots need the whole history, and the server checks batch by batch; send timestamps (isovet replay writes the ones isovet derived)")
	}
	return h, nil
}

// checkOnline says why the committed transaction t, number i of h, cannot go to the online
// checker, or nil: it holds a failed statement, or lacks timestamps or an id.
func checkOnline(h *history.History, t *history.Txn, i int) error {
	if i := slices.IndexFunc(t.Ops, history.Op.Failed); i >= 0 {
		// Committed or rolled back: the online checker takes committed transactions
		// only, and which one it was is the recorder's to say.
		return badInput(422, "failed_statement", "transaction %s is logged as committed but its operation %d failed: a failed statement does not take effect, and on the PostgreSQL protocol a COMMIT after an error is a rollback; send it as aborted (\"o\":\"aborted\"), or as committed without the failed statement, whichever the database did", h.Name(t.ID), i)
	}
	if !t.HasTimestamps {
		return badInput(400, "missing_timestamps", "transaction %s has no start and commit timestamps (\"sts\", \"cts\")", h.Name(t.ID))
	}
	if t.Source.IsNil() {
		return badInput(400, "missing_id", "transaction #%d has no id (\"id\"); ids are needed to deduplicate", i)
	}
	return nil
}
