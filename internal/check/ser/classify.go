package ser

import (
	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/internal/anomaly/cycle"
	"github.com/isovet/isovet/internal/report"
)

// classify names a cycle of steps as serializability does: the Adya class (G0, G1c,
// G-single, G2-item; G2 through a predicate anti-dependency, or when pruning forced a
// cycle without one) is the kind, and the shape's further names (phantom, lost update,
// write skew, read skew, fractured read, long fork, stale read) are Also. The rules are
// the shared table of package [cycle].
func classify(cyc []report.Step) (anomaly.Kind, []anomaly.Kind) {
	return cycle.Name(cycle.Ser, cyc)
}
