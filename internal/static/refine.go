package static

import (
	"slices"

	"github.com/isovet/isovet/internal/smtlib"
)

// The refinement's blocking clauses (see blockingClause) name a refuted
// execution up to renaming the values of equality-only parameters.
//
// A parameter is equality-only when its every use is a direct operand of =
// or <> whose other operand is a constant, a variable, a parameter or a
// field: never in arithmetic, an ordering comparison, a SET or VALUES. Such
// a parameter is only ever compared for equality, so renaming the values of
// all equality-only parameters by a bijection that fixes every integer
// constant of the program (and renaming the initial database's values the
// same way) maps an execution to an isomorphic one: the same statements run,
// the same rows match, the same dependencies arise. Whether an execution
// has a dependency cycle is therefore decided by its class: the
// transactions, the visibility, the exact values of the other parameters,
// and which equality-only parameter values equal each other and which equal
// each constant. Excluding the class of a refuted execution excludes no
// anomaly that the refuted execution itself did not also have.

// eqOnlyParams returns, per transaction, its equality-only parameters.
func eqOnlyParams(prog *Program) map[*Txn]map[string]bool {
	out := map[*Txn]map[string]bool{}
	for _, t := range prog.Txns {
		uses, eqUses := map[string]int{}, map[string]int{}
		isParam := func(e Expr) (string, bool) {
			r, ok := e.(*Ref)
			if !ok || r.field || !slices.Contains(t.Params, r.Name) {
				return "", false
			}
			return r.Name, true
		}
		count := func(e Expr) {
			if p, ok := isParam(e); ok {
				uses[p]++
			}
		}
		cmp := func(c *Cmp) {
			if c.Op != "=" && c.Op != "<>" && c.Op != "!=" {
				return
			}
			for _, pair := range [][2]Expr{{c.L, c.R}, {c.R, c.L}} {
				if p, ok := isParam(pair[0]); ok && isLeaf(pair[1]) {
					eqUses[p]++
				}
			}
		}
		eachStmt(t.Body, func(st Stmt) {
			for _, c := range stmtConds(st) {
				eachCondLeaf(c, func(e Expr) { eachLeaf(e, count) }, nil)
				eachCmp(c, cmp)
			}
			for _, e := range stmtExprs(st) {
				eachLeaf(e, count)
			}
		})
		out[t] = map[string]bool{}
		for _, p := range t.Params {
			if uses[p] == eqUses[p] {
				out[t][p] = true
			}
		}
	}
	return out
}

// isLeaf reports whether e is a constant, a name or a row's field.
func isLeaf(e Expr) bool {
	switch e.(type) {
	case *IntLit, *Ref, *FieldOf:
		return true
	}
	return false
}

// stmtConds are the conditions of a statement (its WHERE or IF condition).
func stmtConds(st Stmt) []Cond {
	var c Cond
	switch st := st.(type) {
	case *Select:
		c = st.Where
	case *Update:
		c = st.Where
	case *Delete:
		c = st.Where
	case *If:
		c = st.Cond
	}
	if c == nil {
		return nil
	}
	return []Cond{c}
}

// stmtExprs are the expressions of a statement outside its conditions.
func stmtExprs(st Stmt) []Expr {
	var out []Expr
	switch st := st.(type) {
	case *Update:
		for _, a := range st.Sets {
			out = append(out, a.Expr)
		}
	case *Insert:
		for _, a := range st.Values {
			out = append(out, a.Expr)
		}
	case *Let:
		out = append(out, st.Expr)
	}
	return out
}

// eachCmp calls fn on every comparison of c.
func eachCmp(c Cond, fn func(*Cmp)) {
	switch x := c.(type) {
	case *Cmp:
		fn(x)
	case *Not:
		eachCmp(x.C, fn)
	case *Logic:
		eachCmp(x.L, fn)
		eachCmp(x.R, fn)
	}
}

// programConsts are the integer constants of the program, sorted.
func programConsts(prog *Program) []int64 {
	var out []int64
	add := func(e Expr) {
		if l, ok := e.(*IntLit); ok && !slices.Contains(out, l.V) {
			out = append(out, l.V)
		}
	}
	for _, t := range prog.Txns {
		eachStmt(t.Body, func(st Stmt) {
			for _, c := range stmtConds(st) {
				eachCondLeaf(c, func(e Expr) { eachLeaf(e, add) }, nil)
			}
			for _, e := range stmtExprs(st) {
				eachLeaf(e, add)
			}
		})
	}
	for _, a := range prog.Assumes {
		if a.Premise != nil {
			eachCondLeaf(a.Premise, func(e Expr) { eachLeaf(e, add) }, nil)
		}
		eachCondLeaf(a.Conclusion, func(e Expr) { eachLeaf(e, add) }, nil)
	}
	slices.Sort(out)
	return out
}

// paramClass is the part of a blocking clause that pins the parameters: the
// exact value of each parameter that is not equality-only, and for the
// equality-only ones which equal each other and which equal each constant.
func paramClass(enc *Encoding, w *Witness, es []smtlib.Term) []smtlib.Term {
	eqOnly := eqOnlyParams(enc.prog)
	consts := programConsts(enc.prog)
	type pv struct {
		term smtlib.Term
		v    int64
	}
	var conj []smtlib.Term
	var free []pv
	for i, in := range w.Instances {
		t := enc.txnByName(in.Txn)
		for _, p := range in.Params {
			x := smtlib.App(paramSym(t, p.Name), es[i])
			if !eqOnly[t][p.Name] {
				conj = append(conj, smtlib.Eq(x, smtlib.Int(p.Value)))
				continue
			}
			for _, c := range consts {
				conj = append(conj, boolLit(smtlib.Eq(x, smtlib.Int(c)), p.Value == c))
			}
			for _, o := range free {
				conj = append(conj, boolLit(smtlib.Eq(x, o.term), p.Value == o.v))
			}
			free = append(free, pv{x, p.Value})
		}
	}
	return conj
}

// txnByName is the encoded transaction of that name (nil if none).
func (e *Encoding) txnByName(name string) *Txn {
	for _, t := range e.txns {
		if t.Name == name {
			return t
		}
	}
	return nil
}
