package native

import (
	"isovet/history"
	"isovet/internal/jsonscan"
)

// fastRec is a transaction line parsed by fastTxn, held until it is committed. Its ops are
// fastOps[ops0:ops0+nops] of the batch that holds it, and its strings alias ln.
type fastRec struct {
	ln             []byte
	sess, id       fastDatum
	outcome        history.Outcome
	hasTime, hasTS bool
	time           history.Interval
	sts, cts       history.Timestamp
	ops0, nops     int32
}

// fastDatum is an id, key or value parsed by fastTxn: an integer, or a string held in the
// line at offset i>>32 with length i&0xffffffff, or null.
type fastDatum struct {
	kind history.DatumKind
	i    int64
}

// fastOp is an item op parsed by fastTxn: its key and value as fastDatums, packed.
type fastOp struct {
	kind           history.OpKind
	keyKind, vKind history.DatumKind
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
// white space, keys in the writer's order ("s", "id", "o", "t", "sts" and "cts", "ops"),
// integer, plain-string or null ids, and item ops (["r",k,v], ["w",k,v], ["a",k,v],
// ["i",k,v], ["d",k]) with integer or plain-string keys and values and no options object.
// A plain string has only printable ASCII and no escapes. That is every line of a
// key-value or append workload, and it parses here in one pass with no per-key dispatch.
//
// It fills r and appends the ops to *ops. On false, r and the ops appended are garbage
// (the caller truncates *ops) and the caller parses the line the general way, which
// accepts a superset of this form and alone reports errors. So fastTxn never decides what
// a line means differently from the general parser, only faster;
// TestFastPathAgreesWithGeneralParser checks it.
func fastTxn(ln []byte, r *fastRec, ops *[]fastOp) bool {
	const head = `{"s":`
	if len(ln) < len(head) || string(ln[:len(head)]) != head {
		return false
	}
	*r = fastRec{ln: ln, outcome: history.OutcomeCommitted, ops0: int32(len(*ops))}
	x := r
	var ok bool
	i := len(head)
	if x.sess, i, ok = parseFastDatum(ln, i); !ok || i >= len(ln) || ln[i] != ',' {
		return false
	}
	i++
	if hasAt(ln, i, `"id":`) {
		if x.id, i, ok = parseFastDatum(ln, i+5); !ok || i >= len(ln) || ln[i] != ',' {
			return false
		}
		i++
	}
	if hasAt(ln, i, `"o":"`) {
		if i+7 >= len(ln) || ln[i+6] != '"' || ln[i+7] != ',' {
			return false
		}
		switch ln[i+5] {
		case 'c':
			x.outcome = history.OutcomeCommitted
		case 'a':
			x.outcome = history.OutcomeAborted
		case 'u':
			x.outcome = history.OutcomeUnknown
		default:
			return false
		}
		i += 8
	}
	if hasAt(ln, i, `"t":`) {
		if x.time.Begin, x.time.End, i, ok = fastPair(ln, i+4); !ok {
			return false
		}
		x.hasTime = true
	}
	if hasAt(ln, i, `"sts":`) {
		if x.sts.Physical, x.sts.Logical, i, ok = fastPair(ln, i+6); !ok || !hasAt(ln, i, `"cts":`) {
			return false
		}
		if x.cts.Physical, x.cts.Logical, i, ok = fastPair(ln, i+6); !ok {
			return false
		}
		x.hasTS = true
	}
	if !hasAt(ln, i, `"ops":[`) {
		return false
	}
	i += 7
	if i < len(ln) && ln[i] == ']' {
		i++
	} else {
		for {
			if i, ok = fastItemOp(ln, i, ops); !ok || i >= len(ln) {
				return false
			}
			c := ln[i]
			i++
			if c == ']' {
				break
			}
			if c != ',' {
				return false
			}
		}
	}
	// The closing brace, then the end of the line.
	if i >= len(ln) || ln[i] != '}' || len(*ops)-int(x.ops0) > 1<<30 {
		return false
	}
	x.nops = int32(len(*ops) - int(x.ops0))
	switch rest := ln[i+1:]; len(rest) {
	case 0:
		return true
	case 1:
		return rest[0] == '\n'
	case 2:
		return rest[0] == '\r' && rest[1] == '\n'
	}
	return false
}

// itemOpHead reads the head of a compact item op at b[i], `["r",` (one letter: r, w, a, i or
// d), and returns its kind; the key starts at i+5.
func itemOpHead(b []byte, i int) (history.OpKind, bool) {
	if i+5 >= len(b) || b[i] != '[' || b[i+1] != '"' || b[i+3] != '"' || b[i+4] != ',' {
		return 0, false
	}
	switch b[i+2] {
	case 'r':
		return history.OpRead, true
	case 'w':
		return history.OpWrite, true
	case 'a':
		return history.OpAppend, true
	case 'i':
		return history.OpInsert, true
	case 'd':
		return history.OpDelete, true
	}
	return 0, false
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
		if v, i, ok = parseFastDatum(ln, i+1); !ok || i >= len(ln) {
			return i, false // a list read's '[' fails here too
		}
	}
	if ln[i] != ']' {
		return i, false
	}
	*ops = append(*ops, fastOp{kind, k.kind, v.kind, k.i, v.i})
	return i + 1, true
}

// parseFastDatum parses an integer, a plain string or null at ln[i], for fastTxn: it does
// not look at what follows, which fastTxn checks.
func parseFastDatum(ln []byte, i int) (fastDatum, int, bool) {
	if i >= len(ln) {
		return fastDatum{}, i, false
	}
	switch ln[i] {
	case '"':
		for j := i + 1; j < len(ln); j++ {
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
	case 'n':
		if hasAt(ln, i, "null") {
			return fastDatum{}, i + 4, true
		}
		return fastDatum{}, i, false
	}
	v, j, ok := jsonscan.FastInt(ln, i)
	return fastDatum{history.DatumInt, v}, j, ok
}

// fastPair parses [a,b] at ln[i] and the ',' after it, for fastTxn.
func fastPair(ln []byte, i int) (a, b int64, j int, ok bool) {
	if i >= len(ln) || ln[i] != '[' {
		return 0, 0, i, false
	}
	if a, j, ok = jsonscan.FastInt(ln, i+1); !ok || j >= len(ln) || ln[j] != ',' {
		return 0, 0, i, false
	}
	if b, j, ok = jsonscan.FastInt(ln, j+1); !ok || j+1 >= len(ln) || ln[j] != ']' || ln[j+1] != ',' {
		return 0, 0, i, false
	}
	return a, b, j + 2, true
}

// hasAt reports whether ln[i:] starts with s.
func hasAt(ln []byte, i int, s string) bool {
	return len(ln)-i >= len(s) && string(ln[i:i+len(s)]) == s
}

// commitFast adds a transaction parsed by fastTxn to b; it cannot fail. It interns
// sessions, keys and values in the same order as commit does, so both paths build the
// same history.
func (d *Decoder) commitFast(b *history.Builder, r *fastRec, ops []fastOp) {
	var sid history.SessionID
	if r.sess.kind == history.DatumInt {
		sid = d.intSession(b, r.sess.i)
	} else {
		sid = b.Session(r.datum(r.sess))
	}
	in := &d.in
	in.Reset(b)
	b.BeginTxn(sid, r.datum(r.id), r.outcome)
	if r.hasTime || r.hasTS {
		t := b.Current()
		t.Time, t.HasTime = r.time, r.hasTime
		if r.hasTS {
			t.Start, t.Commit, t.HasTimestamps = r.sts, r.cts, true
		}
	}
	for i := range ops {
		o := &ops[i]
		var k history.Key
		if o.keyKind == history.DatumInt {
			k = b.IntKey(o.key)
		} else {
			k = b.BytesKey(r.bytes(o.key))
		}
		if o.kind == history.OpDelete {
			b.Delete(k)
			continue
		}
		v := history.Nil
		switch o.vKind {
		case history.DatumInt:
			v = in.IntValue(k, o.val)
		case history.DatumStr:
			v = b.BytesValue(r.bytes(o.val))
		}
		switch o.kind {
		case history.OpRead:
			b.Read(k, v)
		case history.OpWrite:
			b.Write(k, v)
		case history.OpAppend:
			b.Append(k, v)
		default:
			b.Insert(k, v)
		}
	}
	b.EndTxn()
	d.ops += len(ops)
}
