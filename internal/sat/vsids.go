package sat

// varHeap is a binary min-heap of variables ordered by decreasing activity
// (EVSIDS), with positions for decrease-key.
type varHeap struct {
	act  *[]float64
	vars []Var
	pos  []int32 // by Var; -1 when absent
}

func (h *varHeap) less(a, b Var) bool { return (*h.act)[a] > (*h.act)[b] }

func (h *varHeap) contains(v Var) bool { return h.pos[v] >= 0 }

func (h *varHeap) insert(v Var) {
	h.pos[v] = int32(len(h.vars))
	h.vars = append(h.vars, v)
	h.up(int(h.pos[v]))
}

// removeMin pops the most active variable, or returns 0 if the heap is empty.
func (h *varHeap) removeMin() Var {
	if len(h.vars) == 0 {
		return 0
	}
	v := h.vars[0]
	last := h.vars[len(h.vars)-1]
	h.vars = h.vars[:len(h.vars)-1]
	h.pos[v] = -1
	if len(h.vars) > 0 {
		h.vars[0] = last
		h.pos[last] = 0
		h.down(0)
	}
	return v
}

func (h *varHeap) up(i int) {
	v := h.vars[i]
	for i > 0 {
		p := (i - 1) >> 1
		if !h.less(v, h.vars[p]) {
			break
		}
		h.vars[i] = h.vars[p]
		h.pos[h.vars[i]] = int32(i)
		i = p
	}
	h.vars[i] = v
	h.pos[v] = int32(i)
}

func (h *varHeap) down(i int) {
	v := h.vars[i]
	n := len(h.vars)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h.less(h.vars[c+1], h.vars[c]) {
			c++
		}
		if !h.less(h.vars[c], v) {
			break
		}
		h.vars[i] = h.vars[c]
		h.pos[h.vars[i]] = int32(i)
		i = c
	}
	h.vars[i] = v
	h.pos[v] = int32(i)
}

// bumpVar increases the activity of v, rescaling all activities when they
// grow too large.
func (s *Solver) bumpVar(v Var) {
	s.activity[v] += s.varInc
	if s.activity[v] > 1e100 {
		for i := range s.activity {
			s.activity[i] *= 1e-100
		}
		s.varInc *= 1e-100
	}
	if s.heap.contains(v) {
		s.heap.up(int(s.heap.pos[v]))
	}
}

func (s *Solver) varDecay() { s.varInc /= s.opts.VarDecay }

// bumpClause increases the activity of learnt clause c.
func (s *Solver) bumpClause(c cref) {
	a := s.cact(c) + float32(s.claInc)
	s.setAct(c, a)
	if a > 1e20 {
		for _, d := range s.learnts {
			s.setAct(d, s.cact(d)*1e-20)
		}
		s.claInc *= 1e-20
	}
}

func (s *Solver) clauseDecay() { s.claInc /= s.opts.ClauseDecay }
