package histtest

import (
	"isovet/history"
	"isovet/internal/anomaly"
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

func orderExists(h *history.History, in []int, session, realtime bool, skew int64, recordedEnd bool) bool {
	n := len(in)
	// pred[i] is a bitmask of positions in `in` that must come before in[i].
	pred := make([]uint32, n)
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
	state := make(map[history.Key]ver)
	lists := make(map[history.Key][]history.Value)
	get := func(k history.Key) ver {
		if v, ok := state[k]; ok {
			return v
		}
		return ver{v: h.InitialValue(k), writer: -1}
	}
	var rec func(placed uint32) bool
	rec = func(placed uint32) bool {
		if placed == 1<<n-1 {
			return true
		}
		for i, t := range in {
			if placed&(1<<i) != 0 || pred[i]&^placed != 0 {
				continue
			}
			tx := &h.Txns[t]
			own := make(map[history.Key]ver)
			ownList := make(map[history.Key][]history.Value)
			ok := true
			for oi, o := range tx.Ops {
				switch o.Kind {
				case history.OpRead:
					cur, mine := own[o.Key]
					if mine && (o.Src.Kind == history.SrcInit || o.Src.Kind == history.SrcNone || (o.Src.Kind == history.SrcTxn && int(o.Src.Txn) != t)) {
						ok = false
					}
					if !mine {
						cur = get(o.Key)
						if o.Src.Kind == history.SrcTxn && (cur.writer != int(o.Src.Txn) || cur.op != int(o.Src.Op)) {
							ok = false
						}
						if (o.Src.Kind == history.SrcInit || o.Src.Kind == history.SrcNone) && cur.writer != -1 {
							ok = false
						}
					}
					if cur.v != o.Value {
						ok = false
					}
					// On a list key (history.Validate allows only a read of nil there) a plain
					// read sees no list: the one the transaction sees must be empty.
					if l, mine := ownList[o.Key]; mine && len(l) > 0 || !mine && len(lists[o.Key]) > 0 {
						ok = false
					}
				case history.OpPredRead, history.OpPredWrite:
					// Every row of the relation (every key) is evaluated on the version
					// the transaction sees.
					ok = PredSees(h, o, func(k history.Key) history.Value {
						if v, mine := own[k]; mine {
							return v.v
						}
						return get(k).v
					})
					listed := h.Pred(o).Rows
					if ok && o.Kind == history.OpPredWrite {
						for _, r := range listed {
							if r.Match {
								own[r.Key] = ver{v: r.Value, writer: t, op: oi}
							}
						}
					}
				case history.OpWrite, history.OpInsert:
					own[o.Key] = ver{v: o.Value, writer: t, op: oi}
				case history.OpDelete:
					own[o.Key] = ver{v: history.Nil, writer: t, op: oi}
				case history.OpAppend:
					base, mine := ownList[o.Key]
					if !mine {
						base = lists[o.Key]
					}
					ownList[o.Key] = append(append([]history.Value(nil), base...), o.Value)
				case history.OpListRead:
					view, mine := ownList[o.Key]
					if !mine {
						view = lists[o.Key]
					}
					got := h.List(o)
					if len(got) != len(view) {
						ok = false
						break
					}
					for i := range got {
						if got[i] != view[i] {
							ok = false
						}
					}
				}
				if !ok {
					break
				}
			}
			if !ok {
				continue
			}
			saved := make(map[history.Key]ver, len(own))
			had := make(map[history.Key]bool, len(own))
			for k, v := range own {
				saved[k], had[k] = state[k]
				state[k] = v
			}
			savedL := make(map[history.Key][]history.Value, len(ownList))
			for k, l := range ownList {
				savedL[k] = lists[k]
				lists[k] = l
			}
			found := rec(placed | 1<<i)
			for k := range ownList {
				if savedL[k] == nil {
					delete(lists, k)
				} else {
					lists[k] = savedL[k]
				}
			}
			for k := range own {
				if had[k] {
					state[k] = saved[k]
				} else {
					delete(state, k)
				}
			}
			if found {
				return true
			}
		}
		return false
	}
	return rec(0)
}
