package ts

import (
	"slices"

	"isovet/history"
)

// xread is an external read: the first read of a key in a transaction.
type xread struct {
	k    history.Key
	v    history.Value   // kv reads
	list []history.Value // list reads: the part that must equal the snapshot (own appends removed)
	isL  bool
}

// xwrite is a transaction's final effect on a key.
type xwrite struct {
	k   history.Key
	v   history.Value   // kv: the last value written
	app []history.Value // lists: every append, in program order
	isL bool
}

// xtxn is a transaction compiled for checking: its external reads and final writes.
type xtxn struct {
	reads  []xread
	writes []xwrite
	loc    []local
	arena  []history.Value
}

// local is a transaction's own view of one key while compiling.
type local struct {
	k       history.Key
	v       history.Value   // kv: last value read or written
	read    bool            // a read of the key has been seen
	base    []history.Value // lists: the last list read
	extra   []history.Value // lists: own appends since that read (or since the start)
	isL     bool
	written int // index in writes, or -1
}

// intFinding is an INT violation found while compiling.
type intFinding struct {
	k                  history.Key
	observed, expected string
}

func (x *xtxn) reset() {
	x.reads, x.writes, x.loc, x.arena = x.reads[:0], x.writes[:0], x.loc[:0], x.arena[:0]
}

func (x *xtxn) find(k history.Key) int {
	for i := range x.loc {
		if x.loc[i].k == k {
			return i
		}
	}
	return -1
}

// compile derives t's external reads and final writes into x, appending INT findings to
// ints. Lists read by a transaction are referenced, not copied.
func compile(h *history.History, t *history.Txn, x *xtxn, ints []intFinding) []intFinding {
	x.reset()
	for oi := range t.Ops {
		o := &t.Ops[oi]
		switch o.Kind {
		case history.OpRead:
			ints = x.read(h, o, ints)
		case history.OpWrite, history.OpInsert, history.OpDelete:
			x.write(o)
		case history.OpAppend:
			x.append(o)
		case history.OpListRead:
			ints = x.listRead(h, o, ints)
		}
	}
	// Appends of loc.extra may alias write.app backing arrays; both only grow, so detach
	// the local view before the next transaction reuses x.
	for i := range x.loc {
		x.loc[i].base, x.loc[i].extra = nil, nil
	}
	return ints
}

// local returns k's entry in x.loc, adding one (a list if isL) if the transaction has not
// touched k.
func (x *xtxn) local(k history.Key, isL bool) *local {
	i := x.find(k)
	if i < 0 {
		x.loc = append(x.loc, local{k: k, isL: isL, written: -1})
		i = len(x.loc) - 1
	}
	return &x.loc[i]
}

// read is a register read: external the first time the key is seen, else checked against
// the transaction's own view.
func (x *xtxn) read(h *history.History, o *history.Op, ints []intFinding) []intFinding {
	i := x.find(o.Key)
	if i < 0 {
		x.reads = append(x.reads, xread{k: o.Key, v: o.Value})
		x.loc = append(x.loc, local{k: o.Key, v: o.Value, read: true, written: -1})
		return ints
	}
	l := &x.loc[i]
	if l.v != o.Value {
		ints = append(ints, intFinding{o.Key, h.Value(o.Value).String(), h.Value(l.v).String()})
	}
	l.v, l.read = o.Value, true
	return ints
}

// write is a write, insert or delete (which writes nil): the key's final value.
func (x *xtxn) write(o *history.Op) {
	v := o.Value
	if o.Kind == history.OpDelete {
		v = history.Nil
	}
	l := x.local(o.Key, false)
	l.v = v
	if l.written < 0 {
		l.written = len(x.writes)
		x.writes = append(x.writes, xwrite{k: o.Key})
	}
	x.writes[l.written].v = v
}

// append adds o's element to the key's list write.
func (x *xtxn) append(o *history.Op) {
	l := x.local(o.Key, true)
	l.isL = true
	l.extra = append(l.extra, o.Value)
	if l.written < 0 {
		l.written = len(x.writes)
		x.writes = append(x.writes, xwrite{k: o.Key, isL: true})
	}
	w := &x.writes[l.written]
	w.isL = true
	w.app = append(w.app, o.Value)
}

// listRead is a list read: external the first time the key is read (the observed list is
// the snapshot plus own appends so far), else checked against the transaction's own view.
func (x *xtxn) listRead(h *history.History, o *history.Op, ints []intFinding) []intFinding {
	obs := h.List(*o)
	i := x.find(o.Key)
	if i < 0 || !x.loc[i].read {
		var extra []history.Value
		if i >= 0 {
			extra = x.loc[i].extra
		}
		n := len(obs) - len(extra)
		if n < 0 || !slices.Equal(obs[max(n, 0):], extra) {
			ints = append(ints, intFinding{o.Key, renderValues(h, obs), "… " + renderValues(h, extra)})
			n = max(n, 0)
		}
		x.reads = append(x.reads, xread{k: o.Key, list: obs[:n:n], isL: true})
		if i < 0 {
			x.loc = append(x.loc, local{k: o.Key, isL: true, read: true, written: -1})
			i = len(x.loc) - 1
		}
	} else {
		l := &x.loc[i]
		if len(obs) != len(l.base)+len(l.extra) || !slices.Equal(obs[:len(l.base)], l.base) || !slices.Equal(obs[len(l.base):], l.extra) {
			want := append(append([]history.Value{}, l.base...), l.extra...)
			ints = append(ints, intFinding{o.Key, renderValues(h, obs), renderValues(h, want)})
		}
	}
	l := &x.loc[i]
	l.isL, l.read, l.base, l.extra = true, true, obs, nil
	return ints
}

func renderValues(h *history.History, vs []history.Value) string {
	return renderList(func(i int) history.Datum { return h.Value(vs[i]) }, len(vs))
}
