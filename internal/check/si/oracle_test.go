package si_test

import (
	"slices"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/histtest"
)

// oracle decides an SI level by brute force, from the definition rather than the graph
// characterization: it tries every subset of the transactions of unknown outcome, every
// commit order of the counted transactions and every start point of each (how many commits
// its snapshot holds), with first committer wins (two transactions writing a common key
// must not overlap), session order (strong session: a session's earlier transaction
// committed before the later one started) and real time (strong: a transaction that ended
// before another began committed before that one started; see rtBefore), replaying every
// read against its snapshot and the transaction's own writes. Exponential: at most about 7
// counted transactions.
func oracle(h *history.History, level anomaly.Level) bool {
	info := level.Info()
	for in := range histtest.Worlds(h) {
		if siExists(h, in, info.Session, info.Realtime) {
			return true
		}
	}
	return false
}

// rtBefore reports whether a ended before b began as the strong levels read client time
// (docs/si.md, "Client time"): a transaction of unknown outcome ends at +inf (it may have
// committed after the client gave up), and one without a client interval is unbounded.
func rtBefore(a, b *history.Txn) bool {
	return a.HasTime && b.HasTime && a.Outcome != history.OutcomeUnknown && a.Time.End < b.Time.Begin
}

type ver struct {
	v      history.Value
	writer int // -1: initial state
	op     int
}

// snap is the committed state after some number of commits.
type snap struct {
	regs  map[history.Key]ver
	lists map[history.Key][]history.Value
}

func siExists(h *history.History, in []int, session, realtime bool) bool {
	n := len(in)
	// before[i]: positions j whose commit must precede i's start.
	before := make([]uint32, n)
	writes := make([]map[history.Key]bool, n)
	for i, a := range in {
		writes[i] = make(map[history.Key]bool)
		for _, o := range h.Txns[a].Ops {
			if o.Kind.IsWrite() || o.Kind == history.OpAppend {
				writes[i][o.Key] = true
			}
			if o.Kind == history.OpPredWrite {
				for _, r := range h.Pred(o).Rows {
					if r.Match {
						writes[i][r.Key] = true
					}
				}
			}
		}
		for j, b := range in {
			if i == j {
				continue
			}
			ta, tb := &h.Txns[a], &h.Txns[b]
			if session && ta.Session == tb.Session && tb.Seq < ta.Seq {
				before[i] |= 1 << j
			}
			if realtime && rtBefore(tb, ta) {
				before[i] |= 1 << j
			}
		}
	}
	conflict := func(i, j int) bool {
		for k := range writes[i] {
			if writes[j][k] {
				return true
			}
		}
		return false
	}
	states := []snap{{regs: map[history.Key]ver{}, lists: map[history.Key][]history.Value{}}}
	var seq []int // positions in commit order
	var rec func(placed uint32) bool
	rec = func(placed uint32) bool {
		if len(seq) == n {
			return true
		}
		c := len(seq) // commits so far
		for i, t := range in {
			if placed&(1<<i) != 0 {
				continue
			}
			// A transaction committed earlier must not have to start after this one commits.
			bad := false
			for _, j := range seq {
				if before[j]&(1<<i) != 0 {
					bad = true
					break
				}
			}
			if bad {
				continue
			}
			for s := 0; s <= c; s++ {
				// Everything that must precede i's start committed among the first s.
				var first uint32
				for _, j := range seq[:s] {
					first |= 1 << j
				}
				if before[i]&^first != 0 {
					continue
				}
				// First committer wins: nothing committed after i started writes what i writes.
				ok := true
				for _, j := range seq[s:] {
					if conflict(i, j) {
						ok = false
						break
					}
				}
				if !ok {
					continue
				}
				next, ok := replay(h, t, states[s], states[c])
				if !ok {
					continue
				}
				seq = append(seq, i)
				states = append(states, next)
				found := rec(placed | 1<<i)
				seq = seq[:len(seq)-1]
				states = states[:len(states)-1]
				if found {
					return true
				}
			}
		}
		return false
	}
	return rec(0)
}

// replay runs transaction t on snapshot sn and, if every read matches, returns the state
// after it commits on top of cur.
func replay(h *history.History, t int, sn, cur snap) (snap, bool) {
	tx := &h.Txns[t]
	own := make(map[history.Key]ver)
	ownList := make(map[history.Key][]history.Value)
	get := func(k history.Key) ver {
		if v, ok := sn.regs[k]; ok {
			return v
		}
		return ver{v: h.InitialValue(k), writer: -1}
	}
	for oi, o := range tx.Ops {
		switch o.Kind {
		case history.OpRead:
			v, mine := own[o.Key]
			if mine && (o.Src.Kind == history.SrcInit || o.Src.Kind == history.SrcNone || (o.Src.Kind == history.SrcTxn && int(o.Src.Txn) != t)) {
				return snap{}, false
			}
			if !mine {
				v = get(o.Key)
				if o.Src.Kind == history.SrcTxn && (v.writer != int(o.Src.Txn) || v.op != int(o.Src.Op)) {
					return snap{}, false
				}
				if (o.Src.Kind == history.SrcInit || o.Src.Kind == history.SrcNone) && v.writer != -1 {
					return snap{}, false
				}
			}
			if v.v != o.Value {
				return snap{}, false
			}
			// On a list key (history.Validate allows only a read of nil there) a plain read
			// sees no list: the one the transaction sees must be empty.
			if l, mine := ownList[o.Key]; mine && len(l) > 0 || !mine && len(sn.lists[o.Key]) > 0 {
				return snap{}, false
			}
		case history.OpWrite, history.OpInsert:
			own[o.Key] = ver{v: o.Value, writer: t, op: oi}
		case history.OpDelete:
			own[o.Key] = ver{v: history.Nil, writer: t, op: oi}
		case history.OpPredRead, history.OpPredWrite:
			// Every row (key) is evaluated on the version the snapshot and the transaction's
			// own writes give.
			if !histtest.PredSees(h, o, func(k history.Key) history.Value {
				if v, mine := own[k]; mine {
					return v.v
				}
				return get(k).v
			}) {
				return snap{}, false
			}
			if o.Kind == history.OpPredWrite {
				for _, r := range h.Pred(o).Rows {
					if r.Match {
						own[r.Key] = ver{v: r.Value, writer: t, op: oi}
					}
				}
			}
		case history.OpAppend:
			base, mine := ownList[o.Key]
			if !mine {
				base = sn.lists[o.Key]
			}
			ownList[o.Key] = append(slices.Clone(base), o.Value)
		case history.OpListRead:
			view, mine := ownList[o.Key]
			if !mine {
				view = sn.lists[o.Key]
			}
			if !slices.Equal(h.List(o), view) {
				return snap{}, false
			}
		default:
			return snap{}, false
		}
	}
	next := snap{regs: cur.regs, lists: cur.lists}
	if len(own) > 0 {
		next.regs = make(map[history.Key]ver, len(cur.regs)+len(own))
		for k, v := range cur.regs {
			next.regs[k] = v
		}
		for k, v := range own {
			next.regs[k] = v
		}
	}
	if len(ownList) > 0 {
		next.lists = make(map[history.Key][]history.Value, len(cur.lists)+len(ownList))
		for k, v := range cur.lists {
			next.lists[k] = v
		}
		for k, v := range ownList {
			next.lists[k] = v
		}
	}
	return next, true
}
