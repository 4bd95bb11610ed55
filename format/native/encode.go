package native

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/jsonscan"
)

// Header is the optional first line of a native stream.
type Header struct {
	// Initial is the value of every key before any transaction (nil: the absent value).
	Initial history.Datum
	// InitialKeys overrides Initial per key.
	InitialKeys []KeyValue
	// Sessions, when non-nil, declares the sessions in order (source ids may repeat); lines
	// may then name a session by its index in this list ("si").
	Sessions []history.Datum
	_        struct{}
}

// KeyValue is one entry of [Header.InitialKeys].
type KeyValue struct{ Key, Value history.Datum }

// Txn is a self-contained transaction with original keys and values, for writers that
// have no [history.History] (the workload runner). Its zero Outcome is unknown.
type Txn struct {
	Session history.Datum
	ID      history.Datum // the transaction's source id; nil: none
	Outcome history.Outcome
	// Time is the client interval [Begin, End] in ns, written if HasTime.
	Time    history.Interval
	HasTime bool
	// Start and Commit are database timestamps, written if HasTimestamps.
	Start, Commit history.Timestamp
	HasTimestamps bool
	// Snapshot is the database's snapshot ([history.Snapshot]), written if HasSnapshot.
	Snapshot    history.Snapshot
	HasSnapshot bool
	Ops         []Op
	_           struct{}
}

// Op is one operation of a [Txn].
type Op struct {
	Kind       history.OpKind
	Key, Value history.Datum   // Value: read or written value (unused by OpDelete, OpListRead)
	List       []history.Datum // OpListRead: the list read
	Pred       *Pred           // OpPredRead, OpPredWrite
	Src        history.Src     // explicit source (SrcTxn names a transaction by stream index)
	Failed     bool
	Time       history.Interval // the op's client interval, written if HasTime
	HasTime    bool
}

// Pred is the payload of a predicate operation in a [Txn].
type Pred struct {
	Pred history.Predicate
	Rows []Row
}

// Row is one row of a [Pred].
type Row struct {
	Key, Value history.Datum
	Match      bool
	Src        history.Src
}

// Encoder writes native lines to an io.Writer. Each call writes exactly one complete line
// with a single Write, so lines from one Encoder can be appended to a file or sent over a
// stream as they are produced; wrap w in a bufio.Writer for throughput. An Encoder is not
// safe for concurrent use.
type Encoder struct {
	// DerivedTimestamps makes Encode write timestamps derived from snapshots
	// ([history.History.DerivedTimestamps]) as "sts"/"cts", and no snapshots: for a receiver
	// that reads line by line and so cannot derive them (isovet replay to isovet serve).
	// Otherwise the snapshots are written and the timestamps are not.
	DerivedTimestamps bool

	w   io.Writer
	buf []byte

	h      *history.History // the history Encode last saw, and its session indexes
	needSI []bool
}

// NewEncoder returns an encoder writing to w.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: w} }

// ErrUnrepresentable is wrapped by encoders when a transaction cannot be written.
var ErrUnrepresentable = errors.New("native: cannot encode")

func (e *Encoder) flush() error {
	e.buf = append(e.buf, '\n')
	_, err := e.w.Write(e.buf)
	e.buf = e.buf[:0]
	return err
}

// EncodeHeader writes a header line. It must be the first line of the stream.
func (e *Encoder) EncodeHeader(hd Header) error {
	b := append(e.buf[:0], `{"isovet":`...)
	b = strconv.AppendInt(b, Version, 10)
	if !hd.Initial.IsNil() {
		b = append(b, `,"initial":`...)
		b = jsonscan.AppendDatum(b, hd.Initial)
	}
	if len(hd.InitialKeys) > 0 {
		b = append(b, `,"initial_keys":[`...)
		for i, kv := range hd.InitialKeys {
			if kv.Key.IsNil() {
				return fmt.Errorf("%w: initial key %d is nil", ErrUnrepresentable, i)
			}
			b = append(appendSep(b, i), '[')
			b = jsonscan.AppendDatum(b, kv.Key)
			b = append(b, ',')
			b = jsonscan.AppendDatum(b, kv.Value)
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	if hd.Sessions != nil {
		b = append(b, `,"sessions":[`...)
		for i, s := range hd.Sessions {
			b = jsonscan.AppendDatum(appendSep(b, i), s)
		}
		b = append(b, ']')
	}
	e.buf = append(b, '}')
	return e.flush()
}

// HeaderOf returns the header that [Write] writes for h: its initial state, and its
// sessions when their order or repeated ids cannot be inferred from the transaction lines.
func HeaderOf(h *history.History) Header {
	hd := Header{Initial: h.Value(h.Initial)}
	for k, v := range h.InitialByKey {
		hd.InitialKeys = append(hd.InitialKeys, KeyValue{h.Key(k), h.Value(v)})
	}
	slices.SortFunc(hd.InitialKeys, func(a, b KeyValue) int { return a.Key.Compare(b.Key) })
	if needSessions(h) {
		hd.Sessions = make([]history.Datum, len(h.Sessions))
		for i, s := range h.Sessions {
			hd.Sessions[i] = s.Source
		}
	}
	return hd
}

// needSessions reports whether reading h's transaction lines alone would not rebuild its
// sessions: some session is empty, appears out of order, or shares its source id.
func needSessions(h *history.History) bool {
	seen := make(map[history.Datum]bool, len(h.Sessions))
	for _, s := range h.Sessions {
		if len(s.Txns) == 0 || seen[s.Source] {
			return true
		}
		seen[s.Source] = true
	}
	next := history.SessionID(0)
	for i := range h.Txns {
		switch s := h.Txns[i].Session; {
		case s == next:
			next++
		case s > next:
			return true
		}
	}
	return false
}

func (e *Encoder) prepare(h *history.History) {
	if e.h == h {
		return
	}
	e.h = h
	e.needSI = e.needSI[:0]
	seen := make(map[history.Datum]bool, len(h.Sessions))
	for _, s := range h.Sessions {
		e.needSI = append(e.needSI, seen[s.Source])
		seen[s.Source] = true
	}
}

// Encode writes transaction t of h as one line. If h has several sessions with the same
// source id, write [HeaderOf](h) first: lines then name those sessions by index.
func (e *Encoder) Encode(h *history.History, t history.TxnID) error {
	e.prepare(h)
	tx := h.Txn(t)
	b := e.appendTxnHead(e.buf[:0], h, t)
	for i, o := range tx.Ops {
		if i > 0 {
			b = append(b, ',')
		}
		var ok bool
		if b, ok = appendHistOp(b, h, o); !ok {
			e.buf = b[:0]
			return fmt.Errorf("%w: txn %s op %d has kind %v", ErrUnrepresentable, h.Name(t), i, o.Kind)
		}
		var ot *history.Interval
		if tx.OpTimes != nil {
			ot = &tx.OpTimes[i]
		}
		b = appendOpTail(b, o.Src, o.Failed(), ot)
	}
	e.buf = append(b, "]}"...)
	return e.flush()
}

// appendTxnHead writes transaction t of h up to its ops' '['.
func (e *Encoder) appendTxnHead(b []byte, h *history.History, t history.TxnID) []byte {
	tx := h.Txn(t)
	b = append(b, `{"s":`...)
	b = jsonscan.AppendDatum(b, h.Sessions[tx.Session].Source)
	if e.needSI[tx.Session] {
		b = append(b, `,"si":`...)
		b = strconv.AppendInt(b, int64(tx.Session), 10)
	}
	// Timestamps derived from snapshots are not written: the snapshots are, and give them
	// again when read.
	snap, hasSnap := h.Snapshots[t]
	hasTS := tx.HasTimestamps
	if h.DerivedTimestamps() {
		hasTS, hasSnap = e.DerivedTimestamps && hasTS, hasSnap && !e.DerivedTimestamps
	}
	return appendTxnFields(b, tx.Source, tx.Outcome, tx.Time, tx.HasTime, tx.Start, tx.Commit, hasTS, snap, hasSnap)
}

// appendHistOp writes op o of h without its options object and closing ']'; false for a
// kind the format has no form for.
func appendHistOp(b []byte, h *history.History, o history.Op) ([]byte, bool) {
	switch o.Kind {
	case history.OpRead, history.OpWrite, history.OpAppend, history.OpInsert:
		return jsonscan.AppendDatum(appendOpHead(b, o.Kind, h.Key(o.Key)), h.Value(o.Value)), true
	case history.OpDelete:
		return appendOpHead(b, o.Kind, h.Key(o.Key)), true
	case history.OpListRead:
		b = append(appendOpHead(b, o.Kind, h.Key(o.Key)), '[')
		for j, v := range h.List(o) {
			b = jsonscan.AppendDatum(appendSep(b, j), h.Value(v))
		}
		return append(b, ']'), true
	case history.OpPredRead, history.OpPredWrite:
		p := h.Pred(o)
		b = appendPredHead(b, o.Kind, &p.Pred)
		for j, r := range p.Rows {
			b = appendRow(appendSep(b, j), h.Key(r.Key), h.Value(r.Value), r.Match, p.Src(j))
		}
		return append(b, ']'), true
	}
	return b, false
}

// appendSep writes the ',' before element j of a list, if it is not the first; with j the
// bytes written since a list began, it writes one if some element came before.
func appendSep(b []byte, j int) []byte {
	if j > 0 {
		return append(b, ',')
	}
	return b
}

// EncodeTxn writes t as one line.
func (e *Encoder) EncodeTxn(t *Txn) error {
	b := append(e.buf[:0], `{"s":`...)
	b = jsonscan.AppendDatum(b, t.Session)
	b = appendTxnFields(b, t.ID, t.Outcome, t.Time, t.HasTime, t.Start, t.Commit, t.HasTimestamps, t.Snapshot, t.HasSnapshot)
	for i := range t.Ops {
		o := &t.Ops[i]
		var err error
		if b, err = appendTxnOp(appendSep(b, i), o, i); err != nil {
			e.buf = b[:0]
			return err
		}
		var ot *history.Interval
		if o.HasTime {
			ot = &o.Time
		}
		b = appendOpTail(b, o.Src, o.Failed, ot)
	}
	e.buf = append(b, "]}"...)
	return e.flush()
}

// appendTxnOp writes op i of a Txn, o, without its options object and closing ']'.
func appendTxnOp(b []byte, o *Op, i int) ([]byte, error) {
	if o.Key.IsNil() && !isPredOp(o.Kind) {
		return b, fmt.Errorf("%w: op %d has a nil key", ErrUnrepresentable, i)
	}
	switch o.Kind {
	case history.OpRead, history.OpWrite, history.OpAppend, history.OpInsert:
		return jsonscan.AppendDatum(appendOpHead(b, o.Kind, o.Key), o.Value), nil
	case history.OpDelete:
		return appendOpHead(b, o.Kind, o.Key), nil
	case history.OpListRead:
		b = append(appendOpHead(b, o.Kind, o.Key), '[')
		for j, v := range o.List {
			b = jsonscan.AppendDatum(appendSep(b, j), v)
		}
		return append(b, ']'), nil
	case history.OpPredRead, history.OpPredWrite:
		return appendTxnPred(b, o, i)
	}
	return b, fmt.Errorf("%w: op %d has kind %v", ErrUnrepresentable, i, o.Kind)
}

// appendTxnPred writes predicate op i of a Txn, o, for appendTxnOp.
func appendTxnPred(b []byte, o *Op, i int) ([]byte, error) {
	if o.Pred == nil {
		return b, fmt.Errorf("%w: predicate op %d has no Pred", ErrUnrepresentable, i)
	}
	b = appendPredHead(b, o.Kind, &o.Pred.Pred)
	for j, r := range o.Pred.Rows {
		if r.Key.IsNil() {
			return b, fmt.Errorf("%w: op %d row %d has a nil key", ErrUnrepresentable, i, j)
		}
		b = appendRow(appendSep(b, j), r.Key, r.Value, r.Match, r.Src)
	}
	return append(b, ']'), nil
}

func appendTxnFields(b []byte, id history.Datum, oc history.Outcome, iv history.Interval, hasTime bool, st, ct history.Timestamp, hasTS bool, snap history.Snapshot, hasSnap bool) []byte {
	if !id.IsNil() {
		b = append(b, `,"id":`...)
		b = jsonscan.AppendDatum(b, id)
	}
	switch oc {
	case history.OutcomeAborted:
		b = append(b, `,"o":"a"`...)
	case history.OutcomeUnknown:
		b = append(b, `,"o":"u"`...)
	}
	if hasTime {
		b = appendPair(append(b, `,"t":`...), iv.Begin, iv.End)
	}
	if hasTS {
		b = appendPair(append(b, `,"sts":`...), st.Physical, st.Logical)
		b = appendPair(append(b, `,"cts":`...), ct.Physical, ct.Logical)
	}
	if hasSnap {
		b = append(append(append(b, `,"snap":"`...), snap.String()...), '"')
	}
	return append(b, `,"ops":[`...)
}

var opNames = [...]string{
	history.OpRead:      `["r",`,
	history.OpWrite:     `["w",`,
	history.OpAppend:    `["a",`,
	history.OpListRead:  `["r",`,
	history.OpInsert:    `["i",`,
	history.OpDelete:    `["d",`,
	history.OpPredRead:  `["pr",`,
	history.OpPredWrite: `["pw",`,
}

func appendOpHead(b []byte, k history.OpKind, key history.Datum) []byte {
	b = append(b, opNames[k]...)
	b = jsonscan.AppendDatum(b, key)
	if k != history.OpDelete {
		b = append(b, ',')
	}
	return b
}

// appendPredHead writes ["pr",{pred},[ up to the first row.
func appendPredHead(b []byte, k history.OpKind, p *history.Predicate) []byte {
	b = append(b, opNames[k]...)
	b = append(b, '{')
	n := len(b) // a ',' goes before each key but the first, after b[:n]
	if p.Relation != "" {
		b = jsonscan.AppendString(append(b, `"rel":`...), p.Relation)
	}
	if p.Expr != "" {
		b = jsonscan.AppendString(append(appendSep(b, len(b)-n), `"expr":`...), p.Expr)
	}
	if p.IsRange {
		b = jsonscan.AppendDatum(append(appendSep(b, len(b)-n), `"range":[`...), p.Field)
		b = append(strconv.AppendInt(append(b, ','), p.Lo, 10), ',')
		b = append(strconv.AppendInt(b, p.Hi, 10), ']')
	}
	return append(b, "},["...)
}

func appendRow(b []byte, k, v history.Datum, match bool, src history.Src) []byte {
	b = jsonscan.AppendDatum(append(b, '['), k)
	b = jsonscan.AppendDatum(append(b, ','), v)
	if !match || src.Kind != history.SrcByValue {
		b = append(b, ",{"...)
		if !match {
			b = append(b, `"match":false`...)
			if src.Kind != history.SrcByValue {
				b = append(b, ',')
			}
		}
		if src.Kind != history.SrcByValue {
			b = appendSrc(b, src)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendSrc(b []byte, src history.Src) []byte {
	b = append(b, `"src":`...)
	switch src.Kind {
	case history.SrcInit:
		return append(b, `"init"`...)
	case history.SrcNone:
		return append(b, `"none"`...)
	}
	return appendPair(b, int64(src.Txn), int64(src.Op))
}

// appendOpTail writes the options object, if any, and closes the op.
func appendOpTail(b []byte, src history.Src, failed bool, t *history.Interval) []byte {
	if src.Kind == history.SrcByValue && !failed && t == nil {
		return append(b, ']')
	}
	b = append(b, ",{"...)
	n := len(b) // a ',' goes before each field but the first, after b[:n]
	if src.Kind != history.SrcByValue {
		b = appendSrc(b, src)
	}
	if failed {
		b = append(appendSep(b, len(b)-n), `"failed":true`...)
	}
	if t != nil {
		b = appendPair(append(appendSep(b, len(b)-n), `"t":`...), t.Begin, t.End)
	}
	return append(b, "}]"...)
}

func appendPair(b []byte, x, y int64) []byte {
	b = strconv.AppendInt(append(b, '['), x, 10)
	b = strconv.AppendInt(append(b, ','), y, 10)
	return append(b, ']')
}

// Write writes h in the native format: [HeaderOf](h), then one line per transaction in id
// order.
func Write(w io.Writer, h *history.History) error {
	bw := bufio.NewWriterSize(w, 1<<18)
	e := NewEncoder(bw)
	if err := e.EncodeHeader(HeaderOf(h)); err != nil {
		return err
	}
	for t := range h.Txns {
		if err := e.Encode(h, history.TxnID(t)); err != nil {
			return err
		}
	}
	return bw.Flush()
}
