package native_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/history"
)

// A workload runner records each transaction as it finishes.
func ExampleEncoder_EncodeTxn() {
	e := native.NewEncoder(os.Stdout)
	e.EncodeHeader(native.Header{Initial: history.Int(0)})
	e.EncodeTxn(&native.Txn{
		Session: history.Int(1), ID: history.Int(7), Outcome: history.OutcomeCommitted,
		Time: history.Interval{Begin: 100, End: 250}, HasTime: true,
		Ops: []native.Op{
			{Kind: history.OpRead, Key: history.Str("x"), Value: history.Int(0)},
			{Kind: history.OpWrite, Key: history.Str("x"), Value: history.Int(1)},
		},
	})
	// Output:
	// {"isovet":1,"initial":0}
	// {"s":1,"id":7,"t":[100,250],"ops":[["r","x",0],["w","x",1]]}
}

// An online endpoint adds transactions one line at a time.
func ExampleDecodeLine() {
	b := history.NewBuilder()
	for _, line := range []string{
		`{"s":1,"ops":[["a","k",1]]}`,
		`{"s":2,"o":"u","ops":[["r","k",[1]]]}`,
	} {
		if err := native.DecodeLine([]byte(line), b); err != nil {
			fmt.Println(err)
		}
	}
	h, _ := b.Build()
	for _, t := range h.Txns {
		fmt.Println(h.Name(t.ID), t.Outcome, len(t.Ops), "ops")
	}
	// Output:
	// T0 committed 1 ops
	// T1 unknown 1 ops
}

func ExampleDecoder_Decode() {
	in := `{"isovet":1}
{"s":1,"ops":[["w",1,2.5]]}`
	err := native.NewDecoder().Decode(strings.NewReader(in), "h.jsonl", history.NewBuilder())
	fmt.Println(err)
	// Output:
	// h.jsonl:2:22 (byte 34): native: expected a value (an integer), found a fraction or exponent
}
