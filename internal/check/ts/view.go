package ts

import (
	"slices"

	"github.com/isovet/isovet/history"
)

// txnView is a transaction's own view of the keys it touched while it is compiled, and the
// final writes it collects. The offline compiler ([compile], over interned keys and values)
// and the online one ([ocompile], over datums) share it; each keeps its external reads and
// INT findings its own way.
type txnView[K, V comparable] struct {
	loc    []view[K, V]
	writes []fwrite[K, V]
	// index maps a key to its entry in loc[:indexed], once the transaction has touched
	// more than indexFrom keys: a transaction's work stays linear in its operations (a
	// scan of loc per operation is quadratic, 26 CPU-seconds for 150,000 keys).
	index   map[K]int32
	indexed int
}

// indexFrom is how many keys a transaction touches before [txnView.find] indexes them; below
// it, a scan is faster than a map.
const indexFrom = 32

// view is a transaction's own view of one key while compiling.
type view[K, V comparable] struct {
	k       K
	v       V    // kv: last value read or written
	read    bool // a read of the key has been seen
	base    []V  // lists: the last list read
	extra   []V  // lists: own appends since that read (or since the start)
	written int  // index in writes, or -1
}

// fwrite is a transaction's final effect on a key.
type fwrite[K, V comparable] struct {
	k   K
	v   V   // kv: the last value written
	app []V // lists: every append, in program order
	isL bool
}

// owrite is a final write of the online compiler.
type owrite = fwrite[history.Datum, history.Datum]

// find returns the index of k's entry in w.loc, -1 if the transaction has not touched k.
//
// loc only grows between calls, by at most one entry (each caller appends after a find),
// or is cut to empty for the next transaction: the index is cleared when loc is shorter
// than what it indexed, and extended to the entries appended since the last call.
func (w *txnView[K, V]) find(k K) int {
	if len(w.loc) < w.indexed {
		clear(w.index)
		w.indexed = 0
	}
	if len(w.loc) <= indexFrom {
		for i := range w.loc {
			if w.loc[i].k == k {
				return i
			}
		}
		return -1
	}
	if w.index == nil {
		w.index = make(map[K]int32, 2*len(w.loc))
	}
	for ; w.indexed < len(w.loc); w.indexed++ {
		w.index[w.loc[w.indexed].k] = int32(w.indexed)
	}
	if i, ok := w.index[k]; ok {
		return int(i)
	}
	return -1
}

// local returns k's entry in w.loc, adding one if the transaction has not touched k.
func (w *txnView[K, V]) local(k K) *view[K, V] {
	i := w.find(k)
	if i < 0 {
		w.loc = append(w.loc, view[K, V]{k: k, written: -1})
		i = len(w.loc) - 1
	}
	return &w.loc[i]
}

// read is a register read of v from k: external (first) the first time the key is seen,
// else checked against the transaction's own view (bad: it expected want).
func (w *txnView[K, V]) read(k K, v V) (first bool, want V, bad bool) {
	i := w.find(k)
	if i < 0 {
		w.loc = append(w.loc, view[K, V]{k: k, v: v, read: true, written: -1})
		return true, want, false
	}
	l := &w.loc[i]
	want, bad = l.v, l.v != v
	l.v, l.read = v, true
	return false, want, bad
}

// write is a write of v to k (nil for a delete): the key's final value.
func (w *txnView[K, V]) write(k K, v V) {
	l := w.local(k)
	l.v = v
	if l.written < 0 {
		l.written = len(w.writes)
		w.writes = append(w.writes, fwrite[K, V]{k: k})
	}
	w.writes[l.written].v = v
}

// append adds element v to k's list write.
func (w *txnView[K, V]) append(k K, v V) {
	l := w.local(k)
	l.extra = append(l.extra, v)
	if l.written < 0 {
		l.written = len(w.writes)
		w.writes = append(w.writes, fwrite[K, V]{k: k, isL: true})
	}
	fw := &w.writes[l.written]
	fw.isL = true
	fw.app = append(fw.app, v)
}

// listRead is a read of list obs from k. The first time the key is read (first) it is
// external: ext is obs less the transaction's own appends so far, which must end it (bad:
// they do not, and want is those appends). Later it is checked against the transaction's
// own view (bad: it expected want, the list last read and the appends since).
func (w *txnView[K, V]) listRead(k K, obs []V) (ext []V, first, bad bool, want []V) {
	i := w.find(k)
	if i < 0 || !w.loc[i].read {
		var extra []V
		if i >= 0 {
			extra = w.loc[i].extra
		}
		n := len(obs) - len(extra)
		if n < 0 || !slices.Equal(obs[max(n, 0):], extra) {
			bad, want = true, extra
			n = max(n, 0)
		}
		ext, first = obs[:n:n], true
		if i < 0 {
			w.loc = append(w.loc, view[K, V]{k: k, read: true, written: -1})
			i = len(w.loc) - 1
		}
	} else {
		l := &w.loc[i]
		if len(obs) != len(l.base)+len(l.extra) || !slices.Equal(obs[:len(l.base)], l.base) || !slices.Equal(obs[len(l.base):], l.extra) {
			bad, want = true, append(append([]V{}, l.base...), l.extra...)
		}
	}
	l := &w.loc[i]
	l.read, l.base, l.extra = true, obs, nil
	return ext, first, bad, want
}

// detach drops the views' lists once the transaction is compiled: appends of loc.extra may
// alias write.app backing arrays; both only grow, so the view is detached before the next
// transaction reuses the memory.
func (w *txnView[K, V]) detach() {
	for i := range w.loc {
		w.loc[i].base, w.loc[i].extra = nil, nil
	}
}
