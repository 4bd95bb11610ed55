package basic

import (
	"fmt"

	"github.com/isovet/isovet/history"
)

// InitialHint returns a note for a known pitfall, or "" when there is none to give: every
// thin-air read of h (a committed transaction's read of a value that no transaction wrote
// to the key and that is not the key's initial value) reads 0, or every one reads nil. Then
// the history most likely assumes another initial value than the one it was read with
// (0 where the reader said nil, or the reverse), and the note names the --initial-value
// that would read it so. Reads with an explicit source, failed reads, and reads after the
// transaction's own write of the key are not counted, as in [Check].
func InitialHint(h *history.History) string {
	c := thinAirs{h: h, written: writtenValues(h), zero: -1}
	for i := range h.Txns {
		if t := &h.Txns[i]; t.Committed() {
			c.txn(t)
		}
	}
	return c.hint()
}

// keyValue is a value written to a key.
type keyValue struct {
	k history.Key
	v history.Value
}

// writtenValues returns the values some write or insert of h wrote, by key.
func writtenValues(h *history.History) map[keyValue]bool {
	written := make(map[keyValue]bool)
	for i := range h.Txns {
		for _, o := range h.Txns[i].Ops {
			if o.Kind == history.OpWrite || o.Kind == history.OpInsert {
				written[keyValue{o.Key, o.Value}] = true
			}
		}
	}
	return written
}

// thinAirs counts InitialHint's thin-air reads: all of them (n), those of nil, and those of
// a zero (zero is the last such value).
type thinAirs struct {
	h              *history.History
	written        map[keyValue]bool
	own            map[history.Key]bool // the keys the current transaction wrote so far
	n, zeros, nils int
	zero           history.Value
}

// txn counts the thin-air reads of committed transaction t.
func (c *thinAirs) txn(t *history.Txn) {
	clear(c.own)
	for _, o := range t.Ops {
		switch {
		case o.Kind == history.OpWrite || o.Kind == history.OpInsert || o.Kind == history.OpDelete:
			if c.own == nil {
				c.own = make(map[history.Key]bool)
			}
			c.own[o.Key] = true
		case c.thinAir(o):
			c.read(o.Value)
		}
	}
}

// thinAir reports whether o, not a write, is a thin-air read that counts: a read by value,
// not failed, not after its transaction's own write of the key, of a value no transaction
// wrote to the key and that is not its initial value.
func (c *thinAirs) thinAir(o history.Op) bool {
	if o.Kind != history.OpRead || o.Failed() || o.Src.Kind != history.SrcByValue || c.own[o.Key] {
		return false
	}
	return !c.written[keyValue{o.Key, o.Value}] && o.Value != c.h.InitialValue(o.Key)
}

// read counts a thin-air read of v.
func (c *thinAirs) read(v history.Value) {
	c.n++
	switch {
	case v == history.Nil:
		c.nils++
	case isZero(c.h.Value(v)):
		c.zeros++
		c.zero = v
	}
}

// isZero reports whether d is the integer 0.
func isZero(d history.Datum) bool {
	i, ok := d.Int()
	return ok && i == 0
}

// hint is InitialHint's note on the reads counted.
func (c *thinAirs) hint() string {
	h, n := c.h, c.n
	switch {
	case n == 0:
		return ""
	case c.zeros == n:
		return fmt.Sprintf("%s read %s, which no transaction wrote: the history probably starts with every key %s; check it with --initial-value %s", readsCount(n), h.Value(c.zero), h.Value(c.zero), h.Value(c.zero))
	case c.nils == n:
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
