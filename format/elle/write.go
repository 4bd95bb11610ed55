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
// (reads carry nil) and its completion (:ok, :fail or :info), one map per line. Sessions
// are written as processes by source id, or numbered by position when their ids repeat.
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
	h     *history.History
	json  bool
	buf   []byte
	procs []history.Datum // the :process of each session
}

// processes returns the :process to write for each session: its source id, unless two
// sessions would then merge when read back (a process that did not end at an :info shows
// up again, or two sessions have no id) or be skipped (Elle JSON's "nemesis"); then every
// session is numbered by its position.
func processes(h *history.History) []history.Datum {
	ids := make([]history.Datum, len(h.Sessions))
	ended := make(map[history.Datum]bool, len(h.Sessions)) // seen, and whether it ended at :info
	for i, s := range h.Sessions {
		if len(s.Txns) == 0 {
			continue
		}
		if done, seen := ended[s.Source]; seen && !done || s.Source == history.Str("nemesis") {
			for i := range ids {
				ids[i] = history.Int(int64(i))
			}
			return ids
		}
		ended[s.Source] = h.Txn(s.Txns[len(s.Txns)-1]).Outcome == history.OutcomeUnknown
		ids[i] = s.Source
	}
	return ids
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
		wr.op(t, "invoke", inv, t.Time.Begin, mode != indexNone, ti == 0)
		typ := "ok"
		switch t.Outcome {
		case history.OutcomeAborted:
			typ = "fail"
		case history.OutcomeUnknown:
			typ = "info"
		}
		wr.op(t, typ, done, t.Time.End, mode != indexNone, false)
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
	w.buf = edn.AppendString(w.buf, s)
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
