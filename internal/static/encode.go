package static

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/isovet/isovet/internal/smtlib"
)

// EncodeOptions configure [Encode]. The zero value is usable: all
// transactions, no consistency axiom (EC), and an arbitrary initial database.
type EncodeOptions struct {
	// Model holds the consistency axioms, see [LookupModel] and [ParseModel].
	Model Model
	// Txns restricts the encoding to these transaction programs (nil: all).
	Txns []string
	// EmptyInitialDB makes every table empty initially, so a live row must
	// have been inserted by a visible transaction (the paper's φ_INSERT, in its
	// sound form). By default rows may exist initially (§5.6 pitfall 1).
	EmptyInitialDB bool
	// IgnoreAssumptions drops the program's ASSUME INITIALLY declarations.
	IgnoreAssumptions bool
	_                 struct{}
}

// Encoding is φ_{T,Ψ}: the preamble shared by every query over one program,
// model and transaction subset. It is immutable once built.
type Encoding struct {
	prog     *Program
	txns     []*Txn
	opts     EncodeOptions
	preamble *smtlib.Script
	fresh    int
	frames   []frame
	// never holds "REL.Table Table.field" for the record-level dependencies no
	// pair of statements can cause.
	never map[string]bool
	// unbounded holds the declarations and axioms added to the unbounded
	// queries only (liveness.go); counterAssumes the assumptions the
	// counter invariants among them rest on.
	unbounded      []smtlib.Term
	counterAssumes []*Assume
	namesInstances bool // the unbounded facts use the named mark
	// factsInBounded adds the unbounded facts to the bounded query, closed
	// over its instances (tests only: a check that they keep every real
	// anomaly, see addBoundedFacts).
	factsInBounded bool
}

// finish expands the quantifiers over each table's field datatype into its
// constructors (an equivalence: a datatype of nullary constructors has no
// other elements) and simplifies: constructor equations are decided, and
// record-level dependencies no statement pair can cause (e.never, whose
// necessary condition is an empty disjunction) are replaced by false. That
// substitution keeps satisfiability and models: the formula without the
// emptiness axiom no longer mentions those atoms, so they can be false.
// eachFieldSelect calls fn for every SELECT of fields from tb outside any loop, with its
// transaction.
func (e *Encoding) eachFieldSelect(tb *Table, fn func(*Txn, *Select)) {
	for _, t := range e.txns {
		for _, st := range t.stmts {
			if s, ok := st.(*Select); ok && s.Kind == SelectFields && s.ctx.table == tb && len(s.ctx.loops) == 0 {
				fn(t, s)
			}
		}
	}
}

func (e *Encoding) finish(s *smtlib.Script) *smtlib.Script { return s.MapAsserts(e.finishTerm) }

func (e *Encoding) finishTerm(t smtlib.Term) smtlib.Term {
	for _, tb := range e.tables() {
		var dom []smtlib.Term
		for _, c := range fieldCtors(tb) {
			dom = append(dom, smtlib.Sym(c))
		}
		t = smtlib.Expand(t, sortF(tb), dom)
	}
	return smtlib.Simplify(t, e.fieldFacts())
}

// fieldFacts returns the evaluator finishTerm simplifies with: two field
// constructors are equal only when they are the same, and a record-level
// dependency on a field the encoding never relates (e.never) is false.
func (e *Encoding) fieldFacts() func(smtlib.Term) (bool, bool) {
	ctors := map[string]bool{}
	for _, tb := range e.tables() {
		for _, c := range fieldCtors(tb) {
			ctors[c] = true
		}
	}
	return func(t smtlib.Term) (bool, bool) {
		el := t.Elems()
		switch {
		case t.Head() == "=" && len(el) == 3 && ctors[el[1].Atom()] && ctors[el[2].Atom()]:
			return el[1].Atom() == el[2].Atom(), true
		case len(el) == 5 && e.never[t.Head()+" "+el[2].Atom()]:
			return false, true
		}
		return false, false
	}
}

// fieldCtors names the constructors of tb's field datatype: Alive's first,
// then the non-key fields'.
func fieldCtors(tb *Table) []string {
	out := []string{fieldCtor(tb, "")}
	for _, f := range nonKey(tb) {
		out = append(out, fieldCtor(tb, f))
	}
	return out
}

// exclusive reports whether two statements can never both run in one
// instance: they sit in opposite branches of one IF.
func exclusive(p, q *stmtCtx) bool {
	for _, a := range p.path {
		for _, b := range q.path {
			if a.c == b.c && a.depth == 0 && b.depth == 0 && a.pos != b.pos {
				return true
			}
		}
	}
	return false
}

// writtenValueAxioms: a field SELECT outside loops that reads field f of a
// live row from writer w (a record-level WR) reads the value w wrote, when w
// wrote it with one statement outside loops whose value the encoding models
// (an expression over variables, parameters and constants; INSERT's default
// 0) and no other statement of w's program that can run with it writes f of
// that table. Every real execution satisfies it (a read returns its source's
// final value, and that statement's write is the only one), so it excludes
// only spurious models; all premises on rows are under-approximations.
func (e *Encoding) writtenValueAxioms() []smtlib.Term {
	var out []smtlib.Term
	for _, tb := range e.tables() {
		for _, f := range nonKey(tb) {
			ws := e.soleValueWriters(tb, f)
			if len(ws) == 0 {
				continue
			}
			e.eachFieldSelect(tb, func(t *Txn, s *Select) {
				for i, sf := range s.Fields {
					if sf != f {
						continue
					}
					for _, w := range ws {
						out = append(out, e.writtenValueAxiom(tb, f, w, t, s, s.Vars[i]))
					}
				}
			})
		}
	}
	return out
}

// valueWriter is a statement writing field f of table tb whose value the
// encoding models.
type valueWriter struct {
	t     *Txn
	ctx   *stmtCtx
	x     Expr
	alive bool // UPDATE: writes only live rows
	where Cond
	ins   *Insert
}

// soleValueWriters are, over the selected transactions, the statements
// outside loops that write f of tb with a modelled value (an UPDATE with an
// exact WHERE, or an INSERT) and no other statement of their program that
// can run with them writes f of tb.
func (e *Encoding) soleValueWriters(tb *Table, f string) []valueWriter {
	var ws []valueWriter
	for _, t := range e.txns {
		all, cands := valueWriters(t, tb, f)
		for _, c := range cands {
			if runsAlone(c.ctx, all) {
				ws = append(ws, c)
			}
		}
	}
	return ws
}

// valueWriters returns the contexts of all of t's writes of f of tb, and the
// candidates among them: outside loops, with an exact WHERE (UPDATE) and a
// value that mentions no field.
func valueWriters(t *Txn, tb *Table, f string) (all []*stmtCtx, cands []valueWriter) {
	for _, st := range t.stmts {
		switch st := st.(type) {
		case *Update:
			if st.ctx.table == tb {
				all, cands = updateWriters(t, st, f, all, cands)
			}
		case *Insert:
			if st.ctx.table == tb {
				all = append(all, st.ctx)
				x := insertedValue(st, f)
				if len(st.ctx.loops) == 0 && !mentionsField(x) {
					cands = append(cands, valueWriter{t: t, ctx: st.ctx, x: x, ins: st})
				}
			}
		}
	}
	return all, cands
}

// updateWriters adds to all and cands (as valueWriters does) each SET of f
// in the UPDATE st of t.
func updateWriters(t *Txn, st *Update, f string, all []*stmtCtx, cands []valueWriter) ([]*stmtCtx, []valueWriter) {
	for _, a := range st.Sets {
		if a.Field != f {
			continue
		}
		all = append(all, st.ctx)
		if len(st.ctx.loops) == 0 && exactCond(st.Where) && !mentionsField(a.Expr) {
			cands = append(cands, valueWriter{t: t, ctx: st.ctx, x: a.Expr, alive: true, where: st.Where})
		}
	}
	return all, cands
}

// insertedValue is the value an INSERT gives field f (the last, if given
// twice; 0 if not given).
func insertedValue(in *Insert, f string) Expr {
	var x Expr = &IntLit{}
	for _, a := range in.Values {
		if a.Field == f {
			x = a.Expr
		}
	}
	return x
}

// runsAlone reports whether every write in all is the one at ctx or
// excludes it.
func runsAlone(ctx *stmtCtx, all []*stmtCtx) bool {
	alone := true
	for _, o := range all {
		alone = alone && (o == ctx || exclusive(o, ctx))
	}
	return alone
}

// writtenValueAxiom: the SELECT s of t reading f into v from a live row r
// whose WR source for f is an instance of w's program reads w's value.
func (e *Encoding) writtenValueAxiom(tb *Table, f string, w valueWriter, t *Txn, s *Select, v string) smtlib.Term {
	r := smtlib.Var{Name: "r", Sort: sortR(tb)}
	a, b := smtlib.Var{Name: "a", Sort: "T"}, smtlib.Var{Name: "b", Sort: "T"}
	_, enw, lw := e.exec(w.ctx, a.Ref())
	_, enr, lr := e.exec(s.ctx, b.Ref())
	wv, wn, _ := enw.val(w.x)
	rv, rn, _ := enr.val(&Ref{Name: v})
	var wrow smtlib.Term
	if w.ins != nil {
		wrow = accesses(w.ins)[0].row(enw, r.Ref(), false)
	} else {
		wrow = smtlib.And(enw.withRow(tb, r.Ref()).cond(w.where, false), smtlib.App(aliveSym(tb), r.Ref(), a.Ref()))
	}
	prem := smtlib.And(
		isType(a.Ref(), w.t),
		isType(b.Ref(), t),
		lw, wrow, smtlib.Not(wn),
		lr, enr.withRow(tb, r.Ref()).cond(s.Where, false), smtlib.App(aliveSym(tb), r.Ref(), b.Ref()),
		smtlib.App(relSym("WR", tb), r.Ref(), smtlib.Sym(fieldCtor(tb, f)), a.Ref(), b.Ref()))
	return smtlib.Forall([]smtlib.Var{r, a, b},
		smtlib.Implies(prem, smtlib.And(smtlib.Not(rn), smtlib.Eq(rv, wv))))
}

// valueAxioms: two field SELECTs outside loops that read the same field of
// the same live row from the same writers (the same WR sources among the
// given instances, or none: the initial value) read the same value. Each
// transaction leaves one final value per field of a row, and a read returns
// the final value of its last visible writer, so this holds in every real
// execution; in a model it ties the read values the encoding otherwise leaves
// free (non-key values are not modelled). WR sources are expanded over
// domain, so the axiom is only used in queries whose domain is exactly those
// instances ([Encoding.Execution]). Both premises on the rows are
// under-approximations (the WHERE clauses of field SELECTs fix the key, so
// they are exact), which keeps the axiom true in every real execution.
func (e *Encoding) valueAxioms(domain []smtlib.Term) []smtlib.Term {
	var out []smtlib.Term
	for _, tb := range e.tables() {
		byField := map[string][]fieldRead{}
		e.eachFieldSelect(tb, func(t *Txn, s *Select) {
			for i, f := range s.Fields {
				if !field(tb, f).Key {
					byField[f] = append(byField[f], fieldRead{t, s, i})
				}
			}
		})
		for _, f := range nonKey(tb) {
			ss := byField[f]
			for i, s1 := range ss {
				for _, s2 := range ss[i:] {
					out = append(out, e.sameValueAxiom(tb, f, s1, s2, domain))
				}
			}
		}
	}
	return out
}

// fieldRead is the i-th field the SELECT s of t reads.
type fieldRead struct {
	t *Txn
	s *Select
	i int
}

// sameValueAxiom: reads s1 (by instance a) and s2 (by instance b) of field
// f of the same live row r, both non-NULL, with the same WR source in
// domain, read the same value.
func (e *Encoding) sameValueAxiom(tb *Table, f string, s1, s2 fieldRead, domain []smtlib.Term) smtlib.Term {
	r := smtlib.Var{Name: "r", Sort: sortR(tb)}
	a, b := smtlib.Var{Name: "a", Sort: "T"}, smtlib.Var{Name: "b", Sort: "T"}
	_, en1, l1 := e.exec(s1.s.ctx, a.Ref())
	_, en2, l2 := e.exec(s2.s.ctx, b.Ref())
	v1, n1, _ := en1.val(&Ref{Name: s1.s.Vars[s1.i]})
	v2, n2, _ := en2.val(&Ref{Name: s2.s.Vars[s2.i]})
	prem := []smtlib.Term{
		isType(a.Ref(), s1.t),
		isType(b.Ref(), s2.t),
		l1, l2,
		en1.withRow(tb, r.Ref()).cond(s1.s.Where, false),
		en2.withRow(tb, r.Ref()).cond(s2.s.Where, false),
		smtlib.App(aliveSym(tb), r.Ref(), a.Ref()), smtlib.App(aliveSym(tb), r.Ref(), b.Ref()),
		smtlib.Not(n1), smtlib.Not(n2),
	}
	for _, w := range domain {
		wr := func(x smtlib.Var) smtlib.Term {
			return smtlib.App(relSym("WR", tb), r.Ref(), smtlib.Sym(fieldCtor(tb, f)), w, x.Ref())
		}
		prem = append(prem, smtlib.Eq(wr(a), wr(b)))
	}
	return smtlib.Forall([]smtlib.Var{r, a, b}, smtlib.Implies(smtlib.And(prem...), smtlib.Eq(v1, v2)))
}

// frame is a table whose rows' liveness can change; see frameAxiom.
type frame struct {
	tb  *Table
	acc map[*Txn][]access
}

// frameAxiom: liveness of a row differs between two snapshots only if some
// writer of the row's Alive is visible to exactly one of them. The
// existential writer is expanded over the given instances, so the axiom is
// only used in queries whose domain is exactly those instances ([Encoding.Execution]).
func (e *Encoding) frameAxiom(f frame, domain []smtlib.Term) smtlib.Term {
	tb := f.tb
	r := smtlib.Var{Name: "r", Sort: sortR(tb)}
	a, b := smtlib.Var{Name: "a", Sort: "T"}, smtlib.Var{Name: "b", Sort: "T"}
	var disj []smtlib.Term
	for _, w := range domain {
		var writes []smtlib.Term
		for _, t := range e.txns {
			for _, x := range f.acc[t] {
				if x.write && x.field == "" {
					vs, en, lam := e.exec(x.ctx, w)
					writes = append(writes, smtlib.And(isType(w, t),
						smtlib.Exists(vs, smtlib.And(lam, x.row(en, r.Ref(), true)))))
				}
			}
		}
		disj = append(disj, smtlib.And(
			smtlib.Not(smtlib.Eq(smtlib.App("vis", w, a.Ref()), smtlib.App("vis", w, b.Ref()))),
			smtlib.Or(writes...)))
	}
	return smtlib.Forall([]smtlib.Var{r, a, b}, smtlib.Implies(
		smtlib.And(smtlib.App(aliveSym(tb), r.Ref(), a.Ref()), smtlib.Not(smtlib.App(aliveSym(tb), r.Ref(), b.Ref()))),
		smtlib.Or(disj...)))
}

var relNames = []string{"WR", "WW", "RW"}

// selected returns the transactions of prog that names lists, in program
// order; all of them when names is nil.
func selected(prog *Program, names []string) []*Txn {
	var out []*Txn
	for _, t := range prog.Txns {
		if names == nil || slices.Contains(names, t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// Encode builds the encoding of prog under opts.
func Encode(prog *Program, opts EncodeOptions) (*Encoding, error) {
	e := &Encoding{prog: prog, opts: opts, txns: selected(prog, opts.Txns)}
	if len(e.txns) == 0 {
		return nil, fmt.Errorf("static: no transactions selected")
	}
	e.never = map[string]bool{}
	e.preamble = e.finish(e.build())
	decls, axioms := e.livenessAxioms()
	e.namesInstances = len(decls) > 0
	counters, used := e.counterAxioms()
	e.counterAssumes = used
	e.unbounded = decls
	for _, ax := range append(axioms, counters...) {
		e.unbounded = append(e.unbounded, smtlib.Cmd("assert", e.finishTerm(ax)))
	}
	return e, nil
}

// Preamble returns the shared part of every query (declarations and axioms).
func (e *Encoding) Preamble() *smtlib.Script { return e.preamble.Clone() }

// symbols
func sortR(t *Table) string { return "R." + t.Name }
func sortF(t *Table) string { return "F." + t.Name }
func tyCtor(t *Txn) string  { return "ty." + t.Name }
func fieldCtor(t *Table, f string) string {
	if f == "" {
		return t.Name + ".Alive"
	}
	return t.Name + "." + f
}
func paramSym(t *Txn, p string) string { return t.Name + "." + p }
func varSym(t *Txn, v string) string   { return t.Name + "." + v }
func aliveSym(t *Table) string         { return "alive." + t.Name }
func relSym(rel string, t *Table) string {
	return rel + "." + t.Name
}

var (
	sT  = smtlib.Sym("T")
	sTy = smtlib.Sym("Ty")
	sI  = smtlib.Sym("Int")
	sB  = smtlib.Sym("Bool")
)

func (e *Encoding) freshVar(prefix, sort string) smtlib.Var {
	e.fresh++
	return smtlib.Var{Name: prefix + strconv.Itoa(e.fresh), Sort: sort}
}

func nonKey(t *Table) []string {
	var out []string
	for _, f := range t.Fields {
		if !f.Key {
			out = append(out, f.Name)
		}
	}
	return out
}

// tables used by the selected transactions, in declaration order.
func (e *Encoding) tables() []*Table {
	used := map[string]bool{}
	for _, t := range e.txns {
		for _, s := range t.stmts {
			if ctx := stmtContext(s); ctx != nil && ctx.table != nil {
				used[ctx.table.Name] = true
			}
		}
	}
	var out []*Table
	for _, t := range e.prog.Tables {
		if used[t.Name] {
			out = append(out, t)
		}
	}
	return out
}

func stmtContext(s Stmt) *stmtCtx {
	switch s := s.(type) {
	case *Select:
		return s.ctx
	case *Update:
		return s.ctx
	case *Insert:
		return s.ctx
	case *Delete:
		return s.ctx
	case *Let:
		return s.ctx
	}
	return nil
}

func declFun(name string, args []smtlib.Term, ret smtlib.Term) smtlib.Term {
	return smtlib.Cmd("declare-fun", smtlib.Sym(name), smtlib.List(args...), ret)
}

// loopSorts returns the record sorts of the given loops' iterators.
func loopSorts(txn *Txn, loops []*Foreach) []smtlib.Term {
	out := make([]smtlib.Term, len(loops))
	for i, l := range loops {
		out[i] = smtlib.Sym(sortR(txn.vars[l.Iter].table))
	}
	return out
}

func (e *Encoding) build() *smtlib.Script {
	s := &smtlib.Script{}
	s.Comment(fmt.Sprintf("isovet static encoding; model %s; transactions %s", e.opts.Model.Name, e.txnNames()))
	s.Add(smtlib.Cmd("set-logic", smtlib.Sym("ALL")))
	s.Add(smtlib.Cmd("declare-sort", sT, smtlib.Sym("0")))
	// Every program gets a constructor, so model files may name them all;
	// excluded programs have no instances (asserted below).
	var ctors []smtlib.Term
	for _, t := range e.prog.Txns {
		ctors = append(ctors, smtlib.List(smtlib.Sym(tyCtor(t))))
	}
	s.Add(smtlib.Cmd("declare-datatypes", smtlib.List(smtlib.List(sTy, smtlib.Sym("0"))), smtlib.List(smtlib.List(ctors...))))
	tables := e.tables()
	for _, tb := range tables {
		declareTable(s, tb)
	}
	s.Add(declFun("typ", []smtlib.Term{sT}, sTy))
	for _, rel := range append([]string{"vis", "ar"}, relNames...) {
		s.Add(declFun(rel, []smtlib.Term{sT, sT}, sB))
	}
	for _, t := range e.txns {
		declareTxn(s, t)
	}
	e.axioms(s, tables)
	return s
}

// axioms asserts the axioms of the preamble: the basic ones, the
// record-level dependencies, each table's and transaction's, the empty
// initial database if asked, and the consistency model's.
func (e *Encoding) axioms(s *smtlib.Script, tables []*Table) {
	e.basicAxioms(s)
	s.Comment("a dependency between instances is a dependency on some row and field")
	for _, rel := range relNames {
		s.Assert(recordLevel(rel, tables))
	}
	for _, tb := range tables {
		e.tableAxioms(s, tb)
	}
	for _, t := range e.txns {
		e.auxAxioms(s, t)
	}
	if e.opts.EmptyInitialDB {
		for _, tb := range tables {
			e.insertAxiom(s, tb)
		}
	}
	if len(e.opts.Model.Axioms) > 0 {
		s.Comment("consistency model " + e.opts.Model.Name)
		for _, ax := range e.opts.Model.Axioms {
			s.Assert(ax)
		}
	}
}

// declareTable declares a table's record sort, field datatype, key fields,
// liveness and record-level dependencies.
func declareTable(s *smtlib.Script, tb *Table) {
	s.Add(smtlib.Cmd("declare-sort", smtlib.Sym(sortR(tb)), smtlib.Sym("0")))
	var fs []smtlib.Term
	for _, c := range fieldCtors(tb) {
		fs = append(fs, smtlib.List(smtlib.Sym(c)))
	}
	s.Add(smtlib.Cmd("declare-datatypes", smtlib.List(smtlib.List(smtlib.Sym(sortF(tb)), smtlib.Sym("0"))), smtlib.List(smtlib.List(fs...))))
	for _, f := range keyFields(tb) {
		s.Add(declFun(fieldCtor(tb, f.Name), []smtlib.Term{smtlib.Sym(sortR(tb))}, sI))
	}
	s.Add(declFun(aliveSym(tb), []smtlib.Term{smtlib.Sym(sortR(tb)), sT}, sB))
	for _, rel := range relNames {
		s.Add(declFun(relSym(rel, tb), []smtlib.Term{smtlib.Sym(sortR(tb)), smtlib.Sym(sortF(tb)), sT, sT}, sB))
	}
}

// declareTxn declares a transaction's parameters and local variables.
func declareTxn(s *smtlib.Script, t *Txn) {
	for _, p := range t.Params {
		s.Add(declFun(paramSym(t, p), []smtlib.Term{sT}, sI))
	}
	for _, name := range sortedVars(t) {
		v := t.vars[name]
		args := append(loopSorts(t, v.loops), sT)
		switch v.kind {
		case varInt:
			s.Add(declFun(varSym(t, name), args, sI), declFun(varSym(t, name)+".null", args, sB))
		case varRows:
			args = append(loopSorts(t, v.loops), smtlib.Sym(sortR(v.table)), sT)
			s.Add(declFun(varSym(t, name), args, sB))
		case varIter:
			for _, f := range nonKey(v.table) {
				s.Add(declFun(varSym(t, name)+"."+f, args, sI))
			}
		}
	}
}

// basicAxioms defines D and asserts that only the selected transactions
// run, that ar is a strict total order, vis ⊆ ar, and Lemma 4.
func (e *Encoding) basicAxioms(s *smtlib.Script) {
	a, b, c := smtlib.Var{Name: "a", Sort: "T"}, smtlib.Var{Name: "b", Sort: "T"}, smtlib.Var{Name: "c", Sort: "T"}
	A, B, C := a.Ref(), b.Ref(), c.Ref()
	s.Add(smtlib.Cmd("define-fun", smtlib.Sym("D"), smtlib.List(smtlib.List(A, sT), smtlib.List(B, sT)), sB,
		smtlib.Or(smtlib.Eq(A, B), smtlib.App("WR", A, B), smtlib.App("WW", A, B), smtlib.App("RW", A, B))))

	if len(e.txns) < len(e.prog.Txns) {
		tv := smtlib.Var{Name: "t", Sort: "T"}
		var is []smtlib.Term
		for _, t := range e.txns {
			is = append(is, isType(tv.Ref(), t))
		}
		s.Comment("only the selected transactions run")
		s.Assert(smtlib.Forall([]smtlib.Var{tv}, smtlib.Or(is...)))
	}
	s.Comment("basic: ar is a strict total order, vis ⊆ ar, Lemma 4")
	s.Assert(smtlib.Forall([]smtlib.Var{a}, smtlib.Not(smtlib.App("ar", A, A))))
	s.Assert(smtlib.Forall([]smtlib.Var{a, b, c}, smtlib.Implies(smtlib.And(smtlib.App("ar", A, B), smtlib.App("ar", B, C)), smtlib.App("ar", A, C))))
	s.Assert(smtlib.Forall([]smtlib.Var{a, b}, smtlib.Implies(smtlib.Not(smtlib.Eq(A, B)), smtlib.Or(smtlib.App("ar", A, B), smtlib.App("ar", B, A)))))
	s.Assert(smtlib.Forall([]smtlib.Var{a, b}, smtlib.And(
		smtlib.Implies(smtlib.App("vis", A, B), smtlib.App("ar", A, B)),
		smtlib.Implies(smtlib.App("WR", A, B), smtlib.App("vis", A, B)),
		smtlib.Implies(smtlib.App("WW", A, B), smtlib.App("ar", A, B)),
		smtlib.Implies(smtlib.App("RW", A, B), smtlib.Not(smtlib.App("vis", B, A))))))
}

// recordLevel: a dependency rel between instances is a dependency rel on
// some row and field of some table.
func recordLevel(rel string, tables []*Table) smtlib.Term {
	a, b := smtlib.Var{Name: "a", Sort: "T"}, smtlib.Var{Name: "b", Sort: "T"}
	var disj []smtlib.Term
	for _, tb := range tables {
		r := smtlib.Var{Name: "r", Sort: sortR(tb)}
		f := smtlib.Var{Name: "f", Sort: sortF(tb)}
		disj = append(disj, smtlib.Exists([]smtlib.Var{r, f}, smtlib.App(relSym(rel, tb), r.Ref(), f.Ref(), a.Ref(), b.Ref())))
	}
	return smtlib.Forall([]smtlib.Var{a, b}, smtlib.Implies(smtlib.App(rel, a.Ref(), b.Ref()), smtlib.Or(disj...)))
}

func (e *Encoding) txnNames() string {
	var names []string
	for _, t := range e.txns {
		names = append(names, t.Name)
	}
	return fmt.Sprint(names)
}

func sortedVars(t *Txn) []string {
	var names []string
	for n, v := range t.vars {
		if v.kind != varParam {
			names = append(names, n)
		}
	}
	slices.SortFunc(names, func(a, b string) int { return t.vars[a].order - t.vars[b].order })
	return names
}

// env is the evaluation environment of one transaction instance.
type env struct {
	txn   *Txn
	t     smtlib.Term
	iters map[*Foreach]smtlib.Term
	table *Table      // the statement's table, for bare field names
	row   smtlib.Term // the row those names refer to
}

func (en env) withRow(tb *Table, r smtlib.Term) env {
	en.table, en.row = tb, r
	return en
}

// val encodes an expression as (value, is-null); ok is false when it reads a
// non-key field of the statement's row (a value the encoding does not model).
func (en env) val(x Expr) (v, null smtlib.Term, ok bool) {
	switch x := x.(type) {
	case *IntLit:
		return smtlib.Int(x.V), smtlib.False, true
	case *Ref:
		return en.ref(x)
	case *FieldOf:
		return en.fieldOf(x), smtlib.False, true
	case *Binary:
		l, ln, ok1 := en.val(x.L)
		r, rn, ok2 := en.val(x.R)
		if !ok1 || !ok2 {
			return smtlib.Term{}, smtlib.Term{}, false
		}
		return smtlib.App(x.Op, l, r), smtlib.Or(ln, rn), true
	case *Neg:
		v, n, ok := en.val(x.X)
		if !ok {
			return v, n, false
		}
		return smtlib.App("-", v), n, true
	}
	panic(fmt.Sprintf("static: unknown expression %T", x))
}

// ref encodes a name: a key field of the statement's row (a non-key one is
// not modelled: ok is false), a parameter or a variable with its null flag.
func (en env) ref(x *Ref) (v, null smtlib.Term, ok bool) {
	if x.field {
		f := field(en.table, x.Name)
		if !f.Key {
			return smtlib.Term{}, smtlib.Term{}, false
		}
		return smtlib.App(fieldCtor(en.table, x.Name), en.row), smtlib.False, true
	}
	vi := en.txn.vars[x.Name]
	if vi.kind == varParam {
		return smtlib.App(paramSym(en.txn, x.Name), en.t), smtlib.False, true
	}
	args := en.loopArgs(vi.loops)
	return smtlib.App(varSym(en.txn, x.Name), args...), smtlib.App(varSym(en.txn, x.Name)+".null", args...), true
}

// fieldOf encodes iter.f, a field of the current row of a FOREACH loop
// (never NULL): the key itself, or the value the loop reads.
func (en env) fieldOf(x *FieldOf) smtlib.Term {
	vi := en.txn.vars[x.Iter]
	it := en.iters[vi.loops[len(vi.loops)-1]]
	if field(vi.table, x.Field).Key {
		return smtlib.App(fieldCtor(vi.table, x.Field), it)
	}
	return smtlib.App(varSym(en.txn, x.Iter)+"."+x.Field, en.loopArgs(vi.loops)...)
}

func (en env) loopArgs(loops []*Foreach) []smtlib.Term {
	args := make([]smtlib.Term, 0, len(loops)+1)
	for _, l := range loops {
		args = append(args, en.iters[l])
	}
	return append(args, en.t)
}

// cond encodes a condition. Comparisons the encoding cannot evaluate (on
// non-key fields) become true when over is set and false otherwise, so the
// result over- or under-approximates the condition; negation flips the
// direction (this is the sound form of Fig. 8, see §5.7 of the digest).
func (en env) cond(c Cond, over bool) smtlib.Term {
	switch c := c.(type) {
	case *BoolLit:
		return smtlib.Bool(c.V)
	case *Cmp:
		l, ln, ok1 := en.val(c.L)
		r, rn, ok2 := en.val(c.R)
		if !ok1 || !ok2 {
			return smtlib.Bool(over)
		}
		return smtlib.And(smtlib.Not(ln), smtlib.Not(rn), cmpTerm(c.Op, l, r))
	case *IsNull:
		_, n, _ := en.val(&Ref{Name: c.Var})
		if c.Negated {
			return smtlib.Not(n)
		}
		return n
	case *Not:
		return smtlib.Not(en.cond(c.C, !over))
	case *Logic:
		if c.And {
			return smtlib.And(en.cond(c.L, over), en.cond(c.R, over))
		}
		return smtlib.Or(en.cond(c.L, over), en.cond(c.R, over))
	}
	panic(fmt.Sprintf("static: unknown condition %T", c))
}

// cmpTerm is the comparison l op r, with <> as the negated equation.
func cmpTerm(op string, l, r smtlib.Term) smtlib.Term {
	if op == "<>" {
		return smtlib.Not(smtlib.Eq(l, r))
	}
	return smtlib.App(op, l, r)
}

// exactCond reports whether cond encodes c without approximation.
func exactCond(c Cond) bool {
	switch c := c.(type) {
	case *Cmp:
		return !mentionsNonKey(c.L) && !mentionsNonKey(c.R)
	case *Not:
		return exactCond(c.C)
	case *Logic:
		return exactCond(c.L) && exactCond(c.R)
	}
	return true
}

func mentionsNonKey(x Expr) bool {
	switch x := x.(type) {
	case *Ref:
		return x.field && !x.keyField()
	case *Binary:
		return mentionsNonKey(x.L) || mentionsNonKey(x.R)
	case *Neg:
		return mentionsNonKey(x.X)
	}
	return false
}

// exec returns the bound iterator variables of the statement's loops (fresh)
// and the condition Λ under which the statement runs in instance t in that
// iteration: loop memberships and enclosing IF conditions.
func (e *Encoding) exec(ctx *stmtCtx, t smtlib.Term) ([]smtlib.Var, env, smtlib.Term) {
	en := env{txn: ctx.txn, t: t, iters: map[*Foreach]smtlib.Term{}}
	var vs []smtlib.Var
	var conj []smtlib.Term
	for _, l := range ctx.loops {
		it := en.txn.vars[l.Iter]
		v := e.freshVar("i", sortR(it.table))
		vs = append(vs, v)
		en.iters[l] = v.Ref()
		set := en.txn.vars[l.Set]
		args := en.loopArgs(set.loops)
		args = append(args[:len(args)-1], v.Ref(), t)
		conj = append(conj, smtlib.App(varSym(en.txn, l.Set), args...))
	}
	for _, pc := range ctx.path {
		if pc.pos {
			conj = append(conj, en.cond(pc.c, true))
		} else {
			conj = append(conj, smtlib.Not(en.cond(pc.c, false)))
		}
	}
	return vs, en, smtlib.And(conj...)
}

// access is one read or write of a field ("" = Alive) of a table by a statement.
type access struct {
	stmt  Stmt
	ctx   *stmtCtx
	write bool
	field string
	all   bool // read on every row (a WHERE predicate read)
	// row is the condition on row r under which the access touches it.
	row func(en env, r smtlib.Term, over bool) smtlib.Term
	// exact is set when row and the statement's Λ are exact (forcing rules).
	exact bool
}

func whereFields(c Cond, tb *Table) []string {
	var out []string
	eachCondLeaf(c, func(x Expr) {
		if x, ok := x.(*Ref); ok && x.field && !field(tb, x.Name).Key && !slices.Contains(out, x.Name) {
			out = append(out, x.Name)
		}
	}, nil)
	return out
}

// accesses lists the reads and writes of a statement (App. B of the paper).
func accesses(s Stmt) []access {
	b := &accessList{stmt: s}
	switch s := s.(type) {
	case *Select:
		b.selectAccesses(s)
	case *Update:
		b.updateAccesses(s)
	case *Insert:
		b.insertAccesses(s)
	case *Delete:
		b.add(s.ctx, true, "", false, matching(s.Where, s.ctx.table), exactCond(s.Where))
		b.predReads(s.ctx, s.Where)
	}
	return b.out
}

// rowCond is an access's condition on the row it touches.
type rowCond = func(en env, r smtlib.Term, over bool) smtlib.Term

// matching: the row matches the WHERE clause.
func matching(w Cond, tb *Table) rowCond {
	return func(en env, r smtlib.Term, over bool) smtlib.Term { return en.withRow(tb, r).cond(w, over) }
}

// anyRow: every row.
func anyRow(env, smtlib.Term, bool) smtlib.Term { return smtlib.True }

// accessList collects one statement's accesses.
type accessList struct {
	stmt Stmt
	out  []access
}

func (b *accessList) add(ctx *stmtCtx, write bool, f string, isAll bool, row rowCond, exact bool) {
	b.out = append(b.out, access{stmt: b.stmt, ctx: ctx, write: write, field: f, all: isAll, row: row, exact: exact && len(ctx.loops) == 0})
}

// predReads: a WHERE clause reads its fields on every row.
func (b *accessList) predReads(ctx *stmtCtx, w Cond) {
	for _, f := range whereFields(w, ctx.table) {
		b.add(ctx, false, f, true, anyRow, false)
	}
}

// selectAccesses: a SELECT reads Alive and its non-key fields (all of them
// for SELECT *) of the matching rows, and its WHERE fields.
func (b *accessList) selectAccesses(s *Select) {
	tb := s.ctx.table
	fields := s.Fields
	if s.Kind == SelectRows {
		fields = nonKey(tb)
	}
	for _, f := range append([]string{""}, fields...) {
		if f == "" || !field(tb, f).Key {
			b.add(s.ctx, false, f, false, matching(s.Where, tb), false)
		}
	}
	if (s.Kind == SelectMin || s.Kind == SelectMax) && field(tb, s.Fields[0]).Key {
		b.out[len(b.out)-1].row = extremumRows(s, tb)
	}
	b.predReads(s.ctx, s.Where)
}

// extremumRows: App. B (E-SELECT-MIN/MAX): the result of a MIN (MAX) of a
// key field depends on the liveness of the matching rows up to it (down to
// it for MAX), and of every matching row when it is NULL. Keys never change,
// so rows beyond the result cannot change it.
func extremumRows(s *Select, tb *Table) rowCond {
	m := matching(s.Where, tb)
	op := "<="
	if s.Kind == SelectMax {
		op = ">="
	}
	return func(en env, r smtlib.Term, over bool) smtlib.Term {
		v, n, _ := en.val(&Ref{Name: s.Vars[0]})
		return smtlib.And(m(en, r, over), smtlib.Or(n, smtlib.App(op, smtlib.App(fieldCtor(tb, s.Fields[0]), r), v)))
	}
}

// updateAccesses: an UPDATE writes its SET fields of the live matching
// rows, reads their Alive and the fields its SET expressions use, and its
// WHERE fields.
func (b *accessList) updateAccesses(s *Update) {
	tb := s.ctx.table
	exact := exactCond(s.Where)
	m := matching(s.Where, tb)
	alive := func(en env, r smtlib.Term, over bool) smtlib.Term {
		return smtlib.And(m(en, r, over), smtlib.App(aliveSym(tb), r, en.t))
	}
	for _, a := range s.Sets {
		b.add(s.ctx, true, a.Field, false, alive, exact)
	}
	b.add(s.ctx, false, "", false, m, false)
	var rhs []string
	for _, a := range s.Sets {
		for _, f := range whereFields(&Cmp{L: a.Expr, R: &IntLit{}}, tb) {
			if !slices.Contains(rhs, f) {
				rhs = append(rhs, f)
			}
		}
	}
	for _, f := range rhs {
		b.add(s.ctx, false, f, false, m, false)
	}
	b.predReads(s.ctx, s.Where)
}

// insertAccesses: an INSERT writes Alive and every non-key field of the row
// its key values address.
func (b *accessList) insertAccesses(s *Insert) {
	tb := s.ctx.table
	row := func(en env, r smtlib.Term, _ bool) smtlib.Term {
		var conj []smtlib.Term
		for _, a := range s.Values {
			if field(tb, a.Field).Key {
				v, n, _ := en.val(a.Expr)
				conj = append(conj, smtlib.Not(n), smtlib.Eq(smtlib.App(fieldCtor(tb, a.Field), r), v))
			}
		}
		return smtlib.And(conj...)
	}
	for _, f := range append([]string{""}, nonKey(tb)...) {
		b.add(s.ctx, true, f, false, row, true)
	}
}

func (e *Encoding) tableAccesses(tb *Table) map[*Txn][]access {
	out := map[*Txn][]access{}
	for _, t := range e.txns {
		for _, s := range t.stmts {
			if ctx := stmtContext(s); ctx != nil && ctx.table == tb {
				out[t] = append(out[t], accesses(s)...)
			}
		}
	}
	return out
}

// tableAxioms asserts a table's axioms: key uniqueness, the record-level
// dependency axioms, liveness (constant, or a frame for the bounded
// queries), the necessary conditions of every record-level dependency and
// the forcing rules.
func (e *Encoding) tableAxioms(s *smtlib.Script, tb *Table) {
	s.Comment("table " + tb.Name)
	keyAxiom(s, tb)
	recordAxioms(s, tb)
	acc := e.tableAccesses(tb)
	if !writesAliveIn(acc) {
		// No transaction inserts or deletes rows: liveness is the same in
		// every snapshot.
		r := smtlib.Var{Name: "r", Sort: sortR(tb)}
		a, b := smtlib.Var{Name: "a", Sort: "T"}, smtlib.Var{Name: "b", Sort: "T"}
		s.Assert(smtlib.Forall([]smtlib.Var{r, a, b}, smtlib.Implies(smtlib.App(aliveSym(tb), r.Ref(), a.Ref()), smtlib.App(aliveSym(tb), r.Ref(), b.Ref()))))
	} else {
		e.frames = append(e.frames, frame{tb: tb, acc: acc})
	}
	for _, relName := range relNames {
		e.necessaryConditions(s, tb, acc, relName)
	}
	e.forcing(s, tb, acc)
}

// keyAxiom: key uniqueness (Eq. 13), as a left inverse of the key: a row is
// the row of its key. That is equivalent to "equal keys, equal rows" (a
// function is injective iff it has a left inverse) and needs one instance per
// row where the pairwise form needs one per pair of rows.
func keyAxiom(s *smtlib.Script, tb *Table) {
	R := sortR(tb)
	r := smtlib.Var{Name: "r", Sort: R}
	var keyArgs, keySorts []smtlib.Term
	for _, k := range keyFields(tb) {
		keyArgs = append(keyArgs, smtlib.App(fieldCtor(tb, k.Name), r.Ref()))
		keySorts = append(keySorts, sI)
	}
	s.Add(declFun("row."+tb.Name, keySorts, smtlib.Sym(R)))
	s.Assert(smtlib.Forall([]smtlib.Var{r}, smtlib.Eq(smtlib.App("row."+tb.Name, keyArgs...), r.Ref())))
}

// recordAxioms: record-level dependencies imply instance-level ones, φ_dep,
// and a read has one source.
func recordAxioms(s *smtlib.Script, tb *Table) {
	r := smtlib.Var{Name: "r", Sort: sortR(tb)}
	f := smtlib.Var{Name: "f", Sort: sortF(tb)}
	a, b, c := smtlib.Var{Name: "a", Sort: "T"}, smtlib.Var{Name: "b", Sort: "T"}, smtlib.Var{Name: "c", Sort: "T"}
	rel := func(name string, x, y smtlib.Var) smtlib.Term {
		return smtlib.App(relSym(name, tb), r.Ref(), f.Ref(), x.Ref(), y.Ref())
	}
	all4 := []smtlib.Var{r, f, a, b}
	s.Assert(smtlib.Forall(all4, smtlib.And(
		smtlib.Implies(rel("WR", a, b), smtlib.App("WR", a.Ref(), b.Ref())),
		smtlib.Implies(rel("WW", a, b), smtlib.App("WW", a.Ref(), b.Ref())),
		smtlib.Implies(rel("RW", a, b), smtlib.App("RW", a.Ref(), b.Ref())))))
	// φ_dep: the source of a read precedes every overwriter of what it read.
	s.Assert(smtlib.Forall([]smtlib.Var{r, f, a, b, c}, smtlib.Pattern(
		smtlib.Implies(smtlib.And(rel("WR", b, a), rel("RW", a, c)), rel("WW", b, c)), rel("WR", b, a), rel("RW", a, c))))
	// A read has one source.
	s.Assert(smtlib.Forall([]smtlib.Var{r, f, a, b, c}, smtlib.Pattern(
		smtlib.Implies(smtlib.And(rel("WR", a, c), rel("WR", b, c)), smtlib.Eq(a.Ref(), b.Ref())), rel("WR", a, c), rel("WR", b, c))))
}

// writesAliveIn reports whether some access writes a row's Alive.
func writesAliveIn(acc map[*Txn][]access) bool {
	for _, xs := range acc {
		for _, x := range xs {
			if x.write && x.field == "" {
				return true
			}
		}
	}
	return false
}

// necessaryConditions asserts, for each field of tb, that a record-level
// dependency relName implies one of the statement pairs that can cause it;
// a dependency no pair can cause is recorded in e.never instead.
func (e *Encoding) necessaryConditions(s *smtlib.Script, tb *Table, acc map[*Txn][]access, relName string) {
	r := smtlib.Var{Name: "r", Sort: sortR(tb)}
	a, b := smtlib.Var{Name: "a", Sort: "T"}, smtlib.Var{Name: "b", Sort: "T"}
	total := 0
	for _, fld := range append([]string{""}, nonKey(tb)...) {
		disj := e.conflictingPairs(acc, relName, fld, r, a, b)
		atom := smtlib.App(relSym(relName, tb), r.Ref(), smtlib.Sym(fieldCtor(tb, fld)), a.Ref(), b.Ref())
		if len(disj) == 0 {
			// No pair of statements can cause this dependency: the
			// relation is empty, and Encode substitutes false for it.
			e.never[relSym(relName, tb)+" "+fieldCtor(tb, fld)] = true
			continue
		}
		total += len(disj)
		// Instantiated only for dependencies the solver has named.
		s.Assert(smtlib.Forall([]smtlib.Var{r, a, b}, smtlib.Pattern(smtlib.Implies(atom, smtlib.Or(disj...)), atom)))
	}
	s.Comment(fmt.Sprintf("(necessary conditions for %s on %s: %d statement pairs)", relName, tb.Name, total))
}

// conflictingPairs are the conditions under which a statement of instance a
// and one of instance b cause relName on field fld of row r: both run and
// both touch the row (WR: a writes, b reads; WW: both write; RW: a reads, b
// writes).
func (e *Encoding) conflictingPairs(acc map[*Txn][]access, relName, fld string, r, a, b smtlib.Var) []smtlib.Term {
	w1, w2 := relName != "RW", relName != "WR"
	var disj []smtlib.Term
	for _, t1 := range e.txns {
		for _, t2 := range e.txns {
			for _, x1 := range acc[t1] {
				if x1.write != w1 || x1.field != fld {
					continue
				}
				for _, x2 := range acc[t2] {
					if x2.write != w2 || x2.field != fld {
						continue
					}
					disj = append(disj, e.bothRun(t1, x1, t2, x2, r, a, b))
				}
			}
		}
	}
	return disj
}

// bothRun is "instance a of t1 runs x1 and instance b of t2 runs x2, both
// possibly touching row r".
func (e *Encoding) bothRun(t1 *Txn, x1 access, t2 *Txn, x2 access, r, a, b smtlib.Var) smtlib.Term {
	vs1, en1, l1 := e.exec(x1.ctx, a.Ref())
	vs2, en2, l2 := e.exec(x2.ctx, b.Ref())
	body := smtlib.And(l1, x1.row(en1, r.Ref(), true), l2, x2.row(en2, r.Ref(), true))
	return smtlib.And(
		isType(a.Ref(), t1),
		isType(b.Ref(), t2),
		smtlib.Exists(append(vs1, vs2...), body))
}

// forcing: two exact writers of the same field of a row, ordered by ar, are
// WW-related on that row.
func (e *Encoding) forcing(s *smtlib.Script, tb *Table, acc map[*Txn][]access) {
	s.Comment("forcing: exact writes of one row and field ordered by ar are WW")
	type writer struct {
		t *Txn
		x access
	}
	var ws []writer
	for _, t := range e.txns {
		for _, x := range acc[t] {
			if x.write && x.exact {
				ws = append(ws, writer{t, x})
			}
		}
	}
	r := smtlib.Var{Name: "r", Sort: sortR(tb)}
	a, b := smtlib.Var{Name: "a", Sort: "T"}, smtlib.Var{Name: "b", Sort: "T"}
	for i, w1 := range ws {
		for _, w2 := range ws[i:] {
			if w1.x.field != w2.x.field {
				continue
			}
			_, en1, l1 := e.exec(w1.x.ctx, a.Ref())
			_, en2, l2 := e.exec(w2.x.ctx, b.Ref())
			prem := smtlib.And(
				isType(a.Ref(), w1.t),
				isType(b.Ref(), w2.t),
				l1, w1.x.row(en1, r.Ref(), false), l2, w2.x.row(en2, r.Ref(), false),
				smtlib.Not(smtlib.Eq(a.Ref(), b.Ref())))
			ww := func(x, y smtlib.Var) smtlib.Term {
				return smtlib.Implies(smtlib.App("ar", x.Ref(), y.Ref()),
					smtlib.App(relSym("WW", tb), r.Ref(), smtlib.Sym(fieldCtor(tb, w1.x.field)), x.Ref(), y.Ref()))
			}
			s.Assert(smtlib.Forall([]smtlib.Var{r, a, b}, smtlib.Implies(prem, smtlib.And(ww(a, b), ww(b, a)))))
		}
	}
}

// auxAxioms relates local variables to the database (φ_aux, Eq. 14, and the
// iterator fact the paper mentions without formula, E13).
func (e *Encoding) auxAxioms(s *smtlib.Script, t *Txn) {
	tv := smtlib.Var{Name: "t", Sort: "T"}
	isT := isType(tv.Ref(), t)
	if len(t.stmts) > 0 {
		s.Comment("variables of " + t.Name)
	}
	for _, st := range t.stmts {
		ctx := stmtContext(st)
		if ctx == nil {
			continue
		}
		vs, en, lam := e.exec(ctx, tv.Ref())
		a := auxStmt{s: s, txn: t, tv: tv, isT: isT, vs: vs, en: en, lam: lam}
		switch st := st.(type) {
		case *Let:
			a.let(st)
		case *Select:
			e.selectAux(a, st)
		}
	}
}

// auxStmt is one statement of an instance tv of txn, for its φ_aux axioms:
// isT says tv is of type txn, vs, en and lam are the statement's loop
// variables, environment and Λ.
type auxStmt struct {
	s   *smtlib.Script
	txn *Txn
	tv  smtlib.Var
	isT smtlib.Term
	vs  []smtlib.Var
	en  env
	lam smtlib.Term
}

// univ is the statement's loop variables and the instance.
func (a auxStmt) univ() []smtlib.Var { return append(a.vs, a.tv) }

// let: the variable is the expression's value (and NULL with it).
func (a auxStmt) let(st *Let) {
	v, n, _ := a.en.val(st.Expr)
	x, xn, _ := a.en.val(&Ref{Name: st.Var})
	a.s.Assert(smtlib.Forall(a.univ(), smtlib.Implies(smtlib.And(a.isT, a.lam),
		smtlib.And(smtlib.Eq(xn, n), smtlib.Implies(smtlib.Not(n), smtlib.Eq(x, v))))))
}

// auxSelect is a SELECT's φ_aux: r ranges over the rows of its table, over
// and under approximate its WHERE on r, alive is r live in the instance's
// snapshot.
type auxSelect struct {
	auxStmt
	st                 *Select
	tb                 *Table
	r                  smtlib.Var
	over, under, alive smtlib.Term
}

// selectAux relates the variables of a SELECT to the rows it reads.
func (e *Encoding) selectAux(a auxStmt, st *Select) {
	tb := st.ctx.table
	r := e.freshVar("r", sortR(tb))
	enR := a.en.withRow(tb, r.Ref())
	sel := auxSelect{auxStmt: a, st: st, tb: tb, r: r}
	sel.over = enR.cond(st.Where, true)
	sel.under = enR.cond(st.Where, false)
	sel.alive = smtlib.App(aliveSym(tb), r.Ref(), a.tv.Ref())
	if st.Kind == SelectRows {
		sel.rows()
		return
	}
	for _, name := range st.Vars {
		x, xn, _ := a.en.val(&Ref{Name: name})
		if st.Kind == SelectCount {
			a.s.Assert(smtlib.Forall(a.univ(), smtlib.Implies(smtlib.And(a.isT, a.lam), smtlib.And(smtlib.Not(xn), smtlib.App(">=", x, smtlib.Int(0))))))
			continue
		}
		sel.value(x, xn)
	}
}

// all is the statement's loop variables, the row and the instance.
func (sel auxSelect) all() []smtlib.Var {
	return append(append([]smtlib.Var(nil), sel.vs...), sel.r, sel.tv)
}

// rows: the set a SELECT * binds holds live rows over-matching the WHERE,
// and every live row under-matching it.
func (sel auxSelect) rows() {
	args := sel.en.loopArgs(sel.st.ctx.loops)
	args = append(args[:len(args)-1], sel.r.Ref(), sel.tv.Ref())
	in := smtlib.App(varSym(sel.txn, sel.st.Vars[0]), args...)
	all := sel.all()
	sel.s.Assert(smtlib.Forall(all, smtlib.Implies(smtlib.And(sel.isT, in), smtlib.And(sel.lam, sel.over, sel.alive))))
	sel.s.Assert(smtlib.Forall(all, smtlib.Implies(smtlib.And(sel.isT, sel.lam, sel.under, sel.alive), in)))
}

// value: a non-NULL value x comes from some live row over-matching the
// WHERE, and every live row under-matching it makes x non-NULL; for MIN or
// MAX of a key field, x is that row's key and bounds every such row's.
func (sel auxSelect) value(x, xn smtlib.Term) {
	st, tb, r := sel.st, sel.tb, sel.r
	var pick smtlib.Term = smtlib.True
	var bound smtlib.Term = smtlib.True
	if (st.Kind == SelectMin || st.Kind == SelectMax) && field(tb, st.Fields[0]).Key {
		k := smtlib.App(fieldCtor(tb, st.Fields[0]), r.Ref())
		pick = smtlib.Eq(k, x)
		if st.Kind == SelectMax {
			bound = smtlib.App("<=", k, x)
		} else {
			bound = smtlib.App(">=", k, x)
		}
	}
	sel.s.Assert(smtlib.Forall(sel.univ(), smtlib.Implies(smtlib.And(sel.isT, sel.lam, smtlib.Not(xn)),
		smtlib.Exists([]smtlib.Var{r}, smtlib.And(sel.over, sel.alive, pick)))))
	sel.s.Assert(smtlib.Forall(sel.all(), smtlib.Implies(smtlib.And(sel.isT, sel.lam, sel.under, sel.alive), smtlib.And(smtlib.Not(xn), bound))))
}

// insertAxiom: with an empty initial database, a row live in an instance's
// snapshot was inserted by a visible transaction.
func (e *Encoding) insertAxiom(s *smtlib.Script, tb *Table) {
	r := smtlib.Var{Name: "r", Sort: sortR(tb)}
	tv, u := smtlib.Var{Name: "t", Sort: "T"}, smtlib.Var{Name: "u", Sort: "T"}
	var disj []smtlib.Term
	for _, t := range e.txns {
		for _, st := range t.stmts {
			ins, ok := st.(*Insert)
			if !ok || ins.ctx.table != tb {
				continue
			}
			x := accesses(ins)[0]
			vs, en, lam := e.exec(ins.ctx, u.Ref())
			disj = append(disj, smtlib.And(isType(u.Ref(), t),
				smtlib.Exists(vs, smtlib.And(lam, x.row(en, r.Ref(), true)))))
		}
	}
	s.Comment("empty initial database: live rows of " + tb.Name + " were inserted by a visible transaction")
	s.Assert(smtlib.Forall([]smtlib.Var{r, tv}, smtlib.Implies(smtlib.App(aliveSym(tb), r.Ref(), tv.Ref()),
		smtlib.Exists([]smtlib.Var{u}, smtlib.And(smtlib.App("vis", u.Ref(), tv.Ref()), smtlib.Or(disj...))))))
}
