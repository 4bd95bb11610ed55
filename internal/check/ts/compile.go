package ts

import (
	"github.com/isovet/isovet/history"
)

// xread is an external read: the first read of a key in a transaction.
type xread struct {
	k    history.Key
	v    history.Value   // kv reads
	list []history.Value // list reads: the part that must equal the snapshot (own appends removed)
	isL  bool
}

// xtxn is a transaction compiled for checking: its external reads and final writes.
type xtxn struct {
	reads []xread
	txnView[history.Key, history.Value]
}

// intFinding is an INT violation found while compiling.
type intFinding struct {
	k                  history.Key
	observed, expected string
}

func (x *xtxn) reset() {
	x.reads, x.writes, x.loc = x.reads[:0], x.writes[:0], x.loc[:0]
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
		case history.OpWrite, history.OpInsert:
			x.write(o.Key, o.Value)
		case history.OpDelete:
			x.write(o.Key, history.Nil)
		case history.OpAppend:
			x.append(o.Key, o.Value)
		case history.OpListRead:
			ints = x.listRead(h, o, ints)
		}
	}
	x.detach()
	return ints
}

// read is a register read: external the first time the key is seen, else checked against
// the transaction's own view.
func (x *xtxn) read(h *history.History, o *history.Op, ints []intFinding) []intFinding {
	first, want, bad := x.txnView.read(o.Key, o.Value)
	if first {
		x.reads = append(x.reads, xread{k: o.Key, v: o.Value})
	}
	if bad {
		ints = append(ints, intFinding{o.Key, h.Value(o.Value).String(), h.Value(want).String()})
	}
	return ints
}

// listRead is a list read: external the first time the key is read (the observed list is
// the snapshot plus own appends so far), else checked against the transaction's own view.
func (x *xtxn) listRead(h *history.History, o *history.Op, ints []intFinding) []intFinding {
	obs := h.List(*o)
	ext, first, bad, want := x.txnView.listRead(o.Key, obs)
	if bad {
		expected := renderValues(h, want)
		if first {
			expected = "… " + expected
		}
		ints = append(ints, intFinding{o.Key, renderValues(h, obs), expected})
	}
	if first {
		x.reads = append(x.reads, xread{k: o.Key, list: ext, isL: true})
	}
	return ints
}

func renderValues(h *history.History, vs []history.Value) string {
	return renderList(func(i int) history.Datum { return h.Value(vs[i]) }, len(vs))
}
