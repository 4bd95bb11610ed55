package acyclic

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/isovet/isovet/internal/cputime"
	"github.com/isovet/isovet/internal/sat"
)

// orderInstance builds a serializability-shaped instance: a hidden random
// order of the nodes, sessions of nodes chained by fixed edges in that
// order, and lits/2 pair variables over random node pairs, x meaning a→b
// and ¬x meaning b→a (lits edge literals in all). It is satisfiable.
func orderInstance(nodes, lits int, seed uint64, opts Options, solverOpts sat.Options) (*sat.Solver, *Theory) {
	r := rand.New(rand.NewPCG(seed, 1))
	perm := r.Perm(nodes)
	s := sat.New(solverOpts)
	g := New(s, nodes, opts)
	sessions := max(1, nodes/100)
	last := make([]int, sessions)
	for i := range last {
		last[i] = -1
	}
	for _, u := range perm {
		k := r.IntN(sessions)
		if last[k] >= 0 {
			if err := g.AddFixed(last[k], u); err != nil {
				panic(err)
			}
		}
		last[k] = u
	}
	for range lits / 2 {
		a, b := r.IntN(nodes), r.IntN(nodes)
		for a == b {
			b = r.IntN(nodes)
		}
		x := s.NewVar()
		if err := g.AddEdge(x.Pos(), a, b); err != nil {
			panic(err)
		}
		if err := g.AddEdge(x.Neg(), b, a); err != nil {
			panic(err)
		}
	}
	return s, g
}

func TestOrderInstance(t *testing.T) {
	for _, opts := range []Options{{}, {Propagate: true}} {
		s, g := orderInstance(2000, 20000, 1, opts, sat.Options{})
		st, err := s.Solve(context.Background())
		if err != nil || st != sat.Sat {
			t.Fatalf("Solve = %v, %v, want SAT", st, err)
		}
		if ord := g.Order(); len(ord) != 2000 {
			t.Fatalf("model graph is cyclic: order has %d of 2000 nodes", len(ord))
		}
	}
}

// BenchmarkOrder solves orderInstance at sizes up to 100,000 nodes and
// 1,000,000 edge literals, with theory propagation off and on, and (at the
// small sizes only: without them the search is far slower) with the
// theory's polarity hints off.
func BenchmarkOrder(b *testing.B) {
	for _, size := range []struct{ nodes, lits int }{{1000, 10_000}, {10_000, 100_000}, {100_000, 1_000_000}} {
		for _, mode := range []string{"base", "propagate", "nophase", "nophase-propagate"} {
			if strings.HasPrefix(mode, "nophase") && size.nodes > 1000 {
				continue
			}
			name := fmt.Sprintf("nodes=%d/lits=%d/%s", size.nodes, size.lits, mode)
			b.Run(name, func(b *testing.B) {
				var st Stats
				var ss sat.Stats
				cpu0 := cputime.Self().Seconds()
				for b.Loop() {
					s, g := orderInstance(size.nodes, size.lits, 1,
						Options{Propagate: strings.HasSuffix(mode, "propagate")},
						sat.Options{NoTheoryPhase: strings.HasPrefix(mode, "nophase")})
					res, err := s.Solve(context.Background())
					if err != nil || res != sat.Sat {
						b.Fatalf("Solve = %v, %v", res, err)
					}
					st, ss = g.Stats(), s.Stats()
				}
				b.ReportMetric((cputime.Self().Seconds()-cpu0)/float64(b.N), "cpu-s/op")
				b.ReportMetric(float64(ss.Conflicts), "conflicts")
				b.ReportMetric(float64(ss.Decisions), "decisions")
				b.ReportMetric(float64(st.Visited)/float64(max(1, st.Inserts)), "visited/insert")
				b.ReportMetric(float64(st.ConflictLits)/float64(max(1, st.Conflicts)), "lits/conflict")
			})
		}
	}
}
