package sat

// propagate runs unit propagation over the trail from qhead with two
// watched literals and blockers. It returns a conflicting clause, or
// crefNone.
func (s *Solver) propagate() cref {
	confl := crefNone
	vals := s.vals
	arena := s.arena // no clause is allocated during propagation
	watches := s.watches
	start := s.qhead
	for s.qhead < len(s.trail) {
		p := s.trail[s.qhead]
		s.qhead++
		falseLit := p.Not()
		ws := watches[p]
		i, j := 0, 0
		n := len(ws)
		for i < n {
			w := ws[i]
			i++
			bv := vals[w.blocker]
			if bv == True {
				ws[j] = w
				j++
				continue
			}
			if w.bin {
				ws[j] = w
				j++
				if bv == False {
					confl = w.c
					break
				}
				s.enqueueAt(w.blocker, w.c, s.level[p.Var()])
				continue
			}
			c := w.c
			size := cref(arena[c] >> 2)
			lits := asLits(arena[c+hdrWords : c+hdrWords+size])
			if lits[0] == falseLit {
				lits[0], lits[1] = lits[1], falseLit
			}
			first := lits[0]
			fv := vals[first]
			if first != w.blocker && fv == True {
				ws[j] = watcher{c, first, false}
				j++
				continue
			}
			moved := false
			for k := 2; k < len(lits); k++ {
				if m := lits[k]; vals[m] != False {
					lits[1], lits[k] = m, falseLit
					nw := m.Not()
					watches[nw] = append(watches[nw], watcher{c, first, false})
					moved = true
					break
				}
			}
			if moved {
				continue
			}
			ws[j] = watcher{c, first, false}
			j++
			if fv == False {
				confl = c
				break
			}
			// The implication's level is the highest among the false
			// literals: below the current level after chronological
			// backtracking.
			lvl := s.level[falseLit.Var()]
			for _, m := range lits[2:] {
				lvl = max(lvl, s.level[m.Var()])
			}
			s.enqueueAt(first, c, lvl)
		}
		if confl != crefNone {
			j += copy(ws[j:], ws[i:n])
			watches[p] = ws[:j]
			s.qhead = len(s.trail)
			break
		}
		watches[p] = ws[:j]
	}
	s.stats.Propagations += int64(s.qhead - start)
	return confl
}
