package dbcop_test

import (
	"fmt"
	"strings"

	"github.com/isovet/isovet/format/dbcop"
	"github.com/isovet/isovet/history"
)

// ExampleJSONDecoder decodes a two-session dbcop JSON history.
func ExampleJSONDecoder() {
	const in = `[[{"events":[{"Write":{"variable":0,"version":1}}],"committed":true}],
	[{"events":[{"Read":{"variable":0,"version":1}},{"Read":{"variable":1,"version":null}}],"committed":false}]]`
	b := history.NewBuilder()
	if err := dbcop.NewJSONDecoder().Decode(strings.NewReader(in), "history.json", b); err != nil {
		panic(err)
	}
	h, err := b.Build()
	if err != nil {
		panic(err)
	}
	for _, t := range h.Txns {
		fmt.Println(h.Name(t.ID), t.Outcome, len(t.Ops), "ops")
	}
	// Output:
	// T0 committed 1 ops
	// T1 aborted 2 ops
}
