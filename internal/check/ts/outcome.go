package ts

import (
	"fmt"
	"slices"
	"strings"

	"github.com/isovet/isovet/history"
)

// Transactions of unknown outcome (Jepsen's :info, a commit whose reply was lost) may or may
// not have committed, and the replay needs one answer for each. It takes the answer most
// favourable to the history, which makes a failure in it a failure in every answer:
//
//   - a transaction of unknown outcome that a counted read (one of a committed transaction,
//     or of one taken as committed here) saw, and no other writer nor the initial state could
//     have given that read its value, committed: otherwise that read saw a write that never
//     took effect, a violation whatever else happened;
//   - every other one did not commit. Its writes are then values no counted read returned,
//     and committing it could only add a version that such reads failed to see, a writer a
//     concurrent one conflicts with, or a place in its session's order: never remove a
//     violation.
//
// What the rule cannot settle is said: a transaction of unknown outcome whose written value
// a counted read returned but another writer (or the initial state) could have given too,
// and one that must have committed but has no timestamps to place it by. Then a failure
// is not a proof (a caveat, report.CaveatUncertainOutcome); a pass still is, since the
// answers taken are one execution that explains the history.

// outcomes is what the replay takes transactions of unknown outcome to be.
type outcomes struct {
	committed []history.TxnID // taken as committed: a counted read saw what only they wrote
	ambiguous int             // a counted read returned a value they wrote, which others gave too
	untimed   int             // must have committed, but have no timestamps
}

// writeKey is a value written to a key, or an element appended to a list key.
type writeKey struct {
	k    history.Key
	v    history.Value
	list bool
}

// settleOutcomes decides, for each transaction of h of unknown outcome, whether the replay
// takes it as committed (the rule above).
func settleOutcomes(h *history.History) outcomes {
	var out outcomes
	if !slices.ContainsFunc(h.Txns, func(t history.Txn) bool { return t.Outcome == history.OutcomeUnknown }) {
		return out
	}
	s := &settler{h: h, writers: writersByValue(h), state: make([]uint8, len(h.Txns))}
	for i := range h.Txns {
		switch h.Txns[i].Outcome {
		case history.OutcomeCommitted:
			s.counted(history.TxnID(i))
		case history.OutcomeAborted:
			s.state[i] = aborted
		}
	}
	for len(s.todo) > 0 {
		t := s.todo[len(s.todo)-1]
		s.todo = s.todo[:len(s.todo)-1]
		s.reads(t)
	}
	for i, st := range s.state {
		switch st {
		case forced:
			if h.Txns[i].HasTimestamps {
				out.committed = append(out.committed, history.TxnID(i))
			} else {
				out.untimed++
			}
		case doubtful:
			out.ambiguous++
		}
	}
	return out
}

// A transaction's state in the settler.
const (
	unread   uint8 = iota // of unknown outcome, no counted read needs it: taken as not committed
	doubtful              // of unknown outcome, a counted read may have seen it or another writer
	forced                // of unknown outcome, a counted read saw what only it wrote
	known                 // committed: its reads count
	aborted               // aborted: never taken as committed (a read of it is a violation)
)

// settler follows counted reads to the transactions of unknown outcome they force.
type settler struct {
	h       *history.History
	writers map[writeKey][]history.TxnID
	state   []uint8
	todo    []history.TxnID // counted transactions whose reads are still to follow
}

// writersByValue indexes every transaction's writes and appends by key and value.
func writersByValue(h *history.History) map[writeKey][]history.TxnID {
	w := make(map[writeKey][]history.TxnID)
	for i := range h.Txns {
		for _, o := range h.Txns[i].Ops {
			var wk writeKey
			switch o.Kind {
			case history.OpWrite, history.OpInsert, history.OpDelete:
				wk = writeKey{k: o.Key, v: o.Value}
			case history.OpAppend:
				wk = writeKey{k: o.Key, v: o.Value, list: true}
			default:
				continue
			}
			if ws := w[wk]; len(ws) == 0 || ws[len(ws)-1] != history.TxnID(i) {
				w[wk] = append(ws, history.TxnID(i))
			}
		}
	}
	return w
}

// counted marks t's reads as counted (t committed, or must have) and queues them.
func (s *settler) counted(t history.TxnID) {
	if s.h.Txns[t].Committed() {
		s.state[t] = known
	} else {
		s.state[t] = forced
	}
	s.todo = append(s.todo, t)
}

// reads follows each of t's external reads (a plain read before its own write of the key,
// a list read's elements it did not append) to the writers that could have given its value.
func (s *settler) reads(t history.TxnID) {
	h := s.h
	wrote := map[history.Key]bool{} // keys t wrote so far
	appended := map[writeKey]int{}  // elements t appended so far, with their count
	for _, o := range h.Txns[t].Ops {
		switch {
		case o.Kind == history.OpPredRead || o.Kind == history.OpPredWrite:
		case o.Kind == history.OpListRead:
			s.listRead(t, o, appended)
		case o.Kind == history.OpRead && !wrote[o.Key]:
			s.read(t, o)
		case o.Kind == history.OpAppend:
			appended[writeKey{k: o.Key, v: o.Value, list: true}]++
		case o.Kind.IsWrite():
			wrote[o.Key] = true
		}
	}
}

// listRead follows the elements of a list read that t did not append itself (an element
// read more often than t appended it came from outside too).
func (s *settler) listRead(t history.TxnID, o history.Op, appended map[writeKey]int) {
	seen := map[writeKey]int{}
	for _, e := range s.h.List(o) {
		wk := writeKey{k: o.Key, v: e, list: true}
		if seen[wk]++; seen[wk] > appended[wk] {
			s.source(t, wk, false)
		}
	}
}

// read follows one plain read: to the writer it names, or to every writer of its value.
func (s *settler) read(t history.TxnID, o history.Op) {
	switch o.Src.Kind {
	case history.SrcTxn:
		if w := o.Src.Txn; w != t && s.state[w] < forced {
			s.counted(w)
		}
	case history.SrcByValue:
		s.source(t, writeKey{k: o.Key, v: o.Value}, o.Value == s.h.InitialValue(o.Key))
	}
}

// source settles the writers that could have given reader t the value wk (t itself and
// aborted writers cannot): the one writer, when there is one and not the initial state too,
// must have committed; several leave each one of unknown outcome in doubt.
func (s *settler) source(t history.TxnID, wk writeKey, initial bool) {
	var cands []history.TxnID
	for _, w := range s.writers[wk] {
		if w != t && s.state[w] != aborted {
			cands = append(cands, w)
		}
	}
	if len(cands) == 1 && !initial {
		if s.state[cands[0]] < forced {
			s.counted(cands[0])
		}
		return
	}
	for _, w := range cands {
		if s.state[w] == unread {
			s.state[w] = doubtful
		}
	}
}

// withCommitted returns h with the transactions ts taken as committed; h is not modified.
func withCommitted(h *history.History, ts []history.TxnID) *history.History {
	if len(ts) == 0 {
		return h
	}
	nh := *h
	nh.Txns = slices.Clone(h.Txns)
	for _, t := range ts {
		nh.Txns[t].Outcome = history.OutcomeCommitted
	}
	return &nh
}

// note says which transactions of unknown outcome were taken as committed, or "".
func (o outcomes) note() string {
	n := len(o.committed)
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s of unknown outcome %s taken as committed: committed transactions read values only %s wrote", count(n, "transaction"), plural(n, "was", "were"), plural(n, "it", "they"))
}

// doubt says why a failure is not a proof, or "" when it is.
func (o outcomes) doubt() string {
	var why []string
	if o.ambiguous > 0 {
		why = append(why, fmt.Sprintf("%s of unknown outcome wrote values that committed transactions read but that other writers (or the initial state) gave too", count(o.ambiguous, "transaction")))
	}
	if o.untimed > 0 {
		why = append(why, fmt.Sprintf("%s of unknown outcome must have committed (committed transactions read what only they wrote) but have no timestamps to replay them by", count(o.untimed, "transaction")))
	}
	if len(why) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: the timestamp checker took each of them one way only, so the violations it found need not be violations of the history; the black-box checker decides (--method black-box)", strings.Join(why, "; and "))
}
