package veristrong_test

import (
	"fmt"
	"strings"

	"github.com/isovet/isovet/format/veristrong"
	"github.com/isovet/isovet/history"
)

func ExampleDecoder_Decode() {
	in := "3\n1 10 A 5 1\n2 20 R 5 1 1\n2 20 A 5 2\n"
	b := history.NewBuilder()
	if err := veristrong.NewDecoder().Decode(strings.NewReader(in), "h.txt", b); err != nil {
		fmt.Println(err)
		return
	}
	h, _ := b.Build()
	for _, t := range h.Txns {
		fmt.Println(h.Name(t.ID), t.Ops[0].Kind, len(t.Ops))
	}
	// Output:
	// T10 append 1
	// T20 list-read 2
}
