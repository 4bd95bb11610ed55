package report

import (
	"fmt"
	"strings"

	"github.com/isovet/isovet/history"
)

// Placeholders marks the placeholder transactions of a history ([history.PlaceholderSession]):
// writers that reads name but no log holds. The zero value marks none.
type Placeholders struct {
	is []bool
	n  int
}

// PlaceholdersOf marks h's placeholder transactions.
func PlaceholdersOf(h *history.History) Placeholders {
	ph := h.Placeholders()
	if len(ph) == 0 {
		return Placeholders{}
	}
	p := Placeholders{is: make([]bool, len(h.Txns)), n: len(ph)}
	for _, t := range ph {
		p.is[t] = true
	}
	return p
}

// Len is the number of placeholder transactions.
func (p Placeholders) Len() int { return p.n }

// Is reports whether t is a placeholder.
func (p Placeholders) Is(t history.TxnID) bool { return int(t) < len(p.is) && t >= 0 && p.is[t] }

// Involves reports whether anomaly a goes through a placeholder: one of its transactions,
// or an end of one of its edges, is one.
func (p Placeholders) Involves(a *Anomaly) bool {
	if p.n == 0 {
		return false
	}
	for _, t := range a.Txns {
		if p.Is(t) {
			return true
		}
	}
	for _, s := range a.Cycle {
		if p.Is(s.From) || p.Is(s.To) {
			return true
		}
	}
	return false
}

// Add appends a to list, keeping at most max anomalies (max <= 0: all) with those among
// recorded transactions first in claim: when the list is full, an anomaly that goes through no
// placeholder takes the place of the last one that does, so findings through placeholders
// never crowd out those among the recorded transactions. The order is settled by [Finish]
// ([Placeholders.Last]).
func (p Placeholders) Add(list []Anomaly, a Anomaly, max int) []Anomaly {
	if max <= 0 || len(list) < max {
		return append(list, a)
	}
	if p.Involves(&a) {
		return list
	}
	for i := len(list) - 1; i >= 0; i-- {
		if p.Involves(&list[i]) {
			list[i] = a
			return list
		}
	}
	return list
}

// Last reorders list in place, stably: the anomalies among recorded transactions first, then
// those that go through a placeholder.
func (p Placeholders) Last(list []Anomaly) {
	if p.n == 0 {
		return
	}
	var through []Anomaly
	k := 0
	for _, a := range list {
		if p.Involves(&a) {
			through = append(through, a)
			continue
		}
		list[k] = a
		k++
	}
	copy(list[k:], through)
}

// placeholderReadsShown is how many reads of placeholders [PlaceholderFinding] names.
const placeholderReadsShown = 3

// PlaceholderFinding is the one sentence a report gives on h's reads of writers no log holds
// (placeholders): how many reads, the first few by transaction and key with the count of the
// rest, and what the placeholders' outcomes mean. "" when h has no placeholder.
func PlaceholderFinding(h *history.History) string {
	p := PlaceholdersOf(h)
	if p.n == 0 {
		return ""
	}
	n, first := placeholderReads(h, p)
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s a writer that no log holds, for which the reader made %d placeholder %s (session %s)",
		n, plural(n, "read names", "reads name"), p.n, plural(p.n, "transaction", "transactions"), history.PlaceholderSession)
	if len(first) > 0 {
		fmt.Fprintf(&b, ": %s", strings.Join(first, ", "))
		if rest := n - len(first); rest > 0 {
			fmt.Fprintf(&b, " and %d more", rest)
		}
	}
	b.WriteString(". Such a read is no violation by itself: the placeholder's outcome is the reader's reading of the format, and its other operations are unknown, so a pass cannot rest on it; anomalies among the recorded transactions are listed first, and those through a placeholder after them")
	if aborted := abortedPlaceholders(h, p); len(aborted) > 0 {
		fmt.Fprintf(&b, " (%s taken as aborted, so committed reads of %s are aborted reads as far as the format's contract holds)", strings.Join(aborted, ", "), plural(len(aborted), "it", "them"))
	}
	return b.String()
}

// placeholderReads counts the reads (item reads and predicate rows, of any outcome) of the
// recorded transactions whose source is a placeholder, and names the first few.
func placeholderReads(h *history.History, p Placeholders) (n int, first []string) {
	note := func(t history.TxnID, k history.Key, w history.TxnID) {
		n++
		if len(first) < placeholderReadsShown {
			first = append(first, fmt.Sprintf("%s read %v from %s", h.Name(t), h.Key(k), h.Name(w)))
		}
	}
	for i := range h.Txns {
		t := &h.Txns[i]
		if p.Is(t.ID) {
			continue
		}
		for _, o := range t.Ops {
			switch o.Kind {
			case history.OpRead:
				if o.Src.Kind == history.SrcTxn && p.Is(o.Src.Txn) {
					note(t.ID, o.Key, o.Src.Txn)
				}
			case history.OpPredRead, history.OpPredWrite:
				pr := h.Pred(o)
				for j, s := range pr.Srcs {
					if s.Kind == history.SrcTxn && p.Is(s.Txn) && j < len(pr.Rows) {
						note(t.ID, pr.Rows[j].Key, s.Txn)
					}
				}
			}
		}
	}
	return n, first
}

// abortedPlaceholders names h's placeholders taken as aborted.
func abortedPlaceholders(h *history.History, p Placeholders) []string {
	var out []string
	for _, t := range h.Placeholders() {
		if h.Txns[t].Outcome == history.OutcomeAborted {
			out = append(out, h.Name(t))
		}
	}
	return out
}

// plural returns one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
