package static

import (
	"fmt"
	"strconv"

	"github.com/isovet/isovet/internal/smtlib"
)

// QueryKind names the questions asked of the solver (§5 of the paper).
type QueryKind int

// The queries.
const (
	QueryInvalid    QueryKind = iota
	QueryCycle                // φ_Cycle,k: a dependency cycle of at most k instances
	QueryPath                 // φ_ShortestPath,k: a chordless path of k edges
	QueryInductive1           // first disjunct of φ_Inductive,T' for one type
	QueryInductive2           // second disjunct of φ_Inductive
	QueryAnyDep               // two distinct instances with a dependency
)

func (k QueryKind) String() string {
	return [...]string{"invalid", "cycle", "path", "inductive-1", "inductive-2", "any-dependency"}[k]
}

func consts(prefix string, n int) []smtlib.Term {
	out := make([]smtlib.Term, n)
	for i := range out {
		out[i] = smtlib.Sym(prefix + strconv.Itoa(i+1))
	}
	return out
}

func d(a, b smtlib.Term) smtlib.Term { return smtlib.App("D", a, b) }

func (e *Encoding) query(name string, cs []smtlib.Term, body smtlib.Term) smtlib.Query {
	return e.queryWith(name, cs, body, false)
}

// queryWith is query, with the unbounded liveness and counter facts when
// facts is set (the inductive queries: they make the sat answers the other
// queries expect much slower).
func (e *Encoding) queryWith(name string, cs []smtlib.Term, body smtlib.Term, facts bool) smtlib.Query {
	s := e.Preamble()
	if facts && len(e.unbounded) > 0 {
		s.Comment("unbounded liveness facts (latest visible writer, frame on written rows) and counter invariants")
		s.Add(e.unbounded...)
	}
	s.Comment("query " + name)
	s.Add(declareConsts(cs)...)
	if facts && len(e.unbounded) > 0 && e.namesInstances {
		for _, c := range cs {
			s.Assert(smtlib.App(namedSym, c))
		}
	}
	s.Assert(body)
	s.Add(smtlib.Cmd("check-sat"))
	return smtlib.Query{Script: s, Values: e.values(cs)}
}

// values lists what to ask of a model: each instance's type and parameters,
// and vis, ar, WR, WW, RW between every ordered pair.
func (e *Encoding) values(cs []smtlib.Term) []smtlib.Term {
	var out []smtlib.Term
	for _, c := range cs {
		out = e.instanceValues(out, c)
	}
	for i := range cs {
		for j := i + 1; j < len(cs); j++ {
			out = append(out, smtlib.Eq(cs[i], cs[j]))
		}
	}
	for _, a := range cs {
		for _, b := range cs {
			if a.String() != b.String() {
				out = append(out, smtlib.App("vis", a, b), smtlib.App("ar", a, b),
					smtlib.App("WR", a, b), smtlib.App("WW", a, b), smtlib.App("RW", a, b))
			}
		}
	}
	return out
}

// instanceValues appends what to ask of one instance c: its type, every
// transaction's parameters and its int variables outside loops (with their
// null flags).
func (e *Encoding) instanceValues(out []smtlib.Term, c smtlib.Term) []smtlib.Term {
	out = append(out, smtlib.App("typ", c))
	for _, t := range e.txns {
		for _, p := range t.Params {
			out = append(out, smtlib.App(paramSym(t, p), c))
		}
		for _, name := range sortedVars(t) {
			if v := t.vars[name]; v.kind == varInt && len(v.loops) == 0 {
				out = append(out, smtlib.App(varSym(t, name), c), smtlib.App(varSym(t, name)+".null", c))
			}
		}
	}
	return out
}

// Cycle returns φ_Cycle,k: instances c1..ck with D(ci, ci+1), D(ck, c1) and
// c1 ≠ ck. D is reflexive, so this is a cycle of at most k instances.
func (e *Encoding) Cycle(k int) smtlib.Query {
	cs := consts("c", k)
	var conj []smtlib.Term
	for i := range k {
		conj = append(conj, d(cs[i], cs[(i+1)%k]))
	}
	conj = append(conj, smtlib.Not(smtlib.Eq(cs[0], cs[k-1])))
	return e.query(fmt.Sprintf("cycle k=%d", k), cs, smtlib.And(conj...))
}

// Execution returns the bounded query of Theorem 9 for executions of exactly
// k instances e1..ek whose dependency graph has a cycle (a closed D-walk
// c1..ck over those instances); [Analyze] asks it for k = 2, 3, ..., so a
// bound K covers every execution of at most K instances. Because the domain
// is closed, a model lists every instance the cycle depends on, so the
// witness can be replayed on its own.
//
// The query is ground in the instances: every quantifier over T is expanded
// into e1..ek (an equivalence once T is exactly {e1..ek}), and two facts
// break the symmetry between the ei without losing any execution:
//
//   - the ei are distinct (executions with fewer instances are the smaller
//     k's queries);
//   - ar orders them by index, ei —ar→ ej iff i < j. The expanded preamble is
//     symmetric in the ei (it is one formula instantiated over the same
//     domain), so any execution of k instances is a model once its
//     instances are named in arbitration order.
//
// Both facts are substituted into the expanded formulas ([smtlib.Simplify]),
// which removes ar from the search and drops every axiom they decide (the
// total-order axioms, vis ⊆ ar, and every instance of an axiom whose premise
// asks for ar against the index order). They are also asserted, so models
// still state ar.
func (e *Encoding) Execution(k int) smtlib.Query { return e.ExecutionExcluding(k, nil) }

// ExecutionExcluding is [Encoding.Execution] with the blocking clauses
// blocks (over the instances e1..ek) asserted too: the refinement's
// exclusion of the executions the replay refuted.
func (e *Encoding) ExecutionExcluding(k int, blocks []smtlib.Term) smtlib.Query {
	es := consts("e", k)
	cs := consts("c", k)
	expand := func(t smtlib.Term) smtlib.Term { return smtlib.Simplify(smtlib.Expand(t, "T", es), indexOrder(es)) }
	s, initDecls := e.executionAxioms(es)
	s = s.MapAsserts(expand)
	s = s.InsertBeforeAsserts(append(initDecls, declareConsts(es, cs)...)...)
	s.Comment(fmt.Sprintf("query execution k=%d", k))
	s.Comment("instances: distinct, named in arbitration order")
	s.Assert(smtlib.App("distinct", es...))
	assertIndexOrder(s, es)
	s.Assert(closedCycle(cs, es))
	if len(blocks) > 0 {
		s.Comment(fmt.Sprintf("refinement: %d executions the replay refuted", len(blocks)))
		for _, b := range blocks {
			s.Assert(b)
		}
	}
	s.Add(smtlib.Cmd("check-sat"))
	return smtlib.Query{Script: s, Values: e.values(es)}
}

// indexOrder returns the evaluator [smtlib.Simplify] uses to decide the
// symmetry-breaking facts of [Encoding.Execution]: = and ar between two of
// the instances es, ei = ej iff i = j and ei —ar→ ej iff i < j. Any other
// term is left undecided.
func indexOrder(es []smtlib.Term) func(smtlib.Term) (bool, bool) {
	idx := map[string]int{}
	for i, x := range es {
		idx[x.Atom()] = i
	}
	return func(t smtlib.Term) (bool, bool) {
		el := t.Elems()
		if len(el) != 3 || el[1].IsList() || el[2].IsList() {
			return false, false
		}
		i, ok1 := idx[el[1].Atom()]
		j, ok2 := idx[el[2].Atom()]
		if !ok1 || !ok2 {
			return false, false
		}
		switch t.Head() {
		case "=":
			return i == j, true
		case "ar":
			return i < j, true
		}
		return false, false
	}
}

// declareConsts declares each of the groups' constants as an instance.
func declareConsts(groups ...[]smtlib.Term) []smtlib.Term {
	var decls []smtlib.Term
	for _, g := range groups {
		for _, c := range g {
			decls = append(decls, smtlib.Cmd("declare-const", c, sT))
		}
	}
	return decls
}

// executionAxioms returns the preamble with the axioms that quantify over
// the instances es (frames, bounded facts, values, the initial database),
// not yet expanded, and the declarations the initial database needs.
func (e *Encoding) executionAxioms(es []smtlib.Term) (*smtlib.Script, []smtlib.Term) {
	s := e.preamble.Clone()
	for _, f := range e.frames {
		s.Assert(e.finishTerm(e.frameAxiom(f, es)))
	}
	if e.factsInBounded {
		e.addBoundedFacts(s, es)
	}
	for _, ax := range append(e.valueAxioms(es), e.writtenValueAxioms()...) {
		s.Assert(e.finishTerm(ax))
	}
	initDecls, initAxioms := e.initialDB(es)
	if len(initAxioms) > 0 {
		s.Comment("the initial database and the program's ASSUME INITIALLY conditions")
	}
	for _, ax := range initAxioms {
		s.Assert(e.finishTerm(ax))
	}
	return s, initDecls
}

// assertIndexOrder asserts ei —ar→ ej exactly when i < j.
func assertIndexOrder(s *smtlib.Script, es []smtlib.Term) {
	for i := range es {
		for j := range es {
			if i < j {
				s.Assert(smtlib.App("ar", es[i], es[j]))
			} else {
				s.Assert(smtlib.Not(smtlib.App("ar", es[i], es[j])))
			}
		}
	}
}

// closedCycle is the cycle c1..ck of [Encoding.Execution]: c1 ≠ ck, every ci
// is one of the instances es, and D(ci, ci+1), D(ck, c1).
func closedCycle(cs, es []smtlib.Term) smtlib.Term {
	k := len(cs)
	conj := []smtlib.Term{smtlib.Not(smtlib.Eq(cs[0], cs[k-1]))}
	for i := range k {
		var dom []smtlib.Term
		for _, x := range es {
			dom = append(dom, smtlib.Eq(cs[i], x))
		}
		conj = append(conj, smtlib.Or(dom...), d(cs[i], cs[(i+1)%k]))
	}
	return smtlib.And(conj...)
}

// ShortestPath returns φ_ShortestPath,k: k+1 distinct instances joined by k
// D edges with no forward chord.
func (e *Encoding) ShortestPath(k int) smtlib.Query {
	ps := consts("p", k+1)
	var conj []smtlib.Term
	for i := range k {
		conj = append(conj, d(ps[i], ps[i+1]))
	}
	for i := 0; i < k-1; i++ {
		for j := i + 2; j <= k; j++ {
			conj = append(conj, smtlib.Not(d(ps[i], ps[j])))
		}
	}
	conj = append(conj, smtlib.App("distinct", ps...))
	return e.query(fmt.Sprintf("shortest-path k=%d", k), ps, smtlib.And(conj...))
}

// Inductive1 returns the first disjunct of Eq. 7 for T' = {txn}: an instance
// of txn with a dependency against ar.
func (e *Encoding) Inductive1(txn string) smtlib.Query {
	cs := consts("q", 2)
	return e.queryWith("inductive-1 "+txn, cs, smtlib.And(
		smtlib.Eq(smtlib.App("typ", cs[0]), smtlib.Sym("ty."+txn)),
		d(cs[0], cs[1]), smtlib.Not(smtlib.Eq(cs[0], cs[1])), smtlib.Not(smtlib.App("ar", cs[0], cs[1]))), true)
}

// Inductive2 returns the second disjunct of Eq. 7: a two-edge path whose end
// is ar-before both other instances.
func (e *Encoding) Inductive2() smtlib.Query {
	cs := consts("q", 3)
	return e.queryWith("inductive-2", cs, smtlib.And(
		d(cs[0], cs[1]), d(cs[1], cs[2]), smtlib.App("distinct", cs...),
		smtlib.Not(smtlib.App("ar", cs[0], cs[2])), smtlib.Not(smtlib.App("ar", cs[1], cs[2]))), true)
}

// AnyDependency asks for two distinct instances with a dependency.
func (e *Encoding) AnyDependency() smtlib.Query {
	cs := consts("q", 2)
	return e.query("any-dependency", cs, smtlib.And(d(cs[0], cs[1]), smtlib.Not(smtlib.Eq(cs[0], cs[1]))))
}
