// Package cycle names dependency cycles: given the steps of a cycle a checker found, it
// returns the anomaly kind and the other names the same evidence goes by, from one ordered
// table of rules (Elle's table of cycle anomalies, done as data).
//
// # Pipeline
//
// [ShapeOf] reads what the rules look at from a cycle's steps into a [Shape]: how many
// write-write, write-read and anti-dependency steps it has, how many order steps (session,
// real time, timestamps), how many keys its data steps touch, whether its data steps
// alternate wr and rw, whether an anti-dependency goes through a predicate, whether pruning
// forced a step. [Classify] runs the table over a Shape for one [Scheme] and composes the
// answer: a cycle falls into one class (Adya's G0, G1c, G-single, G2-item, G2; the first
// class rule that matches), and may have further names for its shape (lost update,
// write skew, read skew, long fork, ...; every name rule that matches, in table order).
// [Name] is the two together.
//
// # Schemes
//
// The checkers name the same cycle differently, and keep doing so: [Ser] gives the Adya
// class as the kind and the shape's names as Also ("G-single (lost-update)"); [SI] and
// [Weak] give the shape's name as the kind, the class as Also ("lost-update (G-single)").
// A weak cycle that a read atomic or causal axiom closes is no dependency cycle and has no
// class: its kind is its first name, Also the others ("causality-violation
// (fractured-read)").
// A rule says which schemes use it: where a scheme's level reads a step differently (under
// snapshot isolation an overwrite means the overwriter saw the version; under causal
// consistency session order is a dependency) the table has a row for that scheme.
//
// # Sources
//
// Adya, Weak Consistency (1999), §4.4-4.5: G0, G1c, G-single, G2-item, G2. Elle (Kingsbury
// and Alvaro, 2020), §4 and elle.txn: G-nonadjacent (anti-dependencies not adjacent, which
// is what snapshot isolation forbids; named G2-item here), lost update, write skew, read
// skew, long fork, fractured read. PolySI (Huang et al., 2023), §5.3 and App. D: the names
// its witnesses take (lost update, long fork, read skew, causality violation).
//
// Local names: s a [Shape], r a rule, sc a [Scheme].
package cycle

import (
	"slices"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/internal/report"
)

// Scheme is how one family of checkers names cycles. A scheme is one bit; a rule's set of
// schemes is their union.
type Scheme uint8

// Schemes.
const (
	Ser  Scheme = 1 << iota // serializability (internal/check/ser): the class is the kind, the names are Also
	SI                      // snapshot isolation (internal/check/si): the name is the kind, the class is Also
	Weak                    // read committed, read atomic, causal (internal/check/weak): as SI
)

// classFirst reports whether sc gives the class as the kind and the names as Also.
func (sc Scheme) classFirst() bool { return sc == Ser }

// Shape is what the rules read of a cycle. [ShapeOf] fills it from steps; a checker whose
// steps do not say everything (weak's axiom-forced steps) fills it itself.
type Shape struct {
	Len int // steps on the cycle
	// Data steps, each counted once by its first relation of ww, wr, rw: a step that is
	// both a write-write and an anti-dependency is a ww step.
	WW, WR, RW int
	Order      int // the other steps: session order, real time, timestamps
	SO         int // order steps with session order
	RT         bool
	Keys       int // distinct keys of the data steps
	// Alternating: the data steps are an even number of wr and rw steps, no two adjacent
	// ones with the same relation set (the cycle closing).
	Alternating bool
	PredRW      bool // an anti-dependency step is through a predicate read
	Forced      bool // pruning forced a step (its alternatives close cycles of their own)
	ForcedPred  bool // a forced step is through a predicate read
	// Axiom: a step is one the read atomic or causal axiom forced (weak): the reader had
	// seen the first writer, so the version it read must come after the first writer's.
	Axiom bool
	// Indirect: the reader of an Axiom step had seen the writer only through others (a
	// causal path of more than one step).
	Indirect bool
}

// ShapeOf reads the shape of a cycle of steps, in order.
func ShapeOf(cyc []report.Step) Shape {
	s := Shape{Len: len(cyc)}
	var keys []int32
	var seq []report.Rel // the data steps' relations, in order
	for _, st := range cyc {
		if !s.add(st) {
			continue
		}
		if !slices.Contains(keys, int32(st.Key)) {
			keys = append(keys, int32(st.Key))
		}
		seq = append(seq, st.Rel)
	}
	s.Keys = len(keys)
	s.Alternating = alternates(seq)
	return s
}

// add counts step st in s and reports whether it is a data step (a write, read or
// anti-dependency), not an order step.
func (s *Shape) add(st report.Step) bool {
	s.Forced = s.Forced || st.Forced
	s.ForcedPred = s.ForcedPred || st.Forced && st.Pred != ""
	switch {
	case st.Rel.Has(report.WW):
		s.WW++
	case st.Rel.Has(report.WR):
		s.WR++
	case st.Rel.Has(report.RW):
		s.RW++
		s.PredRW = s.PredRW || st.Pred != ""
	default:
		s.Order++
		if st.Rel.Has(report.SO) {
			s.SO++
		}
		s.RT = s.RT || st.Rel.Has(report.RT)
		return false
	}
	return true
}

// alternates reports whether the relations of a cycle's data steps are an even number of
// wr and rw steps, no two adjacent ones (the cycle closing) with the same relation set.
func alternates(seq []report.Rel) bool {
	if len(seq) == 0 || len(seq)%2 != 0 {
		return false
	}
	for i := range seq {
		if seq[i] == seq[(i+1)%len(seq)] || seq[i].Has(report.WW) {
			return false
		}
	}
	return true
}

// Name returns the anomaly kind of a cycle of steps as scheme sc names it, and the other
// names it goes by (nil if none).
func Name(sc Scheme, cyc []report.Step) (anomaly.Kind, []anomaly.Kind) {
	return Classify(sc, ShapeOf(cyc))
}

// Classify returns the anomaly kind of a cycle of shape s as scheme sc names it, and the
// other names it goes by (nil if none): the first class rule of sc that matches, and every
// name rule of sc that matches, composed as sc does.
func Classify(sc Scheme, s Shape) (anomaly.Kind, []anomaly.Kind) {
	class := anomaly.KindInvalid
	var names []anomaly.Kind
	for i := range rules {
		r := &rules[i]
		if r.schemes&sc == 0 || !r.match(&s) {
			continue
		}
		switch {
		case r.class && class == anomaly.KindInvalid:
			class = r.kind
		case !r.class && !slices.Contains(names, r.kind):
			names = append(names, r.kind)
		}
	}
	return compose(sc, class, names)
}

// compose returns the kind and other names of a cycle whose class is class and whose
// further names are names, as scheme sc composes them: the class first, or the first
// further name with the others and the class after it.
func compose(sc Scheme, class anomaly.Kind, names []anomaly.Kind) (anomaly.Kind, []anomaly.Kind) {
	if sc.classFirst() || len(names) == 0 {
		return class, names
	}
	also := names[1:]
	if class != anomaly.KindInvalid {
		also = append(also, class)
	}
	if len(also) == 0 {
		also = nil
	}
	return names[0], also
}

// count bounds a number; the zero value allows any.
type count struct {
	set      bool
	min, max int // max < 0: no upper bound
}

func exactly(n int) count { return count{true, n, n} }
func atLeast(n int) count { return count{true, n, -1} }

var none = exactly(0)

func (c count) allows(n int) bool { return !c.set || n >= c.min && (c.max < 0 || n <= c.max) }

// flag requires a property or its absence; the zero value allows either.
type flag int8

const (
	yes flag = 1
	no  flag = -1
)

func (f flag) allows(b bool) bool { return f == 0 || (f == yes) == b }

// rule is one row of the table: the shape a cycle must have (every bound and flag) for the
// rule to name it, in the schemes that use it.
type rule struct {
	kind    anomaly.Kind
	class   bool // a class: the first that matches is the cycle's; else a further name
	schemes Scheme

	ww, wr, rw, order, so, length, keys                          count
	rt, alternating, predRW, forced, forcedPred, axiom, indirect flag
}

// match reports whether shape s has every count and flag rule r requires.
func (r *rule) match(s *Shape) bool { return r.countsMatch(s) && r.flagsMatch(s) }

// countsMatch reports whether s's counts of steps and keys are within r's bounds.
func (r *rule) countsMatch(s *Shape) bool {
	return r.ww.allows(s.WW) && r.wr.allows(s.WR) && r.rw.allows(s.RW) && r.order.allows(s.Order) &&
		r.so.allows(s.SO) && r.length.allows(s.Len) && r.keys.allows(s.Keys)
}

// flagsMatch reports whether s has the properties r requires, and not those it excludes.
func (r *rule) flagsMatch(s *Shape) bool {
	return r.rt.allows(s.RT) && r.alternating.allows(s.Alternating) && r.predRW.allows(s.PredRW) &&
		r.forced.allows(s.Forced) && r.forcedPred.allows(s.ForcedPred) && r.axiom.allows(s.Axiom) &&
		r.indirect.allows(s.Indirect)
}

// rules is the table, in order: the classes (the first that matches is the cycle's), then
// the further names (every one that matches, in this order).
var rules = []rule{
	// # Classes

	// Adya §4.5.2: a cycle through a predicate anti-dependency with two or more
	// anti-dependencies is G2, not G2-item (with one it is still G-single).
	{kind: anomaly.G2, class: true, schemes: Ser, rw: atLeast(2), predRW: yes},
	// A cycle without an anti-dependency some of whose steps pruning forced is not known to
	// have a write or read-dependency cycle in every completion: the alternatives ruled out
	// may carry the anti-dependencies, and snapshot isolation, which forbids G0 and G1c, may
	// hold. It is named by the general class.
	{kind: anomaly.G2, class: true, schemes: Ser, forced: yes, rw: none, ww: atLeast(1)},
	{kind: anomaly.G2, class: true, schemes: Ser, forced: yes, rw: none, wr: atLeast(1)},
	// Adya G0: write cycles.
	{kind: anomaly.G0, class: true, schemes: Ser | SI, ww: atLeast(1), wr: none, rw: none},
	// Adya G1c: cycles of write and read dependencies (no anti-dependency). In weak, not for
	// a cycle an axiom forced: that is no dependency cycle.
	{kind: anomaly.G1c, class: true, schemes: Ser | SI | Weak, wr: atLeast(1), rw: none, axiom: no},
	// Under causal consistency session order is a dependency like a read (Elle's
	// G1c-process): a cycle of write orders and session order is G1c.
	{kind: anomaly.G1c, class: true, schemes: Weak, so: atLeast(1), axiom: no},
	// Adya G-single: exactly one anti-dependency.
	{kind: anomaly.GSingle, class: true, schemes: Ser | SI, rw: exactly(1)},
	// Adya G2-item: two or more item anti-dependencies. Snapshot isolation only reports
	// cycles whose anti-dependencies are not adjacent: Elle's G-nonadjacent.
	{kind: anomaly.G2Item, class: true, schemes: Ser | SI, rw: atLeast(2)},
	// Anything else (a cycle of order steps alone). Adya G2 for serializability; SI and weak
	// call it G0, as they always have (for weak it is a cycle of write orders alone).
	{kind: anomaly.G2, class: true, schemes: Ser},
	{kind: anomaly.G0, class: true, schemes: SI | Weak, axiom: no},

	// # Further names

	// A phantom: an anti-dependency through a predicate read (Adya's predicate
	// anti-dependency), or a forced predicate read on a cycle the forced rules above name G2.
	{kind: anomaly.Phantom, schemes: Ser, predRW: yes},
	{kind: anomaly.Phantom, schemes: Ser, forcedPred: yes, rw: none, ww: atLeast(1)},
	{kind: anomaly.Phantom, schemes: Ser, forcedPred: yes, rw: none, wr: atLeast(1)},
	// Lost update (Elle, PolySI Fig. 5): two transactions read the same version of one key
	// and both overwrite it: ww + rw between two transactions on one key.
	{kind: anomaly.LostUpdate, schemes: Ser | SI, ww: exactly(1), wr: none, rw: exactly(1), length: exactly(2), keys: exactly(1)},
	// ... or, serializability, rw + rw on one key (both read it, each overwrote the other's
	// read). Snapshot isolation allows adjacent anti-dependencies and never reports it.
	{kind: anomaly.LostUpdate, schemes: Ser, ww: none, wr: none, rw: exactly(2), length: exactly(2), keys: exactly(1)},
	// Write skew (Elle; Berenson et al. A5B): rw + rw between two transactions on two keys.
	// Snapshot isolation allows it.
	{kind: anomaly.WriteSkew, schemes: Ser, ww: none, wr: none, rw: exactly(2), length: exactly(2), keys: atLeast(2)},
	// Read skew (Elle; Berenson et al. A5A): a transaction read one write of another and
	// missed another on a second key: wr + rw between two transactions on two keys.
	{kind: anomaly.ReadSkew, schemes: Ser | SI, ww: none, wr: exactly(1), rw: exactly(1), length: exactly(2), keys: atLeast(2)},
	// ... under snapshot isolation also ww + rw: first-committer-wins means the overwriter
	// saw the version it overwrote (PolySI App. D).
	{kind: anomaly.ReadSkew, schemes: SI, ww: exactly(1), wr: none, rw: exactly(1), length: exactly(2), keys: atLeast(2)},
	// Fractured read (Bailis et al., RAMP): the same shape seen as a transaction observing
	// part of another's writes; serializability names both.
	{kind: anomaly.FracturedRead, schemes: Ser, ww: none, wr: exactly(1), rw: exactly(1), length: exactly(2), keys: atLeast(2)},
	// Long fork (Elle; PolySI Fig. 3): two readers see two independent writes in opposite
	// orders: wr, rw, wr, rw alternating over four transactions.
	{kind: anomaly.LongFork, schemes: Ser | SI, ww: none, wr: exactly(2), rw: exactly(2), length: exactly(4), alternating: yes},
	// Stale read (Elle's G-single-realtime and kin): an anti-dependency closed by real time.
	{kind: anomaly.StaleRead, schemes: Ser, rw: atLeast(1), rt: yes},
	// Causality violation (PolySI App. D: YugabyteDB, Dgraph): a transaction misses a write
	// its causal past includes: one anti-dependency and a path back of two or more steps,
	// or through session or real-time order.
	{kind: anomaly.CausalityViolation, schemes: SI, rw: exactly(1), length: atLeast(3)},
	{kind: anomaly.CausalityViolation, schemes: SI, rw: exactly(1), order: atLeast(1)},
	// Causality violation (weak, causal level): session order closes the cycle, or the
	// axiom forced a step whose reader had seen the writer only through others.
	{kind: anomaly.CausalityViolation, schemes: Weak, so: atLeast(1)},
	{kind: anomaly.CausalityViolation, schemes: Weak, axiom: yes, indirect: yes},
	// Fractured read (weak, read atomic): a step the axiom forced, i.e. a transaction saw
	// some of another's writes but not all.
	{kind: anomaly.FracturedRead, schemes: Weak, axiom: yes},
}
