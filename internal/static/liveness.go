package static

import (
	"strconv"

	"github.com/isovet/isovet/internal/smtlib"
)

// Liveness and counter facts for the inductive queries (φ_Inductive, over
// executions of any size; the other unbounded queries do not use them, as
// they made those queries' sat answers slow). The bounded query has its own
// frame axiom, expanded over its k instances; a query over executions of
// any size cannot expand an existential over all instances, so these are
// Skolemized forms that z3 instantiates only for the terms a proof names.
// Each axiom holds in every execution allowed by the App. B semantics (a
// snapshot is the writes of the visible instances applied in ar order), so
// adding it loses no execution; docs/static.md ("Liveness and counters in
// the inductive proof") gives the arguments.

// aliveWriter is a statement that writes the Alive field of at most one row,
// named by key expressions: an INSERT, or a DELETE whose WHERE fixes the
// whole key and is encoded exactly. It is outside loops, and its Λ (the IF
// conditions it sits under, over variables and parameters) is exact.
type aliveWriter struct {
	t      *Txn
	x      access // the Alive write
	keys   []Expr // one per key field, in declaration order
	insert bool
	n      int // index among the table's writers, for Skolem names
}

// aliveWriters returns the statements writing tb's Alive when every one of
// them is an exact single-row writer and no transaction both inserts into and
// deletes from tb (so each instance's write of a row's Alive has one value,
// fixed by its type). ok is false otherwise: the table gets no axioms.
func (e *Encoding) aliveWriters(tb *Table) (ws []aliveWriter, ok bool) {
	inserter := map[*Txn]bool{} // whether each transaction's Alive writes are inserts
	for _, t := range e.txns {
		for _, st := range t.stmts {
			w, writes, exact := aliveWriterOf(t, st, tb)
			if !writes {
				continue
			}
			if !exact || len(w.x.ctx.loops) > 0 || len(w.keys) != len(keyFields(tb)) {
				return nil, false
			}
			if ins, seen := inserter[t]; seen && ins != w.insert {
				return nil, false
			}
			inserter[t] = w.insert
			w.n = len(ws)
			ws = append(ws, w)
		}
	}
	// Tables whose rows are only inserted get no axioms: the facts cost
	// solver time, and the spurious models they rule out come from deletes
	// (omitting an axiom is always sound).
	del := false
	for _, w := range ws {
		del = del || !w.insert
	}
	return ws, del
}

// aliveWriterOf returns st as a writer of tb's Alive: writes is false when
// st is no INSERT into or DELETE from tb, exact is false for a DELETE whose
// WHERE is not encoded exactly or does not fix every key field. An INSERT's
// keys are the values it gives the key fields.
func aliveWriterOf(t *Txn, st Stmt, tb *Table) (w aliveWriter, writes, exact bool) {
	switch st := st.(type) {
	case *Insert:
		if st.ctx.table == tb {
			return insertWriter(t, st, tb), true, true
		}
	case *Delete:
		if st.ctx.table == tb {
			w, exact := deleteWriter(t, st, tb)
			return w, true, exact
		}
	}
	return w, false, false
}

// insertWriter is an INSERT into tb as an Alive writer: its keys are the
// values it gives the key fields.
func insertWriter(t *Txn, st *Insert, tb *Table) aliveWriter {
	w := aliveWriter{t: t, x: accesses(st)[0], insert: true}
	for _, k := range keyFields(tb) {
		for _, a := range st.Values {
			if a.Field == k.Name {
				w.keys = append(w.keys, a.Expr)
			}
		}
	}
	return w
}

// deleteWriter is a DELETE from tb as an Alive writer: exact is false when
// its WHERE is not encoded exactly or does not fix every key field.
func deleteWriter(t *Txn, st *Delete, tb *Table) (w aliveWriter, exact bool) {
	if !exactCond(st.Where) {
		return w, false
	}
	w = aliveWriter{t: t, x: accesses(st)[0]}
	eqs := keyEqs(tb, st.Where)
	for _, k := range keyFields(tb) {
		x, found := eqs[k.Name]
		if !found {
			return w, false
		}
		w.keys = append(w.keys, x)
	}
	return w, true
}

// isType is "instance u is of type t".
func isType(u smtlib.Term, t *Txn) smtlib.Term {
	return smtlib.Eq(smtlib.App("typ", u), smtlib.Sym(tyCtor(t)))
}

// writesAlive is "instance u writes the Alive of row r": exact, as every
// writer is exact.
func (e *Encoding) writesAlive(ws []aliveWriter, u, r smtlib.Term) smtlib.Term {
	var disj []smtlib.Term
	for _, w := range ws {
		_, en, lam := e.exec(w.x.ctx, u)
		disj = append(disj, smtlib.And(isType(u, w.t), lam, w.x.row(en, r, false)))
	}
	return smtlib.Or(disj...)
}

// inserts is "u is of a type whose Alive writes of this table are inserts".
func inserts(ws []aliveWriter, u smtlib.Term) smtlib.Term {
	seen := map[*Txn]bool{}
	var disj []smtlib.Term
	for _, w := range ws {
		if w.insert && !seen[w.t] {
			seen[w.t] = true
			disj = append(disj, isType(u, w.t))
		}
	}
	return smtlib.Or(disj...)
}

// namedSym marks the instances a query names (its constants), nearSym those
// and the frame witnesses; see livenessAxioms.
const (
	namedSym = "named"
	nearSym  = "near"
)

// livenessAxioms returns the declarations and axioms of the unbounded
// liveness facts, for every table some transaction deletes from whose Alive
// writers are all exact single-row writers:
//
//   - last writer: if u is visible to t and writes r's Alive, then
//     lw.T(r, t) is visible to t, writes r's Alive, is u or ar-after u, and
//     wrote r's liveness in t (lw.T(r, t) is the ar-last visible writer of
//     r's Alive, which exists as u does);
//   - frame, for the row a writer a writes: if r's liveness differs between
//     the snapshots of a and b, some writer frame.T.n(a,b) of r's Alive is
//     visible to exactly one of them (a snapshot's liveness of r is a
//     function of the set of visible writers of r's Alive).
//
// The frame is stated only for pairs of instances marked named (the query
// marks its constants), the last writer only for snapshots of instances
// marked near (the named ones and the frame's witnesses), and each is
// triggered by its mark: other Skolem instances z3 creates are not marked,
// so the axioms do not apply to them and E-matching stops (the unrestricted
// frame diverged, docs/static.md). Restricting an axiom to marked instances
// only weakens it, and both marks are true of every instance of a real
// execution, so no execution is lost.
func (e *Encoding) livenessAxioms() (decls, axioms []smtlib.Term) {
	declared := false
	for _, tb := range e.tables() {
		ws, ok := e.aliveWriters(tb)
		if !ok {
			continue
		}
		if !declared {
			decls = append(decls, declFun(namedSym, []smtlib.Term{sT}, sB), declFun(nearSym, []smtlib.Term{sT}, sB))
			x := smtlib.Var{Name: "x", Sort: "T"}
			axioms = append(axioms, smtlib.Forall([]smtlib.Var{x}, smtlib.Pattern(
				smtlib.Implies(smtlib.App(namedSym, x.Ref()), smtlib.App(nearSym, x.Ref())), smtlib.App(namedSym, x.Ref()))))
			declared = true
		}
		R := smtlib.Sym(sortR(tb))
		r := smtlib.Var{Name: "r", Sort: sortR(tb)}
		u, t := smtlib.Var{Name: "u", Sort: "T"}, smtlib.Var{Name: "t", Sort: "T"}
		alive := func(r, t smtlib.Term) smtlib.Term { return smtlib.App(aliveSym(tb), r, t) }
		named := func(t smtlib.Var) smtlib.Term { return smtlib.App(namedSym, t.Ref()) }
		near := smtlib.App(nearSym, t.Ref())

		lwSym := "lw." + tb.Name
		decls = append(decls, declFun(lwSym, []smtlib.Term{R, sT}, sT))
		lw := smtlib.App(lwSym, r.Ref(), t.Ref())
		vis := smtlib.App("vis", u.Ref(), t.Ref())
		axioms = append(axioms, smtlib.Forall([]smtlib.Var{r, u, t}, smtlib.Pattern(smtlib.Implies(
			smtlib.And(near, vis, e.writesAlive(ws, u.Ref(), r.Ref())),
			smtlib.And(e.writesAlive(ws, lw, r.Ref()), smtlib.App("vis", lw, t.Ref()),
				smtlib.Or(smtlib.Eq(u.Ref(), lw), smtlib.App("ar", u.Ref(), lw)),
				smtlib.Eq(alive(r.Ref(), t.Ref()), inserts(ws, lw)))),
			near, vis, alive(r.Ref(), t.Ref()))))

		for _, w := range ws {
			a, b := smtlib.Var{Name: "a", Sort: "T"}, smtlib.Var{Name: "b", Sort: "T"}
			_, en, lam := e.exec(w.x.ctx, a.Ref())
			var vals []smtlib.Term
			for _, k := range w.keys {
				v, _, _ := en.val(k)
				vals = append(vals, v)
			}
			row := smtlib.App("row."+tb.Name, vals...)
			fw := "frame." + tb.Name + "." + strconv.Itoa(w.n)
			decls = append(decls, declFun(fw, []smtlib.Term{sT, sT}, sT))
			f := smtlib.App(fw, a.Ref(), b.Ref())
			differ := smtlib.Not(smtlib.Eq(alive(row, a.Ref()), alive(row, b.Ref())))
			axioms = append(axioms, smtlib.Forall([]smtlib.Var{a, b}, smtlib.Pattern(smtlib.Implies(
				smtlib.And(named(a), named(b), isType(a.Ref(), w.t), lam, w.x.row(en, row, false), differ),
				smtlib.And(e.writesAlive(ws, f, row),
					smtlib.Not(smtlib.Eq(smtlib.App("vis", f, a.Ref()), smtlib.App("vis", f, b.Ref()))),
					smtlib.App(nearSym, f))),
				named(a), named(b))))
		}
	}
	return decls, axioms
}

// counterAxioms returns the counter invariants the program's assumptions
// support, with the assumptions they rest on. The shape (TPC-C's
// d_next_o_id and NewOrders/Orders, conditions 3.3.2.2-3) is:
//
//	ASSUME INITIALLY FORALL c IN C, n IN T WHERE n.k1 = c.c1 AND ... : n.kf < c.f;
//
// where the premise equates every key field of C with a key field of T, kf is
// another key field of T and f a non-key field of C; every selected
// transaction that writes C.f does so by
//
//	SELECT f AS v FROM C WHERE c1 = x1 AND ...;          -- top level
//	UPDATE C SET f = v + 1 WHERE c1 = x1 AND ...;        -- top level, same keys
//
// nobody inserts into or deletes from C, and every INSERT into T is at the top
// level of such a transaction with kf = v and ki = xj for each premise
// equation n.ki = c.cj. Then, under a model with WW ⊆ vis and transitive vis
// (psi, si, ser), in every execution from an initial database satisfying the
// assumption: a row of T live in the snapshot of t is below the v of every
// such instance n that t does not see (in the district n addresses). The
// proof is in docs/static.md.
func (e *Encoding) counterAxioms() (axioms []smtlib.Term, used []*Assume) {
	if !builtinModel(e.opts.Model, "psi", "si", "ser") {
		return nil, nil
	}
	for _, as := range e.assumes() {
		ax, ok := e.counterAxiom(as)
		if ok {
			axioms = append(axioms, ax...)
			used = append(used, as)
		}
	}
	return axioms, used
}

// counter is one transaction's increment of C.f: the variable read and the
// key expressions of C's row.
type counter struct {
	t    *Txn
	v    string
	keys map[string]Expr // C's key field -> expression
}

// counterAxiom returns the invariants of one assumption, one per counter, or
// false when the assumption or the program is not of the shape
// [Encoding.counterAxioms] describes. The steps: the assumption's shape
// (counterShapeOf), its premise linking every key of C (linkKeys), the
// counters of the selected transactions (counters), their inserts into T
// (insertsFromCounters), then one invariant per counter.
func (e *Encoding) counterAxiom(as *Assume) ([]smtlib.Term, bool) {
	sh, ok := counterShapeOf(as)
	// Only for tables with liveness facts (rows deleted): for TPC-C's
	// insert-only Orders the invariant tripled the solver time of the
	// inductive query and was not needed (omitting it is sound).
	if !ok || !e.hasAliveWriters(sh.T) {
		return nil, false
	}
	if !sh.linkKeys(as.Premise) || !sh.linksEveryKey() {
		return nil, false
	}
	counters, ok := sh.counters(e.txns)
	if !ok || !sh.insertsFromCounters(e.txns, counters) {
		return nil, false
	}
	var out []smtlib.Term
	for _, c := range counters {
		out = append(out, sh.invariant(c))
	}
	return out, len(out) > 0
}

// counterShape is an assumption FORALL c IN C, n IN T WHERE premise:
// n.kf < c.f, being matched against the program.
type counterShape struct {
	cRow, nRow AssumeRow
	C, T       *Table
	nf, cf     *FieldOf          // n.kf and c.f
	link       map[string]string // C key -> T key, from the premise
}

// counterShapeOf matches the assumption's rows and conclusion: two rows of
// different tables, a premise, and n.kf < c.f with kf a key of T and f a
// non-key field of C.
func counterShapeOf(as *Assume) (*counterShape, bool) {
	if len(as.Rows) != 2 || as.Premise == nil {
		return nil, false
	}
	cRow, nRow := as.Rows[0], as.Rows[1]
	nf, cf, ok := lessFields(as.Conclusion, nRow.Name, cRow.Name)
	if !ok {
		return nil, false
	}
	C, T := cRow.table, nRow.table
	if C == T || !field(T, nf.Field).Key || field(C, cf.Field).Key {
		return nil, false
	}
	return &counterShape{cRow: cRow, nRow: nRow, C: C, T: T, nf: nf, cf: cf, link: map[string]string{}}, true
}

// lessFields matches a conclusion against n.nf < c.cf, for the row names
// n and c.
func lessFields(concl Cond, n, c string) (nf, cf *FieldOf, ok bool) {
	cmp, ok := concl.(*Cmp)
	if !ok || cmp.Op != "<" {
		return nil, nil, false
	}
	nf, ok1 := cmp.L.(*FieldOf)
	cf, ok2 := cmp.R.(*FieldOf)
	if !ok1 || !ok2 || nf.Iter != n || cf.Iter != c {
		return nil, nil, false
	}
	return nf, cf, true
}

func (e *Encoding) hasAliveWriters(tb *Table) bool {
	_, ok := e.aliveWriters(tb)
	return ok
}

// linkKeys reads the premise, a conjunction of equations n.ki = c.cj, into
// sh.link.
func (sh *counterShape) linkKeys(c Cond) bool {
	switch c := c.(type) {
	case *Logic:
		return c.And && sh.linkKeys(c.L) && sh.linkKeys(c.R)
	case *Cmp:
		return sh.linkKey(c)
	}
	return false
}

// linkKey records one premise equation n.ki = c.cj (either way round) between
// a key of T other than kf and a key of C.
func (sh *counterShape) linkKey(c *Cmp) bool {
	l, okl := c.L.(*FieldOf)
	r, okr := c.R.(*FieldOf)
	if c.Op != "=" || !okl || !okr {
		return false
	}
	if l.Iter == sh.cRow.Name {
		l, r = r, l
	}
	if !sh.linksKeys(l, r) {
		return false
	}
	if _, dup := sh.link[r.Field]; dup {
		return false // the invariant would drop one of the equations
	}
	sh.link[r.Field] = l.Field
	return true
}

// linksKeys reports whether l is a key of T other than kf (of row n) and r
// a key of C (of row c).
func (sh *counterShape) linksKeys(l, r *FieldOf) bool {
	return l.Iter == sh.nRow.Name && r.Iter == sh.cRow.Name && field(sh.T, l.Field).Key &&
		field(sh.C, r.Field).Key && l.Field != sh.nf.Field
}

// linksEveryKey reports whether the premise equates every key of C.
func (sh *counterShape) linksEveryKey() bool {
	for _, k := range keyFields(sh.C) {
		if _, ok := sh.link[k.Name]; !ok {
			return false
		}
	}
	return true
}

// counters returns the counter of every transaction that writes C.f, in
// transaction order; false when some write of C.f is not a top-level
// increment or C's rows are inserted or deleted.
func (sh *counterShape) counters(txns []*Txn) ([]counter, bool) {
	var out []counter
	for _, t := range txns {
		c, writes, ok := sh.counterOf(t)
		if !ok {
			return nil, false
		}
		if writes {
			out = append(out, c)
		}
	}
	return out, true
}

// counterOf matches t's writes of C.f: none (writes false), or one top-level
// SELECT f AS v and one top-level UPDATE SET f = v + 1 on the same row of C.
func (sh *counterShape) counterOf(t *Txn) (c counter, writes, ok bool) {
	sel, upd, ok := sh.counterStmts(t)
	if !ok {
		return counter{}, false, false
	}
	if upd == nil {
		return counter{}, false, true
	}
	if sel == nil || !sameKeys(sh.C, sel.Where, upd.Where) {
		return counter{}, false, false
	}
	v := sel.Vars[indexOf(sel.Fields, sh.cf.Field)]
	if !isIncrement(setExpr(upd, sh.cf.Field), v, t) {
		return counter{}, false, false
	}
	return counter{t: t, v: v, keys: keyEqs(sh.C, sel.Where)}, true, true
}

// counterStmts finds t's top-level SELECT of C.f and its UPDATE of C.f;
// false when f is read or set twice, the UPDATE is nested, or t inserts into
// or deletes from C.
func (sh *counterShape) counterStmts(t *Txn) (sel *Select, upd *Update, ok bool) {
	for _, st := range t.stmts {
		if writesRows(st, sh.C) {
			return nil, nil, false
		}
		switch st := st.(type) {
		case *Select:
			if n := sh.countReads(st); n > 0 {
				if sel != nil || n > 1 {
					return nil, nil, false
				}
				sel = st
			}
		case *Update:
			if n := sh.countSets(st); n > 0 {
				if upd != nil || n > 1 || !topLevel(st.ctx) {
					return nil, nil, false
				}
				upd = st
			}
		}
	}
	return sel, upd, true
}

// countReads is how often st, if a top-level field SELECT of C, lists f.
func (sh *counterShape) countReads(st *Select) int {
	if st.ctx.table != sh.C || st.Kind != SelectFields || !topLevel(st.ctx) {
		return 0
	}
	n := 0
	for _, f := range st.Fields {
		if f == sh.cf.Field {
			n++
		}
	}
	return n
}

// countSets is how often st, if an UPDATE of C, sets f.
func (sh *counterShape) countSets(st *Update) int {
	if st.ctx.table != sh.C {
		return 0
	}
	n := 0
	for _, a := range st.Sets {
		if a.Field == sh.cf.Field {
			n++
		}
	}
	return n
}

// insertsFromCounters reports whether every INSERT into T is at the top level
// of a counter's transaction, with kf = v and the premise's keys of T equal to
// the counter's keys of C.
func (sh *counterShape) insertsFromCounters(txns []*Txn, counters []counter) bool {
	counterOf := map[*Txn]counter{}
	for _, c := range counters {
		counterOf[c.t] = c
	}
	for _, t := range txns {
		for _, st := range t.stmts {
			in, ok := st.(*Insert)
			if !ok || in.ctx.table != sh.T {
				continue
			}
			c, ok := counterOf[t]
			if !ok || !topLevel(in.ctx) || !sh.insertsFrom(in, c) {
				return false
			}
		}
	}
	return true
}

// insertsFrom reports whether in sets kf to the counter's v and each linked
// key of T to the expression of the counter's C key, free of fields.
func (sh *counterShape) insertsFrom(in *Insert, c counter) bool {
	vals := map[string]Expr{}
	for _, a := range in.Values {
		vals[a.Field] = a.Expr
	}
	if r, ok := vals[sh.nf.Field].(*Ref); !ok || r.field || r.Name != c.v {
		return false
	}
	for ck, tk := range sh.link {
		if exprString(vals[tk]) != exprString(c.keys[ck]) || mentionsField(vals[tk]) {
			return false
		}
	}
	return true
}

// invariant is the counter's axiom: a row r of T live in the snapshot of t,
// in the row of C that instance n of the counter's transaction addresses,
// has r.kf < n's v unless t sees n.
func (sh *counterShape) invariant(c counter) smtlib.Term {
	T, C := sh.T, sh.C
	r := smtlib.Var{Name: "r", Sort: sortR(T)}
	t, n := smtlib.Var{Name: "t", Sort: "T"}, smtlib.Var{Name: "n", Sort: "T"}
	en := env{txn: c.t, t: n.Ref(), iters: map[*Foreach]smtlib.Term{}}
	v, vn, _ := en.val(&Ref{Name: c.v})
	prem := []smtlib.Term{smtlib.App(aliveSym(T), r.Ref(), t.Ref()), isType(n.Ref(), c.t), smtlib.Not(vn)}
	for _, k := range keyFields(C) {
		x, xn, _ := en.val(c.keys[k.Name])
		prem = append(prem, smtlib.Not(xn), smtlib.Eq(smtlib.App(fieldCtor(T, sh.link[k.Name]), r.Ref()), x))
	}
	prem = append(prem, smtlib.Not(smtlib.App("vis", n.Ref(), t.Ref())))
	return smtlib.Forall([]smtlib.Var{r, t, n}, smtlib.Pattern(
		smtlib.Implies(smtlib.And(prem...), smtlib.App("<", smtlib.App(fieldCtor(T, sh.nf.Field), r.Ref()), v)),
		smtlib.App(aliveSym(T), r.Ref(), t.Ref()), v))
}

// topLevel reports whether a statement is outside every loop and branch.
func topLevel(c *stmtCtx) bool { return len(c.loops) == 0 && len(c.path) == 0 }

// setExpr is the expression an UPDATE assigns to field f (the last, if
// several).
func setExpr(upd *Update, f string) Expr {
	var x Expr
	for _, a := range upd.Sets {
		if a.Field == f {
			x = a.Expr
		}
	}
	return x
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// sameKeys reports whether two WHERE clauses on C are both exactly
// conjunctions of key equalities fixing the same expressions.
func sameKeys(C *Table, w1, w2 Cond) bool {
	k1, k2 := keyEqs(C, w1), keyEqs(C, w2)
	if len(k1) != len(keyFields(C)) || len(k2) != len(keyFields(C)) || !onlyKeyEqs(w1) || !onlyKeyEqs(w2) {
		return false
	}
	for k, x := range k1 {
		if exprString(x) != exprString(k2[k]) {
			return false
		}
	}
	return true
}

func onlyKeyEqs(c Cond) bool {
	switch c := c.(type) {
	case *Logic:
		return c.And && onlyKeyEqs(c.L) && onlyKeyEqs(c.R)
	case *Cmp:
		return c.Op == "="
	}
	return false
}

// isIncrement reports whether x is v + 1 (or 1 + v) for the variable v of t.
func isIncrement(x Expr, v string, t *Txn) bool {
	b, ok := x.(*Binary)
	if !ok || b.Op != "+" {
		return false
	}
	return (isIntVar(b.L, v, t) && isOne(b.R)) || (isOne(b.L) && isIntVar(b.R, v, t))
}

// isIntVar reports whether x is the integer variable v of t.
func isIntVar(x Expr, v string, t *Txn) bool {
	r, ok := x.(*Ref)
	return ok && !r.field && r.Name == v && t.vars[v].kind == varInt
}

// isOne reports whether x is the literal 1.
func isOne(x Expr) bool {
	l, ok := x.(*IntLit)
	return ok && l.V == 1
}

// builtinModel reports whether m is one of the named built-in models, axiom
// for axiom (a model file that happens to have such a name is not trusted).
func builtinModel(m Model, names ...string) bool {
	for _, name := range names {
		b, ok := LookupModel(name)
		if !ok || m.Name != name || len(m.Axioms) != len(b.Axioms) {
			continue
		}
		same := true
		for i, ax := range b.Axioms {
			same = same && ax.String() == m.Axioms[i].String()
		}
		if same {
			return true
		}
	}
	return false
}

// addBoundedFacts adds the unbounded liveness facts and counter invariants
// to a bounded query over the instances domain: every instance is named,
// and every Skolem instance is one of them (the query's executions have
// exactly those instances). Used by tests only, to check that the facts
// keep the real anomalies the bounded queries find: a fact that excluded a
// replay-confirmed execution would be unsound.
func (e *Encoding) addBoundedFacts(s *smtlib.Script, domain []smtlib.Term) {
	for _, c := range e.unbounded {
		if c.Head() == "declare-fun" {
			s.Add(c)
		}
	}
	for _, c := range e.unbounded {
		if c.Head() != "assert" {
			continue
		}
		s.Assert(c.Elems()[1])
	}
	if e.namesInstances {
		x := smtlib.Var{Name: "x", Sort: "T"}
		s.Assert(smtlib.Forall([]smtlib.Var{x}, smtlib.App(namedSym, x.Ref())))
	}
	// Skolem functions returning T are closed over the domain.
	for _, d := range e.unbounded {
		if el := d.Elems(); d.Head() == "declare-fun" && el[3].String() == "T" {
			s.Assert(closedOver(el[1].String(), el[2].Elems(), domain))
		}
	}
}

// closedOver is "every value of the function fn, of the argument sorts, is
// one of domain".
func closedOver(fn string, sorts, domain []smtlib.Term) smtlib.Term {
	var vs []smtlib.Var
	var args []smtlib.Term
	for i, sort := range sorts {
		v := smtlib.Var{Name: "s" + strconv.Itoa(i), Sort: sort.String()}
		vs = append(vs, v)
		args = append(args, v.Ref())
	}
	var in []smtlib.Term
	for _, x := range domain {
		in = append(in, smtlib.Eq(smtlib.App(fn, args...), x))
	}
	return smtlib.Forall(vs, smtlib.Or(in...))
}
