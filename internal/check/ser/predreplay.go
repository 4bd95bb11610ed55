package ser

import (
	"isovet/history"
	"isovet/internal/deps"
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
	// The fields predicates read, numbered.
	fieldID := map[string]int{}
	npred := 0
	for i := range h.Preds {
		p := &h.Preds[i].Pred
		if !p.IsRange || p.Field.IsNil() {
			return false
		}
		if _, ok := fieldID[p.Field.String()]; !ok {
			fieldID[p.Field.String()] = len(fieldID)
		}
		npred++
	}
	if npred == 0 {
		return true
	}
	if npred*len(h.Keys) > maxRowChecks {
		return false
	}
	nf := len(fieldID)
	fields := make([]string, nf)
	for f, i := range fieldID {
		fields[i] = f
	}
	// Per row: live, and per field its value and whether some image set it.
	live := make([]bool, len(h.Keys))
	val := make([]int64, len(h.Keys)*nf)
	set := make([]bool, len(h.Keys)*nf)
	apply := func(k history.Key, v history.Value) bool {
		at := int(k) * nf
		dv := h.Value(v)
		if dv.IsNil() {
			live[k] = false
			clear(set[at : at+nf])
			return true
		}
		if i, ok := dv.Int(); ok { // one value column: every field is it
			live[k] = true
			for f := range nf {
				val[at+f], set[at+f] = i, true
			}
			return true
		}
		s, ok := dv.Str()
		if !ok {
			return false
		}
		if !live[k] {
			clear(set[at : at+nf]) // a new row: only what this image sets
		}
		live[k] = true
		for f, name := range fields {
			i, found, ok := history.ImageInt(s, name)
			switch {
			case !ok:
				return false
			case found:
				val[at+f], set[at+f] = i, true
			}
		}
		return true
	}
	// holds evaluates p, a range over field f, on row k; ok is false when it cannot be
	// decided.
	holds := func(p *history.Predicate, f int, k history.Key) (bool, bool) {
		if !live[k] {
			return false, true
		}
		at := int(k)*nf + f
		if !set[at] {
			return false, false
		}
		return p.Lo <= val[at] && val[at] <= p.Hi, true
	}
	for k := range h.Keys {
		if !apply(history.Key(k), h.InitialValue(history.Key(k))) {
			return false
		}
	}
	// selected checks that the rows op po selects are exactly those it lists as matched.
	mark := make([]bool, len(h.Keys))
	selected := func(po *history.PredOp) bool {
		ok := true
		for _, r := range po.Rows {
			if r.Match {
				mark[r.Key] = true
			}
		}
		f := fieldID[po.Pred.Field.String()]
		for k := range h.Keys {
			in, known := holds(&po.Pred, f, history.Key(k))
			if !known || in != mark[k] {
				ok = false
				break
			}
		}
		for _, r := range po.Rows {
			mark[r.Key] = false
		}
		return ok
	}
	for _, u := range order {
		t := &h.Txns[txn[u]]
		for _, o := range t.Ops {
			switch o.Kind {
			case history.OpPredRead:
				if !selected(h.Pred(o)) {
					return false
				}
			case history.OpPredWrite:
				po := h.Pred(o)
				if !selected(po) {
					return false
				}
				for _, r := range po.Rows {
					if r.Match && !apply(r.Key, r.Value) {
						return false
					}
				}
			case history.OpDelete:
				if !apply(o.Key, history.Nil) {
					return false
				}
			case history.OpWrite, history.OpInsert:
				if !apply(o.Key, o.Value) {
					return false
				}
			}
		}
	}
	return true
}
