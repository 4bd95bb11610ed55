package si

import (
	"isovet/internal/anomaly"
	"isovet/internal/report"
)

const anyN = -1

// shape describes a cycle of the induced graph by the steps on it. The first matching
// shape names the anomaly (PolySI's vocabulary, §5.3 and App. D); the Adya class goes into
// Also. Write skew never appears: its cycle has two adjacent anti-dependencies, which SI
// allows.
type shape struct {
	kind                                     anomaly.Kind
	minWW, maxWW, minWR, maxWR, minRW, maxRW int
	length                                   int  // steps, or anyN
	sameKey                                  int8 // 1: all data steps on one key; 2: at least two keys
	alternate                                bool // wr and rw alternate
	causal                                   bool // besides the rw, only so/wr/rt steps, and at least two of them or one so/rt
}

var shapes = []shape{
	// Two transactions read the same version and both overwrite it (Galera, Fig. 5).
	{kind: anomaly.LostUpdate, minWW: 1, maxWW: 1, maxWR: 0, minRW: 1, maxRW: 1, length: 2, sameKey: 1},
	// Two readers see two independent writes in opposite orders (Fig. 3).
	{kind: anomaly.LongFork, maxWW: 0, minWR: 2, maxWR: 2, minRW: 2, maxRW: 2, length: 4, alternate: true},
	// A transaction sees one write of another (reads it, or overwrites it, which under
	// first-committer-wins means it saw it) and misses another of its writes.
	{kind: anomaly.ReadSkew, maxWW: 1, maxWR: 1, minRW: 1, maxRW: 1, length: 2, sameKey: 2},
	// A transaction misses a write its own causal past includes (YugabyteDB, Dgraph, App.
	// D): the dependency path back from the overwriter to the reader (session order,
	// reads-from, and write order, which SI's first-committer-wins makes visibility) is
	// longer than one step or goes through the session or real-time order.
	{kind: anomaly.CausalityViolation, maxWW: anyN, maxWR: anyN, minRW: 1, maxRW: 1, length: anyN, causal: true},
}

func within(n, lo, hi int) bool { return n >= lo && (hi == anyN || n <= hi) }

// classify names a cycle of steps: an SI name where one applies, with the Adya class in
// Also; else the Adya class (G0, G1c, G-single; G2-item for a cycle whose anti-dependencies
// are not adjacent, Elle's G-nonadjacent).
func classify(cyc []report.Step) (anomaly.Kind, []anomaly.Kind) {
	var ww, wr, rw, order int
	keys := make(map[int64]bool)
	var seq []report.Rel
	for _, s := range cyc {
		switch {
		case s.Rel.Has(report.WW):
			ww++
		case s.Rel.Has(report.WR):
			wr++
		case s.Rel.Has(report.RW):
			rw++
		default:
			order++
			continue
		}
		keys[int64(s.Key)] = true
		seq = append(seq, s.Rel)
	}
	alternating := len(seq) > 0 && len(seq)%2 == 0 && order == 0
	for i := range seq {
		if seq[i] == seq[(i+1)%len(seq)] || seq[i].Has(report.WW) {
			alternating = false
		}
	}
	adya := anomaly.G2Item
	switch {
	case rw == 0 && wr == 0:
		adya = anomaly.G0
	case rw == 0:
		adya = anomaly.G1c
	case rw == 1:
		adya = anomaly.GSingle
	}
	causal := rw == 1 && (len(cyc) >= 3 || order > 0)
	for _, sh := range shapes {
		ok := within(ww, sh.minWW, sh.maxWW) && within(wr, sh.minWR, sh.maxWR) && within(rw, sh.minRW, sh.maxRW) &&
			(sh.length == anyN || sh.length == len(cyc)) &&
			(sh.sameKey == 0 || (sh.sameKey == 1) == (len(keys) == 1)) &&
			(!sh.alternate || alternating) && (!sh.causal || causal)
		if ok {
			return sh.kind, []anomaly.Kind{adya}
		}
	}
	return adya, nil
}
