package check_test

import (
	"context"
	"fmt"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/history/historytest"
)

// A lost update: T1 and T2 both read x=0 and both write it. No serial order explains it, so
// serializability fails. The anomaly is a G2-item cycle (two anti-dependencies), the shape
// engineers call a lost update; Is matches either name.
func ExampleCheck() {
	h := historytest.MustParse(`
		init x=0
		s1: T1 r(x,0) w(x,1)
		s2: T2 r(x,0) w(x,2)`)
	rep, err := check.Check(context.Background(), h, check.Serializable, check.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rep.Verdict)
	for _, a := range rep.Anomalies {
		fmt.Println(a.Name(), a.Is(anomaly.LostUpdate))
		for _, s := range a.Cycle {
			fmt.Printf("  %s -%s-> %s\n", h.Name(s.From), s.Rel, h.Name(s.To))
		}
	}
	// Output:
	// fail
	// G2-item (lost-update) true
	//   T1 -rw-> T2
	//   T2 -rw-> T1
}

// A history that satisfies the level passes: here T2 read T1's write.
func ExampleCheck_pass() {
	h := historytest.MustParse("init x=0; s1: T1 r(x,0) w(x,1); s2: T2 r(x,1) w(x,2)")
	rep, err := check.Check(context.Background(), h, check.Serializable, check.Options{})
	fmt.Println(rep.Verdict, rep.Checker, err)
	// Output:
	// pass ser <nil>
}

// The registry: which checker checks which levels, in the order check.Check prefers them.
func ExampleCheckers() {
	for _, c := range check.Checkers() {
		fmt.Printf("%s (%s): %v\n", c.Name, c.Method, c.Levels)
	}
	// Output:
	// basic (basic): [read-committed read-atomic causal snapshot-isolation strong-session-snapshot-isolation strong-snapshot-isolation serializable strong-session-serializable strict-serializable]
	// weak (black-box): [read-committed read-atomic causal]
	// ser (black-box): [serializable strong-session-serializable strict-serializable]
	// si (black-box): [snapshot-isolation strong-session-snapshot-isolation strong-snapshot-isolation]
	// chronos (timestamp): [snapshot-isolation strong-session-snapshot-isolation serializable strong-session-serializable]
}
