package si_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/internal/check/si"
	"github.com/isovet/isovet/internal/histtest"
)

// Two deposits read the same balance and both write it back: a lost update, which every
// SI level forbids; write skew, which SI allows, passes.
func ExampleCheck() {
	ctx := context.Background()
	lost := histtest.MustParse("init 0; s1: T1 r(bal,0) w(bal,10); s2: T2 r(bal,0) w(bal,20)")
	rep, _ := si.Check(ctx, lost, anomaly.SnapshotIsolation, si.Options{})
	a := rep.Anomalies[0]
	fmt.Println(rep.Verdict, a.Kind, a.Also)
	for _, s := range a.Cycle {
		fmt.Println(" ", s.Why)
	}
	skew := histtest.MustParse("init 0; s1: T1 r(x,0) r(y,0) w(x,1); s2: T2 r(x,0) r(y,0) w(y,1)")
	rep, _ = si.Check(ctx, skew, anomaly.SnapshotIsolation, si.Options{})
	fmt.Println(rep.Verdict)
	_, err := si.Check(ctx, skew, anomaly.StrongSI, si.Options{})
	fmt.Println(errors.Is(err, si.ErrNeedsTime))
	// Output:
	// fail lost-update [G-single]
	//   T2 overwrote T1's bal=10 with bal=20 (T1 came first: it read the initial bal before writing it, so every other writer of bal came after it)
	//   T2 read the initial bal=0, which T1 overwrote with bal=10
	// pass
	// true
}
