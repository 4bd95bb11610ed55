// Package cobra reads and writes ([WriteDir]) Cobra binary client logs (Tan et al.,
// OSDI'20; DBCobra/CobraLogs).
//
// A Cobra history is a directory of T<n>.log files, one per client session. Each file is a
// sequence of big-endian records written by Java's DataOutputStream:
//
//	'S' txnId:i64 [ts:i64]                          transaction start
//	'W' writeId:i64 keyHash:i64 valHash:i64          write
//	'R' writerTxnId:i64 writeId:i64 keyHash:i64 valHash:i64   read, naming its writer
//	'C' txnId:i64 [ts:i64]                          commit
//
// The optional timestamps are all present or all absent in a file; the decoder tries both
// layouts and keeps the one that parses (without timestamps when both do). Aborted
// transactions are not logged; a transaction with no 'C' before the next 'S' has an unknown
// outcome. Cobra's client library buffers a transaction and appends it to the log, its 'C'
// last, only after the commit, so a log that ends between an 'S' and its 'C' was cut: it is
// an error ([parse.ErrTruncated]), as is one that ends inside a record.
//
// # One log per client
//
// Two files of one history that hold the same client are refused ([parse.ErrDuplicate]),
// naming both: the same n (T20.log and T020.log), or the same transaction id in two files
// (Cobra's ids are unique across a history's logs; every published history keeps them so).
// Reading both would merge a client with itself and turn its transactions into anomalies
// with themselves.
//
// # Mapping to the model
//
//   - Each file is a session whose source id is n for T<n>.log (the file name otherwise).
//   - Transactions keep their txnId as source id; keys and values are the 64-bit hashes,
//     as integers.
//   - A read naming writer [InitID] reads the initial state (Src = SrcInit); the value read
//     becomes that key's initial value. A read naming [NullID] found nothing (SrcNone, value
//     nil).
//   - A log that holds one committed transaction of writes only, each key once, whose id is
//     [InitID] (Cobra's INIT writer, logged) or -1 in T-1.log (PolySI's converter writes its
//     loader's initial transaction so; Plume's Cobra fixtures carry one), is the initial
//     state, not a transaction: its writes set their keys' initial values, reads naming them
//     read the initial state (SrcInit), no session is made for it, and the history's notes
//     say so. Anything else in such a file is read as it stands.
//   - A read naming a writer transaction and write id is resolved, once every file is read,
//     to that write (SrcTxn). Resolution checks that the write id belongs to the named
//     transaction and writes the same key.
//   - Later tools (VeriStrong's "cobra" history type) log one fixed id, [UniversalID], as the
//     writer of every read and the id of every write, and expect reads to be matched by
//     value. Such reads keep SrcByValue.
//   - A read naming a transaction that no file holds (cock-blog has 8 such reads) gets,
//     unless [Decoder.Strict] is set, a placeholder writer: a transaction with that source id,
//     in a session named "missing-writers", holding the writes the reads name. Cobra's
//     contract is that every client logs each transaction it committed and nothing else (there
//     is no abort record), so a transaction in no log did not commit: the placeholder is
//     aborted, and the checkers report the reads as aborted reads (G1a). If log files were
//     lost, that finding is the place to look; Strict makes it an error instead.
package cobra

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/parse"
)

// Magic writer and write ids.
const (
	InitID      int64 = 0xbebeebee // the initial state wrote it
	NullID      int64 = 0xdeadbeef // the read found no value
	UniversalID int64 = 0xabddefee // no writer given: match by value (VeriStrong)
)

const formatName = "cobra"

// ErrUnknownWriter is wrapped when a read names a writer that is not in the history.
var ErrUnknownWriter = errors.New("cobra: read names a writer that is not in the history")

// Decoder decodes the files of one Cobra history. The zero value is ready to use. A Decoder
// is not safe for concurrent use.
type Decoder struct {
	// Strict makes a read naming a transaction absent from every file an error instead of
	// giving it a placeholder writer.
	Strict bool

	txns    history.IntIndex // txnId -> txn; dupTxn marks ids seen twice
	writes  history.IntIndex // writeId -> index into wrefs
	wrefs   []wref
	pending []pendingRead
	initSet []bool // per Key: its initial value is set

	clients  map[history.Datum]string     // client (session source id) -> the file holding its log
	files    map[history.SessionID]string // session -> its file
	dupFirst map[int64]history.TxnID      // txnId marked dupTxn -> its first transaction
	_        struct{}
}

type wref struct {
	t    history.TxnID
	op   int32
	dup  bool
	init bool // a write of the initial state: op holds its key, t is unused
}

// initTxn marks, in Decoder.txns, the id of a transaction read as the initial state.
const initTxn = 1<<31 - 3

type pendingRead struct {
	t        history.TxnID
	op       int32
	writer   int64
	writeID  int64
	file     string
	off      int64
	key, val int64
}

// dupTxn marks, in Decoder.txns, a txnId that more than one transaction has.
const dupTxn = 1<<31 - 2

// NewDecoder returns a decoder with default options.
func NewDecoder() *Decoder { return &Decoder{} }

// write returns the write with id wid.
func (d *Decoder) write(wid int64) (wref, bool) {
	if i, ok := d.writes.Get(wid); ok {
		return d.wrefs[i], true
	}
	return wref{}, false
}

func (d *Decoder) addWrite(wid int64, w wref) {
	d.writes.Set(wid, int32(len(d.wrefs)))
	d.wrefs = parse.Push(d.wrefs, w)
}

// logWrite records write w with id wid, marking the id dup when another write has it.
func (d *Decoder) logWrite(wid int64, w wref) {
	if i, ok := d.writes.Get(wid); ok {
		d.wrefs[i].dup = true
	} else {
		d.addWrite(wid, w)
	}
}

// logTxn records transaction id as t, marking the id dupTxn when another has it.
func (d *Decoder) logTxn(id int64, t int32) {
	if _, ok := d.txns.Get(id); ok {
		d.txns.Set(id, dupTxn)
	} else {
		d.txns.Set(id, t)
	}
}

// growInitSet makes initSet cover key k.
func (d *Decoder) growInitSet(k history.Key) {
	if int(k) >= len(d.initSet) {
		d.initSet = append(d.initSet, make([]bool, int(k)+1-len(d.initSet))...)
	}
}

// record sizes after the tag byte
const (
	sizeSC = 8
	sizeTS = 8
	sizeW  = 24
	sizeR  = 32
)

// startCommitSize returns the size of an 'S' or 'C' record after its tag in a layout with
// or without timestamps.
func startCommitSize(ts bool) int {
	if ts {
		return sizeSC + sizeTS
	}
	return sizeSC
}

// Sniff reports whether head (the first bytes of a member file) looks like a Cobra log: it
// starts with an 'S' record followed by at least one more record, and its records parse, in
// one of the two layouts, up to the end of head.
func Sniff(name string, head []byte) bool {
	if len(head) < 2+sizeSC || head[0] != 'S' {
		return false
	}
	return parsesHead(head, false) || parsesHead(head, true)
}

// parsesHead reports whether head parses in the layout with or without timestamps (ts), up
// to its end, past the first 'S' record and the tag of the next.
func parsesHead(head []byte, ts bool) bool {
	off, err := scan(head, ts)
	if err != nil && !errors.Is(err, parse.ErrTruncated) {
		return false
	}
	return off >= 1+sizeSC+sizeTS || (off >= 1+sizeSC && !ts)
}

// layout guesses whether data carries timestamps from the byte after the first 'S' record's
// id: a record tag there means no timestamps (a timestamp's high byte is never a tag).
func layout(data []byte) bool {
	if len(data) <= 1+sizeSC {
		return false
	}
	switch data[1+sizeSC] {
	case 'S', 'W', 'R', 'C':
		return false
	}
	return true
}

// scan checks the record structure of data in one layout. It returns the offset and cause
// of the first problem.
func scan(data []byte, ts bool) (int64, error) {
	sc := startCommitSize(ts)
	open := false
	var cur, start int64
	for i := 0; i < len(data); {
		tag := data[i]
		var n int
		switch tag {
		case 'S':
			n = sc
		case 'C':
			n = sc
		case 'W':
			n = sizeW
		case 'R':
			n = sizeR
		default:
			return int64(i), fmt.Errorf("expected a record tag 'S', 'W', 'R' or 'C', found byte 0x%02x", tag)
		}
		if len(data)-i-1 < n {
			return int64(i), fmt.Errorf("%w: '%c' record needs %d bytes after its tag, %d left", parse.ErrTruncated, tag, n, len(data)-i-1)
		}
		id := int64(binary.BigEndian.Uint64(data[i+1:]))
		switch tag {
		case 'S':
			open, cur = true, id
			if ts {
				start = int64(binary.BigEndian.Uint64(data[i+9:]))
			}
		case 'C':
			if !open {
				return int64(i), fmt.Errorf("expected 'S' before 'C' of txn %d", id)
			}
			if id != cur {
				return int64(i), fmt.Errorf("expected 'C' of txn %d, found 'C' of txn %d", cur, id)
			}
			if ts {
				if end := int64(binary.BigEndian.Uint64(data[i+9:])); end < start {
					return int64(i), fmt.Errorf("expected txn %d to commit (timestamp %d) no earlier than it started (%d)", id, end, start)
				}
			}
			open = false
		default:
			if !open {
				return int64(i), fmt.Errorf("expected 'S' before '%c' record", tag)
			}
		}
		i += 1 + n
	}
	return int64(len(data)), nil
}

// Decode reads one client log. A log whose client another file already holds (T20.log and
// T020.log), or which holds a transaction id another file holds, is refused
// ([parse.ErrDuplicate]), as is a log that ends inside a transaction ([parse.ErrTruncated]).
func (d *Decoder) Decode(r io.Reader, name string, b *history.Builder) error {
	if err := d.claim(name); err != nil {
		return err
	}
	data, err := parse.ReadAll(r)
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	ts, err := checkLayout(data, name)
	if err != nil {
		return err
	}
	if id, ok := initialLog(data, ts, name); ok {
		d.initial(data, ts, id, name, b)
		return nil
	}
	return d.emit(data, ts, name, b)
}

// claim records that file name holds the log of its client, refusing a second file for the
// same client.
func (d *Decoder) claim(name string) error {
	client := sessionID(name)
	if other, ok := d.clients[client]; ok {
		return parse.Errorf(formatName, name, 0, 0, 0, "%w: %s and %s both hold the log of client %v (a copy?): a Cobra history holds one T<n>.log per client", parse.ErrDuplicate, other, name, client)
	}
	if d.clients == nil {
		d.clients, d.files = make(map[history.Datum]string), make(map[history.SessionID]string)
	}
	d.clients[client] = name
	return nil
}

// checkLayout returns whether data, the log named name, carries timestamps: the layout
// [layout] guesses if its records parse so, else the other one. When neither does, the
// error is that of the guessed layout.
func checkLayout(data []byte, name string) (ts bool, err error) {
	ts = layout(data)
	off, err := scan(data, ts)
	if err == nil {
		return ts, nil
	}
	if _, err2 := scan(data, !ts); err2 == nil {
		return !ts, nil
	}
	if ts {
		err = fmt.Errorf("%w (reading with timestamps on 'S' and 'C')", err)
	}
	return ts, parse.Errorf(formatName, name, 0, 0, off, "%w", err)
}

// initialLog reports whether data, which scan accepted, is a log of the initial state: one
// committed transaction, with id InitID, or -1 in T-1.log, that holds only writes, each key
// once. It returns the transaction's id.
func initialLog(data []byte, ts bool, name string) (int64, bool) {
	sc := 1 + startCommitSize(ts)
	be := binary.BigEndian
	if len(data) < 2*sc || data[0] != 'S' || data[len(data)-sc] != 'C' {
		return 0, false
	}
	id := int64(be.Uint64(data[1:]))
	if id != InitID && (id != -1 || sessionID(name) != history.Int(-1)) {
		return 0, false
	}
	return id, writesKeysOnce(data[sc : len(data)-sc])
}

// writesKeysOnce reports whether body, the records of one transaction, are writes, at least
// one, each of a different key.
func writesKeysOnce(body []byte) bool {
	keys := make(map[int64]bool)
	for ; len(body) > 0; body = body[1+sizeW:] {
		if body[0] != 'W' {
			return false // a read, or a second transaction (scan checked the layout)
		}
		k := int64(binary.BigEndian.Uint64(body[9:]))
		if keys[k] {
			return false
		}
		keys[k] = true
	}
	return len(keys) > 0
}

// initial takes the writes of the initial-state log data (see initialLog) as the initial
// state.
func (d *Decoder) initial(data []byte, ts bool, id int64, name string, b *history.Builder) {
	sc := 1 + startCommitSize(ts)
	be := binary.BigEndian
	body := data[sc : len(data)-sc]
	for ; len(body) > 0; body = body[1+sizeW:] {
		wid := int64(be.Uint64(body[1:]))
		k, v := b.IntKey(int64(be.Uint64(body[9:]))), b.IntValue(int64(be.Uint64(body[17:])))
		b.SetInitialKey(k, v)
		d.growInitSet(k)
		d.initSet[k] = true
		d.logWrite(wid, wref{op: int32(k), init: true})
	}
	d.logTxn(id, initTxn)
	what := "PolySI's converter writes its initial transaction so"
	if id == InitID {
		what = "the id of Cobra's INIT writer"
	}
	base := name[strings.LastIndexAny(name, `/\`)+1:]
	b.Note(fmt.Sprintf("%s holds only transaction %d, which writes each of its keys once and nothing else (%s): read as the initial state, not as a transaction", base, id, what))
}

// emit decodes data, which scan accepted, into b. It refuses a transaction id another file
// holds, and a log that ends inside a transaction: Cobra's client library buffers each
// transaction and appends it, its 'C' record last, only after the commit (aborted ones are
// dropped), so a log ending between an 'S' and its 'C' was cut.
func (d *Decoder) emit(data []byte, ts bool, name string, b *history.Builder) error {
	s := b.Session(sessionID(name))
	d.files[s] = name
	open, begun := int64(0), -1 // the open transaction's id and the offset of its 'S'
	sc := startCommitSize(ts)
	be := binary.BigEndian
	var start int64
	var t history.TxnID
	for i := 0; i < len(data); {
		tag := data[i]
		p := data[i+1:]
		switch tag {
		case 'S':
			id := int64(be.Uint64(p))
			if err := d.sameTxn(id, s, name, i, b); err != nil {
				return err
			}
			open, begun = id, i
			t = b.BeginTxn(s, history.Int(id), history.OutcomeUnknown)
			d.logTxn(id, int32(t))
			if ts {
				start = int64(be.Uint64(p[8:]))
			}
			i += 1 + sc
		case 'C':
			begun = -1
			c := b.Current()
			c.Outcome = history.OutcomeCommitted
			if ts {
				c.Time = history.Interval{Begin: start, End: int64(be.Uint64(p[8:]))}
				c.HasTime = true
			}
			i += 1 + sc
		case 'W':
			wid := int64(be.Uint64(p))
			key, val := int64(be.Uint64(p[8:])), int64(be.Uint64(p[16:]))
			op := b.Write(b.IntKey(key), b.IntValue(val))
			if wid != UniversalID {
				d.logWrite(wid, wref{t: t, op: op})
			}
			i += 1 + sizeW
		case 'R':
			writer, wid := int64(be.Uint64(p)), int64(be.Uint64(p[8:]))
			key, val := int64(be.Uint64(p[16:])), int64(be.Uint64(p[24:]))
			k := b.IntKey(key)
			switch {
			case writer == InitID:
				d.readInit(b, k, wid, val)
			case writer == NullID:
				b.ReadFrom(k, history.Nil, history.Src{Kind: history.SrcNone})
			case writer == UniversalID || wid == UniversalID:
				b.Read(k, b.IntValue(val))
			default:
				op := b.Read(k, b.IntValue(val))
				d.pending = parse.Push(d.pending, pendingRead{t: t, op: op, writer: writer, writeID: wid, file: name, off: int64(i), key: key, val: val})
			}
			i += 1 + sizeR
		}
	}
	if begun >= 0 {
		return parse.Errorf(formatName, name, 0, 0, int64(len(data)), "%w: expected the 'C' record of txn %d (begun at byte %d) before the end of the log: the log is cut (Cobra appends a transaction, its 'C' last, only after it committed)", parse.ErrTruncated, open, begun)
	}
	return nil
}

// readInit adds a read of key k = val naming the initial state as its writer, with write id
// wid; when wid names the initial state too, the first such read of k sets its initial
// value.
func (d *Decoder) readInit(b *history.Builder, k history.Key, wid, val int64) {
	v := b.IntValue(val)
	b.ReadFrom(k, v, history.Src{Kind: history.SrcInit})
	d.growInitSet(k)
	if wid == InitID && !d.initSet[k] {
		d.initSet[k] = true
		b.SetInitialKey(k, v)
	}
}

// sameTxn refuses txn id at offset off of file name (session s) when another file holds
// that id: a copied log, or logs of two runs mixed in one directory.
func (d *Decoder) sameTxn(id int64, s history.SessionID, name string, off int, b *history.Builder) error {
	prev, ok := d.txns.Get(id)
	if !ok {
		return nil
	}
	first := history.TxnID(prev)
	if prev == dupTxn {
		first = d.dupFirst[id]
	} else {
		if d.dupFirst == nil {
			d.dupFirst = make(map[int64]history.TxnID)
		}
		d.dupFirst[id] = first
	}
	if other := b.Txn(first).Session; other != s {
		return parse.Errorf(formatName, name, 0, 0, int64(off), "%w: txn %d is in both %s and %s (a copy, or logs of two runs?): Cobra transaction ids are unique across a history's logs", parse.ErrDuplicate, id, d.files[other], name)
	}
	return nil
}

// sessionID returns n for a file named T<n>.log, else the base name.
func sessionID(name string) history.Datum {
	base := name[strings.LastIndexAny(name, `/\`)+1:]
	if num, ok := strings.CutPrefix(base, "T"); ok {
		if num, ok := strings.CutSuffix(num, ".log"); ok {
			if n, err := strconv.ParseInt(num, 10, 64); err == nil {
				return history.Int(n)
			}
		}
	}
	return history.Str(base)
}

// Finish resolves every read's named writer.
func (d *Decoder) Finish(b *history.Builder) error {
	if err := d.placeholders(b); err != nil {
		return err
	}
	var errs []error
	for i := range d.pending {
		p := &d.pending[i]
		w, ok := d.write(p.writeID)
		if !ok || w.dup {
			what := "no write has that id"
			if w.dup {
				what = "several writes have that id"
			}
			errs = append(errs, parse.Errorf(formatName, p.file, 0, 0, p.off, "%w: read of key %d names txn %d, write id %d, but %s", ErrUnknownWriter, p.key, p.writer, p.writeID, what))
			if len(errs) == 10 {
				break
			}
			continue
		}
		if err := d.resolve(b, p, w); err != nil {
			errs = append(errs, err)
		}
	}
	d.pending = nil
	return errors.Join(errs...)
}

// resolve makes the pending read p read the write w its record names, once checked that w
// belongs to the transaction the record names and writes the key read.
func (d *Decoder) resolve(b *history.Builder, p *pendingRead, w wref) error {
	if w.init {
		return d.resolveInit(b, p, w)
	}
	wt := b.Txn(w.t)
	if wt.Source != history.Int(p.writer) {
		return parse.Errorf(formatName, p.file, 0, 0, p.off, "read of key %d names txn %d, write id %d, but that write belongs to txn %v", p.key, p.writer, p.writeID, wt.Source)
	}
	wo := b.TxnOps(w.t)[w.op]
	o := b.TxnOps(p.t)[p.op]
	if wo.Key != o.Key {
		return parse.Errorf(formatName, p.file, 0, 0, p.off, "read of key %d names write id %d of txn %d, which writes a different key", p.key, p.writeID, p.writer)
	}
	o.Src = history.Src{Kind: history.SrcTxn, Txn: w.t, Op: w.op}
	b.SetOp(p.t, p.op, o)
	return nil
}

// resolveInit is resolve for a write w of the initial state: the read reads the initial
// state.
func (d *Decoder) resolveInit(b *history.Builder, p *pendingRead, w wref) error {
	if t, _ := d.txns.Get(p.writer); t != initTxn {
		return parse.Errorf(formatName, p.file, 0, 0, p.off, "read of key %d names txn %d, write id %d, but that write belongs to the initial state", p.key, p.writer, p.writeID)
	}
	o := b.TxnOps(p.t)[p.op]
	if history.Key(w.op) != o.Key {
		return parse.Errorf(formatName, p.file, 0, 0, p.off, "read of key %d names write id %d of the initial state, which writes a different key", p.key, p.writeID)
	}
	o.Src = history.Src{Kind: history.SrcInit}
	b.SetOp(p.t, p.op, o)
	return nil
}

// placeholders gives reads naming absent transactions a placeholder writer, or reports them
// when Strict.
func (d *Decoder) placeholders(b *history.Builder) error {
	var order []int64
	byTxn := make(map[int64][]int)
	for i, p := range d.pending {
		if !d.writerAbsent(p.writer, p.writeID) {
			continue
		}
		if d.Strict {
			return parse.Errorf(formatName, p.file, 0, 0, p.off, "%w: read of key %d names txn %d, which no log file holds", ErrUnknownWriter, p.key, p.writer)
		}
		if _, ok := byTxn[p.writer]; !ok {
			order = append(order, p.writer)
		}
		byTxn[p.writer] = append(byTxn[p.writer], i)
	}
	if len(order) > 0 {
		d.addPlaceholders(b, order, byTxn)
	}
	return nil
}

// writerAbsent reports whether a read naming write id wid of transaction writer names a
// write no log holds, of a transaction no log holds (when the transaction exists but lacks
// the write, Finish reports it).
func (d *Decoder) writerAbsent(writer, wid int64) bool {
	if _, ok := d.writes.Get(wid); ok {
		return false
	}
	t, ok := d.txns.Get(writer)
	return !ok || t == dupTxn
}

// addPlaceholders adds, in a session of their own, an aborted placeholder transaction for
// each absent writer of order, holding the writes that the pending reads byTxn lists name.
func (d *Decoder) addPlaceholders(b *history.Builder, order []int64, byTxn map[int64][]int) {
	s := b.NewSession(history.Str(history.PlaceholderSession))
	for _, id := range order {
		t := b.BeginTxn(s, history.Int(id), history.OutcomeAborted)
		d.txns.Set(id, int32(t))
		for _, i := range byTxn[id] {
			p := d.pending[i]
			if _, ok := d.writes.Get(p.writeID); ok {
				continue
			}
			op := b.Write(b.IntKey(p.key), b.IntValue(p.val))
			d.addWrite(p.writeID, wref{t: t, op: op})
		}
	}
	b.EndTxn()
}
