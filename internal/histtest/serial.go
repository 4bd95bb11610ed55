package histtest

import (
	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
)

// SerialOracle decides a serializability level by brute force: it tries every subset of
// the transactions of unknown outcome and every order of the counted transactions
// (respecting session order and real time, widened by skew, when the level does),
// replaying reads against the state. Real time is read as deps reads it: an unknown
// outcome ends at +inf, a transaction without an interval is unbounded; with recordedEnd,
// as it used to be read, a transaction of unknown outcome ends at its recorded end.
// Exponential: at most about 8 counted transactions.
func SerialOracle(h *history.History, level anomaly.Level, skew int64, recordedEnd bool) bool {
	info := level.Info()
	for in := range Worlds(h) {
		if orderExists(h, in, info.Session, info.Realtime, skew, recordedEnd) {
			return true
		}
	}
	return false
}

type ver struct {
	v      history.Value
	writer int // -1: initial state
	op     int
}

// serial is the search for a serial order of the transactions in: state and lists are the
// database after the transactions placed so far.
type serial struct {
	h     *history.History
	in    []int
	pred  []uint32 // pred[i]: the positions in in that must come before in[i]
	state map[history.Key]ver
	lists map[history.Key][]history.Value
}

func orderExists(h *history.History, in []int, session, realtime bool, skew int64, recordedEnd bool) bool {
	s := &serial{h: h, in: in, state: map[history.Key]ver{}, lists: map[history.Key][]history.Value{}}
	s.pred = precedence(h, in, session, realtime, skew, recordedEnd)
	return s.place(0)
}

// precedence returns, for each position i of in, the bitmask of positions that must come
// before in[i]: session order and real time, as the level asks.
func precedence(h *history.History, in []int, session, realtime bool, skew int64, recordedEnd bool) []uint32 {
	pred := make([]uint32, len(in))
	for i, a := range in {
		for j, b := range in {
			if i == j {
				continue
			}
			ta, tb := &h.Txns[a], &h.Txns[b]
			if session && ta.Session == tb.Session && tb.Seq < ta.Seq {
				pred[i] |= 1 << j
			}
			// Real time as deps reads it: a transaction of unknown outcome may have committed
			// after its recorded end, and one without an interval is unbounded.
			if realtime && ta.HasTime && tb.HasTime && (recordedEnd || tb.Outcome != history.OutcomeUnknown) && tb.Time.Widen(skew).End < ta.Time.Widen(skew).Begin {
				pred[i] |= 1 << j
			}
		}
	}
	return pred
}

// get is the version of k in the state.
func (s *serial) get(k history.Key) ver {
	if v, ok := s.state[k]; ok {
		return v
	}
	return ver{v: s.h.InitialValue(k), writer: -1}
}

// place tries every transaction that may come next after the positions placed, and
// reports whether some order of the rest completes a serial order.
func (s *serial) place(placed uint32) bool {
	n := len(s.in)
	if placed == 1<<n-1 {
		return true
	}
	for i, t := range s.in {
		if placed&(1<<i) != 0 || s.pred[i]&^placed != 0 {
			continue
		}
		x := s.replay(t)
		if !x.ok {
			continue
		}
		undo := s.apply(x)
		found := s.place(placed | 1<<i)
		undo()
		if found {
			return true
		}
	}
	return false
}

// txnRun is one transaction replayed on the state: what it wrote, and whether every read
// saw what it returned.
type txnRun struct {
	s       *serial
	t       int
	own     map[history.Key]ver
	ownList map[history.Key][]history.Value
	ok      bool
}

// replay runs transaction t on the state, op by op, until a read disagrees.
func (s *serial) replay(t int) *txnRun {
	x := &txnRun{s: s, t: t, own: map[history.Key]ver{}, ownList: map[history.Key][]history.Value{}, ok: true}
	for oi, o := range s.h.Txns[t].Ops {
		x.op(oi, o)
		if !x.ok {
			break
		}
	}
	return x
}

// op replays operation oi, o.
func (x *txnRun) op(oi int, o history.Op) {
	switch o.Kind {
	case history.OpRead:
		x.read(o)
	case history.OpPredRead, history.OpPredWrite:
		x.pred(oi, o)
	case history.OpWrite, history.OpInsert:
		x.own[o.Key] = ver{v: o.Value, writer: x.t, op: oi}
	case history.OpDelete:
		x.own[o.Key] = ver{v: history.Nil, writer: x.t, op: oi}
	case history.OpAppend:
		x.ownList[o.Key] = append(append([]history.Value(nil), x.list(o.Key)...), o.Value)
	case history.OpListRead:
		x.listRead(o)
	}
}

// read checks a plain read against the transaction's own write of the key, or else the
// state's version, its writer included when the read names one.
func (x *txnRun) read(o history.Op) {
	fromOutside := o.Src.Kind == history.SrcInit || o.Src.Kind == history.SrcNone
	cur, mine := x.own[o.Key]
	if mine && (fromOutside || (o.Src.Kind == history.SrcTxn && int(o.Src.Txn) != x.t)) {
		x.ok = false
	}
	if !mine {
		cur = x.s.get(o.Key)
		if o.Src.Kind == history.SrcTxn && (cur.writer != int(o.Src.Txn) || cur.op != int(o.Src.Op)) {
			x.ok = false
		}
		if fromOutside && cur.writer != -1 {
			x.ok = false
		}
	}
	if cur.v != o.Value {
		x.ok = false
	}
	// On a list key (history.Validate allows only a read of nil there) a plain read sees
	// no list: the one the transaction sees must be empty.
	if l, mine := x.ownList[o.Key]; mine && len(l) > 0 || !mine && len(x.s.lists[o.Key]) > 0 {
		x.ok = false
	}
}

// pred evaluates a predicate operation on every row of the relation (every key), each at the
// version the transaction sees; a predicate write then writes the rows it lists as matched.
func (x *txnRun) pred(oi int, o history.Op) {
	x.ok = PredSees(x.s.h, o, func(k history.Key) history.Value {
		if v, mine := x.own[k]; mine {
			return v.v
		}
		return x.s.get(k).v
	})
	if !x.ok || o.Kind != history.OpPredWrite {
		return
	}
	for _, r := range x.s.h.Pred(o).Rows {
		if r.Match {
			x.own[r.Key] = ver{v: r.Value, writer: x.t, op: oi}
		}
	}
}

// list is the list of k the transaction sees: its own, or the state's.
func (x *txnRun) list(k history.Key) []history.Value {
	if l, mine := x.ownList[k]; mine {
		return l
	}
	return x.s.lists[k]
}

// listRead checks a list read against the list the transaction sees.
func (x *txnRun) listRead(o history.Op) {
	view, got := x.list(o.Key), x.s.h.List(o)
	if len(got) != len(view) {
		x.ok = false
		return
	}
	for i := range got {
		if got[i] != view[i] {
			x.ok = false
		}
	}
}

// apply installs x's writes in the state and returns what restores the state before them.
func (s *serial) apply(x *txnRun) (undo func()) {
	saved := make(map[history.Key]ver, len(x.own))
	had := make(map[history.Key]bool, len(x.own))
	for k, v := range x.own {
		saved[k], had[k] = s.state[k]
		s.state[k] = v
	}
	savedL := make(map[history.Key][]history.Value, len(x.ownList))
	for k, l := range x.ownList {
		savedL[k] = s.lists[k]
		s.lists[k] = l
	}
	return func() {
		for k := range x.ownList {
			if savedL[k] == nil {
				delete(s.lists, k)
			} else {
				s.lists[k] = savedL[k]
			}
		}
		for k := range x.own {
			if had[k] {
				s.state[k] = saved[k]
			} else {
				delete(s.state, k)
			}
		}
	}
}
