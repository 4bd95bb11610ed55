package dbcop_test

import (
	"bytes"
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

// ExampleWrite writes a two-session history as history.bincode and reads it back.
func ExampleWrite() {
	b := history.NewBuilder()
	b.BeginTxn(b.Session(history.Int(0)), history.NilDatum, history.OutcomeCommitted)
	b.Read(b.IntKey(1), b.IntValue(0))
	b.Write(b.IntKey(1), b.IntValue(5))
	b.BeginTxn(b.Session(history.Int(1)), history.NilDatum, history.OutcomeAborted)
	b.Read(b.IntKey(1), b.IntValue(5))
	h, err := b.Build()
	if err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	if err := dbcop.Write(&buf, h); err != nil {
		panic(err)
	}
	hd, _ := dbcop.ReadHeader(buf.Bytes())
	fmt.Printf("%d bytes: %d nodes, %d variables, info %q\n", buf.Len(), hd.Nodes, hd.Variables, hd.Info)
	back := history.NewBuilder()
	if err := dbcop.NewDecoder().Decode(&buf, "history.bincode", back); err != nil {
		panic(err)
	}
	h, _ = back.Build()
	for _, t := range h.Txns {
		fmt.Println(h.Name(t.ID), t.Outcome, len(t.Ops), "ops")
	}
	// Output:
	// 216 bytes: 2 nodes, 1 variables, info "isovet"
	// T0 committed 2 ops
	// T1 aborted 1 ops
}
