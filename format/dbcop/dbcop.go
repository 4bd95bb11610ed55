// Package dbcop reads dbcop histories (Biswas and Enea, OOPSLA'19; rnbguy/dbcop): the
// original bincode file history.bincode and the JSON of the 2025 rewrite. It writes the
// bincode file ([Write]).
//
// # Bincode
//
// bincode with fixed-width little-endian integers: every integer and every length prefix is
// a u64, a bool is one byte (0 or 1), a string is its length followed by UTF-8 bytes:
//
//	id n_node n_variable n_transaction n_event : u64   (n_transaction is per node, n_event per txn)
//	info start end                             : string
//	sessions : Vec<Vec<Txn>>
//	Txn      = events: Vec<Event>, success: bool
//	Event    = write: bool, variable: u64, value: u64, success: bool
//
// Each node's vector is a session (source id: its index). A transaction with success false
// is aborted; an event with success false keeps the flag as [history.OpFailed] (some
// histories mark a transaction committed although one of its events failed: the checker
// decides what that means). Every variable holds 0 before the first write, so the history's
// initial value is 0.
//
// PolySI's converter (which wrote Plume's bincode fixtures) writes its loader's initial
// transaction as the first session: one transaction writing every variable once. When the
// first session is exactly that ([initialSession]: one committed transaction, only writes
// that succeeded, every variable of the file once, no other transaction writing one of its
// (variable, value) pairs and no read of 0, the format's own initial value), the reader takes
// its writes as the initial state (each variable's initial value), builds no session for
// it, and says so in the history's notes. Anything else is read as it stands.
//
// # JSON
//
// The rewrite writes sessions of transactions, optionally wrapped in an object with a
// "data" member (next to "params", "info", "start" and "end"):
//
//	[[{"events":[{"Write":{"variable":0,"version":1}},{"Read":{"variable":0,"version":null}}],"committed":true}]]
//
// A read of version null read the initial state, which is nil here. A read of version 0
// reads the initial state too when no transaction writes version 0 to that variable (dbcop
// reads it so since February 2026: 0 is the default version, the synthetic root's): such a
// read names the initial state as its source, and the variable's initial value is 0 unless
// some read of it found null. When a transaction does write version 0, reads of 0 read that
// write, and the transaction stays an ordinary one, as in dbcop.
package dbcop

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/parse"
)

const (
	bincodeName = "dbcop"
	jsonName    = "dbcop-json"
)

// Decoder decodes one history.bincode file. The zero value is ready to use.
type Decoder struct{ _ struct{} }

// NewDecoder returns a bincode decoder.
func NewDecoder() *Decoder { return &Decoder{} }

// Finish does nothing: bincode histories are self-contained.
func (d *Decoder) Finish(b *history.Builder) error { return nil }

// Header is the bincode file's header.
type Header struct {
	ID, Nodes, Variables, TxnsPerNode, EventsPerTxn uint64
	Info, Start, End                                string
}

// reader walks a bincode buffer and remembers the first error with its offset.
type reader struct {
	data []byte
	off  int
	name string
	err  error
}

func (r *reader) fail(off int, msg string, args ...any) {
	if r.err == nil {
		r.err = parse.Errorf(bincodeName, r.name, 0, 0, int64(off), msg, args...)
	}
}

func (r *reader) u64(what string) uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.data)-r.off < 8 {
		r.fail(r.off, "%w: expected %s (u64, 8 bytes), %d bytes left", parse.ErrTruncated, what, len(r.data)-r.off)
		return 0
	}
	v := binary.LittleEndian.Uint64(r.data[r.off:])
	r.off += 8
	return v
}

func (r *reader) bool(what string) bool {
	if r.err != nil {
		return false
	}
	if r.off >= len(r.data) {
		r.fail(r.off, "%w: expected %s (bool, 1 byte)", parse.ErrTruncated, what)
		return false
	}
	c := r.data[r.off]
	if c > 1 {
		r.fail(r.off, "expected %s (bool: byte 0 or 1), found 0x%02x", what, c)
		return false
	}
	r.off++
	return c == 1
}

// length reads a Vec or string length and checks that at least min bytes per element remain.
func (r *reader) length(what string, min int) int {
	at := r.off
	n := r.u64(what + " length")
	if r.err != nil {
		return 0
	}
	if left := uint64(len(r.data) - r.off); n > left/uint64(min) {
		if n > 1<<40 {
			r.fail(at, "expected %s length, found implausible %d", what, n)
		} else {
			r.fail(at, "%w: %s length %d needs at least %d bytes, %d left", parse.ErrTruncated, what, n, n*uint64(min), left)
		}
		return 0
	}
	return int(n)
}

func (r *reader) str(what string) string {
	n := r.length(what, 1)
	if r.err != nil {
		return ""
	}
	s := r.data[r.off : r.off+n]
	if !utf8.Valid(s) {
		r.fail(r.off, "expected %s as UTF-8 text", what)
		return ""
	}
	r.off += n
	return string(s)
}

func (r *reader) header() Header {
	h := r.counts()
	h.Info = r.str("info string")
	h.Start = r.str("start string")
	h.End = r.str("end string")
	return h
}

// counts reads the header's id and counts, before its strings.
func (r *reader) counts() Header {
	var h Header
	h.ID = r.u64("history id")
	h.Nodes = r.u64("n_node")
	h.Variables = r.u64("n_variable")
	h.TxnsPerNode = r.u64("n_transaction")
	h.EventsPerTxn = r.u64("n_event")
	return h
}

// event size: write bool, variable u64, value u64, success bool
const (
	eventSize = 1 + 8 + 8 + 1
	txnMin    = 8 + 1
)

// Decode reads a history.bincode file.
func (d *Decoder) Decode(rd io.Reader, name string, b *history.Builder) error {
	data, err := parse.ReadAll(rd)
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	r := &reader{data: data, name: name}
	h := r.header()
	nsess := r.length("sessions", 8)
	if r.err != nil {
		return r.err
	}
	growFromHeader(b, h, len(data))
	b.SetInitial(b.IntValue(0))
	init := initialSession(data[r.off:], nsess)
	for si := range nsess {
		if si == 0 && init != nil {
			r.off += len(init)
			for p := init[16:]; len(p) > 1; p = p[eventSize:] {
				b.SetInitialKey(b.IntKey(int64(binary.LittleEndian.Uint64(p[1:]))), b.IntValue(int64(binary.LittleEndian.Uint64(p[9:]))))
			}
			b.Note("session 0 holds one transaction that writes every variable once: read as the initial state (PolySI's converter writes its initial transaction so), not as a transaction")
			continue
		}
		s := b.Session(history.Int(int64(si)))
		ntxn := r.length("session transactions", txnMin)
		for range ntxn {
			nev := r.length("transaction events", eventSize)
			if r.err != nil {
				return r.err
			}
			b.BeginTxn(s, history.NilDatum, history.OutcomeCommitted)
			le := binary.LittleEndian
			// The loops over sessions, transactions and events stay in Decode as they are:
			// as methods, with the events in a function, with the error built elsewhere or
			// even with the initial state set by a call, they cost 1 to 2.5% more
			// instructions (the compiler keeps less of the loop in registers).
			for range nev {
				// The length check above guarantees the bytes are there.
				p := r.data[r.off : r.off+eventSize]
				if p[0] > 1 || p[17] > 1 {
					at := r.off
					if p[0] <= 1 {
						at += 17
					}
					r.fail(at, "expected a bool (byte 0 or 1) in an event, found 0x%02x", r.data[at])
					return r.err
				}
				k := b.IntKey(int64(le.Uint64(p[1:])))
				v := b.IntValue(int64(le.Uint64(p[9:])))
				var i int32
				if p[0] == 1 {
					i = b.Write(k, v)
				} else {
					i = b.Read(k, v)
				}
				if p[17] == 0 {
					b.SetOpFlags(i, history.OpFailed)
				}
				r.off += eventSize
			}
			if !r.bool("transaction success flag") {
				b.Current().Outcome = history.OutcomeAborted
			}
		}
		if r.err != nil {
			return r.err
		}
	}
	if r.err == nil && r.off != len(data) {
		r.fail(r.off, "expected the end of the history, found %d more bytes", len(data)-r.off)
	}
	return r.err
}

// growFromHeader sizes the builder from the header's counts, which are untrusted: a hint
// never exceeds what the size bytes of the file could hold (each transaction takes at least
// txnMin bytes, each event eventSize), so a lying header cannot make the reader allocate
// gigabytes.
func growFromHeader(b *history.Builder, h Header, size int) {
	maxTxns, maxOps := uint64(size/txnMin), uint64(size/eventSize)
	if h.Nodes > maxTxns || h.TxnsPerNode > maxTxns || h.Nodes*h.TxnsPerNode > maxTxns {
		return
	}
	txns := h.Nodes * h.TxnsPerNode
	ops := maxOps
	if h.EventsPerTxn <= maxOps && txns*h.EventsPerTxn <= maxOps {
		ops = txns * h.EventsPerTxn
	}
	b.Grow(int(txns), int(ops))
}

// initialSession returns the bytes of the first session when it is an initial transaction
// written as one (see the package doc), else nil. sessions holds the encoded sessions, of
// which there are nsess. It never fails: anything malformed is left to the decoder.
func initialSession(sessions []byte, nsess int) []byte {
	if nsess < 2 {
		return nil
	}
	init, end := initialWrites(sessions)
	if init == nil {
		return nil
	}
	p := sessions[end:]
	for range nsess - 1 {
		if p = sessionKeepsInitial(p, init); p == nil {
			return nil
		}
	}
	return sessions[:end]
}

// initialWrites reads the first session as an initial transaction: exactly one committed
// transaction of successful writes, each to a different variable. It returns the written
// values by variable and where the session ends, or nil when the session is not one.
func initialWrites(sessions []byte) (init map[uint64]uint64, end uint64) {
	le := binary.LittleEndian
	if len(sessions) < 16 || le.Uint64(sessions) != 1 {
		return nil, 0
	}
	nev := le.Uint64(sessions[8:])
	end = 16 + nev*eventSize + 1
	if nev == 0 || nev > uint64(len(sessions)) || uint64(len(sessions)) < end || sessions[end-1] != 1 {
		return nil, 0
	}
	init = make(map[uint64]uint64, nev)
	for p := sessions[16 : end-1]; len(p) > 0; p = p[eventSize:] {
		k := le.Uint64(p[1:])
		if _, dup := init[k]; dup || p[0] != 1 || p[17] != 1 {
			return nil, 0
		}
		init[k] = le.Uint64(p[9:])
	}
	return init, end
}

// sessionKeepsInitial checks the session encoded at the start of p against the initial
// writes: every event touches a variable written there, no write writes its initial value
// again and no read reads 0. It returns the bytes after the session, or nil when the check
// fails or the session is malformed.
func sessionKeepsInitial(p []byte, init map[uint64]uint64) []byte {
	le := binary.LittleEndian
	if len(p) < 8 {
		return nil
	}
	ntxn := le.Uint64(p)
	p = p[8:]
	for ; ntxn > 0 && p != nil; ntxn-- {
		p = txnKeepsInitial(p, init)
	}
	return p
}

// txnKeepsInitial is sessionKeepsInitial for the transaction encoded at the start of p.
func txnKeepsInitial(p []byte, init map[uint64]uint64) []byte {
	le := binary.LittleEndian
	if len(p) < 8 {
		return nil
	}
	n := le.Uint64(p)
	if n > uint64(len(p))/eventSize || uint64(len(p)) < 8+n*eventSize+1 {
		return nil
	}
	for q := p[8 : 8+n*eventSize]; len(q) > 0; q = q[eventSize:] {
		if !keepsInitial(q, init) {
			return nil
		}
	}
	return p[8+n*eventSize+1:]
}

// keepsInitial reports whether the event q agrees with the initial writes init: it touches
// a variable they write, and neither writes its initial value again nor reads 0.
func keepsInitial(q []byte, init map[uint64]uint64) bool {
	k, v := binary.LittleEndian.Uint64(q[1:]), binary.LittleEndian.Uint64(q[9:])
	iv, ok := init[k]
	return ok && !(v == iv && q[0] == 1) && !(v == 0 && q[0] == 0)
}

// ReadHeader reads the header of a history.bincode file.
func ReadHeader(data []byte) (Header, error) {
	r := &reader{data: data}
	h := r.header()
	return h, r.err
}

// Sniff reports whether head looks like a dbcop history.bincode: a plausible header whose
// three strings are text.
func Sniff(name string, head []byte) bool {
	r := &reader{data: head}
	h := r.counts()
	if r.err != nil || !h.plausible() {
		return false
	}
	for range 3 {
		n := r.u64("")
		if r.err != nil || n > 1<<12 {
			return false
		}
		if int(n) > len(head)-r.off {
			return strings.HasSuffix(name, ".bincode")
		}
		if !isText(head[r.off : r.off+int(n)]) {
			return false
		}
		r.off += int(n)
	}
	n := r.u64("")
	return r.err != nil || n == h.Nodes || (n > 0 && n <= 1<<20)
}

// plausible reports whether the header's counts are those of a real history: at least one
// node and no count beyond what any dbcop run produces.
func (h Header) plausible() bool {
	return h.Nodes != 0 && h.Nodes <= 1<<20 && h.Variables <= 1<<40 && h.TxnsPerNode <= 1<<32 && h.EventsPerTxn <= 1<<20
}

// isText reports whether s is UTF-8 without control characters.
func isText(s []byte) bool {
	return utf8.Valid(s) && !bytes.ContainsFunc(s, func(c rune) bool { return c < ' ' })
}

// JSONDecoder decodes one dbcop JSON history. The zero value is ready to use.
type JSONDecoder struct{ _ struct{} }

// NewJSONDecoder returns a JSON decoder.
func NewJSONDecoder() *JSONDecoder { return &JSONDecoder{} }

// Finish does nothing.
func (d *JSONDecoder) Finish(b *history.Builder) error { return nil }

type jsonTxn struct {
	Events    []jsonEvent `json:"events"`
	Committed *bool       `json:"committed"`
}

type jsonEvent struct {
	Write *jsonAccess `json:"Write"`
	Read  *jsonAccess `json:"Read"`
}

type jsonAccess struct {
	Variable *int64 `json:"variable"`
	Version  *int64 `json:"version"`
}

// Decode reads a dbcop JSON history.
func (d *JSONDecoder) Decode(rd io.Reader, name string, b *history.Builder) error {
	data, err := parse.ReadAll(rd)
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	body, base, err := jsonSessions(name, data)
	if err != nil {
		return err
	}
	var sessions [][]jsonTxn
	if err := json.Unmarshal(body, &sessions); err != nil {
		return jsonError(name, data, base, err)
	}
	b.SetInitial(history.Nil)
	j := jsonReader{name: name, b: b}
	j.zeroWritten, j.nullRead = rootReads(sessions)
	for si, txns := range sessions {
		s := b.Session(history.Int(int64(si)))
		for ti, t := range txns {
			if err := j.txn(s, fmt.Sprintf("session %d, transaction %d", si, ti), t); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonSessions returns the JSON text of the sessions in data, unwrapping the object form's
// "data" member, and its offset in data.
func jsonSessions(name string, data []byte) (body []byte, base int64, err error) {
	body = bytes.TrimLeft(data, " \t\r\n")
	base = int64(len(data) - len(body))
	if len(body) == 0 || body[0] != '{' {
		return body, base, nil
	}
	var wrap struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &wrap); err != nil {
		return nil, 0, jsonError(name, data, base, err)
	}
	if wrap.Data == nil {
		return nil, 0, parse.Errorf(jsonName, name, 1, 1, base, "expected an object with a \"data\" member holding the sessions")
	}
	// Locate data inside body for offsets: RawMessage is a subslice copy, so search.
	if i := bytes.Index(body, wrap.Data); i >= 0 {
		base += int64(i)
	}
	return wrap.Data, base, nil
}

// jsonReader adds the transactions of a dbcop JSON history to a builder.
type jsonReader struct {
	name                  string
	b                     *history.Builder
	zeroWritten, nullRead map[int64]bool // see rootReads
}

// txn adds transaction t of session s; where names it in errors.
func (j *jsonReader) txn(s history.SessionID, where string, t jsonTxn) error {
	if t.Committed == nil {
		return parse.Errorf(jsonName, j.name, 0, 0, -1, "%s: expected a \"committed\" member", where)
	}
	outcome := history.OutcomeCommitted
	if !*t.Committed {
		outcome = history.OutcomeAborted
	}
	j.b.BeginTxn(s, history.NilDatum, outcome)
	for ei, e := range t.Events {
		if problem := j.event(e); problem != "" {
			return parse.Errorf(jsonName, j.name, 0, 0, -1, "%s, event %d: %s", where, ei, problem)
		}
	}
	return nil
}

// event adds one event to the current transaction. It returns what was expected and not
// found, or "" when the event is well formed.
func (j *jsonReader) event(e jsonEvent) string {
	b := j.b
	a := e.access()
	if a == nil {
		return `expected exactly one of "Write" or "Read"`
	}
	if a.Variable == nil {
		return `expected a "variable"`
	}
	k := b.IntKey(*a.Variable)
	v := history.Nil
	if a.Version != nil {
		v = b.IntValue(*a.Version)
	} else if e.Write != nil {
		return `expected a written "version"`
	}
	if e.Write != nil {
		b.Write(k, v)
	} else {
		j.read(a, k, v)
	}
	return ""
}

// read adds a read of a, variable k at version v: of the initial state when it reads version
// 0 and no transaction writes 0 to the variable, which then starts at 0 unless some read
// found it null.
func (j *jsonReader) read(a *jsonAccess, k history.Key, v history.Value) {
	b := j.b
	if a.Version == nil || *a.Version != 0 || j.zeroWritten[*a.Variable] {
		b.Read(k, v)
		return
	}
	b.ReadFrom(k, v, history.Src{Kind: history.SrcInit})
	if !j.nullRead[*a.Variable] {
		b.SetInitialKey(k, v)
	}
}

// rootReads returns the variables some transaction writes version 0 to, and those some read
// found null (uninitialised). A read of version 0 of a variable nobody writes 0 to reads the
// initial state, as dbcop maps the default version to its root.
func rootReads(sessions [][]jsonTxn) (zeroWritten, nullRead map[int64]bool) {
	zeroWritten, nullRead = make(map[int64]bool), make(map[int64]bool)
	for _, txns := range sessions {
		for _, t := range txns {
			for _, e := range t.Events {
				switch {
				case e.writesZero():
					zeroWritten[*e.Write.Variable] = true
				case e.readsNull():
					nullRead[*e.Read.Variable] = true
				}
			}
		}
	}
	return zeroWritten, nullRead
}

// access returns the event's write or read, nil unless it has exactly one.
func (e jsonEvent) access() *jsonAccess {
	switch {
	case (e.Write == nil) == (e.Read == nil):
		return nil
	case e.Write != nil:
		return e.Write
	}
	return e.Read
}

// writesZero reports whether e is a well-formed write of version 0.
func (e jsonEvent) writesZero() bool {
	return e.Write != nil && e.Read == nil && e.Write.Variable != nil && e.Write.Version != nil && *e.Write.Version == 0
}

// readsNull reports whether e is a well-formed read of version null.
func (e jsonEvent) readsNull() bool {
	return e.Read != nil && e.Write == nil && e.Read.Variable != nil && e.Read.Version == nil
}

// jsonError locates a JSON decoding error.
func jsonError(name string, data []byte, base int64, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	off := int64(-1)
	switch {
	case errors.As(err, &se):
		off = base + max(se.Offset-1, 0) // Offset counts the offending byte
	case errors.As(err, &te):
		off = base + te.Offset
	}
	if off < 0 {
		return parse.Errorf(jsonName, name, 0, 0, -1, "%w", err)
	}
	line, col := lineCol(data, off)
	if errors.Is(err, io.ErrUnexpectedEOF) || (se != nil && strings.Contains(se.Error(), "unexpected end")) {
		return parse.Errorf(jsonName, name, line, col, off, "%w: %v", parse.ErrTruncated, err)
	}
	return parse.Errorf(jsonName, name, line, col, off, "%w", err)
}

func lineCol(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	pre := data[:off]
	line := bytes.Count(pre, []byte{'\n'}) + 1
	col := int(off) - (bytes.LastIndexByte(pre, '\n') + 1) + 1
	return line, col
}

// SniffJSON reports whether head looks like a dbcop JSON history: JSON holding transactions
// with "events" made of "Write"/"Read" accesses to a "variable".
func SniffJSON(name string, head []byte) bool {
	t := bytes.TrimLeft(head, " \t\r\n")
	if len(t) == 0 || (t[0] != '[' && t[0] != '{') {
		return false
	}
	return bytes.Contains(t, []byte(`"events"`)) && bytes.Contains(t, []byte(`"variable"`)) &&
		(bytes.Contains(t, []byte(`"Write"`)) || bytes.Contains(t, []byte(`"Read"`)))
}
