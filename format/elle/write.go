package elle

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/edn"
)

// WriteEDN writes h as a Jepsen EDN history: for each transaction, in id order, an :invoke
// (reads carry nil) and its completion (:ok, :fail or :info), one map per line, with the
// transaction's client interval as their :time. A transaction without a client interval is
// written as its completion alone, so that reading the output back orders it after nothing.
// Sessions are written as processes by source id, or given fresh ids where they would merge
// on reading back.
func WriteEDN(w io.Writer, h *history.History) error { return write(w, h, false) }

// WriteJSON writes h as an Elle JSON history: one array holding the same operations as
// [WriteEDN], one object per line.
func WriteJSON(w io.Writer, h *history.History) error { return write(w, h, true) }

type indexMode uint8

const (
	indexNone  indexMode = iota // no transaction has a source id: write no :index
	indexKeep                   // source ids serve as invoke indices
	indexDense                  // number the operations 0, 1, 2, ...
)

// indexes returns the :index of the invoke and of the completion of t, the ti-th
// transaction.
func (m indexMode) indexes(t *history.Txn, ti int) (inv, done int64) {
	switch m {
	case indexKeep:
		inv, _ = t.Source.Int()
		return inv, inv + 1
	case indexDense:
		return 2 * int64(ti), 2*int64(ti) + 1
	}
	return 0, 0
}

// completionTypes maps outcomes to the :type of their completions.
var completionTypes = [...]string{
	history.OutcomeCommitted: "ok",
	history.OutcomeAborted:   "fail",
	history.OutcomeUnknown:   "info",
}

// indexing decides how to write :index (see the package doc).
func indexing(h *history.History) indexMode {
	switch {
	case len(h.Txns) == 0:
		return indexNone
	case h.Txns[0].Source.IsNil():
		for i := range h.Txns {
			if !h.Txns[i].Source.IsNil() {
				return indexDense
			}
		}
		return indexNone
	case spacedSources(h):
		return indexKeep
	}
	return indexDense
}

// spacedSources reports whether the transactions' source ids are non-negative integers,
// each at least 2 more than the one before: ids for invokes, with room after each for its
// completion.
func spacedSources(h *history.History) bool {
	prev := int64(-2)
	for i := range h.Txns {
		n, ok := h.Txns[i].Source.Int()
		if !ok || n < 0 || n < prev+2 {
			return false
		}
		prev = n
	}
	return true
}

// checkWorkload verifies that h holds one workload Elle can express.
func checkWorkload(h *history.History) error {
	var list, reg bool
	for ti := range h.Txns {
		t := &h.Txns[ti]
		for i, o := range t.Ops {
			switch o.Kind {
			case history.OpAppend, history.OpListRead:
				list = true
			case history.OpWrite:
				reg = true
			case history.OpRead:
				if o.Value != history.Nil {
					reg = true
				}
			default:
				return fmt.Errorf("elle: txn %s op %d is of kind %v: Elle histories hold only appends, writes and reads", h.Name(t.ID), i, o.Kind)
			}
			if list && reg {
				return fmt.Errorf("elle: txn %s: %w", h.Name(t.ID), ErrMixedWorkloads)
			}
		}
	}
	return nil
}

type writer struct {
	h    *history.History
	json bool
	buf  []byte
	// bare caches, for string datums that look like a collection, how to write them
	// (nil: as a string).
	bare map[string][]byte
	// procs is the process each session is written with (see processes).
	procs []history.Datum
}

// processes returns the process to write each session of h with: its source id, unless an
// earlier session has the same one and reading the output back would join the two (the
// writer writes one transaction at a time, so a process starts a new session only after a
// transaction with an unknown outcome), or when its id is "nemesis" (Elle skips that
// process's operations). Such a session (a lane of a process that pipelined transactions,
// or sessions a format numbers alike) gets a fresh integer process instead.
func processes(h *history.History) []history.Datum {
	procs := make([]history.Datum, len(h.Sessions))
	fresh := int64(0)
	for _, s := range h.Sessions {
		if n, ok := s.Source.Int(); ok && n >= fresh {
			fresh = n + 1
		}
	}
	last := map[history.Datum]history.SessionID{}
	for i, s := range h.Sessions {
		if s.Source == history.Str("nemesis") || rejoins(h, last, &s) {
			procs[i] = history.Int(fresh)
			fresh++
			continue
		}
		procs[i] = s.Source
		if len(s.Txns) > 0 {
			last[s.Source] = s.ID
		}
	}
	return procs
}

// rejoins reports whether session s, written with its source id, would join on reading
// back the last earlier session written with that id, last[s.Source]: unless that
// session's last transaction comes before s's first and has an unknown outcome.
func rejoins(h *history.History, last map[history.Datum]history.SessionID, s *history.Session) bool {
	prev, seen := last[s.Source]
	if !seen || len(s.Txns) == 0 {
		return false
	}
	p := h.Sessions[prev].Txns
	end := p[len(p)-1]
	return end > s.Txns[0] || h.Txns[end].Outcome != history.OutcomeUnknown
}

func write(w io.Writer, h *history.History, json bool) error {
	if err := checkWorkload(h); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	wr := &writer{h: h, json: json, procs: processes(h)}
	mode := indexing(h)
	if json {
		wr.buf = append(wr.buf, "[\n"...)
	}
	for ti := range h.Txns {
		t := &h.Txns[ti]
		inv, done := mode.indexes(t, ti)
		typ := completionTypes[t.Outcome]
		if t.HasTime {
			wr.op(t, "invoke", inv, t.Time.Begin, mode != indexNone, ti == 0)
			wr.op(t, typ, done, t.Time.End, mode != indexNone, false)
		} else {
			// No client interval: a completion alone, which orders it after nothing.
			wr.op(t, typ, inv, 0, mode != indexNone, ti == 0)
		}
		if len(wr.buf) > 1<<15 {
			if _, err := bw.Write(wr.buf); err != nil {
				return err
			}
			wr.buf = wr.buf[:0]
		}
	}
	if json {
		wr.buf = append(wr.buf, "\n]\n"...)
	}
	if _, err := bw.Write(wr.buf); err != nil {
		return err
	}
	return bw.Flush()
}

func (w *writer) field(name string, first bool) {
	if !first {
		w.buf = append(w.buf, ',')
		if !w.json {
			w.buf = append(w.buf, ' ')
		}
	}
	if w.json {
		w.buf = append(w.buf, '"')
		w.buf = append(w.buf, name...)
		w.buf = append(w.buf, '"', ':')
	} else {
		w.buf = append(w.buf, ':')
		w.buf = append(w.buf, name...)
		w.buf = append(w.buf, ' ')
	}
}

func (w *writer) word(s string) {
	if w.json {
		w.buf = append(w.buf, '"')
		w.buf = append(w.buf, s...)
		w.buf = append(w.buf, '"')
	} else {
		w.buf = append(w.buf, ':')
		w.buf = append(w.buf, s...)
	}
}

// op writes one operation map of t.
func (w *writer) op(t *history.Txn, typ string, index, tm int64, withIndex, first bool) {
	if w.json && !first {
		w.buf = append(w.buf, ",\n"...)
	}
	w.opHead(t, typ, index, tm, withIndex)
	if p := w.procs[t.Session]; !p.IsNil() {
		w.field("process", false)
		w.process(p)
	}
	w.field("f", false)
	w.word("txn")
	w.field("value", false)
	w.buf = append(w.buf, '[')
	for i, o := range t.Ops {
		if i > 0 {
			w.sep()
		}
		w.mop(o, typ == "invoke")
	}
	w.buf = append(w.buf, ']', '}')
	if !w.json {
		w.buf = append(w.buf, '\n')
	}
}

// opHead opens an operation map of t and writes its :index (if withIndex), :time (if t
// has a client interval) and :type.
func (w *writer) opHead(t *history.Txn, typ string, index, tm int64, withIndex bool) {
	w.buf = append(w.buf, '{')
	lead := true
	if withIndex {
		w.field("index", true)
		w.buf = strconv.AppendInt(w.buf, index, 10)
		lead = false
	}
	if t.HasTime {
		w.field("time", lead)
		w.buf = strconv.AppendInt(w.buf, tm, 10)
		lead = false
	}
	w.field("type", lead)
	w.word(typ)
}

// process writes the process p, an integer or a string.
func (w *writer) process(p history.Datum) {
	if n, ok := p.Int(); ok {
		w.buf = strconv.AppendInt(w.buf, n, 10)
	} else {
		s, _ := p.Str()
		w.buf = edn.AppendString(w.buf, s)
	}
}

// mopFuncs maps op kinds to the functions of their micro-ops; the others are reads.
var mopFuncs = [...]string{history.OpAppend: "append", history.OpWrite: "w"}

// mop writes the micro-op of o, [f k v]; an invoke's reads carry nil.
func (w *writer) mop(o history.Op, invoke bool) {
	w.buf = append(w.buf, '[')
	f := "r"
	if int(o.Kind) < len(mopFuncs) && mopFuncs[o.Kind] != "" {
		f = mopFuncs[o.Kind]
	}
	w.word(f)
	w.sep()
	w.datum(w.h.Key(o.Key))
	w.sep()
	switch {
	case o.Kind == history.OpAppend || o.Kind == history.OpWrite:
		w.datum(w.h.Value(o.Value))
	case invoke:
		w.null()
	case o.Kind == history.OpListRead:
		w.list(w.h.List(o))
	default:
		w.datum(w.h.Value(o.Value))
	}
	w.buf = append(w.buf, ']')
}

// list writes the values of a list read.
func (w *writer) list(vs []history.Value) {
	w.buf = append(w.buf, '[')
	for j, v := range vs {
		if j > 0 {
			w.sep()
		}
		w.datum(w.h.Value(v))
	}
	w.buf = append(w.buf, ']')
}

func (w *writer) sep() {
	if w.json {
		w.buf = append(w.buf, ',')
	} else {
		w.buf = append(w.buf, ' ')
	}
}

func (w *writer) null() {
	if w.json {
		w.buf = append(w.buf, "null"...)
	} else {
		w.buf = append(w.buf, "nil"...)
	}
}

func (w *writer) datum(d history.Datum) {
	if n, ok := d.Int(); ok {
		w.buf = strconv.AppendInt(w.buf, n, 10)
		return
	}
	s, ok := d.Str()
	if !ok {
		w.null()
		return
	}
	if !w.json && isKeyword(s) {
		w.buf = append(w.buf, s...)
		return
	}
	if b := w.bareOf(s); b != nil {
		w.buf = append(w.buf, b...)
		return
	}
	w.buf = edn.AppendString(w.buf, s)
}

// bareOf returns, from the cache, how to write the string datum s as the collection it
// renders, or nil to write it as a string (see bareForm).
func (w *writer) bareOf(s string) []byte {
	if len(s) == 0 || s[0] != '[' && s[0] != '{' && s[0] != '#' {
		return nil
	}
	b, ok := w.bare[s]
	if !ok {
		b = bareForm(s, w.json)
		if w.bare == nil {
			w.bare = make(map[string][]byte)
		}
		w.bare[s] = b
	}
	return b
}

// bareForm returns how to write the string datum s as the collection it renders (the reader
// interns a vector, map or set key or value as its canonical EDN rendering), or nil when s is
// to be written as a string: when it is not such a rendering, or (in JSON) when the
// collection has no JSON form that reads back as s.
func bareForm(s string, json bool) []byte {
	v, ok := parseOne([]byte(s), edn.Options{})
	if !ok || !v.Kind.IsColl() || v.Kind == edn.Tagged || v.Kind == edn.List || !rendersAs(v, s) {
		return nil
	}
	if !json {
		return []byte(s)
	}
	j := appendJSONValue(nil, *v)
	if back, ok := parseOne(j, edn.Options{JSON: true}); !ok || !rendersAs(back, s) {
		return nil
	}
	return j
}

// parseOne parses b, which must hold a single value.
func parseOne(b []byte, opts edn.Options) (*edn.Value, bool) {
	vs, err := edn.ParseAll(b, opts)
	if err != nil || len(vs) != 1 {
		return nil, false
	}
	return &vs[0], true
}

// rendersAs reports whether the canonical rendering of v is s.
func rendersAs(v *edn.Value, s string) bool {
	c, bad, _ := appendCanon(nil, v)
	return bad == nil && string(c) == s
}

// isKeyword reports whether s reads back as the EDN keyword s.
func isKeyword(s string) bool {
	if len(s) < 2 || s[0] != ':' || s[1] == ':' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !keywordByte[s[i]] {
			return false
		}
	}
	return true
}

// keywordByte marks the bytes isKeyword accepts in a keyword after its colon.
var keywordByte = func() (t [256]bool) {
	for _, c := range "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.*+!-_?$%&=<>/:'" {
		t[c] = true
	}
	return t
}()

// appendJSONValue renders v in JSON syntax, for error messages about JSON input.
func appendJSONValue(dst []byte, v edn.Value) []byte {
	switch v.Kind {
	case edn.Nil:
		return append(dst, "null"...)
	case edn.String, edn.Keyword, edn.Symbol:
		return edn.AppendString(dst, v.Str)
	case edn.Vector, edn.List, edn.Set:
		dst = append(dst, '[')
		for i, e := range v.Items {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONValue(dst, e)
		}
		return append(dst, ']')
	case edn.Map:
		return appendJSONObject(dst, v.Items)
	}
	return edn.Append(dst, v)
}

// appendJSONObject renders a map's keys and values, items, as a JSON object.
func appendJSONObject(dst []byte, items []edn.Value) []byte {
	dst = append(dst, '{')
	for i := 0; i+1 < len(items); i += 2 {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONValue(dst, items[i])
		dst = append(dst, ':')
		dst = appendJSONValue(dst, items[i+1])
	}
	return append(dst, '}')
}
