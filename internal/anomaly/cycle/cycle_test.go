package cycle

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

func step(rel report.Rel, key int) report.Step { return report.Step{Rel: rel, Key: history.Key(key)} }

func pred(s report.Step) report.Step   { s.Pred = "v in [1, 9]"; return s }
func forced(s report.Step) report.Step { s.Forced = true; return s }

var (
	ww1, ww2 = step(report.WW, 1), step(report.WW, 2)
	wr1, wr2 = step(report.WR, 1), step(report.WR, 2)
	rw1, rw2 = step(report.RW, 1), step(report.RW, 2)
	so, rt   = step(report.SO, -1), step(report.RT, -1)
)

// decided returns the rules that make Classify's answer for s under sc: the first class
// rule that matches and every name rule that matches.
func decided(sc Scheme, s Shape) []int {
	var out []int
	class := false
	for i := range rules {
		r := &rules[i]
		if r.schemes&sc == 0 || !r.match(&s) || r.class && class {
			continue
		}
		class = class || r.class
		out = append(out, i)
	}
	return out
}

// TestClassify names a minimal cycle for every rule of the table, in every scheme that
// uses it, and fails if some rule decides no case.
func TestClassify(t *testing.T) {
	t.Parallel()
	k := func(ks ...anomaly.Kind) []anomaly.Kind { return ks }
	tests := []struct {
		name string
		sc   Scheme
		cyc  []report.Step // or, for Weak, shape
		sh   Shape
		kind anomaly.Kind
		also []anomaly.Kind
	}{
		// Serializability: the class is the kind.
		{name: "G0", sc: Ser, cyc: []report.Step{ww1, ww2}, kind: anomaly.G0},
		{name: "G1c", sc: Ser, cyc: []report.Step{wr1, wr2}, kind: anomaly.G1c},
		{name: "G1c with so", sc: Ser, cyc: []report.Step{wr1, so, ww2}, kind: anomaly.G1c},
		{name: "G0 with so", sc: Ser, cyc: []report.Step{ww1, so}, kind: anomaly.G0},
		{name: "G-single", sc: Ser, cyc: []report.Step{wr1, ww2, rw1}, kind: anomaly.GSingle},
		{name: "G2-item", sc: Ser, cyc: []report.Step{rw1, wr1, rw2}, kind: anomaly.G2Item},
		{name: "order steps alone", sc: Ser, cyc: []report.Step{so, rt}, kind: anomaly.G2},
		{name: "lost update", sc: Ser, cyc: []report.Step{rw1, ww1}, kind: anomaly.GSingle, also: k(anomaly.LostUpdate)},
		{name: "lost update rw rw", sc: Ser, cyc: []report.Step{rw1, rw1}, kind: anomaly.G2Item, also: k(anomaly.LostUpdate)},
		{name: "write skew", sc: Ser, cyc: []report.Step{rw1, rw2}, kind: anomaly.G2Item, also: k(anomaly.WriteSkew)},
		{name: "read skew", sc: Ser, cyc: []report.Step{wr1, rw2}, kind: anomaly.GSingle, also: k(anomaly.ReadSkew, anomaly.FracturedRead)},
		{name: "ww rw on two keys", sc: Ser, cyc: []report.Step{ww1, rw2}, kind: anomaly.GSingle},
		{name: "long fork", sc: Ser, cyc: []report.Step{wr1, rw1, wr2, rw2}, kind: anomaly.G2Item, also: k(anomaly.LongFork)},
		{name: "stale read", sc: Ser, cyc: []report.Step{rt, rw1}, kind: anomaly.GSingle, also: k(anomaly.StaleRead)},
		{name: "phantom", sc: Ser, cyc: []report.Step{pred(rw1), wr2}, kind: anomaly.GSingle, also: k(anomaly.Phantom, anomaly.ReadSkew, anomaly.FracturedRead)},
		{name: "predicate G2", sc: Ser, cyc: []report.Step{pred(rw1), rw2}, kind: anomaly.G2, also: k(anomaly.Phantom, anomaly.WriteSkew)},
		{name: "forced G1c", sc: Ser, cyc: []report.Step{forced(wr1), wr2}, kind: anomaly.G2},
		{name: "forced G0", sc: Ser, cyc: []report.Step{forced(ww1), ww2}, kind: anomaly.G2},
		{name: "forced predicate read", sc: Ser, cyc: []report.Step{forced(pred(wr1)), wr2}, kind: anomaly.G2, also: k(anomaly.Phantom)},
		{name: "forced predicate ww", sc: Ser, cyc: []report.Step{forced(pred(ww1)), ww2}, kind: anomaly.G2, also: k(anomaly.Phantom)},
		{name: "forced lost update", sc: Ser, cyc: []report.Step{rw1, forced(ww1)}, kind: anomaly.GSingle, also: k(anomaly.LostUpdate)},

		// Snapshot isolation: the shape's name is the kind, the class is Also.
		{name: "SI G0", sc: SI, cyc: []report.Step{ww1, ww2}, kind: anomaly.G0},
		{name: "SI G1c", sc: SI, cyc: []report.Step{wr1, ww2}, kind: anomaly.G1c},
		{name: "SI G-single", sc: SI, cyc: []report.Step{wr1, rw1}, kind: anomaly.GSingle},
		{name: "SI G-nonadjacent", sc: SI, cyc: []report.Step{wr1, rw1, ww2, rw2}, kind: anomaly.G2Item},
		{name: "SI order steps alone", sc: SI, cyc: []report.Step{so, rt}, kind: anomaly.G0},
		{name: "SI lost update", sc: SI, cyc: []report.Step{rw1, ww1}, kind: anomaly.LostUpdate, also: k(anomaly.GSingle)},
		{name: "SI long fork", sc: SI, cyc: []report.Step{wr1, rw1, wr2, rw2}, kind: anomaly.LongFork, also: k(anomaly.G2Item)},
		{name: "SI read skew", sc: SI, cyc: []report.Step{wr1, rw2}, kind: anomaly.ReadSkew, also: k(anomaly.GSingle)},
		{name: "SI read skew by overwrite", sc: SI, cyc: []report.Step{ww1, rw2}, kind: anomaly.ReadSkew, also: k(anomaly.GSingle)},
		{name: "SI causality, long path", sc: SI, cyc: []report.Step{wr1, wr2, rw1}, kind: anomaly.CausalityViolation, also: k(anomaly.GSingle)},
		{name: "SI causality, session", sc: SI, cyc: []report.Step{so, rw1}, kind: anomaly.CausalityViolation, also: k(anomaly.GSingle)},
		{name: "SI ignores predicates and pruning", sc: SI, cyc: []report.Step{forced(pred(rw1)), rw2}, kind: anomaly.G2Item},

		// Weak levels: shapes the checker fills itself.
		{name: "weak G0", sc: Weak, sh: Shape{WW: 2}, kind: anomaly.G0},
		{name: "weak G1c", sc: Weak, sh: Shape{WW: 1, WR: 1}, kind: anomaly.G1c},
		{name: "weak session cycle", sc: Weak, sh: Shape{WW: 1, SO: 1}, kind: anomaly.CausalityViolation, also: k(anomaly.G1c)},
		{name: "weak fractured read", sc: Weak, sh: Shape{WR: 1, Axiom: true}, kind: anomaly.FracturedRead},
		{name: "weak causality by path", sc: Weak, sh: Shape{WR: 1, Axiom: true, Indirect: true}, kind: anomaly.CausalityViolation, also: k(anomaly.FracturedRead)},
		{name: "weak causality by session", sc: Weak, sh: Shape{SO: 1, Axiom: true}, kind: anomaly.CausalityViolation, also: k(anomaly.FracturedRead)},
	}
	used := make([]bool, len(rules))
	for _, tc := range tests {
		sh := tc.sh
		if tc.cyc != nil {
			sh = ShapeOf(tc.cyc)
		}
		kind, also := Classify(tc.sc, sh)
		if kind != tc.kind || !slices.Equal(also, tc.also) || (also == nil) != (tc.also == nil) {
			t.Errorf("%s: Classify = %v %v, want %v %v", tc.name, kind, also, tc.kind, tc.also)
		}
		for _, i := range decided(tc.sc, sh) {
			used[i] = true
		}
	}
	for i, u := range used {
		if !u {
			t.Errorf("rule %d (%v) decides no case: add a minimal cycle for it", i, rules[i].kind)
		}
	}
}

// alphabet returns the steps cycles are built from: every data relation (and the
// combinations witnesses produce) on two keys, through a predicate or not, forced or not,
// and the order steps.
func alphabet(full bool) []report.Step {
	data := []report.Rel{report.WW, report.WR, report.RW, report.WR | report.PredWR, report.RW | report.PredRW}
	order := []report.Rel{report.SO, report.RT}
	if full {
		data = append(data, report.WW|report.RW)
		order = append(order, report.TS, report.SO|report.RT, 0)
	}
	bools := []bool{false}
	if full {
		bools = append(bools, true)
	}
	var out []report.Step
	for _, rel := range data {
		for _, key := range []int{1, 2} {
			for _, p := range bools {
				for _, f := range bools {
					s := step(rel, key)
					if p || !full && rel&(report.PredWR|report.PredRW) != 0 {
						s = pred(s)
					}
					s.Forced = f
					out = append(out, s)
				}
			}
		}
	}
	for _, rel := range order {
		for _, f := range bools {
			s := step(rel, -1)
			s.Forced = f
			out = append(out, s)
		}
	}
	return out
}

// eachCycle calls f with every sequence of n steps from alpha.
func eachCycle(alpha []report.Step, n int, f func([]report.Step)) {
	cyc := make([]report.Step, n)
	idx := make([]int, n)
	for {
		for i, j := range idx {
			cyc[i] = alpha[j]
		}
		f(cyc)
		i := n - 1
		for i >= 0 && idx[i] == len(alpha)-1 {
			idx[i] = 0
			i--
		}
		if i < 0 {
			return
		}
		idx[i]++
	}
}

// TestMatchesOldCode names every cycle of up to three steps over the full alphabet, and of
// four and five over a smaller one, as ser's and si's classifiers did before the table.
func TestMatchesOldCode(t *testing.T) {
	t.Parallel()
	full, small := alphabet(true), alphabet(false)
	runs := []struct {
		alpha []report.Step
		n     int
	}{{full, 1}, {full, 2}, {full, 3}, {small, 4}}
	if !testing.Short() {
		runs = append(runs, struct {
			alpha []report.Step
			n     int
		}{small, 5})
	}
	olds := []struct {
		sc  Scheme
		old func([]report.Step) (anomaly.Kind, []anomaly.Kind)
	}{{Ser, oldSer}, {SI, oldSI}}
	seen := make(map[string]int)
	for _, run := range runs {
		eachCycle(run.alpha, run.n, func(cyc []report.Step) {
			for _, o := range olds {
				wk, wa := o.old(cyc)
				gk, ga := Name(o.sc, cyc)
				if gk != wk || !slices.Equal(ga, wa) || (ga == nil) != (wa == nil) {
					t.Fatalf("Name(%d, %+v) = %v %v, the old code said %v %v", o.sc, cyc, gk, ga, wk, wa)
				}
				seen[fmt.Sprint(o.sc, gk, ga)]++
			}
		})
	}
	// Every name either scheme gives occurs among the cycles compared.
	if len(seen) < 20 {
		t.Errorf("only %d distinct names over all cycles: %v", len(seen), seen)
	}
}

// TestWeakMatchesOldCode names every combination of the facts weak reads off a cycle as its
// switch did before the table.
func TestWeakMatchesOldCode(t *testing.T) {
	t.Parallel()
	for _, axiom := range []bool{false, true} {
		for _, indirect := range []bool{false, true} {
			for so := range 3 {
				for wr := range 3 {
					for ww := range 3 {
						sh := Shape{Len: so + wr + ww, WW: ww, WR: wr, SO: so, Order: so, Axiom: axiom, Indirect: indirect}
						if axiom {
							sh.Len++
						}
						if sh.Len == 0 {
							continue
						}
						wk, wa := oldWeak(axiom, indirect, so > 0, wr > 0)
						gk, ga := Classify(Weak, sh)
						if gk != wk || !cmp.Equal(ga, wa) {
							t.Errorf("Classify(Weak, %+v) = %v %v, the old switch said %v %v", sh, gk, ga, wk, wa)
						}
					}
				}
			}
		}
	}
}
