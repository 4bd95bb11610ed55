package cycle_test

import (
	"fmt"

	"github.com/isovet/isovet/internal/anomaly/cycle"
	"github.com/isovet/isovet/internal/report"
)

// A lost update: T2 overwrote the version of x that T1 read, and T1 then overwrote T2's.
// Serializability names the Adya class first, snapshot isolation the shape.
func ExampleName() {
	cyc := []report.Step{
		{From: 0, To: 1, Rel: report.RW, Key: 0},
		{From: 1, To: 0, Rel: report.WW, Key: 0},
	}
	for _, sc := range []cycle.Scheme{cycle.Ser, cycle.SI} {
		kind, also := cycle.Name(sc, cyc)
		fmt.Println(kind, also)
	}
	// Output:
	// G-single [lost-update]
	// lost-update [G-single]
}
