package cycle

import (
	"slices"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/internal/report"
)

// The classifiers of ser, si and weak as they were before the table, kept as test
// oracles: the table must name every cycle as they did.

const anyN = -1

// serShape describes a cycle by the dependency edges on it. Classification is one interpreter
// over this table (Elle's idea): no per-anomaly code.
type serShape struct {
	kind anomaly.Kind
	// primary: an Adya class (the anomaly's Kind); otherwise a further name (Also).
	primary bool
	// Bounds on the number of ww, wr and rw steps; so and rt steps are always allowed.
	minWW, maxWW, minWR, maxWR, minRW, maxRW int
	// length of the cycle in steps, or anyN.
	length int
	// sameKey: 1 all data steps on one key, 2 on at least two keys, 0 either.
	sameKey int8
	// alternate: wr and rw steps alternate around the cycle.
	alternate bool
	// needRT: the cycle has a real-time step.
	needRT bool
}

// serShapes is the classification table, Adya's classes first (most specific first within
// each group).
var serShapes = []serShape{
	{kind: anomaly.G0, primary: true, minWW: 1, maxWW: anyN, minWR: 0, maxWR: 0, minRW: 0, maxRW: 0, length: anyN},
	{kind: anomaly.G1c, primary: true, minWW: 0, maxWW: anyN, minWR: 1, maxWR: anyN, minRW: 0, maxRW: 0, length: anyN},
	{kind: anomaly.GSingle, primary: true, minWW: 0, maxWW: anyN, minWR: 0, maxWR: anyN, minRW: 1, maxRW: 1, length: anyN},
	{kind: anomaly.G2Item, primary: true, minWW: 0, maxWW: anyN, minWR: 0, maxWR: anyN, minRW: 2, maxRW: anyN, length: anyN},

	{kind: anomaly.LostUpdate, minWW: 1, maxWW: 1, minWR: 0, maxWR: 0, minRW: 1, maxRW: 1, length: 2, sameKey: 1},
	{kind: anomaly.LostUpdate, minWW: 0, maxWW: 0, minWR: 0, maxWR: 0, minRW: 2, maxRW: 2, length: 2, sameKey: 1},
	{kind: anomaly.WriteSkew, minWW: 0, maxWW: 0, minWR: 0, maxWR: 0, minRW: 2, maxRW: 2, length: 2, sameKey: 2},
	{kind: anomaly.ReadSkew, minWW: 0, maxWW: 0, minWR: 1, maxWR: 1, minRW: 1, maxRW: 1, length: 2, sameKey: 2},
	{kind: anomaly.FracturedRead, minWW: 0, maxWW: 0, minWR: 1, maxWR: 1, minRW: 1, maxRW: 1, length: 2, sameKey: 2},
	{kind: anomaly.LongFork, minWW: 0, maxWW: 0, minWR: 2, maxWR: 2, minRW: 2, maxRW: 2, length: 4, alternate: true},
	{kind: anomaly.StaleRead, minWW: 0, maxWW: anyN, minWR: 0, maxWR: anyN, minRW: 1, maxRW: anyN, length: anyN, needRT: true},
}

// oldSer is internal/check/ser's classify before the table moved here: the Adya class of
// a cycle of steps and its further names.
func oldSer(cyc []report.Step) (anomaly.Kind, []anomaly.Kind) {
	var ww, wr, rw int
	rt, pred := false, false
	keys := make(map[int32]bool)
	var seq []report.Rel
	forced, forcedPred := false, false
	for _, s := range cyc {
		forced = forced || s.Forced
		forcedPred = forcedPred || s.Forced && s.Pred != ""
		switch {
		case s.Rel.Has(report.WW):
			ww++
		case s.Rel.Has(report.WR):
			wr++
		case s.Rel.Has(report.RW):
			rw++
			pred = pred || s.Pred != ""
		case s.Rel.Has(report.RT):
			rt = true
			continue
		default:
			continue
		}
		keys[int32(s.Key)] = true
		seq = append(seq, s.Rel)
	}
	alternating := len(seq) > 0 && len(seq)%2 == 0
	for i := range seq {
		if seq[i] == seq[(i+1)%len(seq)] || seq[i].Has(report.WW) {
			alternating = false
		}
	}
	kind := anomaly.G2
	var also []anomaly.Kind
	for _, sh := range serShapes {
		ok := within(ww, sh.minWW, sh.maxWW) && within(wr, sh.minWR, sh.maxWR) && within(rw, sh.minRW, sh.maxRW) &&
			(sh.length == anyN || sh.length == len(cyc)) &&
			(sh.sameKey == 0 || (sh.sameKey == 1) == (len(keys) == 1)) &&
			(!sh.alternate || alternating) && (!sh.needRT || rt)
		if !ok {
			continue
		}
		if sh.primary {
			if kind == anomaly.G2 {
				kind = sh.kind
			}
			continue
		}
		if !slices.Contains(also, sh.kind) {
			also = append(also, sh.kind)
		}
	}
	if pred {
		// Adya: a cycle through a predicate anti-dependency is G-single with one
		// anti-dependency, G2 (not G2-item) with more; it is what people call a phantom.
		if kind == anomaly.G2Item {
			kind = anomaly.G2
		}
		also = append([]anomaly.Kind{anomaly.Phantom}, also...)
	}
	if forced && rw == 0 && (kind == anomaly.G0 || kind == anomaly.G1c) {
		// The cycle has no anti-dependency only because pruning fixed choices whose
		// alternatives close other cycles, which may well have them: the history is not
		// serializable, but not known to have a write or read-dependency cycle in every
		// completion (snapshot isolation, which forbids G0 and G1c, may hold). Name the
		// general class; through a forced predicate read it is a phantom.
		kind = anomaly.G2
		if forcedPred && !slices.Contains(also, anomaly.Phantom) {
			also = append([]anomaly.Kind{anomaly.Phantom}, also...)
		}
	}
	return kind, also
}

// siShape describes a cycle of the induced graph by the steps on it. The first matching
// shape names the anomaly (PolySI's vocabulary, §5.3 and App. D); the Adya class goes into
// Also. Write skew never appears: its cycle has two adjacent anti-dependencies, which SI
// allows.
type siShape struct {
	kind                                     anomaly.Kind
	minWW, maxWW, minWR, maxWR, minRW, maxRW int
	length                                   int  // steps, or anyN
	sameKey                                  int8 // 1: all data steps on one key; 2: at least two keys
	alternate                                bool // wr and rw alternate
	causal                                   bool // besides the rw, only so/wr/rt steps, and at least two of them or one so/rt
}

var siShapes = []siShape{
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

// oldSI is internal/check/si's classify before the table moved here: an SI name where one
// applies, with the Adya class in Also; else the Adya class (G0, G1c, G-single; G2-item
// for a cycle whose anti-dependencies are not adjacent, Elle's G-nonadjacent).
func oldSI(cyc []report.Step) (anomaly.Kind, []anomaly.Kind) {
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
	for _, sh := range siShapes {
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

// oldWeak is internal/check/weak's naming switch before the table, over the facts it read
// off the cycle's steps: a step the axiom forced (and whether its reader had seen the
// writer only through others), a session-order step, a direct write-read step.
func oldWeak(hasForced, indirect, hasSO, hasWR bool) (anomaly.Kind, []anomaly.Kind) {
	switch {
	case hasForced && (indirect || hasSO):
		return anomaly.CausalityViolation, []anomaly.Kind{anomaly.FracturedRead}
	case hasForced:
		return anomaly.FracturedRead, nil
	case hasSO:
		return anomaly.CausalityViolation, []anomaly.Kind{anomaly.G1c}
	case hasWR:
		return anomaly.G1c, nil
	default:
		return anomaly.G0, nil
	}
}
