package history

import "fmt"

// Interval is a closed client wall-clock interval [Begin, End] in nanoseconds.
type Interval struct {
	Begin, End int64
}

// Before reports whether i ended strictly before j began (real-time order).
func (i Interval) Before(j Interval) bool { return i.End < j.Begin }

// Overlaps reports whether the closed intervals share a point.
func (i Interval) Overlaps(j Interval) bool { return i.Begin <= j.End && j.Begin <= i.End }

// Widen returns i widened by skew on both sides (a clock-skew allowance).
func (i Interval) Widen(skew int64) Interval { return Interval{i.Begin - skew, i.End + skew} }

// Timestamp is a database timestamp as a hybrid logical clock: physical part first, logical
// part breaking ties. Plain integer timestamps use Logical = 0.
type Timestamp struct {
	Physical int64
	Logical  int64
}

// Compare orders timestamps by physical part, then logical part.
func (a Timestamp) Compare(b Timestamp) int {
	switch {
	case a.Physical < b.Physical:
		return -1
	case a.Physical > b.Physical:
		return 1
	case a.Logical < b.Logical:
		return -1
	case a.Logical > b.Logical:
		return 1
	}
	return 0
}

// Less reports a < b.
func (a Timestamp) Less(b Timestamp) bool { return a.Compare(b) < 0 }

func (a Timestamp) String() string {
	if a.Logical == 0 {
		return fmt.Sprint(a.Physical)
	}
	return fmt.Sprintf("%d.%d", a.Physical, a.Logical)
}
