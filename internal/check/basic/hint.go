package basic

import (
	"fmt"

	"isovet/history"
)

// InitialHint returns a note for a known pitfall, or "" when there is none to give: every
// thin-air read of h (a committed transaction's read of a value that no transaction wrote
// to the key and that is not the key's initial value) reads 0, or every one reads nil. Then
// the history most likely assumes another initial value than the one it was read with
// (0 where the reader said nil, or the reverse), and the note names the --initial-value
// that would read it so. Reads with an explicit source, failed reads, and reads after the
// transaction's own write of the key are not counted, as in [Check].
func InitialHint(h *history.History) string {
	type pair struct {
		k history.Key
		v history.Value
	}
	written := make(map[pair]bool)
	for i := range h.Txns {
		for _, o := range h.Txns[i].Ops {
			if o.Kind == history.OpWrite || o.Kind == history.OpInsert {
				written[pair{o.Key, o.Value}] = true
			}
		}
	}
	zero, isZero := history.Value(-1), func(v history.Value) bool { d := h.Value(v); i, ok := d.Int(); return ok && i == 0 }
	n, zeros, nils := 0, 0, 0
	var own map[history.Key]bool
	for i := range h.Txns {
		t := &h.Txns[i]
		if !t.Committed() {
			continue
		}
		clear(own)
		for _, o := range t.Ops {
			switch {
			case o.Kind == history.OpWrite || o.Kind == history.OpInsert || o.Kind == history.OpDelete:
				if own == nil {
					own = make(map[history.Key]bool)
				}
				own[o.Key] = true
			case o.Kind != history.OpRead || o.Failed() || o.Src.Kind != history.SrcByValue || own[o.Key]:
			case written[pair{o.Key, o.Value}] || o.Value == h.InitialValue(o.Key):
			default:
				n++
				switch {
				case o.Value == history.Nil:
					nils++
				case isZero(o.Value):
					zeros++
					zero = o.Value
				}
			}
		}
	}
	switch {
	case n == 0:
		return ""
	case zeros == n:
		return fmt.Sprintf("%s read %s, which no transaction wrote: the history probably starts with every key %s; check it with --initial-value %s", readsCount(n), h.Value(zero), h.Value(zero), h.Value(zero))
	case nils == n:
		return fmt.Sprintf("%s read nil, which no transaction wrote: the history probably starts with every key absent (null); check it with --initial-value null", readsCount(n))
	}
	return ""
}

// readsCount says "the thin-air read" or "all 20 thin-air reads".
func readsCount(n int) string {
	if n == 1 {
		return "the thin-air read"
	}
	return fmt.Sprintf("all %d thin-air reads", n)
}
