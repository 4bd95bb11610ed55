package cobra

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/isovet/isovet/history"
)

// ErrUnrepresentable is wrapped by [WriteDir] when a history holds what Cobra logs cannot.
var ErrUnrepresentable = errors.New("cobra: cannot write")

// InitialLog is the file in which [WriteDir] writes the initial state when reads alone do
// not carry it: transaction -1 writing each key once, as PolySI's converter writes it.
const InitialLog = "T-1.log"

// initialTxn is the id of the transaction in [InitialLog].
const initialTxn = -1

// reserved reports whether id is one of the ids the format gives a meaning.
func reserved(id int64) bool {
	return id == InitID || id == NullID || id == UniversalID || id == initialTxn
}

// WriteDir writes h as a directory of Cobra logs, calling create for each file (T<n>.log)
// and writing it, in the layout the package documentation gives, to the writer create
// returns.
//
// Each session with transactions becomes T<n>.log, n its source id when the sessions'
// ids are distinct integers (other than -1), else its position; each transaction keeps
// its source id when those are distinct integers other than the format's reserved ids,
// else is numbered by position. Every write gets a write id: its value when the written
// values are distinct and none is a reserved id (PolySI's converter does so), else a count
// from 1. Every read names its writer: the one its source names, or the one value matching
// finds alone (the transaction's own last write of the key, or the only write of the value
// by another transaction, or the initial state); a read whose value several writers wrote
// is written with [UniversalID], which the reader matches by value, as VeriStrong's logs
// do. A read of the initial state names INIT; a read that found nothing names NULL.
// When some key's initial value is not carried by a read of it (Cobra's own convention),
// every initial value is written in [InitialLog] and reads of the initial state name it.
// A session's transactions carry timestamps on 'S' and 'C' when all have a client
// interval. Placeholder transactions ([history.PlaceholderSession]) are not written: reads
// name them as the original logs did, and the reader makes them again.
//
// Anything else the format cannot hold is an error wrapping [ErrUnrepresentable], before
// create is called: an outcome other than committed (Cobra logs committed transactions
// only), an operation other than an item read or write, a failed operation, a key or value
// that is not an integer, a session with and without client intervals. format.Losses says,
// before writing, what a history would lose.
func WriteDir(h *history.History, create func(name string) (io.Writer, error)) error {
	p, err := newPlan(h)
	if err != nil {
		return err
	}
	if len(p.initKeys) > 0 {
		if err := p.file(create, InitialLog, p.writeInitial); err != nil {
			return err
		}
	}
	for _, s := range p.sessions {
		name := "T" + strconv.FormatInt(p.sessNum[s], 10) + ".log"
		if err := p.file(create, name, func(e *recorder) { p.writeSession(e, s) }); err != nil {
			return err
		}
	}
	return nil
}

// plan is what WriteDir decided before writing: ids, sources and the initial state.
type plan struct {
	h        *history.History
	sessions []history.SessionID // the sessions written, in order
	sessNum  []int64             // per session: n of T<n>.log
	timed    []bool              // per session: its records carry timestamps
	txnID    []int64             // per transaction
	opBase   []int32             // per transaction: its ops' index in wid and srcs
	wid      []int64             // per op: write id (writes only)
	srcs     []target            // per op: what a read names (reads only)
	initKeys []history.Key       // the keys of InitialLog, in key order (nil: none)
	initWid  map[history.Key]int64
	ph       []bool // per transaction: a placeholder
}

// target is what a read names: a write op of a transaction, the initial state, nothing
// (NULL), or no writer (matched by value).
type target struct {
	kind history.SrcKind // SrcTxn, SrcInit, SrcNone, or SrcByValue
	txn  history.TxnID
	op   int32
}

func newPlan(h *history.History) (*plan, error) {
	p := &plan{h: h, ph: placeholders(h)}
	if err := p.check(); err != nil {
		return nil, err
	}
	p.numberSessions()
	p.numberTxns()
	if err := p.resolve(); err != nil {
		return nil, err
	}
	if err := p.planInitial(); err != nil {
		return nil, err
	}
	p.numberWrites()
	return p, p.checkTimes()
}

// check refuses outcomes, operations and data the format cannot hold.
func (p *plan) check() error {
	h := p.h
	for id, t := range h.All() {
		switch {
		case p.ph[id]:
			if t.Outcome != history.OutcomeAborted {
				return fmt.Errorf("%w: placeholder txn %s is %v", ErrUnrepresentable, h.Name(id), t.Outcome)
			}
		case t.Outcome != history.OutcomeCommitted:
			return fmt.Errorf("%w: txn %s is %v (Cobra logs hold committed transactions only)", ErrUnrepresentable, h.Name(id), t.Outcome)
		}
		for i, o := range t.Ops {
			if err := p.checkOp(id, i, o); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkOp refuses op i of transaction id unless Cobra can log it.
func (p *plan) checkOp(id history.TxnID, i int, o history.Op) error {
	h := p.h
	switch {
	case o.Kind != history.OpRead && o.Kind != history.OpWrite, p.ph[id] && o.Kind != history.OpWrite:
		return fmt.Errorf("%w: txn %s op %d is a %v (Cobra logs reads and writes)", ErrUnrepresentable, h.Name(id), i, o.Kind)
	case o.Failed():
		return fmt.Errorf("%w: txn %s op %d is marked failed (Cobra logs have no such flag)", ErrUnrepresentable, h.Name(id), i)
	case !isInt(h.Key(o.Key)):
		return fmt.Errorf("%w: txn %s op %d: key %s is not an integer", ErrUnrepresentable, h.Name(id), i, history.ShowValue(h.Key(o.Key)))
	case o.Src.Kind == history.SrcNone:
		if o.Value != history.Nil {
			return fmt.Errorf("%w: txn %s op %d found nothing, yet reads %s", ErrUnrepresentable, h.Name(id), i, history.ShowValue(h.Value(o.Value)))
		}
	case !isInt(h.Value(o.Value)):
		return fmt.Errorf("%w: txn %s op %d: value %s is not an integer", ErrUnrepresentable, h.Name(id), i, history.ShowValue(h.Value(o.Value)))
	}
	return nil
}

func isInt(d history.Datum) bool { _, ok := d.Int(); return ok }

func intOf(d history.Datum) int64 { v, _ := d.Int(); return v }

// numberSessions picks the sessions to write and their file numbers.
func (p *plan) numberSessions() {
	h := p.h
	p.sessNum = make([]int64, len(h.Sessions))
	p.timed = make([]bool, len(h.Sessions))
	own := true
	seen := make(map[int64]bool)
	for _, s := range h.Sessions {
		if len(s.Txns) == 0 || p.ph[s.Txns[0]] {
			continue
		}
		p.sessions = append(p.sessions, s.ID)
		n, ok := s.Source.Int()
		own = own && ok && n != initialTxn && !seen[n]
		seen[n] = true
		p.sessNum[s.ID] = n
		p.timed[s.ID] = h.Txn(s.Txns[0]).HasTime
	}
	if !own {
		for i, s := range p.sessions {
			p.sessNum[s] = int64(i)
		}
	}
	// In the order the reader reads the files: by number.
	slices.SortStableFunc(p.sessions, func(a, b history.SessionID) int { return cmp.Compare(p.sessNum[a], p.sessNum[b]) })
}

// numberTxns gives every transaction its id in the logs.
func (p *plan) numberTxns() {
	h := p.h
	p.txnID = make([]int64, len(h.Txns))
	seen := make(map[int64]bool, len(h.Txns))
	for id, t := range h.All() {
		n, ok := t.Source.Int()
		if !ok || reserved(n) || seen[n] {
			for i := range p.txnID {
				p.txnID[i] = int64(i)
			}
			return
		}
		seen[n] = true
		p.txnID[id] = n
	}
}

// resolve decides what each read names.
func (p *plan) resolve() error {
	h := p.h
	p.opBase = make([]int32, len(h.Txns)+1)
	for id, t := range h.All() {
		p.opBase[id+1] = p.opBase[id] + int32(len(t.Ops))
	}
	p.srcs = make([]target, p.opBase[len(h.Txns)])
	m := newMatcher(h)
	for id, t := range h.All() {
		for i, o := range t.Ops {
			if o.Kind != history.OpRead {
				continue
			}
			tg, err := p.named(id, i, o)
			if err != nil {
				return err
			}
			if tg.kind == history.SrcByValue {
				tg = m.match(id, t, i)
			}
			p.srcs[p.opBase[id]+int32(i)] = tg
		}
	}
	return nil
}

// named returns the target of read o (op i of transaction id) that its source names, or
// a by-value target when it names none.
func (p *plan) named(id history.TxnID, i int, o history.Op) (target, error) {
	h := p.h
	if o.Src.Kind != history.SrcTxn {
		return target{kind: o.Src.Kind}, nil
	}
	w := o.Src.Txn
	if int(w) >= len(h.Txns) || int(o.Src.Op) >= len(h.Txn(w).Ops) {
		return target{}, fmt.Errorf("%w: txn %s op %d names a write that is not in the history", ErrUnrepresentable, h.Name(id), i)
	}
	if wo := h.Txn(w).Ops[o.Src.Op]; wo.Kind != history.OpWrite || wo.Key != o.Key {
		return target{}, fmt.Errorf("%w: txn %s op %d names op %d of txn %s, which does not write its key (Cobra's reader checks it)", ErrUnrepresentable, h.Name(id), i, o.Src.Op, h.Name(w))
	}
	return target{kind: history.SrcTxn, txn: w, op: o.Src.Op}, nil
}

// planInitial decides where the initial state goes: in reads alone (Cobra's convention)
// when each key that has an initial value is read at that value from the initial state,
// else in InitialLog.
func (p *plan) planInitial() error {
	h := p.h
	carried := make(map[history.Key]bool)
	for id, t := range h.All() {
		for i, o := range t.Ops {
			if o.Kind == history.OpRead && p.srcs[p.opBase[id]+int32(i)].kind == history.SrcInit && o.Value == h.InitialValue(o.Key) {
				carried[o.Key] = true
			}
		}
	}
	var keys []history.Key
	need := false
	for _, k := range usedKeys(h) {
		v := h.Value(h.InitialValue(k))
		if v.IsNil() {
			continue
		}
		if !isInt(v) {
			return fmt.Errorf("%w: key %s starts at %s, not an integer", ErrUnrepresentable, history.ShowValue(h.Key(k)), history.ShowValue(v))
		}
		keys = append(keys, k)
		need = need || !carried[k]
	}
	if need {
		p.initKeys = keys
	}
	return nil
}

// usedKeys returns the keys of h's operations, in key order.
func usedKeys(h *history.History) []history.Key {
	used := make([]bool, len(h.Keys))
	for _, t := range h.Txns {
		for _, o := range t.Ops {
			if o.Kind != history.OpPredRead && o.Kind != history.OpPredWrite { // these have no key
				used[o.Key] = true
			}
		}
	}
	var ks []history.Key
	for k, u := range used {
		if u {
			ks = append(ks, history.Key(k))
		}
	}
	return ks
}

// numberWrites gives every write, and every write of InitialLog, its write id.
func (p *plan) numberWrites() {
	h := p.h
	p.wid = make([]int64, len(p.srcs))
	p.initWid = make(map[history.Key]int64, len(p.initKeys))
	byValue := true
	seen := make(map[int64]bool)
	use := func(v int64) {
		byValue = byValue && !reserved(v) && !seen[v]
		seen[v] = true
	}
	for _, k := range p.initKeys {
		use(intOf(h.Value(h.InitialValue(k))))
	}
	for _, t := range h.Txns {
		for _, o := range t.Ops {
			if o.Kind == history.OpWrite {
				use(intOf(h.Value(o.Value)))
			}
		}
	}
	next := int64(0)
	id := func(v history.Value) int64 {
		if byValue {
			return intOf(h.Value(v))
		}
		next++
		return next
	}
	for _, k := range p.initKeys {
		p.initWid[k] = id(h.InitialValue(k))
	}
	// Counted in the order of the files (placeholders, in no file, last), so that writing
	// what was read back numbers the writes the same way.
	for _, tid := range p.fileOrder() {
		for i, o := range h.Txn(tid).Ops {
			if o.Kind == history.OpWrite {
				p.wid[p.opBase[tid]+int32(i)] = id(o.Value)
			}
		}
	}
}

// fileOrder returns the transactions in the order of the files and then the placeholders.
func (p *plan) fileOrder() []history.TxnID {
	order := make([]history.TxnID, 0, len(p.h.Txns))
	for _, s := range p.sessions {
		order = append(order, p.h.Sessions[s].Txns...)
	}
	return append(order, p.h.Placeholders()...)
}

// checkTimes refuses a session whose transactions do not all have, or all lack, a client
// interval, and a first timestamp whose high byte the reader would take for a record tag.
func (p *plan) checkTimes() error {
	h := p.h
	for _, s := range p.sessions {
		for _, t := range h.Sessions[s].Txns {
			if h.Txn(t).HasTime != p.timed[s] {
				return fmt.Errorf("%w: session %s has transactions with and without a client interval (a Cobra log has timestamps on every transaction or on none)", ErrUnrepresentable, history.ShowValue(h.Sessions[s].Source))
			}
		}
		if p.timed[s] {
			first := h.Txn(h.Sessions[s].Txns[0])
			switch byte(uint64(first.Time.Begin) >> 56) {
			case 'S', 'W', 'R', 'C':
				return fmt.Errorf("%w: txn %s begins at %d, whose first byte Cobra's reader would take for a record tag", ErrUnrepresentable, h.Name(first.ID), first.Time.Begin)
			}
		}
	}
	return nil
}

// recorder writes big-endian records, keeping the first error.
type recorder struct {
	bw  *bufio.Writer
	buf [1 + 4*8]byte
	err error
}

// record writes a record: its tag, then each field as a big-endian 64-bit integer.
func (e *recorder) record(tag byte, fields ...int64) {
	e.buf[0] = tag
	n := 1
	for _, f := range fields {
		binary.BigEndian.PutUint64(e.buf[n:], uint64(f))
		n += 8
	}
	if e.err == nil {
		_, e.err = e.bw.Write(e.buf[:n])
	}
}

// file creates the file name and writes it through write.
func (p *plan) file(create func(string) (io.Writer, error), name string, write func(*recorder)) error {
	w, err := create(name)
	if err != nil {
		return err
	}
	e := &recorder{bw: bufio.NewWriterSize(w, 1<<16)}
	write(e)
	if e.err != nil {
		return fmt.Errorf("writing %s: %w", name, e.err)
	}
	if err := e.bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

func (p *plan) writeInitial(e *recorder) {
	h := p.h
	e.record('S', initialTxn)
	for _, k := range p.initKeys {
		e.record('W', p.initWid[k], intOf(h.Key(k)), intOf(h.Value(h.InitialValue(k))))
	}
	e.record('C', initialTxn)
}

func (p *plan) writeSession(e *recorder, s history.SessionID) {
	h := p.h
	for _, id := range h.Sessions[s].Txns {
		t := h.Txn(id)
		p.startCommit(e, 'S', t, t.Time.Begin)
		for i, o := range t.Ops {
			at := p.opBase[id] + int32(i)
			k, v := intOf(h.Key(o.Key)), intOf(h.Value(o.Value))
			if o.Kind == history.OpWrite {
				e.record('W', p.wid[at], k, v)
				continue
			}
			writer, wid := p.names(p.srcs[at], o)
			e.record('R', writer, wid, k, v)
		}
		p.startCommit(e, 'C', t, t.Time.End)
	}
}

// startCommit writes t's 'S' or 'C' record, with the timestamp ts in a timed session.
func (p *plan) startCommit(e *recorder, tag byte, t *history.Txn, ts int64) {
	if p.timed[t.Session] {
		e.record(tag, p.txnID[t.ID], ts)
		return
	}
	e.record(tag, p.txnID[t.ID])
}

// names returns the writer transaction id and write id read o, with target tg, names.
func (p *plan) names(tg target, o history.Op) (writer, wid int64) {
	switch tg.kind {
	case history.SrcTxn:
		return p.txnID[tg.txn], p.wid[p.opBase[tg.txn]+tg.op]
	case history.SrcNone:
		return NullID, NullID
	case history.SrcInit:
		if w, ok := p.initWid[o.Key]; ok {
			return initialTxn, w
		}
		if o.Value == p.h.InitialValue(o.Key) {
			return InitID, InitID
		}
		// A read of the initial state at another value than the key's: INIT with a
		// write id that does not set the key's initial value when read.
		return InitID, NullID
	}
	return UniversalID, UniversalID
}

// matcher finds the writer value matching finds alone for a read that names none.
type matcher struct {
	h      *history.History
	ph     []bool
	writes map[kv][]wop // every write op of each key and value
}

type kv struct {
	k history.Key
	v history.Value
}

// wop is a write op: op of transaction t.
type wop struct {
	t  history.TxnID
	op int32
}

func newMatcher(h *history.History) *matcher {
	m := &matcher{h: h, ph: placeholders(h), writes: make(map[kv][]wop)}
	for id, t := range h.All() {
		for i, o := range t.Ops {
			if o.Kind == history.OpWrite {
				m.writes[kv{o.Key, o.Value}] = append(m.writes[kv{o.Key, o.Value}], wop{id, int32(i)})
			}
		}
	}
	return m
}

// match returns the target of read i of transaction t (id), which names no writer: after
// the transaction's own write of the key, that write if it wrote the value read; else the
// only write of the value by another transaction, if it is that transaction's last write
// of the key and the transaction committed, or the initial state when it holds the value
// and nobody else wrote it. Anything else is matched by value.
func (m *matcher) match(id history.TxnID, t *history.Txn, i int) target {
	o := t.Ops[i]
	for j := i - 1; j >= 0; j-- {
		if w := t.Ops[j]; w.Kind == history.OpWrite && w.Key == o.Key {
			if w.Value == o.Value {
				return target{kind: history.SrcTxn, txn: id, op: int32(j)}
			}
			return target{kind: history.SrcByValue}
		}
	}
	ws := m.writes[kv{o.Key, o.Value}]
	own := 0 // the transaction's own (later) writes of the value
	for _, w := range t.Ops[i+1:] {
		if w.Kind == history.OpWrite && w.Key == o.Key && w.Value == o.Value {
			own++
		}
	}
	init := m.h.InitialValue(o.Key) == o.Value
	switch others := len(ws) - own; {
	case others == 0 && init:
		return target{kind: history.SrcInit}
	case others == 1 && !init:
		if w := otherThan(ws, id); !m.ph[w.t] && m.last(w) {
			return target{kind: history.SrcTxn, txn: w.t, op: w.op}
		}
	}
	return target{kind: history.SrcByValue}
}

// otherThan returns the first write of ws not by transaction id (there is one).
func otherThan(ws []wop, id history.TxnID) wop {
	for _, w := range ws {
		if w.t != id {
			return w
		}
	}
	return wop{}
}

// last reports whether w is its transaction's last write of its key.
func (m *matcher) last(w wop) bool {
	ops := m.h.Txn(w.t).Ops
	k := ops[w.op].Key
	for _, o := range ops[w.op+1:] {
		if o.Kind == history.OpWrite && o.Key == k {
			return false
		}
	}
	return true
}
