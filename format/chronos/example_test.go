package chronos_test

import (
	"fmt"
	"strings"

	"github.com/isovet/isovet/format/chronos"
	"github.com/isovet/isovet/history"
)

func ExampleDecoder_Decode() {
	in := `[{"tid":1,"sid":0,"sts":{"p":"5","l":0},"cts":{"p":9,"l":1},"ops":[{"t":"w","k":1,"v":2}]},
 {"tid":2,"sid":1,"sts":{"p":10,"l":0},"cts":{"p":11,"l":0},"ops":[{"t":"r","k":1,"v":2}]}]`
	zero := history.Int(0)
	b := history.NewBuilder()
	if err := chronos.NewDecoder(&zero).Decode(strings.NewReader(in), "h.json", b); err != nil {
		fmt.Println(err)
		return
	}
	h, _ := b.Build()
	for _, t := range h.Txns {
		fmt.Println(h.Name(t.ID), t.Start, t.Commit, len(t.Ops))
	}
	fmt.Println("initial", h.Value(h.Initial))
	// Output:
	// T1 5 9.1 1
	// T2 10 11 1
	// initial 0
}
