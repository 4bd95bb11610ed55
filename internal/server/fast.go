package server

import (
	"bytes"
	"slices"
	"sync"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/check/ts"
)

// batchBuf is the memory of one decoded batch: its transactions and, in one array, their
// operations. Buffers are pooled: the checker copies what it keeps (keys, values, ids), so
// a buffer is reused as soon as its batch has been applied. Batches decoded by the general
// path (list reads, Chronos JSON) own their memory and are never pooled.
type batchBuf struct {
	txs  []ts.Txn
	ops  []ts.Op
	comp [][]ts.Compiled // per shard: txs compiled (see [Server.compile])
	// compilers hold the memory of comp that the checker does not keep, reused by the next
	// batch decoded into this buffer (which is only after this one was applied).
	compilers []ts.Compiler
	spans     []int32 // ops[spans[2i]:spans[2i+1]] are the ops of txs[i], while decoding
	pooled    bool
}

var batchPool = sync.Pool{New: func() any { return new(batchBuf) }}

func getBatchBuf() *batchBuf {
	b := batchPool.Get().(*batchBuf)
	b.pooled = true
	return b
}

// release returns b to the pool; b must not be used afterwards.
func (b *batchBuf) release() {
	if b == nil || !b.pooled {
		return
	}
	clear(b.txs)
	clear(b.ops)
	for i := range b.comp {
		clear(b.comp[i])
		b.comp[i] = b.comp[i][:0]
	}
	b.txs, b.ops, b.spans = b.txs[:0], b.ops[:0], b.spans[:0]
	batchPool.Put(b)
}

// decodeFast decodes native JSON lines of the shape the encoder (and so `isovet replay`)
// writes for a committed transaction with timestamps and item operations:
//
//	{"s":1,"id":17,"sts":[5,0],"cts":[9,1],"ops":[["r",3,7],["w",4,8],["d",5]]}
//
// with integer, string (printable ASCII, without escapes) or null scalars, the five keys in any order and
// nothing else: no header, no "o", "t" or "si", no list reads, no op options, no white
// space inside a line. It reports false at the first line of any other shape, and then
// [decodeNative] decodes the body instead, with its complete checks and error messages.
// On success it allocates nothing but the strings of string scalars.
func decodeFast(body []byte, out *batchBuf) bool {
	out.txs, out.ops, out.spans = out.txs[:0], out.ops[:0], out.spans[:0]
	if len(body) > 256<<10 {
		// A large body: size the operations once rather than grow them step by step
		// (each operation opens with `["`).
		out.ops = slices.Grow(out.ops, bytes.Count(body, []byte(`["`)))
	}
	for i := 0; i < len(body); {
		end := i
		for end < len(body) && body[end] != '\n' {
			end++
		}
		line := body[i:end]
		i = end + 1
		for len(line) > 0 && (line[len(line)-1] == '\r' || line[len(line)-1] == ' ' || line[len(line)-1] == '\t') {
			line = line[:len(line)-1]
		}
		if len(line) == 0 {
			continue
		}
		if !out.line(line) {
			return false
		}
	}
	for t := range out.txs {
		out.txs[t].Ops = out.ops[out.spans[2*t]:out.spans[2*t+1]:out.spans[2*t+1]]
	}
	return true
}

// The fields of a transaction line, as bits of a set.
const (
	hasS = 1 << iota
	hasID
	hasSts
	hasCts
	hasOps
	hasAll = hasS | hasID | hasSts | hasCts | hasOps
)

// line decodes one transaction line into out.
func (out *batchBuf) line(b []byte) bool {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return false
	}
	t := ts.Txn{Seq: -1}
	opStart := int32(len(out.ops))
	seen := 0
	i := 1
	for {
		f, j := fieldAt(b, i)
		if f == 0 || seen&f != 0 {
			return false
		}
		seen |= f
		var ok bool
		if i, ok = out.field(&t, f, b, j); !ok || i >= len(b) {
			return false
		}
		if b[i] == '}' {
			break
		}
		if b[i] != ',' {
			return false
		}
		i++
	}
	if i != len(b)-1 || seen != hasAll || t.ID.IsNil() || t.Session.IsNil() {
		return false
	}
	out.txs = append(out.txs, t)
	out.spans = append(out.spans, opStart, int32(len(out.ops)))
	return true
}

// fieldAt recognizes the key at b[i:], one of five as a literal with its colon: it returns
// the field's bit (0 for any other key) and the index of its value.
func fieldAt(b []byte, i int) (int, int) {
	switch {
	case hasPrefix(b[i:], `"s":`):
		return hasS, i + 4
	case hasPrefix(b[i:], `"id":`):
		return hasID, i + 5
	case hasPrefix(b[i:], `"sts":`):
		return hasSts, i + 6
	case hasPrefix(b[i:], `"cts":`):
		return hasCts, i + 6
	case hasPrefix(b[i:], `"ops":`):
		return hasOps, i + 6
	}
	return 0, i
}

// field decodes the value of field f at b[i:] into t (or, for the ops, into out).
func (out *batchBuf) field(t *ts.Txn, f int, b []byte, i int) (int, bool) {
	var ok bool
	switch f {
	case hasS:
		t.Session, i, ok = scalarAt(b, i)
	case hasID:
		t.ID, i, ok = scalarAt(b, i)
	case hasSts:
		t.Start, i, ok = pairAt(b, i)
	case hasCts:
		t.Commit, i, ok = pairAt(b, i)
	case hasOps:
		i, ok = out.opsAt(b, i)
	}
	return i, ok
}

// opsAt decodes an "ops" array at b[i:].
func (out *batchBuf) opsAt(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '[' {
		return i, false
	}
	i++
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		op, j, ok := opAt(b, i)
		if !ok {
			return j, false
		}
		out.ops = append(out.ops, op)
		i = j + 1
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i++
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// opAt decodes a read, write, append, insert or delete of scalars, ["r",k,v] or ["d",k],
// at b[i:]; it returns the index of its closing bracket. Anything else (a list read, op
// options, bad input) fails, for the general path to decide.
func opAt(b []byte, i int) (ts.Op, int, bool) {
	var op ts.Op
	if i+5 >= len(b) || b[i] != '[' || b[i+1] != '"' || b[i+3] != '"' || b[i+4] != ',' {
		return op, i, false
	}
	var ok bool
	if op.Kind, ok = fastOpKind(b[i+2]); !ok {
		return op, i, false
	}
	if op.Key, i, ok = scalarAt(b, i+5); !ok || op.Key.IsNil() || i >= len(b) {
		return op, i, false
	}
	if op.Kind != history.OpDelete {
		if b[i] != ',' {
			return op, i, false
		}
		if op.Value, i, ok = scalarAt(b, i+1); !ok || i >= len(b) {
			return op, i, false
		}
	}
	return op, i, b[i] == ']'
}

// fastOpKind returns the kind of the operations the fast path decodes by their letter.
func fastOpKind(c byte) (history.OpKind, bool) {
	switch c {
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

// scalarAt decodes null, an integer of at most 18 digits, or a string of printable ASCII
// without escapes at b[i:] (anything else, UTF-8 included, is left to the native reader,
// which validates it).
func scalarAt(b []byte, i int) (history.Datum, int, bool) {
	if i >= len(b) {
		return history.NilDatum, i, false
	}
	switch c := b[i]; {
	case c == 'n':
		if hasPrefix(b[i:], "null") {
			return history.NilDatum, i + 4, true
		}
	case c == '"':
		j := i + 1
		for j < len(b) && b[j] != '"' {
			if b[j] == '\\' || b[j] < 0x20 || b[j] >= 0x80 {
				return history.NilDatum, j, false
			}
			j++
		}
		if j < len(b) {
			return history.Str(string(b[i+1 : j])), j + 1, true
		}
	case c == '-' || c >= '0' && c <= '9':
		n, j, ok := intAt(b, i)
		return history.Int(n), j, ok
	}
	return history.NilDatum, i, false
}

// intAt decodes an integer of at most 18 digits (so it cannot overflow) without leading
// zeros; anything longer is left to the general path.
func intAt(b []byte, i int) (int64, int, bool) {
	neg := b[i] == '-'
	if neg {
		i++
	}
	start := i
	var n int64
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		n = n*10 + int64(b[i]-'0')
		i++
	}
	if d := i - start; d == 0 || d > 18 || d > 1 && b[start] == '0' {
		return 0, i, false
	}
	if i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
		return 0, i, false
	}
	if neg {
		n = -n
	}
	return n, i, true
}

// pairAt decodes a timestamp [physical,logical] at b[i:].
func pairAt(b []byte, i int) (history.Timestamp, int, bool) {
	var ts history.Timestamp
	if i+4 >= len(b) || b[i] != '[' {
		return ts, i, false
	}
	var ok bool
	if ts.Physical, i, ok = intAt(b, i+1); !ok || i >= len(b) || b[i] != ',' || i+1 >= len(b) {
		return ts, i, false
	}
	if ts.Logical, i, ok = intAt(b, i+1); !ok || i >= len(b) || b[i] != ']' {
		return ts, i, false
	}
	return ts, i + 1, true
}

func hasPrefix(b []byte, p string) bool {
	return len(b) >= len(p) && string(b[:len(p)]) == p
}
