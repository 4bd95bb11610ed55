package dbcop

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/isovet/isovet/history"
)

// ErrUnrepresentable is wrapped by [Write] when a history holds what dbcop bincode cannot.
var ErrUnrepresentable = errors.New("dbcop: cannot write")

// Epoch is the start and end date [HeaderOf] writes: dbcop reads both as dates (chrono's
// RFC 3339), and a history carries no date of its own.
const Epoch = "1970-01-01T00:00:00+00:00"

// Write writes h as a history.bincode file, with the header [HeaderOf] makes for it.
//
// Each session becomes one node's vector, in session order; each transaction its events
// and a success flag (committed: true, aborted: false); each read or write one event, its
// failed flag the event's success flag negated. Keys and values must be integers (written
// as their 64-bit two's complement), operations item reads and writes, and outcomes
// committed or aborted; anything else is an error wrapping [ErrUnrepresentable], and so is
// a transaction in no session. Reads are written by value: dbcop has no way to name a
// writer. When some key starts at a value other than 0 (the format's initial value), the
// initial state is written as a first session of one transaction writing every key once, as
// PolySI's converter does, if the reader would take it back for the initial state
// ([HoldsInitial]); otherwise the initial state is not written. When the first session
// would read back as such an initial session without being one (one transaction writing
// every key once, nobody reading 0), an empty session is written before it. format.Losses
// says, before writing, what a history would lose.
func Write(w io.Writer, h *history.History) error { return WriteHeader(w, h, HeaderOf(h)) }

// WriteHeader is [Write] with the header hd: a header [ReadHeader] read from the file h was
// read from writes that file again byte for byte.
func WriteHeader(w io.Writer, h *history.History, hd Header) error {
	l, err := layOut(h)
	if err != nil {
		return err
	}
	e := encoder{h: h, bw: bufio.NewWriterSize(w, 1<<16)}
	e.header(hd)
	e.write(l.sessions)
	if e.err != nil {
		return e.err
	}
	return e.bw.Flush()
}

// HeaderOf returns the header [Write] gives h: id 0, the number of sessions written (with
// the initial one, if written), the number of keys, the most transactions of a session, the
// most operations of a transaction, info "isovet" and [Epoch] as both dates.
func HeaderOf(h *history.History) Header {
	hd := Header{Info: "isovet", Start: Epoch, End: Epoch}
	l, err := layOut(h)
	if err != nil {
		return hd // Write refuses h
	}
	hd.Nodes = uint64(l.nsess)
	if len(l.init) > 0 {
		hd.TxnsPerNode, hd.EventsPerTxn = 1, uint64(len(l.init))
	}
	hd.Variables = uint64(len(usedKeys(h)))
	for _, s := range h.Sessions {
		hd.TxnsPerNode = max(hd.TxnsPerNode, uint64(len(s.Txns)))
	}
	for _, t := range h.Txns {
		hd.EventsPerTxn = max(hd.EventsPerTxn, uint64(len(t.Ops)))
	}
	return hd
}

// layout is the encoded sessions of a history and how they were laid out.
type layout struct {
	sessions []byte        // the sessions vector, its length first
	nsess    int           // its length
	init     []history.Key // the keys of the initial session (nil: none)
	// padded says an empty session comes first: the first session of h would otherwise
	// read back as the initial state (see the package documentation), which it is not.
	padded bool
}

// layOut encodes h's sessions, with the initial session when it writes one, and an empty
// session first when the reader would take h's first session for the initial state.
func layOut(h *history.History) (layout, error) {
	e := encoder{h: h}
	if err := e.check(); err != nil {
		return layout{}, err
	}
	l := layout{init: initialKeys(h)}
	var body bytes.Buffer
	e.bw = bufio.NewWriter(&body)
	if len(l.init) > 0 {
		e.initial(l.init)
	}
	for _, s := range h.Sessions {
		e.u64(uint64(len(s.Txns)))
		for _, t := range s.Txns {
			e.txn(h.Txn(t))
		}
	}
	if err := e.bw.Flush(); err != nil {
		return layout{}, err
	}
	l.nsess = len(h.Sessions) + min(len(l.init), 1)
	taken := initialSession(body.Bytes(), l.nsess) != nil
	switch {
	case taken && len(l.init) == 0:
		l.padded = true
		l.nsess++
	case !taken && len(l.init) > 0:
		return layout{}, fmt.Errorf("dbcop: the initial session written would not read back as the initial state (a bug)")
	}
	var out bytes.Buffer
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(l.nsess))
	out.Write(n[:])
	if l.padded {
		out.Write(make([]byte, 8)) // an empty session: no transactions
	}
	out.Write(body.Bytes())
	l.sessions = out.Bytes()
	return l, nil
}

// HoldsInitial reports whether [Write] keeps h's initial state: every key h's operations
// use (or that has an initial value of its own) starts at 0 (the format's initial value), or the initial values can be written as a
// first session the reader takes for the initial state (see the package documentation:
// every value an integer, at least one other session, no write of a key's initial value and
// no read of 0).
func HoldsInitial(h *history.History) bool {
	return !needsInitial(h) || initialWritable(h)
}

// initialKeys returns the keys of the initial session Write writes, in key order, or nil
// when it writes none.
func initialKeys(h *history.History) []history.Key {
	if !needsInitial(h) || !initialWritable(h) {
		return nil
	}
	return usedKeys(h)
}

// usedKeys returns, in key order, the keys of h's operations and those with an initial value
// of their own (a history read from a file with an initial session has one for each key it
// wrote, used elsewhere or not).
func usedKeys(h *history.History) []history.Key {
	used := make([]bool, len(h.Keys))
	for _, t := range h.Txns {
		for _, o := range t.Ops {
			if o.Kind != history.OpPredRead && o.Kind != history.OpPredWrite { // these have no key
				used[o.Key] = true
			}
		}
	}
	for k := range h.InitialByKey {
		used[k] = true
	}
	var ks []history.Key
	for k, u := range used {
		if u {
			ks = append(ks, history.Key(k))
		}
	}
	return ks
}

// needsInitial reports whether some key starts at a value other than 0 (see usedKeys).
func needsInitial(h *history.History) bool {
	for _, k := range usedKeys(h) {
		if h.Value(h.InitialValue(k)) != history.Int(0) {
			return true
		}
	}
	return false
}

// initialWritable reports whether an initial session writing every used key's initial
// value would be read back as the initial state: the values are integers, another session
// follows, no operation writes a key's initial value and none reads 0.
func initialWritable(h *history.History) bool {
	if len(h.Sessions) == 0 {
		return false
	}
	for _, k := range usedKeys(h) {
		if _, ok := h.Value(h.InitialValue(k)).Int(); !ok {
			return false
		}
	}
	for _, t := range h.Txns {
		for _, o := range t.Ops {
			switch {
			case o.Kind == history.OpWrite && o.Value == h.InitialValue(o.Key),
				o.Kind == history.OpRead && h.Value(o.Value) == history.Int(0):
				return false
			}
		}
	}
	return true
}

// encoder writes bincode, keeping the first error.
type encoder struct {
	h   *history.History
	bw  *bufio.Writer
	buf [eventSize]byte
	err error
}

// check refuses what the format cannot hold before anything is written.
func (e *encoder) check() error {
	h := e.h
	in := make([]bool, len(h.Txns))
	for _, s := range h.Sessions {
		for _, t := range s.Txns {
			in[t] = true
		}
	}
	for id, t := range h.All() {
		if !in[id] {
			return fmt.Errorf("%w: txn %s is in no session", ErrUnrepresentable, h.Name(id))
		}
		if t.Outcome == history.OutcomeUnknown {
			return fmt.Errorf("%w: txn %s has an unknown outcome (dbcop has committed and aborted transactions only)", ErrUnrepresentable, h.Name(id))
		}
		for i, o := range t.Ops {
			if err := checkOp(h, id, i, o); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkOp refuses op i of transaction id unless it is an item read or write of integers.
func checkOp(h *history.History, id history.TxnID, i int, o history.Op) error {
	if o.Kind != history.OpRead && o.Kind != history.OpWrite {
		return fmt.Errorf("%w: txn %s op %d is a %v (dbcop has reads and writes)", ErrUnrepresentable, h.Name(id), i, o.Kind)
	}
	_, ok1 := h.Key(o.Key).Int()
	_, ok2 := h.Value(o.Value).Int()
	if !ok1 || !ok2 {
		return fmt.Errorf("%w: txn %s op %d: key %s and value %s must be integers", ErrUnrepresentable, h.Name(id), i, history.ShowValue(h.Key(o.Key)), history.ShowValue(h.Value(o.Value)))
	}
	return nil
}

func (e *encoder) write(p []byte) {
	if e.err == nil {
		_, e.err = e.bw.Write(p)
	}
}

func (e *encoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.buf[:8], v)
	e.write(e.buf[:8])
}

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	if e.err == nil {
		_, e.err = e.bw.WriteString(s)
	}
}

func (e *encoder) header(hd Header) {
	for _, v := range []uint64{hd.ID, hd.Nodes, hd.Variables, hd.TxnsPerNode, hd.EventsPerTxn} {
		e.u64(v)
	}
	e.str(hd.Info)
	e.str(hd.Start)
	e.str(hd.End)
}

// initial writes the initial session: one committed transaction writing each key of ks
// its initial value.
func (e *encoder) initial(ks []history.Key) {
	e.u64(1)
	e.u64(uint64(len(ks)))
	for _, k := range ks {
		key, _ := e.h.Key(k).Int()
		v, _ := e.h.Value(e.h.InitialValue(k)).Int()
		e.event(true, key, v, true)
	}
	e.write([]byte{1})
}

// txn writes one transaction (check has refused what cannot be written).
func (e *encoder) txn(t *history.Txn) {
	e.u64(uint64(len(t.Ops)))
	for _, o := range t.Ops {
		k, _ := e.h.Key(o.Key).Int()
		v, _ := e.h.Value(o.Value).Int()
		e.event(o.Kind == history.OpWrite, k, v, !o.Failed())
	}
	e.write([]byte{boolByte(t.Outcome == history.OutcomeCommitted)})
}

// event writes one event: write flag, variable, value, success flag.
func (e *encoder) event(write bool, k, v int64, ok bool) {
	p := e.buf[:]
	p[0] = boolByte(write)
	binary.LittleEndian.PutUint64(p[1:], uint64(k))
	binary.LittleEndian.PutUint64(p[9:], uint64(v))
	p[17] = boolByte(ok)
	e.write(p)
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}
