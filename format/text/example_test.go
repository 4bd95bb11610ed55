package text_test

import (
	"fmt"
	"strings"

	"github.com/isovet/isovet/format/text"
	"github.com/isovet/isovet/history"
)

func ExampleDecoder_Decode() {
	in := "w(1,1,0,-1)\nw(2,1,0,-1)\nr(1,1,0,1)\n" // Plume's tap-b: an aborted read
	b := history.NewBuilder()
	if err := text.NewDecoder().Decode(strings.NewReader(in), "tap-b.txt", b); err != nil {
		fmt.Println(err)
		return
	}
	h, _ := b.Build()
	for _, t := range h.Txns {
		fmt.Println(h.Name(t.ID), t.Outcome, len(t.Ops))
	}
	// Output:
	// T-1 aborted 2
	// T1 committed 1
}
