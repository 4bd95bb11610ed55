package cobra_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

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

// ExampleWriteDir writes a history as Cobra logs, one per session: the read names the
// transaction and write it read from, found by value.
func ExampleWriteDir() {
	b := history.NewBuilder()
	b.BeginTxn(b.Session(history.Int(1)), history.Int(10), history.OutcomeCommitted)
	b.Write(b.IntKey(1), b.IntValue(7))
	b.BeginTxn(b.Session(history.Int(2)), history.Int(20), history.OutcomeCommitted)
	b.Read(b.IntKey(1), b.IntValue(7))
	h, err := b.Build()
	if err != nil {
		panic(err)
	}
	err = cobra.WriteDir(h, func(name string) (io.Writer, error) {
		fmt.Println(name)
		return hexRecords{}, nil
	})
	if err != nil {
		panic(err)
	}
	// Output:
	// T1.log
	// S 10
	// W 7 1 7
	// C 10
	// T2.log
	// S 20
	// R 10 7 1 7
	// C 20
}

// hexRecords prints each record written to it: its tag and fields.
type hexRecords struct{}

func (hexRecords) Write(p []byte) (int, error) {
	for q := p; len(q) > 0; {
		n := map[byte]int{'S': 1, 'C': 1, 'W': 3, 'R': 4}[q[0]]
		fmt.Printf("%c", q[0])
		for i := range n {
			fmt.Printf(" %d", int64(binary.BigEndian.Uint64(q[1+8*i:])))
		}
		fmt.Println()
		q = q[1+8*n:]
	}
	return len(p), nil
}
