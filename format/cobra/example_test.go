package cobra_test

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/isovet/isovet/format/cobra"
	"github.com/isovet/isovet/history"
)

// Example decodes two client logs: client 2's transaction reads what client 1's wrote.
func Example() {
	rec := func(tag byte, xs ...int64) []byte {
		b := []byte{tag}
		for _, x := range xs {
			b = binary.BigEndian.AppendUint64(b, uint64(x))
		}
		return b
	}
	t1 := bytes.Join([][]byte{rec('S', 10), rec('W', 100, 1, 7), rec('C', 10)}, nil)
	t2 := bytes.Join([][]byte{rec('S', 20), rec('R', 10, 100, 1, 7), rec('C', 20)}, nil)

	d := cobra.NewDecoder()
	b := history.NewBuilder()
	if err := d.Decode(bytes.NewReader(t1), "T1.log", b); err != nil {
		panic(err)
	}
	if err := d.Decode(bytes.NewReader(t2), "T2.log", b); err != nil {
		panic(err)
	}
	if err := d.Finish(b); err != nil {
		panic(err)
	}
	h, err := b.Build()
	if err != nil {
		panic(err)
	}
	r := h.Txns[1].Ops[0]
	fmt.Printf("txn %s reads key %v = %v written by txn %s\n", h.Name(1), h.Key(r.Key), h.Value(r.Value), h.Name(r.Src.Txn))
	// Output: txn T20 reads key 1 = 7 written by txn T10
}
