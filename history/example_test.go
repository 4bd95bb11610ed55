package history_test

import (
	"fmt"

	"github.com/isovet/isovet/history"
)

// A reader that meets many string values at once sizes the value table for them and
// interns them in one batch; the ids are those of interning them one at a time.
func ExampleBuilder_BytesValues() {
	b := history.NewBuilder()
	b.GrowValues(4, 16)
	x := b.StrValue("x")
	ss := [][]byte{[]byte("y"), []byte("x"), []byte("z"), []byte("y")}
	ids := make([]history.Value, len(ss))
	b.BytesValues(ss, ids)
	fmt.Println(x, ids, b.IntValue(7))
	// Output: 1 [2 1 3 2] 4
}
