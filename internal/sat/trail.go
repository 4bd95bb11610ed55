package sat

// enqueue assigns m true at the current level with reason c.
func (s *Solver) enqueue(m Lit, c cref) {
	v := m.Var()
	s.vals[m] = True
	s.vals[m.Not()] = False
	s.level[v] = int32(len(s.trailLim))
	s.reason[v] = c
	s.trail = append(s.trail, m)
}

// newLevel opens a decision level.
func (s *Solver) newLevel() {
	s.trailLim = append(s.trailLim, len(s.trail))
}

// cancelUntil undoes every assignment above level lvl, saving phases.
func (s *Solver) cancelUntil(lvl int) {
	if len(s.trailLim) <= lvl {
		return
	}
	lim := s.trailLim[lvl]
	for i := len(s.trail) - 1; i >= lim; i-- {
		m := s.trail[i]
		v := m.Var()
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
	s.trail = s.trail[:lim]
	s.trailLim = s.trailLim[:lvl]
	s.qhead = min(s.qhead, lim)
	if s.theory != nil {
		s.thead = min(s.thead, lim)
		s.theory.Backtrack(lvl)
	}
}
