package deps

import (
	"fmt"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/internal/histtest"
)

// identical returns n transactions r(x,1) w(x,1), each in a session of its own, after
// the header (the initial value) and followed by extra.
func identical(header string, n int, extra string) string {
	var b strings.Builder
	b.WriteString(header + "\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "s%d: T%d r(x,1) w(x,1)\n", i, i)
	}
	return b.String() + extra
}

// TestCheckClosedReads: a closed set of reads of at least minClosed members is a G1c
// finding made before the candidate lists; a smaller one, one the initial value breaks,
// and one a writer outside the set (even of unknown outcome) breaks are not.
func TestCheckClosedReads(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want int // members named, 0: no finding
	}{
		{"ten identical", identical("init 0", 10, ""), 10},
		{"six identical", identical("init 0", 6, ""), 6},
		{"five identical: left to the pipeline", identical("init 0", 5, ""), 0},
		{"initial value read", identical("init 1", 10, ""), 0},
		{"another writer", identical("init 0", 10, "s99: T99 w(x,1)\n"), 0},
		{"another writer of unknown outcome", identical("init 0", 10, "s99: T99 w(x,1) info\n"), 0},
		{"an aborted writer is none", identical("init 0", 10, "s99: T99 w(x,1) abort\n"), 10},
		{"two independent sets: the larger", identical("init 0", 7, "s50: T50 r(y,1) w(y,1)\ns51: T51 r(y,1) w(y,1)\ns52: T52 r(y,1) w(y,1)\ns53: T53 r(y,1) w(y,1)\ns54: T54 r(y,1) w(y,1)\ns55: T55 r(y,1) w(y,1)\n"), 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Build(histtest.MustParse(tc.src), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range d.Findings {
				if a.Kind == anomaly.G1c {
					got = append(got, fmt.Sprint(len(a.Txns)))
					if !strings.Contains(a.Message, "each read a value that only others among them wrote") {
						t.Errorf("message %q", a.Message)
					}
				}
			}
			want := []string{}
			if tc.want > 0 {
				want = []string{fmt.Sprint(tc.want)}
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("G1c findings naming %v transactions, want %v", got, want)
			}
		})
	}
}
