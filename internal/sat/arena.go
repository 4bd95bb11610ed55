package sat

import "math"

// cref is the offset of a clause in the arena.
type cref = uint32

// Special reason values. A variable whose reason is crefTheory was
// propagated by the theory; its reason clause is asked for lazily.
const (
	crefNone   cref = math.MaxUint32
	crefTheory cref = math.MaxUint32 - 1
)

// Clause layout in the arena: a header of hdrWords words, then the literals.
//
//	word 0: size<<2 | deleted<<1 | learnt
//	word 1: LBD (learnt clauses), or the forwarding offset during GC
//	word 2: activity, as float32 bits (learnt clauses)
const hdrWords = 3

const (
	flagLearnt  = 1
	flagDeleted = 2
)

func (s *Solver) csize(c cref) int         { return int(s.arena[c] >> 2) }
func (s *Solver) learnt(c cref) bool       { return s.arena[c]&flagLearnt != 0 }
func (s *Solver) deleted(c cref) bool      { return s.arena[c]&flagDeleted != 0 }
func (s *Solver) lbd(c cref) uint32        { return s.arena[c+1] }
func (s *Solver) setLBD(c cref, x int)     { s.arena[c+1] = uint32(x) }
func (s *Solver) cact(c cref) float32      { return math.Float32frombits(s.arena[c+2]) }
func (s *Solver) setAct(c cref, a float32) { s.arena[c+2] = math.Float32bits(a) }

// lits returns the literals of c. The slice aliases the arena: it is valid
// until the next clause allocation.
func (s *Solver) lits(c cref) []Lit {
	n := cref(s.arena[c] >> 2)
	return asLits(s.arena[c+hdrWords : c+hdrWords+n])
}

// alloc appends a clause to the arena and returns its offset.
func (s *Solver) alloc(lits []Lit, learnt bool) cref {
	c := cref(len(s.arena))
	h := uint32(len(lits)) << 2
	if learnt {
		h |= flagLearnt
	}
	s.arena = append(s.arena, h, 0, 0)
	for _, m := range lits {
		s.arena = append(s.arena, uint32(m))
	}
	return c
}

// free marks c deleted; its space is reclaimed by the next collection.
func (s *Solver) free(c cref) {
	s.arena[c] |= flagDeleted
	s.wasted += hdrWords + s.csize(c)
}

// collect compacts the arena when enough of it is wasted. Watch lists must
// hold no deleted clauses when it runs.
func (s *Solver) maybeCollect() {
	if s.wasted*5 < len(s.arena) {
		return
	}
	old := s.arena
	s.arena = make([]uint32, 0, len(old)-s.wasted+len(old)/8)
	s.clauses = s.move(old, s.clauses)
	s.learnts = s.move(old, s.learnts)
	s.forwardReasons(old)
	for m := range s.watches {
		ws := s.watches[m]
		for i := range ws {
			ws[i].c = old[ws[i].c+1]
		}
	}
	s.wasted = 0
	s.stats.Collections++
}

// move copies the live clauses of cs from the old arena to the end of the
// new one, leaving each one's new offset in its old header's second word,
// and returns cs without the deleted clauses, at their new offsets.
func (s *Solver) move(old []uint32, cs []cref) []cref {
	j := 0
	for _, c := range cs {
		if old[c]&flagDeleted != 0 {
			continue
		}
		n := cref(old[c]>>2) + hdrWords
		nc := cref(len(s.arena))
		s.arena = append(s.arena, old[c:c+n]...)
		old[c+1] = nc // forwarding offset
		cs[j] = nc
		j++
	}
	return cs[:j]
}

// forwardReasons points the reasons of assigned variables at the moved
// clauses.
func (s *Solver) forwardReasons(old []uint32) {
	for v := 1; v <= s.nvars; v++ {
		r := s.reason[v]
		if r == crefNone || r == crefTheory || s.vals[Var(v).Pos()] == Undef {
			continue
		}
		if old[r]&flagDeleted != 0 {
			s.reason[v] = crefNone // only at level 0, where reasons are not needed
		} else {
			s.reason[v] = old[r+1]
		}
	}
}
