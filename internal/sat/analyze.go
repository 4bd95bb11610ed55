package sat

import (
	"slices"

	"github.com/isovet/isovet/internal/invariant"
)

// reasonLits returns the reason clause of the assigned variable v (v's
// literal is among them), asking the theory for it if v was propagated by
// the theory. The slice is valid until the next clause allocation.
func (s *Solver) reasonLits(v Var) []Lit {
	c := s.reason[v]
	if c == crefTheory {
		c = s.materialize(v)
	}
	return s.lits(c)
}

// materialize turns the lazy reason of a theory-propagated variable into a
// learnt clause in the arena, with the propagated literal first.
func (s *Solver) materialize(v Var) cref {
	m := v.Pos()
	if s.vals[m] != True {
		m = m.Not()
	}
	s.stats.TheoryReasons++
	r := s.theory.Reason(m, s.thBuf[:0])
	s.thBuf = r[:0]
	// Put m first and the highest-level other literal second, so that the
	// clause is correctly watched.
	buf := make([]Lit, 0, len(r))
	buf = append(buf, m)
	hasM := false
	for _, q := range r {
		if q == m {
			hasM = true
			continue
		}
		if invariant.Enabled {
			invariant.Assertf(s.vals[q] == False, "reason literal %v of %v is not false", q, m)
			invariant.Assertf(s.level[q.Var()] <= s.level[v], "reason literal %v of %v is from a later level", q, m)
		}
		buf = append(buf, q)
	}
	invariant.Assertf(hasM, "theory reason for %v does not contain it", m)
	if len(buf) > 2 {
		best := 1
		for i := 2; i < len(buf); i++ {
			if s.level[buf[i].Var()] > s.level[buf[best].Var()] {
				best = i
			}
		}
		buf[1], buf[best] = buf[best], buf[1]
	}
	c := s.alloc(buf, true)
	s.setLBD(c, len(buf))
	s.learnts = append(s.learnts, c)
	if len(buf) >= 2 {
		s.attach(c)
	} // a unit reason is kept unwatched until it is no longer locked
	s.reason[v] = c
	return c
}

// analyze derives a first-UIP clause from the conflict clause confl (all
// literals false, at least one at the current level). It returns the learnt
// clause (asserting literal first, a literal of the backjump level second),
// the backjump level, and the clause's LBD.
func (s *Solver) analyze(confl []Lit) ([]Lit, int, int) {
	out := s.firstUIP(confl)
	s.toClear = append(s.toClear[:0], out...)
	n0 := len(out)
	if !s.opts.NoMinimize {
		out = s.minimize(out)
	}
	s.stats.MinimizedLits += int64(n0 - len(out))
	s.stats.LearntLits += int64(len(out))
	bt := s.backjumpLevel(out)
	for _, q := range s.toClear {
		s.seen[q.Var()] = 0
	}
	s.learnt0 = out
	return out, bt, s.computeLBD(out)
}

// firstUIP resolves the conflict clause with reasons back to the first unique implication
// point of the current level. It returns the clause, the UIP's negation first; its
// literals (but the first) are marked seen.
func (s *Solver) firstUIP(confl []Lit) []Lit {
	dl := int32(len(s.trailLim))
	out := append(s.learnt0[:0], LitNull)
	pathC := 0
	p := LitNull
	idx := len(s.trail) - 1
	lits := confl
	for {
		for _, q := range lits {
			v := q.Var()
			if p != LitNull && v == p.Var() {
				continue
			}
			if s.seen[v] != 0 || s.level[v] == 0 {
				continue
			}
			s.bumpVar(v)
			s.seen[v] = 1
			if s.level[v] >= dl {
				pathC++
			} else {
				out = append(out, q)
			}
		}
		// Seen literals of lower levels may sit above the conflict level's on
		// the trail (chronological backtracking): skip them too.
		for v := s.trail[idx].Var(); s.seen[v] == 0 || s.level[v] < dl; v = s.trail[idx].Var() {
			idx--
		}
		p = s.trail[idx]
		idx--
		s.seen[p.Var()] = 0
		pathC--
		if pathC <= 0 {
			break
		}
		if c := s.reason[p.Var()]; c != crefTheory && s.learnt(c) {
			s.bumpClause(c)
			s.updateLBD(c)
		}
		lits = s.reasonLits(p.Var())
	}
	out[0] = p.Not()
	return out
}

// minimize drops the literals of out (but the first) that the others imply through
// reasons: recursive minimization (MiniSat's ccmin_mode 2).
func (s *Solver) minimize(out []Lit) []Lit {
	var abstract uint32
	for _, q := range out[1:] {
		abstract |= s.abstractLevel(q.Var())
	}
	j := 1
	for _, q := range out[1:] {
		r := s.reason[q.Var()]
		if r == crefNone || !s.redundant(q, abstract) {
			out[j] = q
			j++
		}
	}
	return out[:j]
}

// backjumpLevel moves a literal of the highest level but the asserting one's to second
// place, and returns that level (0 for a unit clause).
func (s *Solver) backjumpLevel(out []Lit) int {
	if len(out) <= 1 {
		return 0
	}
	best := 1
	for i := 2; i < len(out); i++ {
		if s.level[out[i].Var()] > s.level[out[best].Var()] {
			best = i
		}
	}
	out[1], out[best] = out[best], out[1]
	return int(s.level[out[1].Var()])
}

func (s *Solver) abstractLevel(v Var) uint32 { return 1 << (uint32(s.level[v]) & 31) }

// redundant reports whether q (in the learnt clause) is implied by the
// other literals of the clause through reasons.
func (s *Solver) redundant(q Lit, abstract uint32) bool {
	s.stack = append(s.stack[:0], q)
	top := len(s.toClear)
	for len(s.stack) > 0 {
		x := s.stack[len(s.stack)-1]
		s.stack = s.stack[:len(s.stack)-1]
		for _, m := range s.reasonLits(x.Var()) {
			v := m.Var()
			if v == x.Var() || s.seen[v] != 0 || s.level[v] == 0 {
				continue
			}
			if s.reason[v] != crefNone && s.abstractLevel(v)&abstract != 0 {
				s.seen[v] = 1
				s.stack = append(s.stack, m)
				s.toClear = append(s.toClear, m)
				continue
			}
			for _, y := range s.toClear[top:] {
				s.seen[y.Var()] = 0
			}
			s.toClear = s.toClear[:top]
			return false
		}
	}
	return true
}

// computeLBD returns the number of distinct decision levels in lits.
func (s *Solver) computeLBD(lits []Lit) int {
	s.lbdStamp++
	n := 0
	for _, m := range lits {
		l := s.level[m.Var()]
		for int(l) >= len(s.lbdSeen) {
			s.lbdSeen = append(s.lbdSeen, 0)
		}
		if s.lbdSeen[l] != s.lbdStamp {
			s.lbdSeen[l] = s.lbdStamp
			n++
		}
	}
	return n
}

// updateLBD lowers the stored LBD of learnt clause c if it improved.
func (s *Solver) updateLBD(c cref) {
	if s.lbd(c) <= 2 {
		return
	}
	if n := s.computeLBD(s.lits(c)); uint32(n) < s.lbd(c) {
		s.setLBD(c, n)
	}
}

// analyzeFinal computes the assumptions responsible for p being false
// (p is the negation of a falsified assumption) into s.failed.
func (s *Solver) analyzeFinal(p Lit) {
	s.failed = append(s.failed[:0], p.Not())
	if len(s.trailLim) == 0 {
		return
	}
	s.seen[p.Var()] = 1
	for i := len(s.trail) - 1; i >= s.trailLim[0]; i-- {
		v := s.trail[i].Var()
		if s.seen[v] == 0 {
			continue
		}
		if s.reason[v] == crefNone {
			if s.level[v] > 0 {
				s.failed = append(s.failed, s.trail[i])
			}
		} else {
			for _, m := range s.reasonLits(v) {
				if m.Var() != v && s.level[m.Var()] > 0 {
					s.seen[m.Var()] = 1
				}
			}
		}
		s.seen[v] = 0
	}
	s.seen[p.Var()] = 0
	// An assumption may repeat, or appear with its negation.
	slices.Sort(s.failed)
	s.failed = slices.Compact(s.failed)
}
