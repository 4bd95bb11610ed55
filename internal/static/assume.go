package static

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/isovet/isovet/internal/smtlib"
)

// String renders the assumption in the dialect's syntax (normalised spacing
// and parentheses), for reports.
func (a *Assume) String() string {
	var b strings.Builder
	b.WriteString("FORALL ")
	for i, r := range a.Rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.Name + " IN " + r.Table)
	}
	if a.Premise != nil {
		b.WriteString(" WHERE " + condString(a.Premise))
	}
	b.WriteString(": " + condString(a.Conclusion))
	return b.String()
}

func exprString(e Expr) string {
	switch e := e.(type) {
	case *IntLit:
		return strconv.FormatInt(e.V, 10)
	case *Ref:
		return e.Name
	case *FieldOf:
		return e.Iter + "." + e.Field
	case *Binary:
		return "(" + exprString(e.L) + " " + e.Op + " " + exprString(e.R) + ")"
	case *Neg:
		return "-" + exprString(e.X)
	}
	return fmt.Sprintf("%T", e)
}

func condString(c Cond) string {
	switch c := c.(type) {
	case *BoolLit:
		if c.V {
			return "TRUE"
		}
		return "FALSE"
	case *Cmp:
		return exprString(c.L) + " " + c.Op + " " + exprString(c.R)
	case *IsNull:
		if c.Negated {
			return c.Var + " IS NOT NULL"
		}
		return c.Var + " IS NULL"
	case *Not:
		return "NOT (" + condString(c.C) + ")"
	case *Logic:
		op := " OR "
		if c.And {
			op = " AND "
		}
		return "(" + condString(c.L) + op + condString(c.R) + ")"
	}
	return fmt.Sprintf("%T", c)
}

// Symbols of the initial database, declared by the bounded query only when
// some assumption needs them.
func initAliveSym(tb *Table) string         { return "init.alive." + tb.Name }
func initValSym(tb *Table, f string) string { return "init." + tb.Name + "." + f }

// assumes returns the assumptions that apply to the encoded transactions:
// those whose tables are all used by them (an assumption about rows no
// instance touches cannot change any answer, and those tables' sorts are not
// declared).
func (e *Encoding) assumes() []*Assume {
	if e.opts.IgnoreAssumptions {
		return nil
	}
	used := map[*Table]bool{}
	for _, tb := range e.tables() {
		used[tb] = true
	}
	var out []*Assume
	for _, a := range e.prog.Assumes {
		ok := true
		for _, r := range a.Rows {
			ok = ok && used[r.table]
		}
		if ok {
			out = append(out, a)
		}
	}
	return out
}

// initialDB returns, for the bounded query over the instances domain, the
// declarations and axioms that name the initial database and constrain it
// by the assumptions. Each axiom holds in every execution whose initial
// database satisfies the assumptions, so adding them loses no such
// execution:
//
//   - liveness: an instance none of whose visible instances may write the
//     Alive of row r (the premise negates the over-approximated writes, so
//     it is an under-approximation) sees r's initial liveness;
//   - values: a field SELECT outside loops of a live row r with no WR source
//     for (r, f) among the instances reads r's initial value of f (a visible
//     writer of f would be its source; a row inserted by a visible instance
//     has its insert as source);
//   - the assumptions themselves, over the initial liveness and values.
func (e *Encoding) initialDB(domain []smtlib.Term) (decls, axioms []smtlib.Term) {
	as := e.assumes()
	if len(as) == 0 {
		return nil, nil
	}
	order, vals := assumedTables(as)
	for _, tb := range order {
		decls = append(decls, declFun(initAliveSym(tb), []smtlib.Term{smtlib.Sym(sortR(tb))}, sB))
		for _, f := range nonKey(tb) {
			if vals[tb][f] {
				decls = append(decls, declFun(initValSym(tb, f), []smtlib.Term{smtlib.Sym(sortR(tb))}, sI))
			}
		}
	}
	for _, tb := range order {
		axioms = append(axioms, e.initialLiveness(tb, domain))
		axioms = append(axioms, e.initialValues(tb, vals[tb], domain)...)
	}
	for _, a := range as {
		axioms = append(axioms, assumeAxiom(a))
	}
	return decls, axioms
}

// assumedTables are the tables the assumptions range over, in first-use
// order, with the non-key fields they mention.
func assumedTables(as []*Assume) (order []*Table, vals map[*Table]map[string]bool) {
	vals = map[*Table]map[string]bool{}
	for _, a := range as {
		for _, r := range a.Rows {
			if vals[r.table] == nil {
				order = append(order, r.table)
				vals[r.table] = map[string]bool{}
			}
		}
		rowTable := map[string]*Table{}
		for _, r := range a.Rows {
			rowTable[r.Name] = r.table
		}
		walkFieldOfs(a, func(x *FieldOf) {
			if tb := rowTable[x.Iter]; !field(tb, x.Field).Key {
				vals[tb][x.Field] = true
			}
		})
	}
	return order, vals
}

// initialLiveness: an instance none of whose visible instances (in domain)
// may write the Alive of row r sees r's initial liveness.
func (e *Encoding) initialLiveness(tb *Table, domain []smtlib.Term) smtlib.Term {
	r := smtlib.Var{Name: "r", Sort: sortR(tb)}
	tv := smtlib.Var{Name: "t", Sort: "T"}
	acc := e.tableAccesses(tb)
	var none []smtlib.Term
	for _, w := range domain {
		var writes []smtlib.Term
		for _, t := range e.txns {
			for _, x := range acc[t] {
				if x.write && x.field == "" {
					vs, en, lam := e.exec(x.ctx, w)
					writes = append(writes, smtlib.And(isType(w, t),
						smtlib.Exists(vs, smtlib.And(lam, x.row(en, r.Ref(), true)))))
				}
			}
		}
		none = append(none, smtlib.Not(smtlib.And(smtlib.App("vis", w, tv.Ref()), smtlib.Or(writes...))))
	}
	return smtlib.Forall([]smtlib.Var{r, tv}, smtlib.Implies(smtlib.And(none...),
		smtlib.Eq(smtlib.App(aliveSym(tb), r.Ref(), tv.Ref()), smtlib.App(initAliveSym(tb), r.Ref()))))
}

// initialValues: a field SELECT outside loops of a live row r, of a field in
// vals, with no WR source for (r, f) among the instances of domain reads r's
// initial value of f.
func (e *Encoding) initialValues(tb *Table, vals map[string]bool, domain []smtlib.Term) []smtlib.Term {
	r := smtlib.Var{Name: "r", Sort: sortR(tb)}
	tv := smtlib.Var{Name: "t", Sort: "T"}
	var axioms []smtlib.Term
	e.eachFieldSelect(tb, func(t *Txn, s *Select) {
		for i, f := range s.Fields {
			if !vals[f] {
				continue
			}
			_, en, lam := e.exec(s.ctx, tv.Ref())
			v, n, _ := en.val(&Ref{Name: s.Vars[i]})
			prem := []smtlib.Term{
				isType(tv.Ref(), t), lam,
				en.withRow(tb, r.Ref()).cond(s.Where, false),
				smtlib.App(aliveSym(tb), r.Ref(), tv.Ref()), smtlib.Not(n),
			}
			for _, w := range domain {
				prem = append(prem, smtlib.Not(smtlib.App(relSym("WR", tb), r.Ref(), smtlib.Sym(fieldCtor(tb, f)), w, tv.Ref())))
			}
			axioms = append(axioms, smtlib.Forall([]smtlib.Var{r, tv}, smtlib.Implies(smtlib.And(prem...),
				smtlib.Eq(v, smtlib.App(initValSym(tb, f), r.Ref())))))
		}
	})
	return axioms
}

// assumeAxiom is the assumption over the initial liveness and values.
func assumeAxiom(a *Assume) smtlib.Term {
	var vs []smtlib.Var
	rows := map[string]smtlib.Term{}
	tbs := map[string]*Table{}
	var conj []smtlib.Term
	for _, r := range a.Rows {
		v := smtlib.Var{Name: "x." + r.Name, Sort: sortR(r.table)}
		vs = append(vs, v)
		rows[r.Name], tbs[r.Name] = v.Ref(), r.table
		conj = append(conj, smtlib.App(initAliveSym(r.table), v.Ref()))
	}
	ev := func(c Cond) smtlib.Term { return initCond(c, rows, tbs) }
	if a.Premise != nil {
		conj = append(conj, ev(a.Premise))
	}
	return smtlib.Forall(vs, smtlib.Implies(smtlib.And(conj...), ev(a.Conclusion)))
}

func walkFieldOfs(a *Assume, fn func(*FieldOf)) {
	leaf := func(x Expr) {
		if f, ok := x.(*FieldOf); ok {
			fn(f)
		}
	}
	if a.Premise != nil {
		eachCondLeaf(a.Premise, leaf, nil)
	}
	eachCondLeaf(a.Conclusion, leaf, nil)
}

// initCond encodes an assumption's condition over the initial database:
// key fields are the row's key, other fields its initial values. Values of
// live rows are never NULL, so the encoding is exact.
func initCond(c Cond, rows map[string]smtlib.Term, tbs map[string]*Table) smtlib.Term {
	switch c := c.(type) {
	case *BoolLit:
		return smtlib.Bool(c.V)
	case *Cmp:
		return cmpTerm(c.Op, initVal(c.L, rows, tbs), initVal(c.R, rows, tbs))
	case *Not:
		return smtlib.Not(initCond(c.C, rows, tbs))
	case *Logic:
		if c.And {
			return smtlib.And(initCond(c.L, rows, tbs), initCond(c.R, rows, tbs))
		}
		return smtlib.Or(initCond(c.L, rows, tbs), initCond(c.R, rows, tbs))
	}
	panic(fmt.Sprintf("static: %T in an assumption", c))
}

// initVal encodes an expression of an assumption over the initial database
// (see initCond).
func initVal(x Expr, rows map[string]smtlib.Term, tbs map[string]*Table) smtlib.Term {
	switch x := x.(type) {
	case *IntLit:
		return smtlib.Int(x.V)
	case *FieldOf:
		tb := tbs[x.Iter]
		if field(tb, x.Field).Key {
			return smtlib.App(fieldCtor(tb, x.Field), rows[x.Iter])
		}
		return smtlib.App(initValSym(tb, x.Field), rows[x.Iter])
	case *Binary:
		return smtlib.App(x.Op, initVal(x.L, rows, tbs), initVal(x.R, rows, tbs))
	case *Neg:
		return smtlib.App("-", initVal(x.X, rows, tbs))
	}
	panic(fmt.Sprintf("static: %T in an assumption", x))
}

// checkAssumes evaluates the applicable assumptions on a replay's initial
// database (rows not Dead are live; a non-key field not given takes def).
// It returns the first violated assumption, or nil.
func (e *Encoding) checkAssumes(initial map[string][]Row, def int64) error {
	for _, a := range e.assumes() {
		var live [][]Row
		for _, r := range a.Rows {
			live = append(live, liveRows(initial[r.Table]))
		}
		if err := violation(a, live, def); err != nil {
			return err
		}
	}
	return nil
}

// liveRows are the rows not Dead.
func liveRows(rows []Row) []Row {
	var out []Row
	for _, row := range rows {
		if !row.Dead {
			out = append(out, row)
		}
	}
	return out
}

// violation tries every choice of one live row per row name of a (live[i]
// for the i-th) and describes the first that satisfies the premise but not
// the conclusion; nil when there is none.
func violation(a *Assume, live [][]Row, def int64) error {
	pick := make([]Row, len(a.Rows))
	var bad error
	var try func(i int) bool
	try = func(i int) bool {
		if i == len(a.Rows) {
			ok := a.Premise == nil || initHolds(a.Premise, a, pick, def)
			if ok && !initHolds(a.Conclusion, a, pick, def) {
				var parts []string
				for j, r := range a.Rows {
					parts = append(parts, fmt.Sprintf("%s = %s%v", r.Name, r.Table, pick[j].Key))
				}
				bad = fmt.Errorf("the initial database violates the assumption at %s (%s)", a.Pos, strings.Join(parts, ", "))
				return false
			}
			return true
		}
		for _, row := range live[i] {
			pick[i] = row
			if !try(i + 1) {
				return false
			}
		}
		return true
	}
	try(0)
	return bad
}

// initHolds evaluates an assumption's condition on rows, one initial row
// per row name of a (non-key fields not given are def).
func initHolds(c Cond, a *Assume, rows []Row, def int64) bool {
	b := initBinding{a: a, rows: rows, def: def}
	switch c := c.(type) {
	case *BoolLit:
		return c.V
	case *Cmp:
		return compareInts(c.Op, b.val(c.L), b.val(c.R))
	case *Not:
		return !initHolds(c.C, a, rows, def)
	case *Logic:
		if c.And {
			return initHolds(c.L, a, rows, def) && initHolds(c.R, a, rows, def)
		}
		return initHolds(c.L, a, rows, def) || initHolds(c.R, a, rows, def)
	}
	panic(fmt.Sprintf("static: %T in an assumption", c))
}

// compareInts applies a comparison operator (<, <=, =, <>, >, >=).
func compareInts(op string, l, r int64) bool {
	switch op {
	case "<":
		return l < r
	case "<=":
		return l <= r
	case "=":
		return l == r
	case "<>":
		return l != r
	case ">":
		return l > r
	}
	return l >= r
}

// arith applies an arithmetic operator (+, -, *).
func arith(op string, l, r int64) int64 {
	switch op {
	case "+":
		return l + r
	case "-":
		return l - r
	}
	return l * r
}

// initBinding binds the row names of an assumption to initial rows.
type initBinding struct {
	a    *Assume
	rows []Row
	def  int64
}

// val evaluates an expression of an assumption on the bound rows.
func (b initBinding) val(x Expr) int64 {
	switch x := x.(type) {
	case *IntLit:
		return x.V
	case *FieldOf:
		if v, ok := b.field(x); ok {
			return v
		}
	case *Binary:
		return arith(x.Op, b.val(x.L), b.val(x.R))
	case *Neg:
		return -b.val(x.X)
	}
	panic(fmt.Sprintf("static: %T in an assumption", x))
}

// field is the value of row.field: a key value, a given value or def; false
// when no row has that name.
func (b initBinding) field(x *FieldOf) (int64, bool) {
	for i, r := range b.a.Rows {
		if r.Name != x.Iter {
			continue
		}
		if k := keyIndex(r.table, x.Field); k >= 0 {
			return b.rows[i].Key[k], true
		}
		if v, ok := b.rows[i].Values[x.Field]; ok {
			return v, true
		}
		return b.def, true
	}
	return 0, false
}
