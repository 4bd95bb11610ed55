package si

import (
	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/internal/anomaly/cycle"
	"github.com/isovet/isovet/internal/report"
)

// classify names a cycle of the induced graph as snapshot isolation does (PolySI's
// vocabulary, §5.3 and App. D): a name for its shape where one applies (lost update, long
// fork, read skew, causality violation), with the Adya class in Also; else the Adya class
// (G0, G1c, G-single; G2-item for a cycle whose anti-dependencies are not adjacent, Elle's
// G-nonadjacent). Write skew never appears: its cycle has two adjacent anti-dependencies,
// which SI allows. The rules are the shared table of package [cycle].
func classify(cyc []report.Step) (anomaly.Kind, []anomaly.Kind) {
	return cycle.Name(cycle.SI, cyc)
}
