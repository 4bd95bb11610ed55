package sat

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestBrute(t *testing.T) {
	// The oracle itself: x1 ∧ ¬x1 is UNSAT; PHP(3,2) is UNSAT; a chain is SAT.
	if bruteSAT(1, [][]int{{1}, {-1}}, nil) {
		t.Errorf("bruteSAT(x ∧ ¬x) = true")
	}
	if bruteSAT(6, pigeonhole(2), nil) {
		t.Errorf("bruteSAT(PHP(3,2)) = true")
	}
	if !bruteSAT(12, [][]int{{-1, 2}, {-2, 12}, {-12, 7}, {1}}, nil) {
		t.Errorf("bruteSAT(chain) = false")
	}
	if bruteSAT(12, [][]int{{-1, 2}, {-2, 12}, {-12, 7}, {1}}, []int{-7}) {
		t.Errorf("bruteSAT(chain, ¬x7) = true")
	}
}

// checkAnswer compares a Solve result with the brute-force oracle, and
// checks the model or the failed assumptions.
func checkAnswer(t *testing.T, s *Solver, n int, cnf [][]int, assume []int, st Status) {
	t.Helper()
	want := bruteSAT(n, cnf, assume)
	switch st {
	case Sat:
		if !want {
			t.Fatalf("Solve = SAT, brute force says UNSAT")
		}
		if !modelOK(s, cnf) {
			t.Fatalf("model falsifies a clause")
		}
		for _, a := range assume {
			if !s.Value(LitOf(a)) {
				t.Fatalf("model falsifies assumption %d", a)
			}
		}
	case Unsat:
		if want {
			t.Fatalf("Solve = UNSAT, brute force says SAT")
		}
		var core []int
		for _, m := range s.Failed() {
			core = append(core, m.Dimacs())
			found := false
			for _, a := range assume {
				found = found || a == m.Dimacs()
			}
			if !found {
				t.Fatalf("Failed() = %v has %d, not an assumption of %v", s.Failed(), m.Dimacs(), assume)
			}
		}
		if bruteSAT(n, cnf, core) {
			t.Fatalf("Failed() = %v is not an unsatisfiable core", core)
		}
	default:
		t.Fatalf("Solve = %v", st)
	}
}

// TestRandomSmall compares the solver with brute force on 100,000 random
// CNFs of up to 16 variables, with and without assumptions, and solving
// several times incrementally.
func TestRandomSmall(t *testing.T) {
	const total = 100_000
	count := total
	if testing.Short() {
		count = total / 10
	}
	seed := uint64(20261122)
	var chrono int64
	defer func() {
		if chrono == 0 {
			t.Errorf("no instance backtracked chronologically")
		}
	}()
	for i := range count {
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		n := 1 + r.IntN(16)
		m := 1 + r.IntN(int(5*float64(n))+2)
		cnf := randomCNF(r, n, m, 5)
		opts := Options{}
		switch i % 5 {
		case 1:
			opts.Restart = RestartGlucose
		case 2:
			opts.NoMinimize = true
		case 3:
			opts.RestartBase = 1
			opts.ReduceBase, opts.ReduceInc = 3, 1
		case 4:
			// Chronological backtracking on every backjump of two levels or more.
			opts.ChronoLimit = 1
		}
		s := load(n, cnf, opts)
		ok := t.Run("", func(t *testing.T) {
			st, err := s.Solve(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			checkAnswer(t, s, n, cnf, nil, st)
			// Incremental: solve under random assumptions, then with more clauses.
			for range 3 {
				var assume []int
				for range r.IntN(4) {
					a := 1 + r.IntN(n)
					if r.IntN(2) == 0 {
						a = -a
					}
					assume = append(assume, a)
				}
				st, err := s.Solve(context.Background(), lits(assume)...)
				if err != nil {
					t.Fatal(err)
				}
				checkAnswer(t, s, n, cnf, assume, st)
				extra := randomCNF(r, n, 1+r.IntN(3), 4)
				for _, c := range extra {
					if err := s.AddClause(lits(c)...); err != nil {
						t.Fatal(err)
					}
				}
				cnf = append(cnf, extra...)
			}
		})
		if !ok {
			t.Fatalf("failing instance: seed (%d, %d), n=%d, cnf=%v", seed, i, n, cnf)
		}
		chrono += s.Stats().ChronoBacktracks
	}
}

func TestPigeonhole(t *testing.T) {
	for n := 1; n <= 9; n++ {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			t.Parallel()
			s := load(n*(n+1), pigeonhole(n), Options{})
			st, err := s.Solve(context.Background())
			if err != nil || st != Unsat {
				t.Errorf("Solve(PHP(%d,%d)) = %v, %v, want UNSAT", n+1, n, st, err)
			}
			// PHP(n, n) is satisfiable: drop the last pigeon.
			cnf := pigeonhole(n)[1:]
			s = load(n*(n+1), cnf, Options{})
			st, err = s.Solve(context.Background())
			if err != nil || st != Sat || !modelOK(s, cnf) {
				t.Errorf("Solve(PHP(%d,%d)) = %v, %v, want SAT with a model", n, n, st, err)
			}
		})
	}
}

// TestRandom3SAT solves random 3-SAT at the threshold ratio 4.26, where
// about half the instances are satisfiable. SAT answers are checked by
// their model; every answer is compared across differently configured
// solvers.
func TestRandom3SAT(t *testing.T) {
	counts := map[Status]int{}
	for i := range 60 {
		r := rand.New(rand.NewPCG(3, uint64(i)))
		n := 50 + 10*(i%6)
		cnf := random3SAT(r, n, int(4.26*float64(n)))
		var got []Status
		for _, opts := range []Options{{}, {Restart: RestartGlucose}, {NoMinimize: true, VarDecay: 0.8}, {ChronoLimit: 1}, {NoChrono: true}} {
			s := load(n, cnf, opts)
			st, err := s.Solve(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if st == Sat && !modelOK(s, cnf) {
				t.Fatalf("instance %d: model falsifies a clause", i)
			}
			got = append(got, st)
		}
		if got[0] != got[1] || got[0] != got[2] || got[0] != got[3] || got[0] != got[4] {
			t.Fatalf("instance %d: configurations disagree: %v", i, got)
		}
		counts[got[0]]++
	}
	if counts[Sat] < 10 || counts[Unsat] < 10 {
		t.Errorf("random 3-SAT answers %v, want both SAT and UNSAT often", counts)
	}
}

func TestBudgetAndCancel(t *testing.T) {
	cnf := pigeonhole(8)
	s := load(72, cnf, Options{ConflictBudget: 100})
	st, err := s.Solve(context.Background())
	if st != Unknown || !errors.Is(err, ErrBudget) {
		t.Errorf("Solve with budget = %v, %v, want UNKNOWN, ErrBudget", st, err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("test cancel")
	cancel(cause)
	s = load(72, cnf, Options{})
	st, err = s.Solve(ctx)
	if st != Unknown || !errors.Is(err, cause) {
		t.Errorf("Solve cancelled = %v, %v, want UNKNOWN, cause", st, err)
	}
	// The solver is still usable and answers correctly afterwards.
	st, err = s.Solve(context.Background())
	if st != Unsat || err != nil {
		t.Errorf("Solve after cancel = %v, %v, want UNSAT", st, err)
	}
}

func TestAddClauseErrors(t *testing.T) {
	s := New(Options{})
	v := s.NewVar()
	if err := s.AddClause(v.Pos(), Var(2).Pos()); !errors.Is(err, ErrBadLit) {
		t.Errorf("AddClause(unknown var) = %v, want ErrBadLit", err)
	}
	if _, err := s.Solve(context.Background(), Var(7).Neg()); !errors.Is(err, ErrBadLit) {
		t.Errorf("Solve(unknown assumption) = %v, want ErrBadLit", err)
	}
	if err := s.AddClause(); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Solve(context.Background()); st != Unsat {
		t.Errorf("Solve after empty clause = %v, want UNSAT", st)
	}
}

func ExampleSolver() {
	s := New(Options{})
	a, b := s.NewVar(), s.NewVar()
	_ = s.AddClause(a.Pos(), b.Pos()) // a ∨ b
	_ = s.AddClause(a.Neg(), b.Pos()) // ¬a ∨ b
	st, _ := s.Solve(context.Background())
	fmt.Println(st, s.Value(b.Pos()))
	st, _ = s.Solve(context.Background(), b.Neg()) // assume ¬b
	fmt.Println(st, s.Failed())
	// Output:
	// SATISFIABLE true
	// UNSATISFIABLE [-2]
}

// TestObserve: an observer set with Observe is called every 256 conflicts with the
// solver's counters, which only grow, and does not change the answer.
func TestObserve(t *testing.T) {
	plain := load(7*8, pigeonhole(7), Options{})
	want, _ := plain.Solve(context.Background())
	s := load(7*8, pigeonhole(7), Options{})
	var seen []Stats
	s.Observe(func(st Stats) { seen = append(seen, st) })
	got, err := s.Solve(context.Background())
	if err != nil || got != want || got != Unsat {
		t.Fatalf("Solve with an observer = %v, %v; without, %v; want unsat", got, err, want)
	}
	total := s.Stats().Conflicts
	if min := int(total / 256 / 2); len(seen) < min || len(seen) == 0 {
		t.Fatalf("%d observations for %d conflicts, want at least %d", len(seen), total, min)
	}
	for i, st := range seen {
		if st.Conflicts%256 != 0 || (i > 0 && st.Conflicts <= seen[i-1].Conflicts) || st.Conflicts > total {
			t.Fatalf("observation %d at %d conflicts (previous %d, total %d)", i, st.Conflicts, seen[max(i-1, 0)].Conflicts, total)
		}
	}
}
