package sat

import (
	"math/rand/v2"
)

// randomCNF returns a random CNF over n variables with m clauses of width
// 1..maxw (weighted towards 3), in DIMACS integers.
func randomCNF(r *rand.Rand, n, m, maxw int) [][]int {
	cnf := make([][]int, m)
	for i := range cnf {
		w := 3
		switch x := r.IntN(10); {
		case x == 0:
			w = 1
		case x < 3:
			w = 2
		case x > 7:
			w = 3 + r.IntN(maxw-2)
		}
		w = min(w, maxw)
		c := make([]int, w)
		for j := range c {
			c[j] = 1 + r.IntN(n)
			if r.IntN(2) == 0 {
				c[j] = -c[j]
			}
		}
		cnf[i] = c
	}
	return cnf
}

// random3SAT returns a uniform random 3-SAT formula with distinct variables
// in each clause.
func random3SAT(r *rand.Rand, n, m int) [][]int {
	cnf := make([][]int, m)
	for i := range cnf {
		c := make([]int, 0, 3)
		for len(c) < 3 {
			v := 1 + r.IntN(n)
			dup := false
			for _, x := range c {
				if x == v || x == -v {
					dup = true
				}
			}
			if dup {
				continue
			}
			if r.IntN(2) == 0 {
				v = -v
			}
			c = append(c, v)
		}
		cnf[i] = c
	}
	return cnf
}

// pigeonhole returns PHP(n+1, n): n+1 pigeons in n holes, unsatisfiable.
// Variable p*n+h+1 means pigeon p sits in hole h.
func pigeonhole(n int) [][]int {
	x := func(p, h int) int { return p*n + h + 1 }
	var cnf [][]int
	for p := 0; p <= n; p++ {
		c := make([]int, n)
		for h := range n {
			c[h] = x(p, h)
		}
		cnf = append(cnf, c)
	}
	for h := range n {
		for p := 0; p <= n; p++ {
			for q := p + 1; q <= n; q++ {
				cnf = append(cnf, []int{-x(p, h), -x(q, h)})
			}
		}
	}
	return cnf
}

// bruteSAT reports whether cnf over n <= 20 variables is satisfiable,
// evaluating 64 assignments per word: variables 1..6 vary inside a word.
func bruteSAT(n int, cnf [][]int, assume []int) bool {
	var low [6]uint64
	for b := range 6 {
		for a := range 64 {
			if a>>b&1 == 1 {
				low[b] |= 1 << a
			}
		}
	}
	all := append(append([][]int{}, cnf...), nil)[:len(cnf)]
	for _, a := range assume {
		all = append(all, []int{a})
	}
	highVars := max(0, n-6)
	for hi := 0; hi < 1<<highVars; hi++ {
		acc := ^uint64(0)
		for _, c := range all {
			var w uint64
			for _, l := range c {
				v := l
				if v < 0 {
					v = -v
				}
				var x uint64
				if v <= 6 {
					x = low[v-1]
				} else if hi>>(v-7)&1 == 1 {
					x = ^uint64(0)
				}
				if l < 0 {
					x = ^x
				}
				w |= x
			}
			acc &= w
			if acc == 0 {
				break
			}
		}
		if n < 6 {
			acc &= 1<<(1<<n) - 1
		}
		if acc != 0 {
			return true
		}
	}
	return false
}

// load adds cnf to a new solver with n variables.
func load(n int, cnf [][]int, opts Options) *Solver {
	s := New(opts)
	for range n {
		s.NewVar()
	}
	for _, c := range cnf {
		if err := s.AddClause(lits(c)...); err != nil {
			panic(err)
		}
	}
	return s
}

func lits(c []int) []Lit {
	out := make([]Lit, len(c))
	for i, x := range c {
		out[i] = LitOf(x)
	}
	return out
}

// modelOK reports whether the solver's model satisfies cnf.
func modelOK(s *Solver, cnf [][]int) bool {
	for _, c := range cnf {
		ok := false
		for _, x := range c {
			if s.Value(LitOf(x)) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
