package certify

import (
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/deps"
)

// maxRowChecks bounds the work of rowReplay: every predicate operation looks at every row,
// so it is declined (the pass stays Unknown) above this many row evaluations.
var maxRowChecks = 50_000_000

// rowReplay decides what the dependency analysis could not: the predicate evaluations on
// partial row images. Vbox's `UPDATE … SET v1 = …` records only the column it set, so
// whether a later predicate on v2 held on that version depends on the version before it,
// that is on the order, and [deps] takes such versions either way and marks the history
// partly modelled. Given a serial order, nothing is left open: rowReplay runs the order on
// whole rows (each image merged into the row it updates) and checks every predicate
// operation against them. A predicate read must return exactly the live rows its
// predicate selects; a predicate write must have changed exactly those (its unmatched
// rows are Vbox's invisible writes, not applied). The values the rows were read with are
// the candidate replay's business ([replay]); this one checks which rows were selected.
//
// It returns false when the order fails, and also when it cannot decide: a predicate that
// is not a range, a value that is neither an integer nor a row image, a field no write
// ever set on a live row, or more than maxRowChecks evaluations.
func rowReplay(d *deps.Deps, order, txn []int32) bool {
	h := d.H
	fieldID, ok := predFields(h)
	if !ok {
		return false
	}
	if len(h.Preds) == 0 {
		return true
	}
	if len(h.Preds)*len(h.Keys) > maxRowChecks {
		return false
	}
	s := newPredRows(h, fieldID)
	if !s.initial() {
		return false
	}
	for _, u := range order {
		for _, o := range h.Txns[txn[u]].Ops {
			if !s.step(o) {
				return false
			}
		}
	}
	return true
}

// initial puts every row in its initial image; false when one is neither an integer nor
// a row image.
func (s *predRows) initial() bool {
	for k := range s.h.Keys {
		if !s.apply(history.Key(k), s.h.InitialValue(history.Key(k))) {
			return false
		}
	}
	return true
}

// predFields numbers the fields predicates read; ok is false when a predicate is not a
// range over a field.
func predFields(h *history.History) (map[string]int, bool) {
	fieldID := map[string]int{}
	for i := range h.Preds {
		p := &h.Preds[i].Pred
		if !p.IsRange || p.Field.IsNil() {
			return nil, false
		}
		if _, ok := fieldID[p.Field.String()]; !ok {
			fieldID[p.Field.String()] = len(fieldID)
		}
	}
	return fieldID, true
}

// predRows is rowReplay's rows: per row, live, and per field its value and whether some
// image set it.
type predRows struct {
	h       *history.History
	fieldID map[string]int
	fields  []string
	nf      int
	live    []bool
	val     []int64
	set     []bool
	mark    []bool // per row: listed as matched by the operation being checked
}

func newPredRows(h *history.History, fieldID map[string]int) *predRows {
	nf, nk := len(fieldID), len(h.Keys)
	fields := make([]string, nf)
	for f, i := range fieldID {
		fields[i] = f
	}
	return &predRows{
		h: h, fieldID: fieldID, fields: fields, nf: nf,
		live: make([]bool, nk), val: make([]int64, nk*nf), set: make([]bool, nk*nf),
		mark: make([]bool, nk),
	}
}

// step replays operation o, checking each predicate operation's selection first.
func (s *predRows) step(o history.Op) bool {
	switch o.Kind {
	case history.OpPredRead:
		return s.selected(s.h.Pred(o))
	case history.OpPredWrite:
		return s.predWrite(s.h.Pred(o))
	case history.OpDelete:
		return s.apply(o.Key, history.Nil)
	case history.OpWrite, history.OpInsert:
		return s.apply(o.Key, o.Value)
	}
	return true
}

// predWrite replays predicate write po: its selection, then the new images of the rows it
// matched.
func (s *predRows) predWrite(po *history.PredOp) bool {
	if !s.selected(po) {
		return false
	}
	for _, r := range po.Rows {
		if r.Match && !s.apply(r.Key, r.Value) {
			return false
		}
	}
	return true
}

// apply makes v row k's image; false when v is neither an integer nor a row image.
func (s *predRows) apply(k history.Key, v history.Value) bool {
	nf := s.nf
	at := int(k) * nf
	dv := s.h.Value(v)
	if dv.IsNil() {
		s.live[k] = false
		clear(s.set[at : at+nf])
		return true
	}
	if i, ok := dv.Int(); ok { // one value column: every field is it
		s.live[k] = true
		for f := range nf {
			s.val[at+f], s.set[at+f] = i, true
		}
		return true
	}
	str, ok := dv.Str()
	if !ok {
		return false
	}
	return s.applyImage(k, str)
}

// applyImage merges row image str ("col=int,...") into row k: a new row holds only what it
// sets. False when a field's value is not an integer.
func (s *predRows) applyImage(k history.Key, str string) bool {
	at := int(k) * s.nf
	if !s.live[k] {
		clear(s.set[at : at+s.nf]) // a new row: only what this image sets
	}
	s.live[k] = true
	for f, name := range s.fields {
		i, found, ok := history.ImageInt(str, name)
		switch {
		case !ok:
			return false
		case found:
			s.val[at+f], s.set[at+f] = i, true
		}
	}
	return true
}

// holds evaluates p, a range over field f, on row k; ok is false when it cannot be
// decided.
func (s *predRows) holds(p *history.Predicate, f int, k history.Key) (in, ok bool) {
	if !s.live[k] {
		return false, true
	}
	at := int(k)*s.nf + f
	if !s.set[at] {
		return false, false
	}
	return p.Lo <= s.val[at] && s.val[at] <= p.Hi, true
}

// selected checks that the rows op po selects are exactly those it lists as matched.
func (s *predRows) selected(po *history.PredOp) bool {
	ok := true
	for _, r := range po.Rows {
		if r.Match {
			s.mark[r.Key] = true
		}
	}
	f := s.fieldID[po.Pred.Field.String()]
	for k := range s.h.Keys {
		in, known := s.holds(&po.Pred, f, history.Key(k))
		if !known || in != s.mark[k] {
			ok = false
			break
		}
	}
	for _, r := range po.Rows {
		s.mark[r.Key] = false
	}
	return ok
}
