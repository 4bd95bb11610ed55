package sat

// enqueue assigns m true at the current level with reason c (a decision or
// an assumption when c is crefNone).
func (s *Solver) enqueue(m Lit, c cref) {
	s.enqueueAt(m, c, int32(len(s.trailLim)))
}

// enqueueAt assigns m true at level lvl with reason c. lvl may be below the
// current level (an implication whose reason lies below it, see
// [Solver.cancelUntil]): the trail is then not sorted by level.
func (s *Solver) enqueueAt(m Lit, c cref, lvl int32) {
	v := m.Var()
	s.vals[m] = True
	s.vals[m.Not()] = False
	s.level[v] = lvl
	s.reason[v] = c
	s.trail = append(s.trail, m)
}

// newLevel opens a decision level.
func (s *Solver) newLevel() {
	s.trailLim = append(s.trailLim, len(s.trail))
}

// cancelUntil undoes every assignment above level lvl, saving phases.
// Assignments of level lvl or below that sit above the start of level lvl+1
// on the trail (implications placed out of order by chronological
// backtracking) are kept: they move down, in trail order, and are
// propagated and reported to the theory again, since what they implied at
// the undone levels is gone.
func (s *Solver) cancelUntil(lvl int) {
	if len(s.trailLim) <= lvl {
		return
	}
	lim := s.trailLim[lvl]
	j := lim
	for i := lim; i < len(s.trail); i++ {
		m := s.trail[i]
		v := m.Var()
		if s.level[v] <= int32(lvl) {
			s.trail[j] = m
			j++
			continue
		}
		s.vals[m] = Undef
		s.vals[m.Not()] = Undef
		if m.IsNeg() {
			s.phase[v] = -1
		} else {
			s.phase[v] = 1
		}
		if !s.heap.contains(v) {
			s.heap.insert(v)
		}
	}
	s.trail = s.trail[:j]
	s.trailLim = s.trailLim[:lvl]
	s.qhead = min(s.qhead, lim)
	if s.theory != nil {
		s.thead = min(s.thead, lim)
		s.theory.Backtrack(lvl)
	}
}
