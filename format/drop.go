package format

import (
	"slices"

	"github.com/isovet/isovet/history"
)

// Drop returns h without the droppable features in ls (from [Losses]), as
// [FeatureInfo.Drop] says for each: sources are stripped (reads are matched by value),
// predicate, insert, delete and failed operations are left out, aborted and unknown
// transactions are left out, and so are placeholder transactions; a session's aborted
// transactions are merged into its first;
// times, timestamps and snapshots are cleared, and transactions left with no operations
// are left out when the loss list includes [EmptyTxns]. Features that need no change to h
// (the format reads them differently) are left as they are. h is not modified; the result
// shares its key, value and list tables.
func Drop(h *history.History, ls []Loss) *history.History {
	var d dropper
	for _, l := range ls {
		if l.Droppable() {
			d.drop[l.Feature] = true
		}
	}
	return d.run(h)
}

type dropper struct {
	drop [numFeatures]bool
	h    *history.History
	// newID maps old transaction ids to new ones (-1: left out); newOp maps, for
	// transactions whose ops changed place, each old op index to its new one (-1: left out).
	newID []history.TxnID
	newOp map[history.TxnID][]int32
	// into maps an aborted transaction merged into another to that one.
	into map[history.TxnID]history.TxnID
	// placeholder marks the placeholder transactions to leave out.
	placeholder map[history.TxnID]bool
}

func (d *dropper) keepOp(t *history.Txn, o history.Op) bool {
	switch {
	case d.drop[Predicates] && (o.Kind == history.OpPredRead || o.Kind == history.OpPredWrite),
		d.drop[InsertDelete] && (o.Kind == history.OpInsert || o.Kind == history.OpDelete),
		d.drop[FailedOps] && o.Failed(),
		d.drop[UnknownNilRead] && t.Outcome == history.OutcomeUnknown && isNilRead(o):
		return false
	}
	return true
}

func (d *dropper) keepTxn(t *history.Txn) bool {
	switch {
	case d.drop[Aborted] && t.Outcome == history.OutcomeAborted,
		d.drop[Unknown] && t.Outcome == history.OutcomeUnknown:
		return false
	}
	_, merged := d.into[t.ID]
	return !merged && !d.placeholder[t.ID]
}

func (d *dropper) run(h *history.History) *history.History {
	d.h = h
	d.newOp = make(map[history.TxnID][]int32)
	d.markLeftOut()
	keep := d.place()
	// Pass 2: the new transactions.
	out := *h
	out.Txns = make([]history.Txn, len(keep))
	for i, k := range keep {
		out.Txns[i] = d.txn(k.old, k.from, history.TxnID(i))
	}
	d.sessions(&out)
	d.snapshots(&out)
	d.preds(&out)
	return &out
}

// markLeftOut marks the placeholder transactions to leave out and the aborted transactions
// to merge into their session's first.
func (d *dropper) markLeftOut() {
	d.into = make(map[history.TxnID]history.TxnID)
	d.placeholder = make(map[history.TxnID]bool)
	if d.drop[Placeholders] {
		for _, t := range d.h.Placeholders() {
			d.placeholder[t] = true
		}
	}
	if d.drop[AbortedMany] && !d.drop[Aborted] {
		for _, ts := range abortedWithOps(d.h) {
			for _, t := range ts[min(1, len(ts)):] {
				d.into[t] = ts[0]
			}
		}
	}
}

// kept is a transaction of the new history: the old one it stands for, and the
// transactions whose ops it holds, in order.
type kept struct {
	old  history.TxnID
	from []history.TxnID
}

// place is pass 1: it decides which transactions stay (setting newID) and where their ops
// go (newOp), and returns the transactions of the new history.
func (d *dropper) place() []kept {
	h := d.h
	var keep []kept
	d.newID = make([]history.TxnID, len(h.Txns))
	merged := d.merged()
	for id, t := range h.All() {
		d.newID[id] = -1
		if !d.keepTxn(t) {
			continue
		}
		from := append([]history.TxnID{id}, merged[id]...)
		n := 0
		for _, f := range from {
			n += d.placeOps(f, n)
		}
		if n == 0 && d.drop[EmptyTxns] {
			continue
		}
		d.newID[id] = history.TxnID(len(keep))
		for _, f := range from[1:] {
			d.newID[f] = d.newID[id]
		}
		keep = append(keep, kept{id, from})
	}
	return keep
}

// merged returns, per transaction that others are merged into, those others in id order.
func (d *dropper) merged() map[history.TxnID][]history.TxnID {
	merged := make(map[history.TxnID][]history.TxnID)
	for t, into := range d.into {
		merged[into] = append(merged[into], t)
	}
	for _, m := range merged {
		slices.Sort(m)
	}
	return merged
}

// sessions renumbers the sessions' transactions in out, whose transactions are made.
func (d *dropper) sessions(out *history.History) {
	out.Sessions = make([]history.Session, len(d.h.Sessions))
	for s, sess := range d.h.Sessions {
		ns := sess
		ns.Txns = nil
		for _, t := range sess.Txns {
			if n := d.newID[t]; n >= 0 && !d.isMerged(t) {
				out.Txns[n].Seq = int32(len(ns.Txns))
				ns.Txns = append(ns.Txns, n)
			}
		}
		out.Sessions[s] = ns
	}
}

func (d *dropper) isMerged(t history.TxnID) bool { _, ok := d.into[t]; return ok }

// placeOps records where transaction t's kept ops go, starting at index at, and returns
// how many it keeps.
func (d *dropper) placeOps(t history.TxnID, at int) int {
	tx := d.h.Txn(t)
	var pos []int32
	n := 0
	for i, o := range tx.Ops {
		if !d.keepOp(tx, o) {
			if pos == nil {
				pos = shifted(len(tx.Ops), i, at)
			}
			pos[i] = -1
			continue
		}
		if pos != nil {
			pos[i] = int32(at + n)
		}
		n++
	}
	if pos == nil && at > 0 {
		pos = shifted(len(tx.Ops), len(tx.Ops), at)
	}
	if pos != nil {
		d.newOp[t] = pos
	}
	return n
}

// shifted returns the new places of n ops whose first upto keep their order from index at.
func shifted(n, upto, at int) []int32 {
	pos := make([]int32, n)
	for j := range upto {
		pos[j] = int32(at + j)
	}
	return pos
}

// src maps a source to the new history (by value when its writer was left out).
func (d *dropper) src(s history.Src) history.Src {
	if d.drop[Sources] {
		return history.Src{}
	}
	if s.Kind != history.SrcTxn {
		return s
	}
	n := d.newID[s.Txn]
	if n < 0 {
		return history.Src{}
	}
	op := s.Op
	if pos, ok := d.newOp[s.Txn]; ok && int(s.Op) < len(pos) {
		if op = pos[s.Op]; op < 0 {
			return history.Src{}
		}
	}
	return history.Src{Kind: history.SrcTxn, Txn: n, Op: op}
}

func (d *dropper) txn(old history.TxnID, from []history.TxnID, id history.TxnID) history.Txn {
	t := *d.h.Txn(old)
	t.ID = id
	ops := make([]history.Op, 0, len(t.Ops))
	var times []history.Interval
	withTimes := d.keepsOpTimes(from)
	for _, f := range from {
		ft := d.h.Txn(f)
		for i, o := range ft.Ops {
			if !d.keepOp(ft, o) {
				continue
			}
			o.Src = d.src(o.Src)
			ops = append(ops, o)
			if withTimes {
				times = append(times, ft.OpTimes[i])
			}
		}
	}
	t.Ops, t.OpTimes = ops, times
	if d.drop[ClientTime] {
		t.HasTime, t.Time = false, history.Interval{}
	}
	if d.drop[Timestamps] {
		t.HasTimestamps, t.Start, t.Commit = false, history.Timestamp{}, history.Timestamp{}
	}
	return t
}

// keepsOpTimes reports whether the transaction made of from keeps its ops' times: they are
// not dropped, and every transaction of from has them.
func (d *dropper) keepsOpTimes(from []history.TxnID) bool {
	if d.drop[OpTime] {
		return false
	}
	for _, f := range from {
		if d.h.Txn(f).OpTimes == nil {
			return false
		}
	}
	return true
}

func (d *dropper) snapshots(out *history.History) {
	if d.drop[Snapshots] || len(d.h.Snapshots) == 0 {
		out.Snapshots, out.SnapshotErr = nil, nil
		return
	}
	out.Snapshots = make(map[history.TxnID]history.Snapshot, len(d.h.Snapshots))
	for t, s := range d.h.Snapshots {
		if n := d.newID[t]; n >= 0 && !d.isMerged(t) {
			out.Snapshots[n] = s
		}
	}
}

// preds maps the sources of predicate rows (the payloads are shared otherwise).
func (d *dropper) preds(out *history.History) {
	if !slices.ContainsFunc(d.h.Preds, func(p history.PredOp) bool { return p.Srcs != nil }) {
		return
	}
	out.Preds = slices.Clone(d.h.Preds)
	for i := range out.Preds {
		p := &out.Preds[i]
		if p.Srcs == nil {
			continue
		}
		srcs := make([]history.Src, len(p.Srcs))
		for j, s := range p.Srcs {
			srcs[j] = d.src(s)
		}
		p.Srcs = srcs
	}
}
