package static

import (
	"fmt"
	"slices"
	"strings"

	"github.com/isovet/isovet/internal/smtlib"
)

// ErrVacuous is wrapped by the error of a model that admits no serial
// execution of the program: every "serializable" answer under it would be
// vacuously true, so the analysis refuses it as bad input.
var ErrVacuous = fmt.Errorf("%w: the model admits no serial execution", ErrInvalid)

// serialRun is one serial execution the model must admit: instances of the
// types, in this order, each seeing every earlier one.
type serialRun []*Txn

func (r serialRun) String() string {
	var names []string
	for _, t := range r {
		names = append(names, t.Name)
	}
	if len(names) == 1 {
		return names[0] + " alone"
	}
	return strings.Join(names, " then ")
}

// serialRuns are the serial executions asked of the model: each selected
// transaction alone, and two instances one after the other (the first two
// selected transactions, or the only one twice), which needs arbitration.
func serialRuns(txns []*Txn) []serialRun {
	var runs []serialRun
	for _, t := range txns {
		runs = append(runs, serialRun{t})
	}
	second := txns[0]
	if len(txns) > 1 {
		second = txns[1]
	}
	return append(runs, serialRun{txns[0], second})
}

// serialCheck asks the solver whether the model admits the serial
// executions of serialRuns under the encoding (with the program's
// assumptions). An unsat answer is ErrVacuous; an unknown one keeps any
// safe verdict from standing (guardSafe).
func (a *analysis) serialCheck(enc *Encoding) error {
	defer a.unboundedLimits()()
	for _, run := range serialRuns(enc.txns) {
		ans, err := a.solve(enc.Serial(run))
		if err != nil {
			return err
		}
		switch ans.Status {
		case smtlib.Unsat:
			return fmt.Errorf("model %s with this program admits no serial execution (%s is unsatisfiable), so a serializability proof under it would be vacuous; check the model's axioms and the program's ASSUME INITIALLY conditions: %w",
				a.opts.Model.Name, run, ErrVacuous)
		case smtlib.Unknown:
			a.serialUnknown = fmt.Sprintf("the solver could not show that model %s admits the serial execution %s (%s), so no safe verdict stands", a.opts.Model.Name, run, ans.Reason)
			a.res.SerialCheck = a.serialUnknown
			return nil
		}
	}
	a.res.SerialCheck = fmt.Sprintf("the model admits serial executions (%d checked: each transaction alone and two in sequence)", len(serialRuns(enc.txns)))
	return nil
}

// guardSafe turns a safe verdict into Inconclusive when the serial check
// was left unknown: the model might be vacuous.
func (a *analysis) guardSafe() {
	if a.serialUnknown == "" || (a.res.Verdict != Serializable && a.res.Verdict != NoneUpToBound) {
		return
	}
	a.res.Verdict, a.res.Reason, a.res.Proof = Inconclusive, a.serialUnknown, ""
}

// Serial returns the query for a serial execution of run: one instance per
// entry, of that type, named in arbitration order, each seeing every earlier
// one (vis = ar), with no cycle asked for. It is ground like
// [Encoding.Execution].
func (e *Encoding) Serial(run []*Txn) smtlib.Query {
	k := len(run)
	es := consts("e", k)
	expand := func(t smtlib.Term) smtlib.Term { return smtlib.Simplify(smtlib.Expand(t, "T", es), indexOrder(es)) }
	s, initDecls := e.executionAxioms(es)
	s = s.MapAsserts(expand)
	s = s.InsertBeforeAsserts(append(initDecls, declareConsts(es)...)...)
	s.Comment("query serial " + serialRun(run).String())
	if k > 1 {
		s.Assert(smtlib.App("distinct", es...))
	}
	assertIndexOrder(s, es)
	for i, t := range run {
		s.Assert(isType(es[i], t))
		for j := range es {
			if j != i {
				s.Assert(boolLit(smtlib.App("vis", es[i], es[j]), i < j))
			}
		}
	}
	s.Add(smtlib.Cmd("check-sat"))
	return smtlib.Query{Script: s}
}

// boolLit is t when pos, else its negation.
func boolLit(t smtlib.Term, pos bool) smtlib.Term {
	if pos {
		return t
	}
	return smtlib.Not(t)
}

// feketeTheorem is the theorem the dependency-graph proof rests on.
const feketeTheorem = "Fekete, Liarokapis, O'Neil, O'Neil and Shasha, Making Snapshot Isolation Serializable (TODS 2005), Theorem 3.1: " +
	"if the static dependency graph has no dangerous structure (two consecutive vulnerable anti-dependency edges on a cycle), every execution under SI is serializable"

// impliesSI reports whether the model's axioms include the built-in SI
// model's (so every execution it admits is an SI execution).
func impliesSI(m Model) bool {
	si, _ := LookupModel("si")
	for _, ax := range si.Axioms {
		if !slices.ContainsFunc(m.Axioms, func(t smtlib.Term) bool { return t.String() == ax.String() }) {
			return false
		}
	}
	return true
}

// sdg is a static dependency graph over the selected transactions: edge
// holds every pair whose instances may conflict (an over-approximation from
// the statements' accesses), vuln the pairs P→Q whose instances may have an
// anti-dependency P -RW-> Q while concurrent (neither sees the other; under
// SI their write sets are then disjoint), confirmed those of vuln the solver
// did not rule out.
type sdg struct {
	txns      []*Txn
	edge      map[[2]int]bool
	vuln      map[[2]int]bool
	confirmed map[[2]int]bool
}

// newSDG builds the graph from the statements' accesses: an edge P→Q when P
// and Q access a common field of a table and one of them writes it, a
// candidate vulnerable edge when P reads a field Q writes.
func newSDG(e *Encoding) *sdg {
	g := &sdg{txns: e.txns, edge: map[[2]int]bool{}, vuln: map[[2]int]bool{}, confirmed: map[[2]int]bool{}}
	for _, tb := range e.tables() {
		acc := e.tableAccesses(tb)
		for i, p := range e.txns {
			for j, q := range e.txns {
				for _, x := range acc[p] {
					for _, y := range acc[q] {
						if x.field != y.field || (!x.write && !y.write) {
							continue
						}
						g.edge[[2]int{i, j}] = true
						if !x.write && y.write {
							g.vuln[[2]int{i, j}] = true
						}
					}
				}
			}
		}
	}
	return g
}

// reaches reports whether j is reachable from i by edges (i = j included).
func (g *sdg) reaches(i, j int) bool {
	seen := map[int]bool{i: true}
	stack := []int{i}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == j {
			return true
		}
		for m := range g.txns {
			if g.edge[[2]int{n, m}] && !seen[m] {
				seen[m] = true
				stack = append(stack, m)
			}
		}
	}
	return false
}

// dangerous returns a dangerous structure P -vuln-> Q -vuln-> R with a path
// from R back to P, or ok false when there is none.
func (g *sdg) dangerous() (p, q, r int, ok bool) {
	n := len(g.txns)
	for p = range n {
		for q = range n {
			if !g.vuln[[2]int{p, q}] {
				continue
			}
			for r = range n {
				if g.vuln[[2]int{q, r}] && g.reaches(r, p) {
					return p, q, r, true
				}
			}
		}
	}
	return 0, 0, 0, false
}

// fekete tries the dependency-graph proof under SI (feketeTheorem) before
// the bounded search: it looks for a dangerous structure, asks the solver
// whether each of its candidate vulnerable edges is possible (unsat drops
// the edge; sat or unknown keeps it), and repeats until no dangerous
// structure is left (a proof) or one whose edges the solver kept remains.
func (a *analysis) fekete(enc *Encoding) (bool, error) {
	if !impliesSI(a.opts.Model) || a.opts.NoUnbounded {
		return false, nil
	}
	defer a.unboundedLimits()()
	g := newSDG(enc)
	for {
		p, q, r, ok := g.dangerous()
		if !ok {
			a.res.Verdict, a.res.Proof = Serializable, feketeTheorem+"; here "+g.describe()
			return true, nil
		}
		pending := [][2]int{{p, q}}
		if q != p || r != q {
			pending = append(pending, [2]int{q, r})
		}
		pending = slices.DeleteFunc(pending, func(e [2]int) bool { return g.confirmed[e] })
		if len(pending) == 0 {
			return false, nil
		}
		for _, e := range pending {
			ans, err := a.solve(enc.Vulnerable(g.txns[e[0]].Name, g.txns[e[1]].Name))
			if err != nil {
				return false, err
			}
			if ans.Status == smtlib.Unsat {
				delete(g.vuln, e)
			} else {
				g.confirmed[e] = true
			}
		}
	}
}

// describe lists the graph's vulnerable edges.
func (g *sdg) describe() string {
	var vs []string
	for i, p := range g.txns {
		for j, q := range g.txns {
			if g.vuln[[2]int{i, j}] {
				vs = append(vs, p.Name+" -> "+q.Name)
			}
		}
	}
	if len(vs) == 0 {
		return "no anti-dependency between concurrent instances is possible"
	}
	return "the only vulnerable anti-dependencies are " + strings.Join(vs, ", ") + ", and no two of them are consecutive on a cycle"
}

// Vulnerable asks for a vulnerable anti-dependency from an instance of p to
// a distinct instance of q: p -RW-> q while neither sees the other, in an
// execution of any size.
func (e *Encoding) Vulnerable(p, q string) smtlib.Query {
	cs := consts("v", 2)
	return e.query("vulnerable "+p+" -> "+q, cs, smtlib.And(
		smtlib.Eq(smtlib.App("typ", cs[0]), smtlib.Sym("ty."+p)),
		smtlib.Eq(smtlib.App("typ", cs[1]), smtlib.Sym("ty."+q)),
		smtlib.Not(smtlib.Eq(cs[0], cs[1])),
		smtlib.App("RW", cs[0], cs[1]),
		smtlib.Not(smtlib.App("vis", cs[0], cs[1])), smtlib.Not(smtlib.App("vis", cs[1], cs[0]))))
}

// unboundedLimits sets the limits of the unbounded queries (and the serial
// check) and returns the function that restores the bounded ones.
func (a *analysis) unboundedLimits() func() {
	prevT, prevR := a.timeout, a.rlimit
	a.timeout = a.unboundedTimeout()
	if a.opts.UnboundedRLimit > 0 {
		a.rlimit = a.opts.UnboundedRLimit
	}
	return func() { a.timeout, a.rlimit = prevT, prevR }
}

// withRLimit is q with the solver's resource limit set first (z3's rlimit,
// cvc5's rlimit-per), or q itself when rlimit is 0.
func withRLimit(q smtlib.Query, solver string, rlimit int64) smtlib.Query {
	if rlimit <= 0 {
		return q
	}
	opt := ":rlimit"
	if solver == "cvc5" {
		opt = ":rlimit-per"
	}
	s := &smtlib.Script{}
	s.Add(smtlib.Cmd("set-option", smtlib.Sym(opt), smtlib.Int(rlimit)))
	s.Append(q.Script)
	return smtlib.Query{Script: s, Values: q.Values}
}
