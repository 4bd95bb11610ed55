package sat

// propagate runs unit propagation over the trail from qhead with two
// watched literals and blockers. It returns a conflicting clause, or
// crefNone.
func (s *Solver) propagate() cref {
	confl := crefNone
	vals := s.vals
	for s.qhead < len(s.trail) {
		p := s.trail[s.qhead]
		s.qhead++
		s.stats.Propagations++
		falseLit := p.Not()
		ws := s.watches[p]
		i, j := 0, 0
		for i < len(ws) {
			w := ws[i]
			i++
			if vals[w.blocker] == True {
				ws[j] = w
				j++
				continue
			}
			if w.bin {
				ws[j] = w
				j++
				if vals[w.blocker] == False {
					confl = w.c
					break
				}
				s.enqueue(w.blocker, w.c)
				continue
			}
			c := w.c
			n := cref(s.arena[c] >> 2)
			lits := asLits(s.arena[c+hdrWords : c+hdrWords+n])
			if lits[0] == falseLit {
				lits[0], lits[1] = lits[1], falseLit
			}
			first := lits[0]
			blocker := w.blocker
			w = watcher{c, first, false}
			if first != blocker && vals[first] == True {
				ws[j] = w
				j++
				continue
			}
			moved := false
			for k := 2; k < len(lits); k++ {
				if vals[lits[k]] != False {
					lits[1], lits[k] = lits[k], falseLit
					nw := lits[1].Not()
					s.watches[nw] = append(s.watches[nw], w)
					moved = true
					break
				}
			}
			if moved {
				continue
			}
			ws[j] = w
			j++
			if vals[first] == False {
				confl = c
				break
			}
			s.enqueue(first, c)
		}
		if confl != crefNone {
			for i < len(ws) {
				ws[j] = ws[i]
				i++
				j++
			}
			s.watches[p] = ws[:j]
			s.qhead = len(s.trail)
			return confl
		}
		s.watches[p] = ws[:j]
	}
	return confl
}
