package vbox_test

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/isovet/isovet/format/vbox"
	"github.com/isovet/isovet/history"
)

// Example decodes one session: a transaction writes row 7, and a second one reads it.
func Example() {
	rec := func(tag byte, id uint32, start, end uint64, rest ...any) []byte {
		b := []byte{tag}
		b = binary.LittleEndian.AppendUint32(b, id)
		b = binary.LittleEndian.AppendUint64(b, start)
		b = binary.LittleEndian.AppendUint64(b, end)
		for _, x := range rest {
			b, _ = binary.Append(b, binary.LittleEndian, x)
		}
		return b
	}
	log := bytes.Join([][]byte{
		rec('T', 1, 100, 400), rec('S', 1, 100, 150), rec('W', 2, 200, 250, uint64(7), uint64(0xabc), uint32(42)), rec('C', 3, 300, 400),
		rec('T', 2, 500, 800), rec('S', 4, 500, 550), rec('R', 5, 600, 650, uint64(7), uint32(1), uint32(2)), rec('C', 6, 700, 800),
	}, nil)
	d := vbox.NewDecoder()
	b := history.NewBuilder()
	if err := d.Decode(bytes.NewReader(log), "0.log", b); err != nil {
		panic(err)
	}
	if err := d.Finish(b); err != nil {
		panic(err)
	}
	h, err := b.Build()
	if err != nil {
		panic(err)
	}
	t := h.Txns[1]
	r := t.Ops[0]
	fmt.Printf("txn %s [%d,%d] reads row %v = %v from txn %s during %v\n", h.Name(1), t.Time.Begin, t.Time.End, h.Key(r.Key), h.Value(r.Value), h.Name(r.Src.Txn), t.OpTimes[0])
	// Output: txn T2 [500,800] reads row 7 = 0000000000000abc=42 from txn T1 during {600 650}
}
