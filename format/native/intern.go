package native

import "isovet/history"

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
	if c.off || len(s) > len(cachedValue{}.s) || k < 0 || k >= cacheKeys {
		return c.b.BytesValue(s)
	}
	i := int(k) * cacheWays
	if i >= len(c.ways) {
		n := min(max(2*len(c.ways), i+cacheWays, 64*cacheWays), cacheKeys*cacheWays)
		if n > cap(c.ways) {
			w := make([]cachedValue, n)
			copy(w, c.ways)
			c.ways = w
		} else {
			c.ways = c.ways[:n] // reset cleared it
		}
	}
	e := c.ways[i : i+cacheWays : i+cacheWays]
	for j := range e {
		if e[j].id != 0 && int(e[j].n) == len(s) && string(e[j].s[:len(s)]) == string(s) {
			if j > 0 {
				hit := e[j]
				copy(e[1:j+1], e[:j])
				e[0] = hit
			}
			return e[0].id
		}
	}
	v := c.b.BytesValue(s)
	copy(e[1:], e[:cacheWays-1])
	e[0].id, e[0].n = v, uint8(len(s))
	copy(e[0].s[:], s)
	return v
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

const slabRows = 1 << 14

// take returns n zeroed rows (nil for none), with length and capacity n.
func (s *rowSlab) take(n int) []history.Row {
	if n == 0 {
		return nil
	}
	if len(s.free) < n {
		s.size = min(max(2*s.size, 64), slabRows)
		s.free = make([]history.Row, max(n, s.size))
	}
	r := s.free[:n:n]
	s.free = s.free[n:]
	return r
}
