package elle

import (
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/edn"
)

// Format names, as registered in package format.
const (
	EDN  = "elle-edn"
	JSON = "elle-json"
)

// Errors wrapped by the decoder. Callers test with errors.Is.
var (
	// ErrNotTransactional: the history's operations are not transactions (bank, counter,
	// set, cas-register, mutex, ... workloads).
	ErrNotTransactional = errors.New("not a transactional history")
	// ErrMixedWorkloads: list-append and rw-register micro-ops in one history.
	ErrMixedWorkloads = errors.New("history mixes list-append and rw-register micro-ops")
)

// refusalScan is how many further operations the decoder reads after the first
// non-transactional one, to name the workload in its error.
const refusalScan = 2000

type workload uint8

const (
	wlUnknown workload = iota
	wlList
	wlRegister
)

func (w workload) String() string {
	if w == wlList {
		return "list-append"
	}
	return "rw-register"
}

// Decoder decodes Elle histories into a [history.Builder]. It implements format.Decoder.
// A Decoder reads one history into one builder (Decode, possibly several times, then Finish
// once): it caches the builder's interned values. It is not safe for concurrent use.
type Decoder struct {
	json   bool
	format string
	dec    *edn.Decoder

	procs map[history.Datum]*proc
	seq   int64

	workload  workload
	firstWL   edn.Pos // where the workload was first seen
	undecided []nilRead
	unknowns  []history.TxnID
	maxTime   int64
	anyTime   bool

	// at is the position of the next operation: operations are numbered 0, 1, 2, ... in
	// input order (nemesis operations included), across Decode calls. untimed is set when an
	// invoke or its completion has no :time: client intervals then come from positions.
	// spans holds each transaction's position interval, indexed from first.
	at      int64
	untimed bool
	spans   []span
	first   history.TxnID
	added   bool

	keyClasses, valClasses classes
	canon                  []byte

	mops  []mop
	lists []history.Value

	// growAt is the transaction count at which the builder is next grown (doubling, rather
	// than append's 1.25x for large slices); nops counts ops added.
	growAt, nops int

	// vals caches interned integer values: list reads repeat recent appends many times.
	vals [4096]valEntry
	// skeys caches interned string keys, which a transaction's invoke and completion both
	// name: a direct-mapped cache in front of the builder's map.
	skeys [4096]strKey

	refusal *refusal

	// size is the input's length when the reader tells it (Len), else -1; nread counts
	// operations read from it, txns0 the transactions in the builder before it.
	size         int64
	nread, txns0 int
}

// proc is a Jepsen process. It runs one operation at a time in Jepsen, but some recorders
// pipeline several transactions on one process: each open invoke runs in a lane, a session
// of the process in which each transaction completed before the next was invoked.
type proc struct {
	id    history.Datum
	lanes []lane
	free  []int32  // lanes with no open invoke, the most recently freed last
	open  []invoke // open invokes, oldest first; open[len:cap] keep buffers for reuse
}

type lane struct {
	sess    history.SessionID
	hasSess bool
	dead    bool // crashed with :info: its next transaction starts a new session
	busy    bool // an invoke in this lane is open
}

type invoke struct {
	src     history.Datum
	time    int64
	hasTime bool
	pos     edn.Pos
	at      int64 // position: the operation's ordinal in the input
	seq     int64
	lane    int32
	mops    []mop
	lists   []history.Value
}

type mopKind uint8

const (
	mAppend mopKind = iota + 1
	mWrite
	mRead     // item read of val
	mListRead // list read of lists[lo : lo+n]
	mNilRead  // read of nil
)

type mop struct {
	kind  mopKind
	key   history.Key
	val   history.Value
	lo, n int32
}

// span is a transaction's interval in positions: Begin is its invoke's, End its
// completion's; End is -1 for an unknown outcome (it may take effect until the end) and
// Begin is -1 when there is no invoke.
type span struct{ begin, end int64 }

type valEntry struct {
	i  int64
	v  history.Value
	ok bool
}

type strKey struct {
	s  string
	k  history.Key
	c  class
	ok bool
}

type nilRead struct {
	t   history.TxnID
	op  int32
	key history.Key
}

type refusal struct {
	pos   edn.Pos
	maps  bool // some :value was a map (bank reads)
	fs    []string
	shown map[string]bool
	seen  int
}

// NewEDNDecoder returns a decoder for Elle histories in EDN.
func NewEDNDecoder() *Decoder { return &Decoder{format: EDN} }

// NewJSONDecoder returns a decoder for Elle histories in JSON.
func NewJSONDecoder() *Decoder { return &Decoder{json: true, format: JSON} }

// ReadEDN reads a whole EDN history from r; name is used in errors.
func ReadEDN(r io.Reader, name string) (*history.History, error) {
	return read(NewEDNDecoder(), r, name)
}

// ReadJSON reads a whole JSON history from r; name is used in errors.
func ReadJSON(r io.Reader, name string) (*history.History, error) {
	return read(NewJSONDecoder(), r, name)
}

func read(d *Decoder, r io.Reader, name string) (*history.History, error) {
	b := history.NewBuilder()
	if err := d.Decode(r, name, b); err != nil {
		return nil, err
	}
	if err := d.Finish(b); err != nil {
		return nil, err
	}
	return b.Build()
}

// Decode reads one history file.
func (d *Decoder) Decode(r io.Reader, name string, b *history.Builder) error {
	if d.procs == nil {
		d.procs = make(map[history.Datum]*proc)
	}
	d.size, d.nread, d.txns0 = -1, 0, b.NumTxns()
	if l, ok := r.(interface{ Len() int }); ok {
		d.size = int64(l.Len())
	}
	d.dec = edn.NewDecoder(r, edn.Options{File: name, Format: d.format, JSON: d.json, Reuse: true})
	if err := d.decode(b); err != nil {
		if d.refusal != nil {
			return d.refusalError()
		}
		return err
	}
	if d.refusal != nil {
		return d.refusalError()
	}
	return nil
}

func (d *Decoder) decode(b *history.Builder) error {
	for {
		c, err := d.dec.Peek()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var done bool
		if c == '[' || c == '(' {
			done, err = d.decodeArray(b)
		} else {
			done, err = d.next(b)
		}
		if done || err != nil {
			return err
		}
	}
}

// decodeArray reads and applies the operations of a vector or list of them.
func (d *Decoder) decodeArray(b *history.Builder) (done bool, err error) {
	if err := d.dec.Enter(); err != nil {
		return false, err
	}
	for {
		more, err := d.dec.More()
		if err != nil || !more {
			return false, err
		}
		if done, err := d.next(b); done || err != nil {
			return done, err
		}
	}
}

// next reads and applies one operation. done is set when a refusal has seen enough.
func (d *Decoder) next(b *history.Builder) (done bool, err error) {
	v, err := d.dec.Next()
	if err != nil {
		return false, err
	}
	d.nread++
	if d.nread == growProbe && d.size > 0 {
		d.growForSize(b, d.dec.Pos().Offset)
	}
	if err := d.op(v, b); err != nil {
		return false, err
	}
	return d.refusal != nil && d.refusal.seen >= refusalScan, nil
}

// growProbe is the operation after which the builder is grown once for the whole input,
// estimated from the bytes read so far.
const growProbe = 4096

// growForSize grows the builder for the whole input, scaling what the first operations held
// by the input's size over the bytes they took: one allocation of the transaction array
// instead of a doubling series (each copy of 100-odd-byte transactions costs time and page
// faults at a million of them).
func (d *Decoder) growForSize(b *history.Builder, off int64) {
	if off <= 0 || d.size <= off {
		return
	}
	scale := float64(d.size) / float64(off) * 1.03
	n := b.NumTxns()
	more := int(float64(n-d.txns0)*scale) - (n - d.txns0)
	if more <= 0 {
		return
	}
	b.Grow(more, int(float64(d.nops)*scale))
	d.growAt = n + more
}

func (d *Decoder) errorf(p edn.Pos, msg string, args ...any) error {
	return d.dec.Errorf(p, msg, args...)
}

// name returns the name of a keyword (without its colon) or the contents of a string.
func name(v edn.Value) (string, bool) {
	switch v.Kind {
	case edn.Keyword:
		return v.Str[1:], true
	case edn.String, edn.Symbol:
		return v.Str, true
	}
	return "", false
}

// show renders v for an error message, in the input's syntax and shortened.
func (d *Decoder) show(v edn.Value) string {
	var s string
	if d.json {
		s = string(appendJSONValue(nil, v))
	} else {
		s = v.String()
	}
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

func (d *Decoder) key(k string) string {
	if d.json {
		return `"` + k + `"`
	}
	return ":" + k
}

type opType uint8

const (
	tInvoke opType = iota + 1
	tOK
	tFail
	tInfo
)

type fields struct {
	typ, f, value, process, time, index edn.Value
}

// op applies one operation map.
func (d *Decoder) op(v edn.Value, b *history.Builder) error {
	at := d.at
	d.at++
	v = untag(v)
	if v.Kind != edn.Map {
		return d.notAnOp(v)
	}
	var fl fields
	fl.read(v)
	procID, client, err := d.process(fl.process)
	if err != nil || !client {
		return err // non-client operations (the nemesis) are skipped
	}
	if d.refusal != nil {
		d.refusal.count(&fl, d)
		return nil
	}
	typ, err := d.opType(fl.typ, v.Pos)
	if err != nil {
		return err
	}
	pr := d.procs[procID]
	if !d.acceptsF(&fl, typ, pr) {
		d.refusal = &refusal{pos: v.Pos, shown: map[string]bool{}, maps: fl.value.Kind == edn.Map}
		d.refusal.add(fl.f, d)
		return nil
	}
	return d.apply(pr, procID, typ, &fl, v.Pos, at, b)
}

// notAnOp handles a value v that is not an operation map: it ends the scan of a refused
// history, and is an error otherwise.
func (d *Decoder) notAnOp(v edn.Value) error {
	if d.refusal != nil {
		d.refusal.seen = refusalScan
		return nil
	}
	return d.errorf(v.Pos, "expected an operation map like %s, found a %v", d.example(), v.Kind)
}

// apply applies the operation of type typ at p, the at-th, with fields fl, of the process
// procID (pr, nil if new): an invoke or a completion.
func (d *Decoder) apply(pr *proc, procID history.Datum, typ opType, fl *fields, p edn.Pos, at int64, b *history.Builder) error {
	tm, hasTime, err := d.opTime(fl.time)
	if err != nil {
		return err
	}
	src, err := d.optInt(fl.index, "index")
	if err != nil {
		return err
	}
	if pr == nil {
		pr = &proc{id: procID}
		d.procs[procID] = pr
	}
	if typ == tInvoke {
		return d.invoke(pr, fl.value, p, at, src, tm, hasTime, b)
	}
	return d.complete(pr, typ, fl, p, at, tm, hasTime, b)
}

// untag returns the map inside a tagged map (#jepsen.history.Op{...}), else v.
func untag(v edn.Value) edn.Value {
	if v.Kind == edn.Tagged && len(v.Items) == 1 && v.Items[0].Kind == edn.Map {
		return v.Items[0]
	}
	return v
}

// read picks the fields an operation map holds by name, in place (the fields are six
// values: returned by value, per operation, they cost more than the reading); the last of a
// repeated key wins and other keys are ignored.
func (fl *fields) read(v edn.Value) {
	for i := 0; i+1 < len(v.Items); i += 2 {
		k, ok := name(v.Items[i])
		if !ok {
			continue
		}
		if f := fl.named(k); f != nil {
			*f = v.Items[i+1]
		}
	}
}

// noValue reports whether the operation has no :value (or a nil one).
func (fl *fields) noValue() bool { return fl.value.Kind == edn.Invalid || fl.value.Kind == edn.Nil }

// named returns the field with key k, or nil.
func (fl *fields) named(k string) *edn.Value {
	switch k {
	case "type":
		return &fl.typ
	case "f":
		return &fl.f
	case "value":
		return &fl.value
	case "process":
		return &fl.process
	case "time":
		return &fl.time
	case "index":
		return &fl.index
	}
	return nil
}

// process reads an operation's process: client is false for a non-client process (the
// nemesis: a keyword, or the string "nemesis" in JSON).
func (d *Decoder) process(p edn.Value) (id history.Datum, client bool, err error) {
	switch p.Kind {
	case edn.Invalid, edn.Nil:
		return history.NilDatum, true, nil
	case edn.Int:
		return history.Int(p.Int), true, nil
	case edn.Keyword:
		return history.NilDatum, false, nil
	case edn.String:
		if d.json && p.Str == "nemesis" {
			return history.NilDatum, false, nil
		}
		return history.Str(p.Str), true, nil
	}
	return history.NilDatum, false, d.errorf(p.Pos, "expected %s to be an integer, found %s", d.key("process"), d.show(p))
}

// count notes a client operation read after the refusal.
func (r *refusal) count(fl *fields, d *Decoder) {
	r.seen++
	r.add(fl.f, d)
	r.maps = r.maps || fl.value.Kind == edn.Map
}

// opTypeNamed returns the operation type named n, or 0.
func opTypeNamed(n string) opType {
	switch n {
	case "invoke":
		return tInvoke
	case "ok":
		return tOK
	case "fail":
		return tFail
	case "info":
		return tInfo
	}
	return 0
}

// opType reads an operation's type; p is the operation's position, for a missing type.
func (d *Decoder) opType(t edn.Value, p edn.Pos) (opType, error) {
	tn, _ := name(t)
	if typ := opTypeNamed(tn); typ != 0 {
		return typ, nil
	}
	if t.Kind == edn.Invalid {
		return 0, d.errorf(p, "expected a %s (%s) in the operation", d.key("type"), d.types())
	}
	return 0, d.errorf(t.Pos, "expected %s to be one of %s, found %s", d.key("type"), d.types(), d.show(t))
}

// acceptsF reports whether the operation's :f is one the decoder reads: absent, :txn, or
// another whose value is a list of micro-ops (or, for a completion without a value, whose
// invoke was accepted).
func (d *Decoder) acceptsF(fl *fields, typ opType, pr *proc) bool {
	if fl.f.Kind == edn.Invalid {
		return true
	}
	if fn, ok := name(fl.f); ok && fn == "txn" {
		return true
	}
	inherits := typ != tInvoke && pr != nil && len(pr.open) > 0 && fl.noValue()
	return inherits || looksLikeMops(fl.value)
}

// opTime reads an operation's optional time, and notes the latest time seen.
func (d *Decoder) opTime(t edn.Value) (tm int64, has bool, err error) {
	switch t.Kind {
	case edn.Invalid, edn.Nil:
		return 0, false, nil
	case edn.Int:
		if !d.anyTime || t.Int > d.maxTime {
			d.maxTime, d.anyTime = t.Int, true
		}
		return t.Int, true, nil
	}
	return 0, false, d.errorf(t.Pos, "expected %s to be an integer (nanoseconds), found %s", d.key("time"), d.show(t))
}

// optInt reads an optional integer field named key, such as the operation's index.
func (d *Decoder) optInt(v edn.Value, key string) (history.Datum, error) {
	switch v.Kind {
	case edn.Invalid, edn.Nil:
		return history.NilDatum, nil
	case edn.Int:
		return history.Int(v.Int), nil
	}
	return history.NilDatum, d.errorf(v.Pos, "expected %s to be an integer, found %s", d.key(key), d.show(v))
}

// invoke opens a transaction of pr in a free lane.
func (d *Decoder) invoke(pr *proc, value edn.Value, p edn.Pos, at int64, src history.Datum, tm int64, hasTime bool, b *history.Builder) error {
	n := len(pr.open)
	if n < cap(pr.open) {
		pr.open = pr.open[:n+1]
	} else {
		pr.open = append(pr.open, invoke{})
	}
	inv := &pr.open[n]
	mops, lists, err := d.parseMops(value, p, b, inv.mops[:0], inv.lists[:0])
	if err != nil {
		pr.open = pr.open[:n]
		return err
	}
	l := pr.takeLane()
	*inv = invoke{src: src, time: tm, hasTime: hasTime, pos: p, at: at, seq: d.seq, lane: int32(l), mops: mops, lists: lists}
	d.seq++
	if !hasTime {
		d.untimed = true
	}
	return nil
}

// complete applies a completion of pr: it pairs it with one of pr's open invokes (see
// pairing) and adds the transaction.
func (d *Decoder) complete(pr *proc, typ opType, fl *fields, p edn.Pos, at, tm int64, hasTime bool, b *history.Builder) error {
	mops, lists := d.mops[:0], d.lists[:0]
	noValue := fl.noValue()
	if !noValue {
		var err error
		mops, lists, err = d.parseMops(fl.value, p, b, mops, lists)
		if err != nil {
			return err
		}
		d.mops, d.lists = mops, lists
	}
	i, err := d.pairing(pr, mops, noValue, p)
	if err != nil {
		return err
	}
	if i < 0 {
		d.completeAlone(pr, typ, fl, mops, lists, b)
		return nil
	}
	inv := &pr.open[i]
	if noValue {
		mops, lists = inv.mops, inv.lists
	}
	iv, timed, err := d.interval(inv, typ, fl, tm, hasTime)
	if err != nil {
		return err
	}
	sp := span{inv.at, at}
	if typ == tInfo {
		sp.end = -1
	}
	l := int(inv.lane)
	t := d.add(b, pr, l, inv.src, outcomes[typ], mops, lists, iv, timed, sp)
	pr.release(l)
	if typ == tInfo {
		pr.lanes[l].dead = true
		if timed {
			d.unknowns = append(d.unknowns, t)
		}
	}
	pr.close(i)
	return nil
}

// outcomes maps completion types to the outcomes of their transactions.
var outcomes = [...]history.Outcome{tOK: history.OutcomeCommitted, tFail: history.OutcomeAborted, tInfo: history.OutcomeUnknown}

// completeAlone adds a completion that pairs with no invoke as its own transaction, with no
// interval, in the first free lane of pr.
func (d *Decoder) completeAlone(pr *proc, typ opType, fl *fields, mops []mop, lists []history.Value, b *history.Builder) {
	src := history.NilDatum
	if fl.index.Kind == edn.Int {
		src = history.Int(fl.index.Int)
	}
	l := pr.idleLane()
	d.add(b, pr, l, src, outcomes[typ], mops, lists, history.Interval{}, false, span{-1, -1})
	if typ == tInfo {
		pr.lanes[l].dead = true
	}
}

// interval returns the client interval of the transaction of inv completed (with typ) at
// tm, if both give a time; a completion without one leaves the history untimed.
func (d *Decoder) interval(inv *invoke, typ opType, fl *fields, tm int64, hasTime bool) (history.Interval, bool, error) {
	if inv.hasTime && hasTime {
		if tm < inv.time && typ != tInfo {
			return history.Interval{}, false, d.errorf(fl.time.Pos, "completion %s %d is before its invoke's %s %d (line %d): expected time to go forward within a process", d.key("time"), tm, d.key("time"), inv.time, inv.pos.Line)
		}
		return history.Interval{Begin: inv.time, End: tm}, true, nil
	}
	if !hasTime {
		d.untimed = true
	}
	return history.Interval{}, false, nil
}

// close removes pr's open invoke i, keeping its buffers past the end for the next invoke.
func (pr *proc) close(i int) {
	done := pr.open[i]
	copy(pr.open[i:], pr.open[i+1:])
	pr.open[len(pr.open)-1] = done
	pr.open = pr.open[:len(pr.open)-1]
}

// pairing returns which of pr's open invokes a completion with micro-ops mops completes, or
// -1 for a completion alone (pr has no open invoke).
//
// With one open invoke, the completion is its (as Jepsen pairs them). With several (a
// process that pipelines transactions), the candidates are the invokes whose micro-ops the
// completion repeats (same functions, keys and written values; reads may differ), and the
// oldest candidate is taken, as a queue would serve them. When candidates are alike the file
// cannot tell which one completed, so the others' beginnings move back to the taken one's:
// a client interval never claims an order the file does not show.
func (d *Decoder) pairing(pr *proc, mops []mop, noValue bool, p edn.Pos) (int, error) {
	switch len(pr.open) {
	case 0:
		if noValue {
			return -1, d.errorf(p, "expected %s with the transaction's micro-ops: this completion has none and no invoke of process %v precedes it", d.key("value"), pr.id)
		}
		return -1, nil
	case 1:
		return 0, nil
	}
	cands := pr.candidates(mops, noValue)
	if len(cands) == 0 {
		return -1, d.errorf(p, "process %v has %d open invokes (lines %s) and this completion repeats the micro-ops of none of them: expected a completion with an invoke's functions, keys and written values", pr.id, len(pr.open), d.openLines(pr))
	}
	first := &pr.open[cands[0]]
	for _, c := range cands[1:] {
		o := &pr.open[c]
		if noValue && !sameShape(first.mops, o.mops) {
			return -1, d.errorf(p, "process %v has %d open invokes (lines %s) and this completion has no %s to tell which one it completes: expected the transaction's micro-ops", pr.id, len(pr.open), d.openLines(pr), d.key("value"))
		}
		o.moveBack(first)
	}
	return cands[0], nil
}

// candidates returns the open invokes of pr a completion with micro-ops mops (none if
// noValue) may complete: those whose micro-ops it repeats, or all without micro-ops.
func (pr *proc) candidates(mops []mop, noValue bool) []int {
	var cands []int
	for i := range pr.open {
		if noValue || sameShape(pr.open[i].mops, mops) {
			cands = append(cands, i)
		}
	}
	return cands
}

// moveBack moves the beginning of o back to that of first, an invoke alike that a
// completion was paired with.
func (o *invoke) moveBack(first *invoke) {
	o.at = min(o.at, first.at)
	if o.hasTime && first.hasTime {
		o.time = min(o.time, first.time)
	}
}

func (d *Decoder) openLines(pr *proc) string {
	var s []string
	for _, o := range pr.open {
		s = append(s, strconv.Itoa(int(o.pos.Line)))
	}
	return strings.Join(s, ", ")
}

// sameShape reports whether a completion's micro-ops c repeat an invoke's micro-ops i:
// the same functions on the same keys, writing the same values.
func sameShape(i, c []mop) bool {
	if len(i) != len(c) {
		return false
	}
	for j := range i {
		a, b := &i[j], &c[j]
		if a.key != b.key || a.kind.isRead() != b.kind.isRead() {
			return false
		}
		if !a.kind.isRead() && (a.kind != b.kind || a.val != b.val) {
			return false
		}
	}
	return true
}

func (k mopKind) isRead() bool { return k == mRead || k == mListRead || k == mNilRead }

// takeLane returns a lane of pr with no open invoke (the most recently freed, or a new one)
// and marks it busy.
func (pr *proc) takeLane() int {
	l := pr.idleLane()
	pr.free = pr.free[:len(pr.free)-1]
	pr.lanes[l].busy = true
	return l
}

// idleLane returns the lane takeLane would take, without taking it.
func (pr *proc) idleLane() int {
	if len(pr.free) == 0 {
		pr.lanes = append(pr.lanes, lane{})
		pr.free = append(pr.free, int32(len(pr.lanes)-1))
	}
	return int(pr.free[len(pr.free)-1])
}

// release marks lane l of pr free.
func (pr *proc) release(l int) {
	pr.lanes[l].busy = false
	pr.free = append(pr.free, int32(l))
}

func (d *Decoder) example() string {
	if d.json {
		return `{"type":"invoke","f":"txn","value":[["append",1,2]],"process":0}`
	}
	return "{:type :invoke, :f :txn, :value [[:append 1 2]], :process 0}"
}

func (d *Decoder) types() string {
	if d.json {
		return `"invoke", "ok", "fail" or "info"`
	}
	return ":invoke, :ok, :fail or :info"
}

// looksLikeMops reports whether v is a non-empty list of [f k v] micro-ops.
func looksLikeMops(v edn.Value) bool {
	if !isSeq(v.Kind) || len(v.Items) == 0 {
		return false
	}
	for i := range v.Items {
		m := &v.Items[i]
		if !isMop(m) {
			return false
		}
		if f, _ := name(m.Items[0]); f != "append" && f != "r" && f != "w" {
			return false
		}
	}
	return true
}

// isSeq reports whether values of kind k are sequences: vectors or lists.
func isSeq(k edn.Kind) bool { return k == edn.Vector || k == edn.List }

// isMop reports whether m has the shape of a micro-op, [f k v].
func isMop(m *edn.Value) bool { return isSeq(m.Kind) && len(m.Items) == 3 }

// parseMops converts a transaction's :value into micro-ops, appending to mops and lists.
func (d *Decoder) parseMops(v edn.Value, at edn.Pos, b *history.Builder, mops []mop, lists []history.Value) ([]mop, []history.Value, error) {
	if !isSeq(v.Kind) {
		if v.Kind == edn.Invalid {
			return nil, nil, d.errorf(at, "expected %s: a vector of micro-ops like %s", d.key("value"), d.mopExample())
		}
		return nil, nil, d.errorf(v.Pos, "expected %s to be a vector of micro-ops like %s, found %s", d.key("value"), d.mopExample(), d.show(v))
	}
	for i := range v.Items {
		var o mop
		var err error
		// by pointer: a Value is 80 bytes, and there are millions of these
		if o, lists, err = d.parseMop(&v.Items[i], b, lists); err != nil {
			return nil, nil, err
		}
		mops = append(mops, o)
	}
	return mops, lists, nil
}

// parseMop converts one micro-op, appending the values of a list read to lists.
func (d *Decoder) parseMop(m *edn.Value, b *history.Builder, lists []history.Value) (mop, []history.Value, error) {
	if !isMop(m) {
		return mop{}, lists, d.errorf(m.Pos, "expected a micro-op [f k v] like %s, found %s", d.mopExample(), d.show(*m))
	}
	f, _ := name(m.Items[0])
	k, err := d.datumKey(&m.Items[1], b)
	if err != nil {
		return mop{}, lists, err
	}
	arg := &m.Items[2]
	o := mop{key: k}
	var wl workload
	switch f {
	case "append":
		o.kind, wl = mAppend, wlList
		o.val, err = d.datumValue(arg, b, "written value")
	case "w":
		o.kind, wl = mWrite, wlRegister
		o.val, err = d.datumValue(arg, b, "written value")
	case "r":
		wl, lists, err = d.parseRead(arg, b, &o, lists)
	default:
		return mop{}, lists, d.errorf(m.Items[0].Pos, "expected a micro-op function %s, found %s", d.mopFuncs(), d.show(m.Items[0]))
	}
	if err != nil {
		return mop{}, lists, err
	}
	return o, lists, d.noteWorkload(wl, m)
}

// parseRead converts the value of a read micro-op, arg, into o: nil (a read whose result
// is unknown or nil), a list, or a register's value. It returns the workload the read
// shows, if any.
func (d *Decoder) parseRead(arg *edn.Value, b *history.Builder, o *mop, lists []history.Value) (workload, []history.Value, error) {
	switch arg.Kind {
	case edn.Nil:
		o.kind = mNilRead
		return wlUnknown, lists, nil
	case edn.Vector, edn.List:
		o.kind = mListRead
		o.lo = int32(len(lists))
		for j := range arg.Items {
			val, err := d.datumValue(&arg.Items[j], b, "element of a list read")
			if err != nil {
				return wlUnknown, lists, err
			}
			lists = append(lists, val)
		}
		o.n = int32(len(lists)) - o.lo
		return wlList, lists, nil
	}
	val, err := d.datumValue(arg, b, "value read")
	o.kind, o.val = mRead, val
	return wlRegister, lists, err
}

// noteWorkload notes that micro-op m shows the history is of workload wl (unless
// wlUnknown), which must be the workload of every other micro-op.
func (d *Decoder) noteWorkload(wl workload, m *edn.Value) error {
	if wl == wlUnknown || wl == d.workload {
		return nil
	}
	if d.workload != wlUnknown {
		return d.errorf(m.Pos, "%w: %s is %v but the history is %v (since line %d, column %d): expected one workload per history", ErrMixedWorkloads, d.show(*m), wl, d.workload, d.firstWL.Line, d.firstWL.Col)
	}
	d.workload, d.firstWL = wl, m.Pos
	return nil
}

func (d *Decoder) mopExample() string {
	if d.json {
		return `["append",1,2] or ["r",1,[2]]`
	}
	return "[:append 1 2] or [:r 1 [2]]"
}

func (d *Decoder) mopFuncs() string {
	if d.json {
		return `("append", "r" or "w")`
	}
	return "(:append, :r or :w)"
}

// session returns the session of lane l of a process, starting a new one after a crash.
func (d *Decoder) session(b *history.Builder, pr *proc, l int) history.SessionID {
	ln := &pr.lanes[l]
	if !ln.hasSess || ln.dead {
		ln.sess, ln.hasSess, ln.dead = b.NewSession(pr.id), true, false
	}
	return ln.sess
}

// add adds one transaction in lane l of pr: iv is its interval in :time (when timed), sp in
// positions.
func (d *Decoder) add(b *history.Builder, pr *proc, l int, src history.Datum, outcome history.Outcome, mops []mop, lists []history.Value, iv history.Interval, timed bool, sp span) history.TxnID {
	d.growAhead(b)
	d.nops += len(mops)
	s := d.session(b, pr, l)
	t := b.BeginTxn(s, src, outcome)
	if !d.added {
		d.first, d.added = t, true
	}
	d.spans = append(d.spans, sp)
	for i := range mops {
		m := &mops[i]
		switch m.kind {
		case mAppend:
			b.Append(m.key, m.val)
		case mWrite:
			b.Write(m.key, m.val)
		case mRead:
			b.Read(m.key, m.val)
		case mListRead:
			b.ReadList(m.key, lists[m.lo:m.lo+m.n])
		case mNilRead:
			if outcome == history.OutcomeCommitted { // else an unknown result, not a read of nil
				d.addNilRead(b, t, m.key)
			}
		}
	}
	if timed {
		c := b.Current()
		c.Time, c.HasTime = iv, true
	}
	b.EndTxn()
	return t
}

// growAhead grows the builder when it is full: to twice its transactions (at least 1024),
// unless growForSize sized it for the whole input.
func (d *Decoder) growAhead(b *history.Builder) {
	if n := b.NumTxns(); n >= d.growAt {
		b.Grow(max(n, 1024), max(d.nops, 4096))
		d.growAt = 2 * max(n, 1024)
	}
}

// addNilRead adds to transaction t a committed read of nil from key k: an empty list read,
// a read of the absent value, or (before the workload is known) a read of the absent value
// to settle in Finish.
func (d *Decoder) addNilRead(b *history.Builder, t history.TxnID, k history.Key) {
	switch d.workload {
	case wlList:
		b.ReadList(k, nil)
	case wlRegister:
		b.Read(k, history.Nil)
	default:
		i := b.Read(k, history.Nil)
		d.undecided = append(d.undecided, nilRead{t: t, op: i, key: k})
	}
}

// PositionsNote is the note a history read without :time on every invoke and completion
// carries ([history.History.Notes]).
const PositionsNote = "the history does not give :time for every invoke and completion, so client intervals are positions in the file (the n-th operation is at n-1), as Elle's real-time order uses them: a transaction precedes another in real time when its completion comes before the other's invoke"

// Finish closes the history: invokes still open become transactions with an unknown
// outcome, client intervals are set (from :time, or from positions when :time is missing
// anywhere), unknown transactions' intervals are extended to the end of the history, and
// reads of nil made before the workload was known are settled.
func (d *Decoder) Finish(b *history.Builder) error {
	d.closeOpen(b)
	if d.untimed {
		d.positions(b)
	} else {
		for _, t := range d.unknowns {
			tx := b.Txn(t)
			tx.Time.End = max(d.maxTime, tx.Time.Begin)
		}
	}
	d.unknowns = d.unknowns[:0]
	d.spans = d.spans[:0]
	d.added = false
	if d.workload == wlList {
		// An empty list needs no storage, so an item read becomes an empty list read in place.
		for _, r := range d.undecided {
			b.SetOp(r.t, r.op, history.Op{Kind: history.OpListRead, Key: r.key})
		}
	}
	d.undecided = nil
	return nil
}

// closeOpen adds the invokes still open, in the order they were read, as transactions
// with an unknown outcome.
func (d *Decoder) closeOpen(b *history.Builder) {
	type openInv struct {
		pr *proc
		i  int
	}
	var open []openInv
	for _, pr := range d.procs {
		for i := range pr.open {
			open = append(open, openInv{pr, i})
		}
	}
	slices.SortFunc(open, func(x, y openInv) int { return int(x.pr.open[x.i].seq - y.pr.open[y.i].seq) })
	for _, o := range open {
		inv := &o.pr.open[o.i]
		l := int(inv.lane)
		t := d.add(b, o.pr, l, inv.src, history.OutcomeUnknown, inv.mops, inv.lists, history.Interval{Begin: inv.time, End: inv.time}, inv.hasTime, span{inv.at, -1})
		if inv.hasTime {
			d.unknowns = append(d.unknowns, t)
		}
		o.pr.release(l)
		o.pr.lanes[l].dead = true
	}
	for _, pr := range d.procs {
		pr.open = pr.open[:0]
	}
}

// positions sets every transaction's client interval from positions: [invoke's position,
// completion's position], extended past the last operation for an unknown outcome; a
// completion alone has none. A position interval ends before another begins exactly when
// the first's completion comes before the other's invoke in the input.
func (d *Decoder) positions(b *history.Builder) {
	some := false
	for i, sp := range d.spans {
		tx := b.Txn(d.first + history.TxnID(i))
		if sp.begin < 0 {
			tx.Time, tx.HasTime = history.Interval{}, false
			continue
		}
		end := sp.end
		if end < 0 {
			end = d.at
		}
		tx.Time, tx.HasTime = history.Interval{Begin: sp.begin, End: end}, true
		some = true
	}
	if some {
		b.Note(PositionsNote)
	}
}

// add records an :f seen while scanning a refused history.
func (r *refusal) add(f edn.Value, d *Decoder) {
	var s string
	switch {
	case f.Kind == edn.Invalid:
		return
	case d.json:
		s = string(appendJSONValue(nil, f))
	default:
		s = f.String()
	}
	if n, _ := name(f); n == "txn" || r.shown[s] || len(r.fs) >= 8 {
		return
	}
	r.shown[s] = true
	r.fs = append(r.fs, s)
}

func (d *Decoder) refusalError() error {
	r := d.refusal
	names := map[string]bool{}
	for _, s := range r.fs {
		names[strings.Trim(strings.TrimPrefix(s, ":"), `"`)] = true
	}
	wl := guessWorkload(names, r.maps)
	sep := " "
	if d.json {
		sep = ": "
	}
	what := "no " + d.key("f")
	if len(r.fs) > 0 {
		what = d.key("f") + sep + strings.Join(r.fs, ", ")
	}
	return d.errorf(r.pos, "%w: %s%s; expected %s%s%s with a vector of micro-ops (list-append or rw-register)", ErrNotTransactional, what, wl, d.key("f"), sep, d.txn())
}

// workloadGuesses name the workload of a refused history by the first of its :f names
// found, in this order.
var workloadGuesses = []struct {
	fs []string
	wl string
}{
	{[]string{"transfer"}, " (bank workload)"},
	{[]string{"cas"}, " (cas-register workload)"},
	{[]string{"acquire", "release"}, " (mutex workload)"},
	{[]string{"enqueue", "dequeue"}, " (queue workload)"},
	{[]string{"add"}, " (counter or set workload)"},
	{[]string{"write"}, " (register workload)"},
}

// guessWorkload names the workload of a refused history with :f names names ("" if
// none fits); maps says whether some :value was a map (a bank's read).
func guessWorkload(names map[string]bool, maps bool) string {
	if maps && names["read"] {
		return workloadGuesses[0].wl
	}
	for _, g := range workloadGuesses {
		for _, f := range g.fs {
			if names[f] {
				return g.wl
			}
		}
	}
	return ""
}

func (d *Decoder) txn() string {
	if d.json {
		return `"txn"`
	}
	return ":txn"
}
