package format_test

import (
	"fmt"

	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/history"
)

// Two transactions write x=1 and a third names the first as the writer it read: Elle's
// format, which has no sources, would let value matching pick either, so Losses reports
// the read; Drop strips the source for a caller that writes anyway.
func ExampleLosses() {
	b := history.NewBuilder()
	x, one := b.StrKey("x"), b.IntValue(1)
	for i := range 2 {
		b.BeginTxn(b.Session(history.Int(int64(i))), history.Str(fmt.Sprintf("T%d", i+1)), history.OutcomeCommitted)
		b.Write(x, one)
		b.EndTxn()
	}
	b.BeginTxn(b.Session(history.Int(2)), history.Str("T3"), history.OutcomeCommitted)
	b.ReadFrom(x, one, history.Src{Kind: history.SrcTxn, Txn: 0, Op: 0})
	b.EndTxn()
	h, err := b.Build()
	if err != nil {
		panic(err)
	}
	elle, _ := format.Lookup("elle-edn")
	ls := format.Losses(h, elle)
	fmt.Println(format.Describe(ls))
	fmt.Println(len(format.Losses(format.Drop(h, ls), elle)), "losses after Drop")
	// Output:
	//   - read-sources: 1 reads name their writer, which value matching cannot recover (the value is written by more than one transaction, or by none) (e.g. txn T3 reads x=1 from txn T1 op 0; 2 writes of that value)
	// 0 losses after Drop
}
