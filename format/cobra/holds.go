package cobra

import "github.com/isovet/isovet/history"

// The Holds functions say, for the features Cobra logs hold in some histories only,
// whether [WriteDir] keeps them in h; the format registry lists them (format.Format.HoldsIn).

// HoldsValues reports whether every key and value of h is an integer, but for the nil of
// reads that found nothing (which Cobra logs name NULL).
func HoldsValues(h *history.History) bool {
	for _, t := range h.Txns {
		for _, o := range t.Ops {
			if !isInt(h.Key(o.Key)) || !isInt(h.Value(o.Value)) && o.Src.Kind != history.SrcNone {
				return false
			}
		}
	}
	return true
}

// HoldsTimes reports whether, in each session, every transaction or none has a client
// interval: a Cobra log has timestamps on all its records or on none.
func HoldsTimes(h *history.History) bool {
	for _, s := range h.Sessions {
		for _, t := range s.Txns {
			if h.Txn(t).HasTime != h.Txn(s.Txns[0]).HasTime {
				return false
			}
		}
	}
	return true
}

// HoldsAborted reports whether every aborted transaction of h is a placeholder (which the
// reader makes again from the reads naming it): Cobra logs hold no aborted transaction.
func HoldsAborted(h *history.History) bool {
	ph := placeholders(h)
	for id, t := range h.All() {
		if t.Outcome == history.OutcomeAborted && !ph[id] {
			return false
		}
	}
	return true
}

// HoldsPlaceholders reports whether every operation of every placeholder transaction is a
// write that some read names: the reader makes a placeholder from the reads naming it, with
// the writes they name.
func HoldsPlaceholders(h *history.History) bool {
	ph := placeholders(h)
	named := make(map[history.Src]bool)
	for _, t := range h.Txns {
		for _, o := range t.Ops {
			if o.Kind == history.OpRead && o.Src.Kind == history.SrcTxn && ph[o.Src.Txn] {
				named[o.Src] = true
			}
		}
	}
	for _, id := range h.Placeholders() {
		for i, o := range h.Txn(id).Ops {
			if o.Kind != history.OpWrite || !named[history.Src{Kind: history.SrcTxn, Txn: id, Op: int32(i)}] {
				return false
			}
		}
	}
	return true
}

// HoldsInitial reports whether every key h's operations use starts at nil or at an
// integer: [WriteDir] writes the initial values in reads of the initial state or in
// [InitialLog].
func HoldsInitial(h *history.History) bool {
	for _, k := range usedKeys(h) {
		if v := h.Value(h.InitialValue(k)); !v.IsNil() && !isInt(v) {
			return false
		}
	}
	return true
}

// placeholders marks h's placeholder transactions.
func placeholders(h *history.History) []bool {
	ph := make([]bool, len(h.Txns))
	for _, t := range h.Placeholders() {
		ph[t] = true
	}
	return ph
}
