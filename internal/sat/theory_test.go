package sat

import (
	"context"
	"math/rand/v2"
	"testing"
)

// atMost is a test theory: at most k of the literals in set are true
// (conflicts from Assign, propagation with lazy reasons), and, checked only
// on complete assignments, at least one literal of need is true.
type atMost struct {
	s     *Solver
	set   map[Lit]bool
	k     int
	need  []Lit
	true_ []Lit // literals of set reported true, in order
	lv    []int // their levels
	props []Lit // queued propagations
	why   map[Lit]bool
}

func (a *atMost) Assign(m Lit, level int) []Lit {
	if !a.set[m] {
		return nil
	}
	a.true_ = append(a.true_, m)
	a.lv = append(a.lv, level)
	if len(a.true_) > a.k {
		c := make([]Lit, 0, a.k+1)
		for _, x := range a.true_ {
			c = append(c, x.Not())
		}
		a.true_ = a.true_[:len(a.true_)-1]
		a.lv = a.lv[:len(a.lv)-1]
		return c
	}
	if len(a.true_) == a.k {
		for x := range a.set {
			if a.s.LitValue(x) == Undef {
				a.props = append(a.props, x.Not())
				a.why[x.Not()] = true
			}
		}
	}
	return nil
}

func (a *atMost) Propagate(dst []Lit) []Lit {
	dst = append(dst, a.props...)
	a.props = a.props[:0]
	return dst
}

func (a *atMost) Reason(p Lit, dst []Lit) []Lit {
	if !a.why[p] {
		panic("reason for a literal not propagated")
	}
	dst = append(dst, p)
	for _, x := range a.true_[:a.k] {
		dst = append(dst, x.Not())
	}
	return dst
}

func (a *atMost) Backtrack(level int) {
	i := len(a.true_)
	for i > 0 && a.lv[i-1] > level {
		i--
	}
	a.true_, a.lv = a.true_[:i], a.lv[:i]
	a.props = a.props[:0]
}

func (a *atMost) Check() []Lit {
	for _, m := range a.need {
		if a.s.LitValue(m) != False {
			return nil
		}
	}
	return append([]Lit{}, a.need...)
}

func (a *atMost) Phase(v Var) Lit { return v.Pos() } // against the default, to exercise it

// TestTheory compares solving with the atMost theory against brute force
// over random CNFs: the theory's constraints are added to the oracle as
// clauses.
func TestTheory(t *testing.T) {
	count := 20_000
	if testing.Short() {
		count = 2_000
	}
	var props, reasons, checks, chrono int64
	for i := range count {
		r := rand.New(rand.NewPCG(11, uint64(i)))
		n := 2 + r.IntN(11)
		cnf := randomCNF(r, n, r.IntN(3*n), 4)
		// A third of the instances backtrack chronologically on every backjump of two
		// levels or more; a third never do.
		opts := Options{RestartBase: 1 + r.IntN(50)}
		switch i % 3 {
		case 1:
			opts.ChronoLimit = 1
		case 2:
			opts.NoChrono = true
		}
		s := load(n, cnf, opts)
		a := &atMost{s: s, set: map[Lit]bool{}, k: r.IntN(3), why: map[Lit]bool{}}
		var setLits []int
		for _, v := range r.Perm(n)[:1+r.IntN(n)] {
			x := v + 1
			if r.IntN(3) == 0 {
				x = -x
			}
			a.set[LitOf(x)] = true
			setLits = append(setLits, x)
		}
		var needLits []int
		for range 1 + r.IntN(3) {
			x := 1 + r.IntN(n)
			if r.IntN(2) == 0 {
				x = -x
			}
			a.need = append(a.need, LitOf(x))
			needLits = append(needLits, x)
		}
		s.AttachTheory(a)
		// Oracle: at most k of setLits, as clauses over every k+1 subset.
		oracle := append([][]int{}, cnf...)
		oracle = append(oracle, needLits)
		var rec func(start int, chosen []int)
		rec = func(start int, chosen []int) {
			if len(chosen) == a.k+1 {
				c := make([]int, len(chosen))
				for j, x := range chosen {
					c[j] = -x
				}
				oracle = append(oracle, c)
				return
			}
			for j := start; j < len(setLits); j++ {
				rec(j+1, append(chosen, setLits[j]))
			}
		}
		rec(0, nil)
		for round := range 2 {
			var assume []int
			if round == 1 {
				assume = []int{1 + r.IntN(n)}
			}
			st, err := s.Solve(context.Background(), lits(assume)...)
			if err != nil {
				t.Fatal(err)
			}
			ok := t.Run("", func(t *testing.T) { checkAnswer(t, s, n, oracle, assume, st) })
			if !ok {
				t.Fatalf("instance %d: cnf=%v set=%v k=%d need=%v assume=%v", i, cnf, setLits, a.k, needLits, assume)
			}
		}
		st := s.Stats()
		props += st.TheoryPropagations
		reasons += st.TheoryReasons
		checks += st.FinalChecks
		chrono += st.ChronoBacktracks
	}
	t.Logf("theory propagations %d, reasons %d, final checks %d, chronological backtracks %d", props, reasons, checks, chrono)
	if props == 0 || reasons == 0 || checks == 0 || chrono == 0 {
		t.Errorf("the test does not exercise propagation, reasons, final checks and chronological backtracking")
	}
}
