package native

import (
	"encoding/binary"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/jsonscan"
)

// fastRec is a transaction line parsed by fastTxn, held until it is committed. Its ops are
// ops[ops0:ops0+nops] of the fastBuf that holds it, and its strings alias ln.
type fastRec struct {
	ln             []byte
	sess, id       fastDatum
	outcome        history.Outcome
	hasTime, hasTS bool
	time           history.Interval
	sts, cts       history.Timestamp
	snap           history.Snapshot
	hasSnap        bool
	ops0, nops     int32
}

// fastBuf holds what fastTxn parsed from one or more lines: their ops, and the predicates
// and rows of their predicate ops. Indexes between them are into the same fastBuf.
type fastBuf struct {
	ops   []fastOp
	preds []fastPred
	rows  []fastRow
}

func (f *fastBuf) reset() { f.ops, f.preds, f.rows = f.ops[:0], f.preds[:0], f.rows[:0] }

// fastDatum is an id, key or value parsed by fastTxn: an integer, or a string held in the
// line at offset i>>32 with length i&0xffffffff, or null.
type fastDatum struct {
	kind history.DatumKind
	i    int64
}

// fastOp is an op parsed by fastTxn. An item op holds its key and value as fastDatums,
// packed; a predicate op (OpPredRead, OpPredWrite) holds in key the index of its fastPred.
type fastOp struct {
	kind           history.OpKind
	keyKind, vKind history.DatumKind
	key, val       int64
}

// fastPred is the predicate of a predicate op parsed by fastTxn, and its rows
// rows[rows0:rows0+nrows]. rel and expr are strings in the line (packed as in fastDatum),
// or -1 when the predicate object has no such key.
type fastPred struct {
	rel, expr    int64
	field        fastDatum
	lo, hi       int64
	isRange      bool
	rows0, nrows int32
}

// fastRow is a row of a predicate op parsed by fastTxn.
type fastRow struct {
	keyKind, vKind history.DatumKind
	match          bool
	src            history.Src
	key, val       int64
}

// bytes returns the string at offset i>>32 of the line, of length i&0xffffffff.
func (r *fastRec) bytes(i int64) []byte {
	off, n := i>>32, i&0xffffffff
	return r.ln[off : off+n]
}

func (r *fastRec) datum(d fastDatum) history.Datum {
	switch d.kind {
	case history.DatumInt:
		return history.Int(d.i)
	case history.DatumStr:
		return history.Str(string(r.bytes(d.i)))
	}
	return history.NilDatum
}

// fastTxn parses ln if it is a transaction line in the compact form the writers emit: no
// white space, keys in the writer's order ("s", "id", "o", "t", "sts" and "cts", "snap",
// "ops"),
// integer, plain-string or null ids, item ops (["r",k,v], ["w",k,v], ["a",k,v], ["i",k,v],
// ["d",k]) with integer or plain-string keys and values and no options object, and
// predicate ops (see fastPredOp). A plain string has only printable ASCII and no escapes.
// That is every line of a key-value, append or predicate workload the runner records, and
// it parses here in one pass with no per-key dispatch.
//
// It fills r and appends what it parsed to f. On false, r is garbage, f is as it was, and
// the caller parses the line the general way, which accepts a superset of this form and
// alone reports errors. So fastTxn never decides what a line means differently from the
// general parser, only faster; TestFastPathAgreesWithGeneralParser and FuzzFastPathAgrees
// check it.
func fastTxn(ln []byte, r *fastRec, f *fastBuf) bool {
	nops, npreds, nrows := len(f.ops), len(f.preds), len(f.rows)
	if parseFastTxn(ln, r, f) {
		return true
	}
	f.ops, f.preds, f.rows = f.ops[:nops], f.preds[:npreds], f.rows[:nrows]
	return false
}

func parseFastTxn(ln []byte, r *fastRec, f *fastBuf) bool {
	const head = `{"s":`
	if len(ln) < len(head) || string(ln[:len(head)]) != head {
		return false
	}
	*r = fastRec{ln: ln, outcome: history.OutcomeCommitted, ops0: int32(len(f.ops))}
	i, ok := r.fastIDs(ln, len(head))
	if ok {
		i, ok = r.fastOutcome(ln, i)
	}
	if ok {
		i, ok = r.fastTimes(ln, i)
	}
	if ok {
		i, ok = r.fastSnap(ln, i)
	}
	if ok {
		i, ok = fastOps(ln, i, f)
	}
	return ok && r.fastEnd(ln, i, f)
}

// fastIDs parses the session at ln[i] and the optional "id" after it, each followed by a
// ',', for parseFastTxn.
func (r *fastRec) fastIDs(ln []byte, i int) (int, bool) {
	var ok bool
	if r.sess, i, ok = parseFastDatum(ln, i); !ok || !isAt(ln, i, ',') {
		return i, false
	}
	i++
	if !hasAt(ln, i, `"id":`) {
		return i, true
	}
	if r.id, i, ok = parseFastDatum(ln, i+5); !ok || !isAt(ln, i, ',') {
		return i, false
	}
	return i + 1, true
}

// fastOutcome parses the optional `"o":"c",` (or "a", "u") at ln[i] for parseFastTxn.
func (r *fastRec) fastOutcome(ln []byte, i int) (int, bool) {
	if !hasAt(ln, i, `"o":"`) {
		return i, true
	}
	if !hasAt(ln, i+6, `",`) {
		return i, false
	}
	oc, ok := outcomes[string(ln[i+5:i+6])]
	r.outcome = oc
	return i + 8, ok
}

// fastTimes parses the optional client interval "t" and the optional database timestamps
// "sts" and "cts" (both or neither) at ln[i] for parseFastTxn.
func (r *fastRec) fastTimes(ln []byte, i int) (int, bool) {
	var ok bool
	if hasAt(ln, i, `"t":`) {
		if r.time.Begin, r.time.End, i, ok = fastPair(ln, i+4); !ok {
			return i, false
		}
		r.hasTime = true
	}
	if !hasAt(ln, i, `"sts":`) {
		return i, true
	}
	if r.sts.Physical, r.sts.Logical, i, ok = fastPair(ln, i+6); !ok || !hasAt(ln, i, `"cts":`) {
		return i, false
	}
	if r.cts.Physical, r.cts.Logical, i, ok = fastPair(ln, i+6); !ok {
		return i, false
	}
	r.hasTS = true
	return i, true
}

// fastSnap parses the optional `"snap":"xmin:xmax:xip",` at ln[i] for parseFastTxn.
func (r *fastRec) fastSnap(ln []byte, i int) (int, bool) {
	if !hasAt(ln, i, `"snap":"`) {
		return i, true
	}
	i += 8
	j := i
	for j < len(ln) && ln[j] != '"' && ln[j] != '\\' {
		j++
	}
	if !hasAt(ln, j, `",`) {
		return i, false
	}
	var err error
	if r.snap, err = history.ParseSnapshot(string(ln[i:j])); err != nil {
		return i, false // the general parser says what is wrong
	}
	r.hasSnap = true
	return j + 2, true
}

// fastOps parses `"ops":[op,...]` at ln[i] for parseFastTxn, appending the ops to f, and
// returns the index after the ']'.
func fastOps(ln []byte, i int, f *fastBuf) (int, bool) {
	if !hasAt(ln, i, `"ops":[`) {
		return i, false
	}
	i += 7
	if isAt(ln, i, ']') {
		return i + 1, true
	}
	var ok, closed bool
	for {
		if hasAt(ln, i, `["p`) {
			i, ok = fastPredOp(ln, i, f)
		} else {
			i, ok = fastItemOp(ln, i, &f.ops)
		}
		if !ok {
			return i, false
		}
		if i, closed, ok = fastNext(ln, i); !ok || closed {
			return i, ok
		}
	}
}

// fastNext reads the ',' or the ']' after an element of an array at ln[i], and returns the
// index after it; closed is set for the ']'.
func fastNext(ln []byte, i int) (j int, closed, ok bool) {
	if i >= len(ln) {
		return i, false, false
	}
	switch ln[i] {
	case ',':
		return i + 1, false, true
	case ']':
		return i + 1, true, true
	}
	return i, false, false
}

// fastEnd checks the closing brace at ln[i] and the end of the line after it, and counts
// the record's ops, for parseFastTxn.
func (r *fastRec) fastEnd(ln []byte, i int, f *fastBuf) bool {
	if !isAt(ln, i, '}') || len(f.ops)-int(r.ops0) > 1<<30 {
		return false
	}
	r.nops = int32(len(f.ops) - int(r.ops0))
	rest := ln[i+1:]
	return len(rest) == 0 || string(rest) == "\n" || string(rest) == "\r\n"
}

// itemOpHead reads the head of a compact item op at b[i], `["r",` (one letter: r, w, a, i or
// d), and returns its kind; the key starts at i+5.
func itemOpHead(b []byte, i int) (history.OpKind, bool) {
	if i+5 >= len(b) || b[i] != '[' || b[i+1] != '"' || b[i+3] != '"' || b[i+4] != ',' {
		return 0, false
	}
	k := itemKinds[b[i+2]]
	return k, k != history.OpInvalid
}

// itemKinds maps the letter of a compact item op to its kind, OpInvalid for other bytes.
var itemKinds = [256]history.OpKind{
	'r': history.OpRead, 'w': history.OpWrite, 'a': history.OpAppend, 'i': history.OpInsert, 'd': history.OpDelete,
}

// fastItemOp parses one item op at ln[i] for fastTxn and returns the index after it.
func fastItemOp(ln []byte, i int, ops *[]fastOp) (int, bool) {
	kind, ok := itemOpHead(ln, i)
	if !ok {
		return i, false
	}
	k, i, ok := parseFastDatum(ln, i+5)
	if !ok || k.kind == history.DatumNil || i >= len(ln) {
		return i, false
	}
	var v fastDatum
	if kind != history.OpDelete {
		if ln[i] != ',' {
			return i, false
		}
		if v, i, ok = parseFastDatum(ln, i+1); !ok {
			return i, false // a list read's '[' fails here too
		}
	}
	if !isAt(ln, i, ']') {
		return i, false
	}
	*ops = append(*ops, fastOp{kind, k.kind, v.kind, k.i, v.i})
	return i + 1, true
}

// fastPredOp parses a predicate op at ln[i] for fastTxn, in the compact form the writer
// emits, and returns the index after it:
//
//	["pr",{"rel":R,"expr":E,"range":[F,lo,hi]},[[k,v],[k,v,{"match":false,"src":S}],...]]
//
// with "pw" for a predicate write; the predicate object's keys are each optional but in
// that order, R and E are plain strings, F is an integer, a plain string or null, k and v
// are as in an item op (k not null), and a row's options object is {"match":false},
// {"src":S} or both in that order, S being "init", "none" or [txn,op]. It declines
// anything else, such as white space, an options object after the rows, or "match":true.
func fastPredOp(ln []byte, i int, f *fastBuf) (int, bool) {
	kind, ok := fastPredHead(ln, i)
	if !ok || len(f.preds) >= 1<<30 || len(f.rows) >= 1<<30 {
		return i, false
	}
	p := fastPred{rel: -1, expr: -1, rows0: int32(len(f.rows))}
	if i, ok = p.parseObject(ln, i+7); !ok || !hasAt(ln, i, "},[") {
		return i, false
	}
	if i, ok = fastRows(ln, i+3, f); !ok || !isAt(ln, i, ']') {
		return i, false
	}
	p.nrows = int32(len(f.rows)) - p.rows0
	f.ops = append(f.ops, fastOp{kind: kind, key: int64(len(f.preds))})
	f.preds = append(f.preds, p)
	return i + 1, true
}

// fastPredHead reads the head of a predicate op at b[i], `["pr",{` or `["pw",{`, and
// returns its kind; the caller has checked `["p`, and the object's keys start at i+7.
func fastPredHead(b []byte, i int) (history.OpKind, bool) {
	if i+7 >= len(b) || !hasAt(b, i+4, `",{`) {
		return 0, false
	}
	k := predKinds[b[i+3]]
	return k, k != history.OpInvalid
}

// predKinds maps the second letter of a compact predicate op to its kind, OpInvalid for
// other bytes.
var predKinds = [256]history.OpKind{'r': history.OpPredRead, 'w': history.OpPredWrite}

// parseObject parses the keys of a predicate object at ln[i] for fastPredOp, "rel",
// "expr" and "range", each optional but in that order, and returns the index after them.
func (p *fastPred) parseObject(ln []byte, i int) (int, bool) {
	var ok bool
	sep := false // a key came before: the next needs a ','
	if j, has := predKeyAt(ln, i, sep, `"rel":"`); has {
		if p.rel, i, ok = fastStr(ln, j); !ok {
			return i, false
		}
		sep = true
	}
	if j, has := predKeyAt(ln, i, sep, `"expr":"`); has {
		if p.expr, i, ok = fastStr(ln, j); !ok {
			return i, false
		}
		sep = true
	}
	if j, has := predKeyAt(ln, i, sep, `"range":[`); has {
		return p.parseRange(ln, j)
	}
	return i, true
}

// parseRange parses `F,lo,hi]` at ln[i], the inside of a predicate's range, and returns
// the index after it.
func (p *fastPred) parseRange(ln []byte, i int) (int, bool) {
	var ok bool
	if p.field, i, ok = parseFastDatum(ln, i); !ok || !isAt(ln, i, ',') {
		return i, false
	}
	if p.lo, i, ok = intBefore(ln, i+1, ','); !ok {
		return i, false
	}
	if p.hi, i, ok = intBefore(ln, i+1, ']'); !ok {
		return i, false
	}
	p.isRange = true
	return i + 1, true
}

// fastRows parses the rows of a predicate op at ln[i], just after their '[', appending
// them to f.rows, and returns the index after the closing ']'.
func fastRows(ln []byte, i int, f *fastBuf) (int, bool) {
	if isAt(ln, i, ']') {
		return i + 1, true
	}
	var ok, closed bool
	for {
		if i, ok = fastRowAt(ln, i, f); !ok {
			return i, false
		}
		if i, closed, ok = fastNext(ln, i); !ok || closed {
			return i, ok
		}
	}
}

// fastRowAt parses a row of a predicate op at ln[i] for fastPredOp, appends it to f.rows and
// returns the index after it.
func fastRowAt(ln []byte, i int, f *fastBuf) (int, bool) {
	if !isAt(ln, i, '[') {
		return i, false
	}
	k, i, ok := parseFastDatum(ln, i+1)
	if !ok || k.kind == history.DatumNil || !isAt(ln, i, ',') {
		return i, false
	}
	v, i, ok := parseFastDatum(ln, i+1)
	if !ok {
		return i, false
	}
	r := fastRow{keyKind: k.kind, vKind: v.kind, match: true, key: k.i, val: v.i}
	if isAt(ln, i, ',') {
		if i, ok = r.parseOptions(ln, i+1); !ok {
			return i, false
		}
	}
	if !isAt(ln, i, ']') {
		return i, false
	}
	f.rows = append(f.rows, r)
	return i + 1, true
}

// parseOptions parses a row's options object at ln[i] for fastRowAt, {"match":false},
// {"src":S} or {"match":false,"src":S}, and returns the index after it.
func (r *fastRow) parseOptions(ln []byte, i int) (int, bool) {
	switch {
	case hasAt(ln, i, `{"match":false}`):
		r.match = false
		return i + 15, true
	case hasAt(ln, i, `{"match":false,"src":`):
		r.match = false
		i += 21
	case hasAt(ln, i, `{"src":`):
		i += 7
	default:
		return i, false
	}
	var ok bool
	if r.src, i, ok = fastSrc(ln, i); !ok || !isAt(ln, i, '}') {
		return i, false
	}
	return i + 1, true
}

// predKeyAt reports whether ln[i:] holds key, after a ',' if sep, and returns the index
// after it.
func predKeyAt(ln []byte, i int, sep bool, key string) (int, bool) {
	if sep {
		if !isAt(ln, i, ',') {
			return i, false
		}
		i++
	}
	return i + len(key), hasAt(ln, i, key)
}

// fastSrc parses a source at ln[i] for fastRow: "init", "none" or [txn,op] with both in
// 0..1<<31-1.
func fastSrc(ln []byte, i int) (history.Src, int, bool) {
	switch {
	case hasAt(ln, i, `"init"`):
		return history.Src{Kind: history.SrcInit}, i + 6, true
	case hasAt(ln, i, `"none"`):
		return history.Src{Kind: history.SrcNone}, i + 6, true
	}
	t, o, j, ok := jsonscan.FastPair(ln, i)
	if !ok || t < 0 || t > 1<<31-1 || o < 0 || o > 1<<31-1 {
		return history.Src{}, i, false
	}
	return history.Src{Kind: history.SrcTxn, Txn: history.TxnID(t), Op: int32(o)}, j, true
}

// fastStr parses the rest of a plain string whose opening quote is at ln[i-1], for
// fastPredOp, and returns it packed as in fastDatum.
func fastStr(ln []byte, i int) (int64, int, bool) {
	d, j, ok := parseFastDatum(ln, i-1)
	return d.i, j, ok && d.kind == history.DatumStr
}

// parseFastDatum parses an integer, a plain string or null at ln[i], for fastTxn: it does
// not look at what follows, which fastTxn checks.
func parseFastDatum(ln []byte, i int) (fastDatum, int, bool) {
	switch {
	case isAt(ln, i, '"'):
		return parseFastStr(ln, i)
	case hasAt(ln, i, "null"):
		return fastDatum{}, i + 4, true
	}
	v, j, ok := jsonscan.FastInt(ln, i)
	return fastDatum{history.DatumInt, v}, j, ok
}

// parseFastStr parses the plain string whose opening quote is at ln[i], for
// parseFastDatum.
func parseFastStr(ln []byte, i int) (fastDatum, int, bool) {
	j := i + 1
	// Eight bytes at a time while none of them ends the string or takes it off the fast
	// path: a quote, a backslash, a control byte or a byte from 0x7f up. Each test below is
	// nonzero iff some byte of w is such a byte (a false mark can only follow a true one);
	// the loop after it then finds which.
	for j+8 <= len(ln) {
		w := binary.LittleEndian.Uint64(ln[j:])
		q, bs := w^(ones*'"'), w^(ones*'\\')
		if ((q-ones)&^q|(bs-ones)&^bs|(w-ones*0x20)&^w|(w+ones)|w)&highs != 0 {
			break
		}
		j += 8
	}
	for ; j < len(ln); j++ {
		switch c := ln[j]; {
		case c == '"':
			if j > 1<<31 {
				return fastDatum{}, i, false
			}
			return fastDatum{history.DatumStr, int64(i+1)<<32 | int64(j-i-1)}, j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return fastDatum{}, i, false
		}
	}
	return fastDatum{}, i, false
}

// fastPair parses [a,b] at ln[i] and the ',' after it, for fastTxn.
func fastPair(ln []byte, i int) (a, b int64, j int, ok bool) {
	if a, b, j, ok = jsonscan.FastPair(ln, i); !ok || !isAt(ln, j, ',') {
		return 0, 0, i, false
	}
	return a, b, j + 1, true
}

// intBefore parses an integer at ln[i] that the byte c follows, and returns it with the
// index of c.
func intBefore(ln []byte, i int, c byte) (int64, int, bool) {
	v, j, ok := jsonscan.FastInt(ln, i)
	return v, j, ok && isAt(ln, j, c)
}

// isAt reports whether ln[i] is c.
func isAt(ln []byte, i int, c byte) bool { return i < len(ln) && ln[i] == c }

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// hasAt reports whether ln[i:] starts with s.
func hasAt(ln []byte, i int, s string) bool {
	return len(ln)-i >= len(s) && string(ln[i:i+len(s)]) == s
}

// commitFast adds a transaction parsed by fastTxn to b; it cannot fail. It interns
// sessions, keys and values in the same order as commit does, so both paths build the
// same history.
func (d *Decoder) commitFast(b *history.Builder, r *fastRec, f *fastBuf) {
	d.beginFast(b, r)
	ops := f.ops[r.ops0 : r.ops0+r.nops]
	for i := range ops {
		o := &ops[i]
		if isPredOp(o.kind) {
			d.commitFastPred(b, r, o.kind, f, &f.preds[o.key])
		} else {
			d.commitFastItem(b, r, o)
		}
	}
	b.EndTxn()
	d.ops += len(ops)
}

// beginFast opens in b the transaction parsed by fastTxn.
func (d *Decoder) beginFast(b *history.Builder, r *fastRec) {
	var sid history.SessionID
	if r.sess.kind == history.DatumInt {
		sid = d.intSession(b, r.sess.i)
	} else {
		sid = b.Session(r.datum(r.sess))
	}
	d.in.Reset(b)
	d.vc.reset(b)
	b.BeginTxn(sid, r.datum(r.id), r.outcome)
	if r.hasTime || r.hasTS || r.hasSnap {
		r.setTimes(b)
	}
}

// setTimes sets the interval, timestamps and snapshot of b's open transaction.
func (r *fastRec) setTimes(b *history.Builder) {
	t := b.Current()
	t.Time, t.HasTime = r.time, r.hasTime
	if r.hasTS {
		t.Start, t.Commit, t.HasTimestamps = r.sts, r.cts, true
	}
	if r.hasSnap {
		b.SetSnapshot(t.ID, r.snap)
	}
}

// key interns in b the key of kind kind held in i (packed as in fastDatum).
func (r *fastRec) key(b *history.Builder, kind history.DatumKind, i int64) history.Key {
	if kind == history.DatumInt {
		return b.IntKey(i)
	}
	return b.BytesKey(r.bytes(i))
}

// commitFastItem adds an item op parsed by fastItemOp to b's open transaction.
func (d *Decoder) commitFastItem(b *history.Builder, r *fastRec, o *fastOp) {
	k := r.key(b, o.keyKind, o.key)
	if o.kind == history.OpDelete {
		b.Delete(k)
		return
	}
	v := history.Nil
	switch o.vKind {
	case history.DatumInt:
		v = d.in.IntValue(k, o.val)
	case history.DatumStr:
		v = d.vc.value(k, r.bytes(o.val))
	}
	addItem(b, o.kind, k, v, history.Src{})
}

// isPredOp reports whether ops of kind k are predicate ops.
func isPredOp(k history.OpKind) bool { return k == history.OpPredRead || k == history.OpPredWrite }

// addItem adds an item op of kind (a read, write, append or insert) to b's open
// transaction and returns its index.
func addItem(b *history.Builder, kind history.OpKind, k history.Key, v history.Value, src history.Src) int32 {
	switch kind {
	case history.OpRead:
		return b.ReadFrom(k, v, src)
	case history.OpWrite:
		return b.Write(k, v)
	case history.OpAppend:
		return b.Append(k, v)
	}
	return b.Insert(k, v)
}

// predicate returns the predicate p parsed by fastPredOp, sharing its relation's and
// field's strings with earlier ops.
func (d *Decoder) predicate(r *fastRec, p *fastPred) history.Predicate {
	pred := history.Predicate{Lo: p.lo, Hi: p.hi, IsRange: p.isRange}
	if p.rel >= 0 {
		pred.Relation = d.strs.get(r.bytes(p.rel))
	}
	if p.expr >= 0 {
		pred.Expr = string(r.bytes(p.expr))
	}
	switch p.field.kind {
	case history.DatumInt:
		pred.Field = history.Int(p.field.i)
	case history.DatumStr:
		pred.Field = history.Str(d.strs.get(r.bytes(p.field.i)))
	}
	return pred
}

// commitFastPred adds a predicate op parsed by fastPredOp to b's open transaction.
func (d *Decoder) commitFastPred(b *history.Builder, r *fastRec, kind history.OpKind, f *fastBuf, p *fastPred) {
	po := history.PredOp{Pred: d.predicate(r, p)}
	po.Rows = d.rowSlab.take(int(p.nrows))
	// An aborted transaction's predicate write installed no version, so its rows' images
	// are interned but not cached: they would only push out versions that later reads see
	// (in BlindW-Pred, 60% of the rows are aborted transactions' new images).
	cache := kind != history.OpPredWrite || r.outcome != history.OutcomeAborted
	// String values the cache misses wait in d.pend and go to the builder in one batch
	// (history.Builder.BytesValues), before any integer value and at the end: the builder
	// interns them in the order of the rows, as one at a time.
	for i, fr := range f.rows[p.rows0 : p.rows0+p.nrows] {
		k := r.key(b, fr.keyKind, fr.key)
		v := history.Nil
		switch fr.vKind {
		case history.DatumInt:
			d.pend.flush(b, &d.vc, po.Rows, cache)
			v = b.IntValue(fr.val)
		case history.DatumStr:
			// A predicate write's matched row is the row's new image, which the cache
			// has not seen as a rule: it goes to the batch without a look. The builder
			// finds it if it is not new, so the ids are the same either way.
			v = d.cachedOrPending(k, r.bytes(fr.val), i, kind == history.OpPredWrite && fr.match)
		}
		po.Rows[i] = history.Row{Key: k, Value: v, Match: fr.match}
		po.SetSrc(i, fr.src)
	}
	d.pend.flush(b, &d.vc, po.Rows, cache)
	addPred(b, kind, po)
}

// cachedOrPending returns the id of row i's string value s of key k if the value cache
// has it, and otherwise (or, if skip, without a look) adds it to the pending batch and
// returns the nil value, which the batch replaces.
func (d *Decoder) cachedOrPending(k history.Key, s []byte, i int, skip bool) history.Value {
	if !skip {
		if v, ok := d.vc.lookup(k, s); ok {
			return v
		}
	}
	d.pend.add(s, i)
	return history.Nil
}
