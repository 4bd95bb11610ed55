package ser

import (
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// TestOrderWhy: a step that says one transaction overwrote another's version also says how
// the history shows that order when no choice made it: the overwriter read the version
// first, the first writer's read-modify-writes chain back to the initial state, or real
// time orders the two writers.
func TestOrderWhy(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		level anomaly.Level
		want  string
	}{
		{
			name:  "read-modify-write of the initial version",
			src:   "init 0\ns1: T1 @[0,10] r(x,0) w(x,1)\ns2: T2 @[5,12] w(x,2)\ns3: T3 @[20,30] r(x,1)",
			level: anomaly.StrictSerializable,
			want:  "T3 read x=1 (written by T1), which T2 overwrote with x=2 (T1 came first: it read the initial x before writing it, so every other writer of x came after it)",
		},
		{
			name:  "chain of read-modify-writes",
			src:   "init 0\ns1: T1 @[0,10] r(x,0) w(x,1)\ns1: T4 @[11,13] r(x,1) w(x,3)\ns2: T2 @[5,14] w(x,2)\ns3: T3 @[20,30] r(x,3)",
			level: anomaly.StrictSerializable,
			want:  "(T1 and T4 came first: T1 read the initial x before writing it and T4 read T1's version before writing its own, so every other writer of x came after them)",
		},
		{
			name:  "longer chain",
			src:   "init 0\ns1: T1 @[0,10] r(x,0) w(x,1)\ns1: T4 @[11,13] r(x,1) w(x,3)\ns1: T5 @[14,15] r(x,3) w(x,5)\ns2: T2 @[5,16] w(x,2)\ns3: T3 @[20,30] r(x,5)",
			level: anomaly.StrictSerializable,
			want:  "(T1, T4, T5 came first: T1 read the initial x before writing it and each of the others read the previous one's version before writing its own, so every other writer of x came after them)",
		},
		{
			name:  "overwriter read the version",
			src:   "init 0\ns1: T1 w(x,1)\ns2: T2 r(x,1) w(x,2) w(y,2)\ns3: T3 r(x,1) r(y,2)",
			level: anomaly.Serializable,
			want:  "T3 read x=1 (written by T1), which T2 overwrote with x=2 (T2 read T1's version before writing its own)",
		},
		{
			name:  "list read",
			src:   "s1: T1 a(x,1) a(y,1)\ns2: T2 a(x,2) a(y,2)\ns3: T3 r(x,[1,2]) r(y,[2,1])",
			level: anomaly.Serializable,
			want:  "T2 overwrote T1's x=1 with x=2 (T3's read of x shows T2's appends directly after T1's); T1 overwrote T2's y=2 with y=1 (T3's read of y shows T1's appends directly after T2's); so T1 -ww-> T2 -ww-> T1",
		},
		{
			name:  "real time",
			src:   "init 0\ns1: T1 @[0,10] w(x,1)\ns2: T2 @[20,30] w(x,2) w(y,2)\ns3: T3 @[5,40] r(x,1) r(y,2)",
			level: anomaly.StrictSerializable,
			want:  "T3 read x=1 (written by T1), which T2 overwrote with x=2 (T1 ended before T2 began)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := check(t, histtest.MustParse(tt.src), tt.level, Options{})
			if rep.Verdict != report.Fail || len(rep.Anomalies) == 0 {
				t.Fatalf("verdict %s, want fail", rep.Verdict)
			}
			if text := histtest.Explanation(rep); !strings.Contains(text, tt.want) {
				t.Errorf("the explanation lacks %q:\n%s", tt.want, text)
			}
		})
	}
}
