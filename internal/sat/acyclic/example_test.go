package acyclic_test

import (
	"context"
	"fmt"

	"github.com/isovet/isovet/internal/sat"
	"github.com/isovet/isovet/internal/sat/acyclic"
)

// Example encodes VeriStrong's Fig. 3: T1 and T2 both write x=1, T3 reads
// x=1, and T2 precedes T3 in a session. One variable orders T1 and T2,
// one per candidate writer says whom T3 read from, and the anti-dependency
// T3→(later writer) is a composite edge.
func Example() {
	s := sat.New(sat.Options{})
	g := acyclic.New(s, 3, acyclic.Options{}) // nodes T1=0, T2=1, T3=2
	ww, _ := g.Edge(0, 1)                     // ww: T1 -WW-> T2
	_ = g.AddEdge(ww.Not(), 1, 0)             // ¬ww: T2 -WW-> T1
	wr1, _ := g.Edge(0, 2)                    // T1 -WR-> T3
	wr2, _ := g.Edge(1, 2)                    // T2 -WR-> T3
	_ = s.AddClause(wr1, wr2)                 // T3 read from one of them
	_ = s.AddClause(wr1.Not(), wr2.Not())
	_ = g.AddComposite(wr1, ww, 2, 1)       // T3 -RW-> T2
	_ = g.AddComposite(wr2, ww.Not(), 2, 0) // T3 -RW-> T1
	_ = g.AddFixed(1, 2)                    // T2 -SO-> T3

	st, _ := s.Solve(context.Background())
	fmt.Println(st, "order:", g.Order(), "T1 before T2:", s.Value(ww))
	st, _ = s.Solve(context.Background(), wr1, ww) // Fig. 3d
	fmt.Println(st, "failed:", s.Failed())
	// Output:
	// SATISFIABLE order: [1 0 2] T1 before T2: false
	// UNSATISFIABLE failed: [1 2]
}
