package sat

import (
	"cmp"
	"slices"
)

// locked reports whether learnt clause c is the reason of an assignment.
func (s *Solver) locked(c cref) bool {
	l := s.lits(c)
	for i := 0; i < len(l) && i < 2; i++ {
		v := l[i].Var()
		if s.reason[v] == c && s.vals[l[i]] == True {
			return true
		}
	}
	return false
}

// reduce deletes about half of the learnt clauses: those with the highest
// LBD and, among equal LBD, the lowest activity. Clauses with LBD <= 2 and
// reasons of current assignments are kept.
func (s *Solver) reduce() {
	s.stats.Reductions++
	slices.SortFunc(s.learnts, s.worseFirst)
	target := len(s.learnts) / 2
	j := 0
	removed := 0
	for _, c := range s.learnts {
		if removed < target && s.lbd(c) > 2 && !s.locked(c) {
			s.free(c)
			removed++
			continue
		}
		s.learnts[j] = c
		j++
	}
	s.learnts = s.learnts[:j]
	s.stats.DeletedLearnts += int64(removed)
	s.purgeWatches()
	s.maybeCollect()
}

// worseFirst orders learnt clauses for reduce: higher LBD first and, among
// equal LBD, lower activity first.
func (s *Solver) worseFirst(a, b cref) int {
	if c := cmp.Compare(s.lbd(b), s.lbd(a)); c != 0 {
		return c
	}
	return cmp.Compare(s.cact(a), s.cact(b))
}

// purgeWatches removes watchers of deleted clauses.
func (s *Solver) purgeWatches() {
	for m, ws := range s.watches {
		j := 0
		for _, w := range ws {
			if !s.deleted(w.c) {
				ws[j] = w
				j++
			}
		}
		s.watches[m] = ws[:j]
	}
}

// simplify removes clauses satisfied at level 0. It runs at level 0 after
// propagation, when new facts were found.
func (s *Solver) simplify() {
	s.simpTrail = len(s.trail)
	sweep := func(cs []cref) []cref {
		j := 0
		for _, c := range cs {
			if s.satisfied(s.lits(c)) {
				for _, m := range s.lits(c) {
					if s.reason[m.Var()] == c {
						s.reason[m.Var()] = crefNone // level 0: no reason needed
					}
				}
				s.free(c)
				continue
			}
			cs[j] = c
			j++
		}
		return cs[:j]
	}
	s.clauses = sweep(s.clauses)
	s.learnts = sweep(s.learnts)
	s.purgeWatches()
	s.maybeCollect()
}
