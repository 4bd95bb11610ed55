package historytest_test

import (
	"fmt"

	"github.com/isovet/isovet/history/historytest"
)

func ExampleParse() {
	h, err := historytest.Parse(`
		init x=0
		s1: T1 r(x,0) w(x,1)        # session s1: T1 reads x=0, then writes x=1
		s2: T2 @[5,9] r(x,0) w(x,2) # T2 with its client interval, [5,9] ns
		s2: T3 r(x,2) abort`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for id, t := range h.All() {
		fmt.Println(h.Name(id), t.Outcome, len(t.Ops), "ops")
	}
	// Output:
	// T1 committed 2 ops
	// T2 committed 2 ops
	// T3 aborted 1 ops
}

func ExampleParse_error() {
	_, err := historytest.Parse("s1: T1 r(x,0) w(x 1)")
	fmt.Println(err)
	// Output:
	// historytest: 1:19: expected "," (at "1")
}

func ExampleFormat() {
	h := historytest.MustParse("init 0; s1: T1 w(x,1); s2: T2 r(x,1) w(y,2) abort; T3 @[10,20] r(y,0)")
	fmt.Print(historytest.Format(h))
	// Output:
	// init 0
	// s1: T1 w(x,1) c
	// s2: T2 r(x,1) w(y,2) abort
	// s2: T3 r(y,0) c @[10,20]
}
