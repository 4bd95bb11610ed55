package native

import (
	"slices"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/hugepage"
)

// valueCache memoizes the builder's ids of short string values per key: the last
// cacheWays distinct values seen with each key, most recent first. A predicate read mostly
// returns a row image ("v1=12,v2=40,w=7") that the insert or predicate write of its key
// installed a moment before, so most rows cost a compare of a few bytes in a small table
// instead of a lookup in the builder's value index, which for millions of values misses
// the processor's caches twice.
//
// It returns exactly what [history.Builder.BytesValue] would: an id is cached only after
// the builder gave it for the same bytes, the builder never forgets a value, and on a miss
// the builder is asked, so values are interned in the same order with or without it.
type valueCache struct {
	off  bool // a decoder for one line: not worth a table
	b    *history.Builder
	ways []cachedValue // key k's entries are ways[k*cacheWays : (k+1)*cacheWays]
	// misses and missBytes count the values looked up and not found, and their bytes.
	misses, missBytes int
}

const (
	cacheWays = 4
	// cacheKeys bounds the keys cached (4 MiB of entries at most); values of later keys go
	// to the builder directly.
	cacheKeys = 1 << 15
)

// cachedValue is one cached value: its bytes (up to len(s)) and its id; id 0 (the nil
// value, never a string) marks an empty entry.
type cachedValue struct {
	id history.Value
	n  uint8
	s  [27]byte
}

// reset points the cache at b, forgetting what it knew unless b is the builder it already
// serves.
func (c *valueCache) reset(b *history.Builder) {
	if c.b != b {
		c.b = b
		clear(c.ways)
		c.ways = c.ways[:0]
	}
}

// value interns the string value s, seen with key k, in c's builder.
func (c *valueCache) value(k history.Key, s []byte) history.Value {
	if v, ok := c.lookup(k, s); ok {
		return v
	}
	v := c.b.BytesValue(s)
	c.add(k, s, v)
	return v
}

// entries returns key k's entries, or nil for a value the cache does not hold: a decoder
// for one line, a long value, a key beyond cacheKeys, or (without grow) a key not yet
// cached.
func (c *valueCache) entries(k history.Key, s []byte, grow bool) []cachedValue {
	if c.off || len(s) > len(cachedValue{}.s) || k < 0 || k >= cacheKeys {
		return nil
	}
	i := int(k) * cacheWays
	if i >= len(c.ways) {
		if !grow {
			return nil
		}
		n := min(max(2*len(c.ways), i+cacheWays, 64*cacheWays), cacheKeys*cacheWays)
		if n > cap(c.ways) {
			w := make([]cachedValue, n)
			copy(w, c.ways)
			c.ways = w
		} else {
			c.ways = c.ways[:n] // reset cleared it
		}
	}
	return c.ways[i : i+cacheWays : i+cacheWays]
}

// lookup returns the id of the string value s if it is cached with key k, and makes it
// the key's most recent value.
func (c *valueCache) lookup(k history.Key, s []byte) (history.Value, bool) {
	e := c.entries(k, s, false)
	for j := range e {
		if e[j].id != 0 && int(e[j].n) == len(s) && string(e[j].s[:len(s)]) == string(s) {
			if j > 0 {
				hit := e[j]
				copy(e[1:j+1], e[:j])
				e[0] = hit
			}
			return e[0].id, true
		}
	}
	return 0, false
}

// add records that the builder interned the string value s, seen with key k, as v after
// lookup missed it, as key k's most recent value. It also counts the misses, whose number
// and bytes estimate the values still to come.
func (c *valueCache) add(k history.Key, s []byte, v history.Value) {
	c.count(s)
	e := c.entries(k, s, true)
	if e == nil {
		return
	}
	// A batch may hold s twice with k (both missed, the first was added), and a predicate
	// write's new image is added without a lookup: an entry with id v holds s already
	// (ids are one per string), and comparing ids is cheaper than comparing s.
	if j := slices.IndexFunc(e, func(x cachedValue) bool { return x.id == v }); j >= 0 {
		hit := e[j]
		copy(e[1:j+1], e[:j])
		e[0] = hit
		return
	}
	copy(e[1:], e[:cacheWays-1])
	e[0].id, e[0].n = v, uint8(len(s))
	copy(e[0].s[:], s)
}

// count counts s among the misses without caching it.
func (c *valueCache) count(s []byte) {
	c.misses++
	c.missBytes += len(s) + 1 // the arena stores a length before the bytes
}

// pendingValues holds the string values of a predicate op's rows that the value cache
// missed, to be interned in one batch.
type pendingValues struct {
	ss   [][]byte // the values, aliasing the line
	rows []int    // the row of each
	ids  []history.Value
}

func (p *pendingValues) add(s []byte, row int) {
	p.ss = append(p.ss, s)
	p.rows = append(p.rows, row)
}

// flush interns the pending values in b, in the order they were added, sets the values of
// their rows and, if cache is set, adds them to the cache with their rows' keys.
func (p *pendingValues) flush(b *history.Builder, c *valueCache, rows []history.Row, cache bool) {
	if len(p.ss) == 0 {
		return
	}
	p.ids = slices.Grow(p.ids[:0], len(p.ss))[:len(p.ss)]
	b.BytesValues(p.ss, p.ids)
	for j, i := range p.rows {
		rows[i].Value = p.ids[j]
		if cache {
			c.add(rows[i].Key, p.ss[j], p.ids[j])
		} else {
			c.count(p.ss[j])
		}
	}
	clear(p.ss) // drop the references to the line
	p.ss, p.rows = p.ss[:0], p.rows[:0]
}

// strCache shares the strings of predicates' relations and fields, which repeat from op to
// op, among the ops instead of allocating each again.
type strCache struct {
	s    [8]string
	next int
}

func (c *strCache) get(b []byte) string {
	for _, s := range c.s {
		if s == string(b) {
			return s
		}
	}
	s := string(b)
	c.s[c.next%len(c.s)] = s
	c.next++
	return s
}

// rowSlab hands out the rows of predicate ops from large shared arrays, instead of one
// allocation per op. The builder keeps each op's rows as given; rows are never appended
// to, so ops sharing an array do not interfere. Arrays start small (a decoder may read a
// single line) and double up to slabRows.
type rowSlab struct {
	free []history.Row
	size int // size of the last array made
}

// slabRows is the largest array: 24 MiB, mostly whole huge pages (package hugepage).
const slabRows = 1 << 20

// take returns n zeroed rows (nil for none), with length and capacity n.
func (s *rowSlab) take(n int) []history.Row {
	if n == 0 {
		return nil
	}
	if len(s.free) < n {
		s.size = min(max(2*s.size, 64), slabRows)
		m := max(n, s.size)
		s.free = hugepage.MakeAhead[history.Row](m, m)
	}
	r := s.free[:n:n]
	s.free = s.free[n:]
	return r
}
