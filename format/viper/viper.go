// Package viper reads the JSON client logs of Viper and ViperBench (Khoury-srg/Viper,
// EuroSys'23), which IsoVista and Plume also write: a directory of J<n>.log files, one per
// client (session n), one committed transaction per line:
//
//	{"value": [["w", 1, 2, true], ["r", 1, 2, false]], "isInitial": false}
//
// Each element of "value" is one micro-operation, as Viper's own reader takes it:
//
//	["r", key, value, isDead]                    read key = value (null: the initial state)
//	["w", key, value, succ]                      write key = value (succ false: it failed)
//	["i", key, value, readValue, isDead, succ, …] insert: reads readValue, then writes value
//	["d", key, value, readValue, isDead, succ, …] delete: reads readValue, then writes value
//	                                              (the row's "dead" value)
//
// Keys and values are integers or strings. The trailing flags are optional; a write or an
// insert or delete with succ false keeps its operations flagged [history.OpFailed], so that
// the checkers can report them. isDead adds nothing the value does not say (each dead value
// is one a delete wrote), so it is checked for type and otherwise ignored. As Viper does,
// inserts and deletes are register writes of their value, preceded by the read that found
// the row absent or dead: that is exactly what Viper's serializability checker uses of them.
//
// Range queries (["range", k1, k2, rows, deadRows, isFinal]) are refused with an error: a
// range query also says which keys in [k1, k2] it did not see, and reading only its rows as
// item reads would drop that evidence, so a phantom would pass unseen. Fields other than
// "value" and "isInitial" are ignored.
//
// "isInitial": true marks the transaction that captured the database's initial state. Viper
// takes it, alone in its file, as its T0, in no session, and reads each key's initial value
// from its writes; the reader does the same: it sets each written key's initial value
// ([history.Builder.SetInitialKey]) and builds no transaction, so no checker can order the
// initial state after anything. As Viper asserts, such a transaction must be the only one of
// its file, hold only writes that succeeded, each key once, and be the only one of the
// history; anything else is an error.
//
// Only committed transactions are logged (Plume's tap-b, an aborted read, holds none), so
// every transaction is committed. Transactions are named by file and line (J24:3), so a
// witness points into the log. The initial value of every key is null, as in Viper.
//
// # One log per client
//
// Two files of one history that hold the same client are refused ([parse.ErrDuplicate]),
// naming both: the same n (J24.log and J024.log), or the same content byte for byte when
// that content writes something (a copied log; the logs of two read-only clients may be
// equal, and are kept). Reading both would merge a client with itself.
package viper

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/parse"
)

// Name is the format's name in the registry.
const Name = "viper"

// Members matches a Viper log directory's member files.
const Members = "J*.log"

// maxLine bounds one line (one transaction); ViperBench's range results can be long.
const maxLine = 64 << 20

// Decoder reads Viper logs into a [history.Builder]. It implements format.Decoder; each
// Decode call reads one client's file. A Decoder is not safe for concurrent use.
type Decoder struct {
	initial string                   // the file that held the isInitial transaction, if one did
	clients map[history.Datum]string // client (session source id) -> the file holding its log
	copies  map[[sha256.Size]byte]string
}

// NewDecoder returns a decoder.
func NewDecoder() *Decoder { return &Decoder{} }

// Finish implements format.Decoder.
func (d *Decoder) Finish(*history.Builder) error { return nil }

// txnLine is one line's top-level object.
type txnLine struct {
	Value     *[]json.RawMessage `json:"value"`
	IsInitial *bool              `json:"isInitial"`
}

// Decode reads one client's log r, named name, into b.
func (d *Decoder) Decode(r io.Reader, name string, b *history.Builder) error {
	sessName, sess := session(name)
	if err := d.claim(name, sess); err != nil {
		return err
	}
	lr := logReader{d: d, name: name, b: b, s: b.Session(sess), sessName: sessName}
	sum := sha256.New()
	br := bufio.NewReaderSize(io.TeeReader(r, sum), 1<<16)
	var off int64
	for line := 1; ; line++ {
		ln, err := readLine(br)
		if errors.Is(err, errLong) {
			return parse.Errorf(Name, name, line, 1, off, "line longer than %d bytes: expected one transaction per line", maxLine)
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("reading %s: %w", name, err)
		}
		if t := bytes.TrimSpace(ln); len(t) > 0 {
			if err := lr.txn(ln, t, line, off); err != nil {
				return err
			}
		}
		off += int64(len(ln))
		if err == io.EOF {
			return d.copied(name, sum, lr.wrote)
		}
	}
}

// claim records that file name holds the log of client sess, refusing a second file for
// the same client.
func (d *Decoder) claim(name string, sess history.Datum) error {
	if other, ok := d.clients[sess]; ok {
		return parse.Errorf(Name, name, 0, 0, 0, "%w: %s and %s both hold the log of client %v (a copy?): a Viper history holds one J<n>.log per client", parse.ErrDuplicate, other, name, sess)
	}
	if d.clients == nil {
		d.clients, d.copies = make(map[history.Datum]string), make(map[[sha256.Size]byte]string)
	}
	d.clients[sess] = name
	return nil
}

// logReader reads the transactions of one client's log.
type logReader struct {
	d        *Decoder
	name     string
	b        *history.Builder
	s        history.SessionID
	sessName string // transactions are named sessName:line
	ops      []mop  // scratch
	txns     int    // transactions read so far
	initLine int    // the line of the isInitial transaction, 0 if none so far
	wrote    bool   // whether a transaction wrote something
}

// txn reads the transaction on line number line, which starts at offset off: ln is the
// line, t the line trimmed (not empty).
func (lr *logReader) txn(ln, t []byte, line int, off int64) error {
	ops, isInitial, col, msg := parseTxn(t, lr.ops[:0])
	lr.ops = ops
	if msg != "" {
		lead := len(ln) - len(bytes.TrimLeft(ln, " \t"))
		return parse.Errorf(Name, lr.name, line, lead+col, off+int64(lead+col-1), "%s", msg)
	}
	switch {
	case lr.initLine > 0:
		return parse.Errorf(Name, lr.name, line, 1, off, "expected no transaction after the isInitial one (line %d): Viper takes the initial state alone in its file", lr.initLine)
	case isInitial && lr.txns > 0:
		return parse.Errorf(Name, lr.name, line, 1, off, "expected the isInitial transaction alone in its file, found it after %d others: Viper takes the initial state alone in its file", lr.txns)
	case isInitial:
		if err := lr.d.setInitial(ops, lr.name, lr.b); err != nil {
			return parse.Errorf(Name, lr.name, line, 1, off, "%s", err.Error())
		}
		lr.initLine = line
	default:
		lr.add(ops, line)
	}
	lr.txns++
	return nil
}

// add adds the transaction of ops on line number line, committed.
func (lr *logReader) add(ops []mop, line int) {
	b := lr.b
	b.BeginTxn(lr.s, history.Str(lr.sessName+":"+strconv.Itoa(line)), history.OutcomeCommitted)
	for _, o := range ops {
		o.add(b)
		lr.wrote = lr.wrote || o.kind != 'r'
	}
	b.EndTxn()
}

// setInitial makes the writes of the isInitial transaction the initial state. It says what
// is wrong when the transaction is not one Viper would take as the initial state.
func (d *Decoder) setInitial(ops []mop, name string, b *history.Builder) error {
	if d.initial != "" {
		return fmt.Errorf("expected one isInitial transaction in the history, found a second one (the first is in %s)", d.initial)
	}
	seen := make(map[history.Datum]bool, len(ops))
	for i, o := range ops {
		switch {
		case o.kind != 'w':
			return fmt.Errorf("operation %d of the isInitial transaction: expected a write (the initial state is a set of writes), found %q", i+1, string(o.kind))
		case o.failed:
			return fmt.Errorf("operation %d of the isInitial transaction: expected a write that succeeded", i+1)
		case seen[o.key]:
			return fmt.Errorf("operation %d of the isInitial transaction: expected each key once, found %v again", i+1, o.key)
		}
		seen[o.key] = true
	}
	for _, o := range ops {
		b.SetInitialKey(b.Key(o.key), b.Value(o.value))
	}
	d.initial = name
	return nil
}

// copied refuses the log name when another file of the history has the same bytes and
// writes something (sum hashes the content): a copy of one client's log under another
// name. Logs of read-only clients may well be equal (two clients reading the same initial
// value), so they are not compared.
func (d *Decoder) copied(name string, sum hash.Hash, wrote bool) error {
	if !wrote {
		return nil
	}
	var k [sha256.Size]byte
	sum.Sum(k[:0])
	if other, ok := d.copies[k]; ok {
		return parse.Errorf(Name, name, 0, 0, 0, "%w: %s and %s hold the same transactions byte for byte (a copy?): two clients do not log the same writes", parse.ErrDuplicate, other, name)
	}
	d.copies[k] = name
	return nil
}

var errLong = errors.New("line too long")

// readLine returns the next line with its newline, or io.EOF with the last bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var long []byte
	for {
		ln, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(ln) > maxLine {
				return nil, errLong
			}
			long = append(long, ln...)
			continue
		}
		if long != nil {
			return append(long, ln...), err
		}
		return ln, err
	}
}

// session returns the session a member file stands for: n for J<n>.log, else the file's
// name; and the name transactions are prefixed with (J24).
func session(name string) (string, history.Datum) {
	base := path.Base(strings.ReplaceAll(name, `\`, "/"))
	stem := strings.TrimSuffix(base, ".log")
	if num, ok := strings.CutPrefix(stem, "J"); ok {
		if n, err := strconv.ParseInt(num, 10, 64); err == nil {
			return stem, history.Int(n)
		}
	}
	return stem, history.Str(base)
}

// mop is one parsed micro-operation.
type mop struct {
	kind       byte // 'r', 'w', 'i', 'd'
	key, value history.Datum
	read       history.Datum // what an insert or delete found
	failed     bool
}

func (o mop) add(b *history.Builder) {
	k := b.Key(o.key)
	switch o.kind {
	case 'r':
		b.Read(k, b.Value(o.value))
	case 'w':
		i := b.Write(k, b.Value(o.value))
		if o.failed {
			b.SetOpFlags(i, history.OpFailed)
		}
	case 'i', 'd':
		r := b.Read(k, b.Value(o.read))
		i := b.Write(k, b.Value(o.value))
		if o.failed {
			b.SetOpFlags(r, history.OpFailed)
			b.SetOpFlags(i, history.OpFailed)
		}
	}
}

// parseTxn parses one non-empty line (trimmed) into ops. On error, msg says what was
// expected at the 1-based column col of the trimmed line.
func parseTxn(ln []byte, ops []mop) (_ []mop, isInitial bool, col int, msg string) {
	var t txnLine
	if err := json.Unmarshal(ln, &t); err != nil {
		col, msg := lineError(err)
		return ops, false, col, msg
	}
	if t.Value == nil {
		return ops, false, 1, `expected a "value" field holding the transaction's operations`
	}
	ops, col, msg = parseOps(ln, *t.Value, ops)
	return ops, t.IsInitial != nil && *t.IsInitial, col, msg
}

// parseOps appends to ops the operations raws of line ln. On error, msg says what was
// expected at the 1-based column col of the line.
func parseOps(ln []byte, raws []json.RawMessage, ops []mop) (_ []mop, col int, msg string) {
	from := 0
	for n, raw := range raws {
		at := from + bytes.Index(ln[from:], raw)
		from = at + len(raw)
		o, msg := parseOp(raw)
		if msg != "" {
			return ops, at + 1, fmt.Sprintf("operation %d: %s", n+1, msg)
		}
		ops = append(ops, o)
	}
	return ops, 0, ""
}

// lineError says what was expected where a line's JSON failed to decode, at the 1-based
// column col.
func lineError(err error) (col int, msg string) {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return int(max(se.Offset, 1)), "expected one JSON object per line: " + se.Error()
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return int(te.Offset) + 1, fmt.Sprintf(`expected {"value": [operations…]}, found a JSON %s where %s should be`, te.Value, fieldName(te.Field))
	}
	return 1, "expected one JSON object per line: " + err.Error()
}

func fieldName(f string) string {
	if f == "" {
		return "the line's object"
	}
	return strconv.Quote(f)
}

// parseOp parses one micro-operation; msg says what was wrong.
func parseOp(raw json.RawMessage) (mop, string) {
	var o mop
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var xs []any
	if err := dec.Decode(&xs); err != nil || xs == nil {
		return o, `expected an array ["r"|"w"|"i"|"d", key, value, …]`
	}
	if len(xs) == 0 {
		return o, `expected an array ["r"|"w"|"i"|"d", key, value, …], found []`
	}
	kind, _ := xs[0].(string)
	if msg := arity(kind, xs); msg != "" {
		return o, msg
	}
	o.kind = kind[0]
	var msg string
	if o.key, msg = datum(xs[1], "key", false); msg != "" {
		return o, msg
	}
	if o.value, msg = datum(xs[2], "value", kind == "r"); msg != "" {
		return o, msg
	}
	return o, o.trailing(xs)
}

// arity checks the operation's name and its number of elements xs.
func arity(kind string, xs []any) string {
	switch kind {
	case "r", "w":
		if len(xs) < 3 || len(xs) > 4 {
			return fmt.Sprintf(`expected [%q, key, value, flag] (3 or 4 elements), found %d elements`, kind, len(xs))
		}
	case "i", "d":
		if len(xs) < 4 {
			return fmt.Sprintf(`expected [%q, key, value, readValue, isDead, succ, …], found %d elements`, kind, len(xs))
		}
	case "range":
		return `a range query: isovet does not read Viper's range queries yet (their rows as item reads would drop which keys the query did not see, so a phantom would pass unseen); the "r", "w", "i" and "d" operations are read`
	default:
		return fmt.Sprintf(`expected the operation "r", "w", "i" or "d", found %s`, jsonText(xs[0]))
	}
	return ""
}

// trailing parses the elements after key and value: a read's isDead, a write's succ, and
// an insert's or delete's read value, isDead and succ.
func (o *mop) trailing(xs []any) string {
	var msg string
	switch o.kind {
	case 'r':
		_, msg = flag(xs, 3, "isDead")
	case 'w':
		var succ bool
		succ, msg = flag(xs, 3, "succ")
		o.failed = !succ
	case 'i', 'd':
		if o.read, msg = datum(xs[3], "read value", true); msg != "" {
			return msg
		}
		if _, msg := flag(xs, 4, "isDead"); msg != "" {
			return msg
		}
		var succ bool
		succ, msg = flag(xs, 5, "succ")
		o.failed = !succ
	}
	return msg
}

// flag returns element i of xs, a boolean named what, true when xs is shorter.
func flag(xs []any, i int, what string) (bool, string) {
	if i >= len(xs) {
		return true, ""
	}
	v, ok := xs[i].(bool)
	if !ok {
		return false, fmt.Sprintf("expected %s (true or false) as element %d, found %s", what, i+1, jsonText(xs[i]))
	}
	return v, ""
}

// datum converts a JSON key or value: an integer or a string (or null when nullOK).
func datum(x any, what string, nullOK bool) (history.Datum, string) {
	switch v := x.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return history.Int(i), ""
		}
		return history.NilDatum, fmt.Sprintf("expected the %s as an integer in the 64-bit range or a string, found %s", what, v)
	case string:
		return history.Str(v), ""
	case nil:
		if nullOK {
			return history.NilDatum, ""
		}
	}
	return history.NilDatum, fmt.Sprintf("expected the %s as an integer or a string, found %s", what, jsonText(x))
}

func jsonText(x any) string {
	if x == nil {
		return "null"
	}
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	return string(b)
}

// Sniff reports whether a member file named name with first bytes head looks like a Viper
// log: named J<n>.log, and empty (a client that committed nothing) or starting with a JSON
// object whose first field is "value" or "isInitial".
func Sniff(name string, head []byte) bool {
	if ok, _ := path.Match(Members, name); !ok {
		return false
	}
	h := bytes.TrimLeft(head, " \t\r\n")
	if len(h) == 0 {
		return true
	}
	if h[0] != '{' {
		return false
	}
	h = bytes.TrimLeft(h[1:], " \t\r\n")
	return bytes.HasPrefix(h, []byte(`"value"`)) || bytes.HasPrefix(h, []byte(`"isInitial"`))
}
