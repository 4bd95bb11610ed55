package format

import (
	"fmt"
	"slices"

	"github.com/isovet/isovet/history"
)

// Losses returns what h uses that format f cannot hold, in feature order: nil when
// writing h in f keeps everything it says. A feature f holds in some histories only
// ([Format.HoldsIn]) is measured when f does not hold it in h. A read that names its
// writer is a loss only when value matching would not find that writer alone; see
// docs/formats.md for every feature's rule.
func Losses(h *history.History, f Format) []Loss {
	var ls []Loss
	for _, ft := range AllFeatures() {
		if f.Holds.Has(ft) || slices.ContainsFunc(ft.Info().Under, func(u Feature) bool { return !f.Holds.Has(u) }) {
			continue
		}
		if in := f.HoldsIn[ft]; in != nil && in(h) {
			continue
		}
		if l := measures[ft](h, f); l.Count > 0 {
			l.Feature = ft
			ls = append(ls, l)
		}
	}
	return ls
}

// tally counts occurrences of a feature and keeps the first as the example.
type tally struct{ Loss }

func newTally() tally { return tally{Loss{Txn: -1}} }

func (c *tally) add(t history.TxnID, example func() string) {
	if c.Count == 0 {
		c.Txn = t
		c.Example = example()
	}
	c.Count++
}

// measures holds, per feature, how to count its uses in h (f is the target format).
var measures = [numFeatures]func(h *history.History, f Format) Loss{
	FeatInvalid:      func(*history.History, Format) Loss { return Loss{} },
	Sources:          measureSources,
	Predicates:       opsOfKind(history.OpPredRead, history.OpPredWrite),
	InsertDelete:     opsOfKind(history.OpInsert, history.OpDelete),
	Registers:        opsOfKind(history.OpRead, history.OpWrite),
	Lists:            opsOfKind(history.OpAppend, history.OpListRead),
	Mixed:            measureMixed,
	NonInteger:       measureNonInteger,
	FailedOps:        measureFailed,
	Aborted:          txnsWhere(func(h *history.History, t *history.Txn) bool { return t.Outcome == history.OutcomeAborted }, "%s aborted"),
	AbortedMany:      measureAbortedMany,
	Unknown:          txnsWhere(func(h *history.History, t *history.Txn) bool { return t.Outcome == history.OutcomeUnknown }, "%s has an unknown outcome"),
	UnknownThenMore:  measureUnknownThenMore,
	UnknownEnd:       measureUnknownEnd,
	UnknownNilRead:   measureUnknownNilRead,
	ClientTime:       txnsWhere(func(h *history.History, t *history.Txn) bool { return t.HasTime }, "%s"),
	OpTime:           txnsWhere(func(h *history.History, t *history.Txn) bool { return t.OpTimes != nil }, "%s"),
	Timestamps:       txnsWhere(func(h *history.History, t *history.Txn) bool { return t.HasTimestamps }, "%s"),
	Snapshots:        txnsWhere(func(h *history.History, t *history.Txn) bool { _, ok := h.Snapshots[t.ID]; return ok }, "%s"),
	Initial:          measureInitial,
	InitialPerKey:    measureInitialPerKey,
	SharedSessionIDs: measureSharedSessions,
	EmptyTxns:        txnsWhere(func(h *history.History, t *history.Txn) bool { return len(t.Ops) == 0 }, "%s"),
	Placeholders:     measurePlaceholders,
}

func measurePlaceholders(h *history.History, _ Format) Loss {
	c := newTally()
	for _, t := range h.Placeholders() {
		c.add(t, func() string { return "txn " + h.Name(t) })
	}
	return c.Loss
}

func txnsWhere(pred func(h *history.History, t *history.Txn) bool, example string) func(*history.History, Format) Loss {
	return func(h *history.History, _ Format) Loss {
		c := newTally()
		for id, t := range h.All() {
			if pred(h, t) {
				c.add(id, func() string { return fmt.Sprintf(example, "txn "+h.Name(id)) })
			}
		}
		return c.Loss
	}
}

func opsOfKind(kinds ...history.OpKind) func(*history.History, Format) Loss {
	return func(h *history.History, _ Format) Loss {
		c := newTally()
		for id, t := range h.All() {
			for i, o := range t.Ops {
				for _, k := range kinds {
					if o.Kind == k {
						c.add(id, func() string { return fmt.Sprintf("txn %s op %d is a %v", h.Name(id), i, o.Kind) })
					}
				}
			}
		}
		return c.Loss
	}
}

func isList(k history.OpKind) bool { return k == history.OpAppend || k == history.OpListRead }

func isItem(k history.OpKind) bool { return k == history.OpRead || k == history.OpWrite }

// measureMixed counts the operations of the rarer workload when h has item and list ops.
func measureMixed(h *history.History, _ Format) Loss {
	items, lists := countWorkloads(h)
	if items == 0 || lists == 0 {
		return Loss{}
	}
	rare, what := isList, "list"
	if items < lists {
		rare, what = isItem, "item"
	}
	c := newTally()
	for id, t := range h.All() {
		for i, o := range t.Ops {
			if rare(o.Kind) {
				c.add(id, func() string {
					return fmt.Sprintf("txn %s op %d is a %s operation in a history of %d item and %d list operations", h.Name(id), i, what, items, lists)
				})
			}
		}
	}
	return c.Loss
}

// countWorkloads returns the number of item and of list operations in h.
func countWorkloads(h *history.History) (items, lists int) {
	for _, t := range h.All() {
		for _, o := range t.Ops {
			switch {
			case isList(o.Kind):
				lists++
			case isItem(o.Kind):
				items++
			}
		}
	}
	return items, lists
}

func measureNonInteger(h *history.History, _ Format) Loss {
	c := newTally()
	for id, t := range h.All() {
		for i, o := range t.Ops {
			if bad, ok := nonInteger(h, o); ok {
				c.add(id, func() string { return fmt.Sprintf("txn %s op %d holds %s", h.Name(id), i, history.ShowValue(bad)) })
			}
		}
	}
	return c.Loss
}

func isInt(d history.Datum) bool { _, ok := d.Int(); return ok }

// nonInteger returns the first key or value of o that is not an integer, if one is.
func nonInteger(h *history.History, o history.Op) (history.Datum, bool) {
	switch o.Kind {
	case history.OpRead, history.OpWrite, history.OpAppend, history.OpInsert:
		if !isInt(h.Key(o.Key)) {
			return h.Key(o.Key), true
		}
		if !isInt(h.Value(o.Value)) {
			return h.Value(o.Value), true
		}
	case history.OpDelete:
		return h.Key(o.Key), !isInt(h.Key(o.Key))
	case history.OpListRead:
		if !isInt(h.Key(o.Key)) {
			return h.Key(o.Key), true
		}
		for _, v := range h.List(o) {
			if !isInt(h.Value(v)) {
				return h.Value(v), true
			}
		}
	}
	return history.NilDatum, false
}

func measureFailed(h *history.History, _ Format) Loss {
	c := newTally()
	for id, t := range h.All() {
		for i, o := range t.Ops {
			if o.Failed() {
				c.add(id, func() string { return fmt.Sprintf("txn %s op %d, a %v of %s", h.Name(id), i, o.Kind, h.Key(o.Key)) })
			}
		}
	}
	return c.Loss
}

// abortedWithOps returns, per session, the aborted transactions that hold operations.
func abortedWithOps(h *history.History) [][]history.TxnID {
	out := make([][]history.TxnID, len(h.Sessions))
	for s, sess := range h.Sessions {
		for _, t := range sess.Txns {
			if tx := h.Txn(t); tx.Outcome == history.OutcomeAborted && len(tx.Ops) > 0 {
				out[s] = append(out[s], t)
			}
		}
	}
	return out
}

func measureAbortedMany(h *history.History, _ Format) Loss {
	c := newTally()
	for s, ts := range abortedWithOps(h) {
		if len(ts) > 1 {
			c.add(ts[1], func() string {
				return fmt.Sprintf("session %s has %d aborted transactions, txns %s and %s first", h.Sessions[s].Source, len(ts), h.Name(ts[0]), h.Name(ts[1]))
			})
		}
	}
	return c.Loss
}

func measureUnknownThenMore(h *history.History, _ Format) Loss {
	c := newTally()
	for _, sess := range h.Sessions {
		for i, t := range sess.Txns {
			if h.Txn(t).Outcome == history.OutcomeUnknown && i+1 < len(sess.Txns) {
				next := sess.Txns[i+1]
				c.add(t, func() string {
					return fmt.Sprintf("txn %s of unknown outcome is followed by txn %s in session %s", h.Name(t), h.Name(next), sess.Source)
				})
				break
			}
		}
	}
	return c.Loss
}

func measureUnknownEnd(h *history.History, _ Format) Loss {
	last := lastClientTime(h)
	c := newTally()
	for id, t := range h.All() {
		if t.Outcome == history.OutcomeUnknown && t.HasTime && t.Time.End < last {
			c.add(id, func() string {
				return fmt.Sprintf("txn %s ends at %d, before the last client time %d", h.Name(id), t.Time.End, last)
			})
		}
	}
	return c.Loss
}

// lastClientTime returns the latest client time of h, 0 when no transaction has one.
func lastClientTime(h *history.History) int64 {
	var last int64
	timed := false
	for _, t := range h.All() {
		if t.HasTime {
			if !timed || t.Time.End > last {
				last = t.Time.End
			}
			last, timed = max(last, t.Time.Begin), true
		}
	}
	return last
}

// isNilRead reports whether o is an item read that found nil: from a transaction of
// unknown outcome, it may be a read that never ran ([UnknownNilRead]).
func isNilRead(o history.Op) bool { return o.Kind == history.OpRead && o.Value == history.Nil }

func measureUnknownNilRead(h *history.History, _ Format) Loss {
	c := newTally()
	for id, t := range h.All() {
		if t.Outcome != history.OutcomeUnknown {
			continue
		}
		for i, o := range t.Ops {
			if isNilRead(o) {
				c.add(id, func() string { return fmt.Sprintf("txn %s op %d reads %s", h.Name(id), i, h.KV(o.Key, o.Value)) })
			}
		}
	}
	return c.Loss
}

// measureInitial counts the reads whose writer a different initial value would change:
// reads, of keys without their own initial value, of the history's initial value or of
// the one the format's readers assume. If no read sees either, the initial value says
// nothing the output loses.
func measureInitial(h *history.History, f Format) Loss {
	if h.Value(h.Initial) == f.Initial {
		return Loss{}
	}
	return initialReads(h, f, false)
}

// measureInitialPerKey is measureInitial for keys with their own initial value.
func measureInitialPerKey(h *history.History, f Format) Loss {
	if len(h.InitialByKey) == 0 {
		return Loss{}
	}
	return initialReads(h, f, true)
}

// initialReads counts the reads of keys with (perKey) or without their own initial value
// that see the key's initial value or the format's.
func initialReads(h *history.History, f Format, perKey bool) Loss {
	fs := history.ShowValue(f.Initial)
	c := newTally()
	for id, t := range h.All() {
		for _, o := range t.Ops {
			if o.Kind != history.OpRead {
				continue
			}
			if _, own := h.InitialByKey[o.Key]; own != perKey {
				continue
			}
			init := h.InitialValue(o.Key)
			if readsEitherInitial(h, o, init, f.Initial) {
				c.add(id, func() string {
					hs := history.ShowValue(h.Value(init))
					s := fmt.Sprintf("txn %s reads %s; %s starts at %s here, at %s in the format", h.Name(id), h.KV(o.Key, o.Value), h.Key(o.Key), hs, fs)
					if !perKey {
						s += "; check the output with --initial-value " + hs
					}
					return s
				})
			}
		}
	}
	return c.Loss
}

// readsEitherInitial reports whether read o sees the initial value of its key here (init)
// or the format's (finit), but not both: a different initial value changes its writer.
func readsEitherInitial(h *history.History, o history.Op, init history.Value, finit history.Datum) bool {
	if init == o.Value && h.Value(init) == finit {
		return false
	}
	return o.Value == init || h.Value(o.Value) == finit
}

// measureSharedSessions counts sessions (with transactions) whose source id an earlier
// session already has.
func measureSharedSessions(h *history.History, _ Format) Loss {
	seen := make(map[history.Datum]history.SessionID, len(h.Sessions))
	c := newTally()
	for _, sess := range h.Sessions {
		if len(sess.Txns) == 0 {
			continue
		}
		if prev, ok := seen[sess.Source]; ok {
			c.add(sess.Txns[0], func() string {
				return fmt.Sprintf("sessions %d and %d are both %s", prev, sess.ID, sess.Source)
			})
			continue
		}
		seen[sess.Source] = sess.ID
	}
	return c.Loss
}

// measureSources counts reads that name their writer where value matching would not
// find that same writer alone. Value matching takes, for a read of k = v, every other
// transaction's write of v to k (whatever its outcome or position) and the initial state
// if k starts at v; a read after the transaction's own write of k takes that write.
func measureSources(h *history.History, _ Format) Loss {
	var idx valueWriters
	c := newTally()
	for id, t := range h.All() {
		for i, o := range t.Ops {
			if o.Src.Kind == history.SrcByValue {
				if o.Kind == history.OpPredRead || o.Kind == history.OpPredWrite {
					predSources(h, id, i, o, &c)
				}
				continue
			}
			if o.Kind != history.OpRead {
				c.add(id, func() string { return fmt.Sprintf("txn %s op %d, a %v, names its source", h.Name(id), i, o.Kind) })
				continue
			}
			if idx == nil {
				idx = indexWriters(h)
			}
			if !idx.matchAlone(h, id, t, i) {
				w := idx[kv{o.Key, o.Value}]
				c.add(id, func() string {
					return fmt.Sprintf("txn %s reads %s from %s; %d writes of that value", h.Name(id), h.KV(o.Key, o.Value), srcName(h, o.Src), w.n)
				})
			}
		}
	}
	return c.Loss
}

type kv struct {
	k history.Key
	v history.Value
}

// writers counts the writes of one value to one key and keeps the first.
type writers struct {
	n  int32
	t  history.TxnID
	op int32
}

// valueWriters holds, per key and value, the writes value matching finds for a read.
type valueWriters map[kv]writers

// indexWriters indexes the writes of h by key and value written (a delete writes nil).
func indexWriters(h *history.History) valueWriters {
	idx := make(valueWriters)
	for id, t := range h.All() {
		for i, o := range t.Ops {
			v := o.Value
			switch o.Kind {
			case history.OpWrite, history.OpInsert:
			case history.OpDelete:
				v = history.Nil
			default:
				continue
			}
			w := idx[kv{o.Key, v}]
			if w.n == 0 {
				w.t, w.op = id, int32(i)
			}
			w.n++
			idx[kv{o.Key, v}] = w
		}
	}
	return idx
}

// matchAlone reports whether value matching finds, for read i of transaction t (id), the
// source the read names and only it.
func (idx valueWriters) matchAlone(h *history.History, id history.TxnID, t *history.Txn, i int) bool {
	o := t.Ops[i]
	if j := ownWrite(t.Ops[:i], o.Key); j >= 0 {
		return o.Src.Kind == history.SrcTxn && o.Src.Txn == id && t.Ops[j].Value == o.Value
	}
	w := idx[kv{o.Key, o.Value}]
	init := h.InitialValue(o.Key) == o.Value
	if o.Src.Kind == history.SrcTxn {
		return !init && w.n == 1 && w.t == o.Src.Txn && w.op == o.Src.Op
	}
	return init && w.n == 0 // SrcInit, SrcNone
}

// predSources counts a predicate op's rows that name their writer: no format that holds
// predicates lacks sources today, so every such row counts.
func predSources(h *history.History, id history.TxnID, i int, o history.Op, c *tally) {
	p := h.Pred(o)
	for r := range p.Rows {
		if s := p.Src(r); s.Kind != history.SrcByValue {
			c.add(id, func() string { return fmt.Sprintf("txn %s op %d row %d names %s", h.Name(id), i, r, srcName(h, s)) })
		}
	}
}

// ownWrite returns the index of the last write of k in ops, or -1.
func ownWrite(ops []history.Op, k history.Key) int {
	for j := len(ops) - 1; j >= 0; j-- {
		if ops[j].Kind.IsWrite() && ops[j].Key == k {
			return j
		}
	}
	return -1
}

func srcName(h *history.History, s history.Src) string {
	switch s.Kind {
	case history.SrcInit:
		return "the initial state"
	case history.SrcNone:
		return "nothing (a read that found no row)"
	case history.SrcTxn:
		if int(s.Txn) < len(h.Txns) {
			return fmt.Sprintf("txn %s op %d", h.Name(s.Txn), s.Op)
		}
	}
	return "an unknown source"
}
