package ser_test

import (
	"context"
	"fmt"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/internal/histtest"
)

// Through the public API: two transactions read x=0 and both overwrite it.
func Example() {
	h := histtest.MustParse("init 0\ns1: T1 r(x,0) w(x,1)\ns2: T2 r(x,0) w(x,2)")
	rep, err := check.Check(context.Background(), h, check.Serializable, check.Options{Method: check.MethodBlackBox})
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.Checker, rep.Verdict)
	for _, a := range rep.Anomalies {
		fmt.Println(a.Kind, a.Also)
		fmt.Println(a.Message)
	}
	// Output:
	// ser fail
	// G2-item [lost-update]
	// T1 read the initial x=0, which T2 overwrote with x=2; T2 read the initial x=0, which T1 overwrote with x=1; so T1 -rw-> T2 -rw-> T1, a contradiction
}
