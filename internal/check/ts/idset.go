package ts

import (
	"cmp"
	"math/bits"
	"time"

	"github.com/isovet/isovet/history"
)

// idset knows every id the checker must recognise: the transactions it holds, and for a
// while those it has forgotten (retired, late or refused), so that a second arrival is a
// duplicate. Which of the two an id is does not matter here (the held ones are the
// checker's fifo): one lookup per arrival, one insertion, and one removal when a forgotten
// id expires.
//
// Integer ids near one another (the usual case: counters, database transaction numbers)
// are bits of a sliding window, a ring of bits indexed by id modulo its size that holds
// exactly the ids in [base, base+size). It follows the ids upwards and doubles (up to
// maxWin bits) rather than push out ids still held. A lookup there is a bit test in a
// table that stays in cache, where a hash map of the same ids (about a million at 100,000
// transactions a second) misses on every access. Every other id (strings, integers far
// from the window when they came) is in a map. An id is in one of the two, never both.
type idset struct {
	win  []uint64 // the ring: bit id&(64*len(win)-1) for id in [base, base+64*len(win))
	base int64
	i    map[int64]struct{}
	s    map[history.Datum]struct{}
	n    int   // ids in the set
	max  int64 // the window's largest size in bits (0: maxWin)

	gone     []goneID // forgotten ids in the order they were forgotten: gone[goneHead:]
	goneHead int
}

type goneID struct {
	id history.Datum
	at time.Time
}

const (
	minWin = 1 << 16 // bits
	maxWin = 1 << 26 // bits (8 MiB)
)

func (m *idset) winBits() int64 { return int64(len(m.win)) * 64 }

// slot returns the word and bit of id i in the window, if it is in it.
func (m *idset) slot(i int64) (w int, b uint64, ok bool) {
	if i < m.base || i-m.base >= m.winBits() {
		return 0, 0, false
	}
	j := uint64(i) & uint64(m.winBits()-1)
	return int(j >> 6), 1 << (j & 63), true
}

// has reports whether d is in the set.
func (m *idset) has(d history.Datum) bool {
	i, ok := d.Int()
	if !ok {
		_, ok := m.s[d]
		return ok
	}
	if w, b, ok := m.slot(i); ok && m.win[w]&b != 0 {
		return true
	}
	if len(m.i) == 0 {
		return false
	}
	_, ok = m.i[i]
	return ok
}

// add puts d, not in the set, into it.
func (m *idset) add(d history.Datum) {
	m.n++
	i, ok := d.Int()
	if !ok {
		if m.s == nil {
			m.s = map[history.Datum]struct{}{}
		}
		m.s[d] = struct{}{}
		return
	}
	if m.win == nil {
		m.win = make([]uint64, minWin/64)
		m.base = i - minWin/4
	}
	if i >= m.base+m.winBits() && i-m.base < 2*m.winBits() {
		m.follow(i)
	}
	if w, b, ok := m.slot(i); ok {
		m.win[w] |= b
		return
	}
	if m.i == nil {
		m.i = map[int64]struct{}{}
	}
	m.i[i] = struct{}{}
}

// follow moves the window up so that it holds i (at most one window above it), doubling it
// instead while the ids it would push out are still in the set and it may grow.
func (m *idset) follow(i int64) {
	for {
		size := m.winBits()
		newBase := i - size*3/4
		if size < cmp.Or(m.max, maxWin) && m.anyIn(m.base, newBase) {
			m.grow()
			if i < m.base+m.winBits() {
				return
			}
			continue
		}
		m.evict(newBase)
		m.base = newBase
		return
	}
}

// evict moves the ids of the window below newBase to the map, skipping empty words.
func (m *idset) evict(newBase int64) {
	for j := m.base; j < newBase; {
		w, b, _ := m.slot(j)
		if j&63 == 0 && newBase-j >= 64 && m.win[w] == 0 {
			j += 64
			continue
		}
		if m.win[w]&b != 0 {
			m.win[w] &^= b
			if m.i == nil {
				m.i = map[int64]struct{}{}
			}
			m.i[j] = struct{}{}
		}
		j++
	}
}

// anyIn reports whether an id in [lo, hi) (both in or below the window's top) is in the
// window.
func (m *idset) anyIn(lo, hi int64) bool {
	hi = min(hi, m.base+m.winBits())
	for j := lo; j < hi; {
		w, b, _ := m.slot(j)
		if j&63 == 0 && hi-j >= 64 {
			if m.win[w] != 0 {
				return true
			}
			j += 64
			continue
		}
		if m.win[w]&b != 0 {
			return true
		}
		j++
	}
	return false
}

// grow doubles the window, keeping its base.
func (m *idset) grow() {
	old, oldBits := m.win, m.winBits()
	m.win = make([]uint64, 2*len(old))
	for w, x := range old {
		for x != 0 {
			k := int64(w)*64 + int64(bits.TrailingZeros64(x))
			x &= x - 1
			// k is the id's slot in the old ring: the id is the one in [base, base+oldBits).
			id := m.base + (k-m.base)&(oldBits-1)
			nw, nb, _ := m.slot(id)
			m.win[nw] |= nb
		}
	}
}

// remove takes d out of the set.
func (m *idset) remove(d history.Datum) {
	i, ok := d.Int()
	if !ok {
		if _, ok := m.s[d]; ok {
			delete(m.s, d)
			m.n--
		}
		return
	}
	if w, b, ok := m.slot(i); ok && m.win[w]&b != 0 {
		m.win[w] &^= b
		m.n--
		return
	}
	if _, ok := m.i[i]; ok {
		delete(m.i, i)
		m.n--
	}
}

// forget records that d (in the set) is no longer held, from now on.
func (m *idset) forget(d history.Datum, now time.Time) {
	m.gone = append(m.gone, goneID{d, now})
}

// expire removes the ids forgotten before t.
func (m *idset) expire(t time.Time) {
	for m.goneHead < len(m.gone) && m.gone[m.goneHead].at.Before(t) {
		m.remove(m.gone[m.goneHead].id)
		m.gone[m.goneHead] = goneID{}
		m.goneHead++
	}
	if m.goneHead == len(m.gone) {
		m.gone, m.goneHead = m.gone[:0], 0
	} else if m.goneHead > 4096 && m.goneHead*2 > len(m.gone) {
		n := copy(m.gone, m.gone[m.goneHead:])
		clear(m.gone[n:])
		m.gone, m.goneHead = m.gone[:n], 0
	}
}

func (m *idset) goneLen() int { return len(m.gone) - m.goneHead }
