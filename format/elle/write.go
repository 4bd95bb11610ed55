package elle

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"isovet/history"
	"isovet/internal/edn"
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

// indexing decides how to write :index (see the package doc).
func indexing(h *history.History) indexMode {
	if len(h.Txns) == 0 {
		return indexNone
	}
	mode := indexKeep
	if h.Txns[0].Source.IsNil() {
		mode = indexNone
	}
	prev := int64(-2)
	for i := range h.Txns {
		src := h.Txns[i].Source
		if mode == indexNone {
			if !src.IsNil() {
				return indexDense
			}
			continue
		}
		n, ok := src.Int()
		if !ok || n < 0 || n < prev+2 {
			return indexDense
		}
		prev = n
	}
	return mode
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
		procs[i] = s.Source
		if s.Source == history.Str("nemesis") {
			procs[i] = history.Int(fresh)
			fresh++
			continue
		}
		prev, seen := last[s.Source]
		if seen && len(s.Txns) > 0 {
			p := h.Sessions[prev].Txns
			end := p[len(p)-1]
			if end > s.Txns[0] || h.Txns[end].Outcome != history.OutcomeUnknown {
				procs[i] = history.Int(fresh)
				fresh++
				continue
			}
		}
		if len(s.Txns) > 0 {
			last[s.Source] = s.ID
		}
	}
	return procs
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
		var inv, done int64
		switch mode {
		case indexKeep:
			inv, _ = t.Source.Int()
			done = inv + 1
		case indexDense:
			inv, done = 2*int64(ti), 2*int64(ti)+1
		}
		typ := "ok"
		switch t.Outcome {
		case history.OutcomeAborted:
			typ = "fail"
		case history.OutcomeUnknown:
			typ = "info"
		}
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
	if p := w.procs[t.Session]; !p.IsNil() {
		w.field("process", false)
		if n, ok := p.Int(); ok {
			w.buf = strconv.AppendInt(w.buf, n, 10)
		} else {
			s, _ := p.Str()
			w.buf = edn.AppendString(w.buf, s)
		}
	}
	w.field("f", false)
	w.word("txn")
	w.field("value", false)
	w.buf = append(w.buf, '[')
	invoke := typ == "invoke"
	for i, o := range t.Ops {
		if i > 0 {
			w.sep()
		}
		w.buf = append(w.buf, '[')
		switch o.Kind {
		case history.OpAppend:
			w.word("append")
		case history.OpWrite:
			w.word("w")
		default:
			w.word("r")
		}
		w.sep()
		w.datum(w.h.Key(o.Key))
		w.sep()
		switch {
		case o.Kind == history.OpAppend || o.Kind == history.OpWrite:
			w.datum(w.h.Value(o.Value))
		case invoke:
			w.null()
		case o.Kind == history.OpListRead:
			w.buf = append(w.buf, '[')
			for j, v := range w.h.List(o) {
				if j > 0 {
					w.sep()
				}
				w.datum(w.h.Value(v))
			}
			w.buf = append(w.buf, ']')
		default:
			w.datum(w.h.Value(o.Value))
		}
		w.buf = append(w.buf, ']')
	}
	w.buf = append(w.buf, ']', '}')
	if !w.json {
		w.buf = append(w.buf, '\n')
	}
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
	if len(s) > 0 && (s[0] == '[' || s[0] == '{' || s[0] == '#') {
		b, ok := w.bare[s]
		if !ok {
			b = bareForm(s, w.json)
			if w.bare == nil {
				w.bare = make(map[string][]byte)
			}
			w.bare[s] = b
		}
		if b != nil {
			w.buf = append(w.buf, b...)
			return
		}
	}
	w.buf = edn.AppendString(w.buf, s)
}

// bareForm returns how to write the string datum s as the collection it renders (the reader
// interns a vector, map or set key or value as its canonical EDN rendering), or nil when s is
// to be written as a string: when it is not such a rendering, or (in JSON) when the
// collection has no JSON form that reads back as s.
func bareForm(s string, json bool) []byte {
	vs, err := edn.ParseAll([]byte(s), edn.Options{})
	if err != nil || len(vs) != 1 || !vs[0].Kind.IsColl() || vs[0].Kind == edn.Tagged || vs[0].Kind == edn.List {
		return nil
	}
	if c, bad, _ := appendCanon(nil, &vs[0]); bad != nil || string(c) != s {
		return nil
	}
	if !json {
		return []byte(s)
	}
	j := appendJSONValue(nil, vs[0])
	back, err := edn.ParseAll(j, edn.Options{JSON: true})
	if err != nil || len(back) != 1 {
		return nil
	}
	if c, bad, _ := appendCanon(nil, &back[0]); bad != nil || string(c) != s {
		return nil
	}
	return j
}

// isKeyword reports whether s reads back as the EDN keyword s.
func isKeyword(s string) bool {
	if len(s) < 2 || s[0] != ':' || s[1] == ':' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.' || c == '*' || c == '+' || c == '!' || c == '-' || c == '_' || c == '?' || c == '$' || c == '%' || c == '&' || c == '=' || c == '<' || c == '>' || c == '/' || c == ':' || c == '\'':
		default:
			return false
		}
	}
	return true
}

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
		dst = append(dst, '{')
		for i := 0; i+1 < len(v.Items); i += 2 {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONValue(dst, v.Items[i])
			dst = append(dst, ':')
			dst = appendJSONValue(dst, v.Items[i+1])
		}
		return append(dst, '}')
	}
	return edn.Append(dst, v)
}
