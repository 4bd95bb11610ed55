package static

import (
	"errors"
	"fmt"
	"strings"
)

type varKind int

const (
	varInvalid varKind = iota
	varParam           // a parameter: an integer, never NULL
	varInt             // an integer local (LET, scalar SELECT, aggregate): may be NULL
	varRows            // a set of rows of a table (SELECT *)
	varIter            // a FOREACH iterator: one row of a table
)

// varInfo is what the checker knows about a name of a transaction.
type varInfo struct {
	name  string
	kind  varKind
	table *Table     // rows and iterators
	loops []*Foreach // loops enclosing the definition (for an iterator: including its own)
	def   Stmt       // defining statement (nil for parameters)
	order int        // definition order; parameters are 0
}

// pathCond is an enclosing IF condition and the branch taken.
type pathCond struct {
	c     Cond
	pos   bool
	depth int // number of enclosing loops where the IF sits
}

// stmtCtx is where a statement sits: its transaction, loops and IF path.
type stmtCtx struct {
	txn   *Txn
	loops []*Foreach
	path  []pathCond
	table *Table
}

type checker struct {
	prog   *Program
	tables map[string]*Table
	errs   []error
	txn    *Txn
	order  int
}

func (c *checker) errf(pos Pos, kind error, hint, format string, args ...any) {
	c.errs = append(c.errs, &ParseError{Line: pos.Line, Col: pos.Col, Kind: kind, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

func check(prog *Program) error {
	c := &checker{prog: prog, tables: map[string]*Table{}}
	for _, t := range prog.Tables {
		c.checkTable(t)
	}
	names := map[string]bool{}
	for _, t := range prog.Txns {
		if names[t.Name] {
			c.errf(t.Pos, ErrInvalid, "", "transaction %s declared twice", t.Name)
		}
		names[t.Name] = true
		c.checkTxn(t)
	}
	for _, a := range prog.Assumes {
		c.checkAssume(a)
	}
	if len(prog.Txns) == 0 && len(c.errs) == 0 {
		c.errf(Pos{1, 1}, ErrInvalid, "declare at least one TXN name(params) { ... }", "program has no transactions")
	}
	return errors.Join(c.errs...)
}

// checkTable checks a TABLE declaration: a new name, distinct fields, none
// named Alive, and a key.
func (c *checker) checkTable(t *Table) {
	if c.tables[t.Name] != nil {
		c.errf(t.Pos, ErrInvalid, "", "table %s declared twice", t.Name)
	}
	c.tables[t.Name] = t
	seen := map[string]bool{}
	for _, f := range t.Fields {
		if seen[f.Name] {
			c.errf(t.Pos, ErrInvalid, "", "table %s: field %s declared twice", t.Name, f.Name)
		}
		if strings.EqualFold(f.Name, "Alive") {
			c.errf(t.Pos, ErrInvalid, "rename the field", "table %s: field name Alive is reserved for row liveness", t.Name)
		}
		seen[f.Name] = true
	}
	if len(keyFields(t)) == 0 {
		c.errf(t.Pos, ErrInvalid, "mark the primary key fields with KEY", "table %s has no KEY field", t.Name)
	}
}

func (c *checker) checkTxn(t *Txn) {
	c.txn = t
	c.order = 0
	t.vars = map[string]*varInfo{}
	for _, p := range t.Params {
		if t.vars[p] != nil {
			c.errf(t.Pos, ErrInvalid, "", "transaction %s: parameter %s declared twice", t.Name, p)
		}
		t.vars[p] = &varInfo{name: p, kind: varParam}
	}
	c.block(t.Body, &stmtCtx{txn: t})
}

func (c *checker) define(pos Pos, name string, kind varKind, table *Table, loops []*Foreach, def Stmt) {
	if prev := c.txn.vars[name]; prev != nil {
		where := "a parameter"
		if prev.def != nil {
			where = "already defined at " + prev.def.At().String()
		}
		c.errf(pos, ErrInvalid, "the analyzer needs each variable assigned once; use a new name", "variable %s is %s", name, where)
		return
	}
	for _, tb := range c.prog.Tables {
		for _, f := range tb.Fields {
			if f.Name == name {
				c.errf(pos, ErrInvalid, "rename the variable", "variable %s has the name of field %s.%s", name, tb.Name, f.Name)
				return
			}
		}
	}
	c.order++
	c.txn.vars[name] = &varInfo{name: name, kind: kind, table: table, loops: loops, def: def, order: c.order}
}

func (c *checker) block(body []Stmt, ctx *stmtCtx) {
	for _, s := range body {
		c.stmt(s, ctx)
	}
}

func (c *checker) table(pos Pos, name string) *Table {
	t := c.tables[name]
	if t == nil {
		c.errf(pos, ErrInvalid, "declare it with TABLE "+name+" (...);", "unknown table %s", name)
	}
	return t
}

func field(t *Table, name string) *Field {
	for _, f := range t.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func keyFields(t *Table) []*Field {
	var out []*Field
	for _, f := range t.Fields {
		if f.Key {
			out = append(out, f)
		}
	}
	return out
}

// stmt checks one statement and records where it sits: one method per
// statement kind.
func (c *checker) stmt(s Stmt, ctx *stmtCtx) {
	c.txn.stmts = append(c.txn.stmts, s)
	here := &stmtCtx{txn: ctx.txn, loops: ctx.loops, path: ctx.path}
	switch s := s.(type) {
	case *Select:
		s.ctx = here
		c.selectStmt(s, ctx, here)
	case *Update:
		s.ctx = here
		c.updateStmt(s, ctx, here)
	case *Insert:
		s.ctx = here
		c.insertStmt(s, ctx, here)
	case *Delete:
		s.ctx = here
		c.deleteStmt(s, ctx, here)
	case *Let:
		s.ctx = here
		c.letStmt(s, ctx)
	case *If:
		c.ifStmt(s, ctx)
	case *Foreach:
		c.foreach(s, ctx)
	case *Skip:
	}
}

// stmtTable resolves the table a statement addresses and records it in the
// statement's context; nil (reported) when there is no such table.
func (c *checker) stmtTable(pos Pos, name string, here *stmtCtx) *Table {
	t := c.table(pos, name)
	if t != nil {
		here.table = t
	}
	return t
}

func (c *checker) deleteStmt(s *Delete, ctx, here *stmtCtx) {
	if t := c.stmtTable(s.Pos, s.Table, here); t != nil {
		c.cond(s.Where, ctx, t, true)
	}
}

func (c *checker) letStmt(s *Let, ctx *stmtCtx) {
	c.expr(s.Expr, ctx, nil)
	c.define(s.Pos, s.Var, varInt, nil, ctx.loops, s)
}

func (c *checker) selectStmt(s *Select, ctx, here *stmtCtx) {
	t := c.stmtTable(s.Pos, s.Table, here)
	if t == nil {
		return
	}
	for _, f := range s.Fields {
		if field(t, f) == nil {
			c.errf(s.Pos, ErrInvalid, "", "table %s has no field %s", t.Name, f)
		}
	}
	c.cond(s.Where, ctx, t, true)
	switch s.Kind {
	case SelectFields:
		if missing := missingKeys(t, s.Where); len(missing) > 0 {
			c.errf(s.Pos, ErrUnsupported, "fix every key field with = in a top-level AND, or use SELECT * AS rows / an aggregate",
				"unsupported construct: SELECT of fields from %s without the full key (missing %s) returns a set of values", t.Name, strings.Join(missing, ", "))
		}
		for _, v := range s.Vars {
			c.define(s.Pos, v, varInt, nil, ctx.loops, s)
		}
	case SelectRows:
		c.define(s.Pos, s.Vars[0], varRows, t, ctx.loops, s)
	default:
		c.define(s.Pos, s.Vars[0], varInt, nil, ctx.loops, s)
	}
}

func (c *checker) updateStmt(s *Update, ctx, here *stmtCtx) {
	t := c.stmtTable(s.Pos, s.Table, here)
	if t == nil {
		return
	}
	seen := map[string]bool{}
	for _, a := range s.Sets {
		f := field(t, a.Field)
		switch {
		case f == nil:
			c.errf(a.Pos, ErrInvalid, "", "table %s has no field %s", t.Name, a.Field)
		case f.Key:
			c.errf(a.Pos, ErrUnsupported, "delete the row and insert a new one", "unsupported construct: UPDATE of key field %s.%s", t.Name, f.Name)
		case seen[a.Field]:
			c.errf(a.Pos, ErrInvalid, "", "field %s set twice", a.Field)
		}
		seen[a.Field] = true
		c.expr(a.Expr, ctx, t)
	}
	c.cond(s.Where, ctx, t, true)
}

func (c *checker) insertStmt(s *Insert, ctx, here *stmtCtx) {
	t := c.stmtTable(s.Pos, s.Table, here)
	if t == nil {
		return
	}
	seen := map[string]bool{}
	for _, a := range s.Values {
		if field(t, a.Field) == nil {
			c.errf(a.Pos, ErrInvalid, "", "table %s has no field %s", t.Name, a.Field)
		} else if seen[a.Field] {
			c.errf(a.Pos, ErrInvalid, "", "field %s given twice", a.Field)
		}
		seen[a.Field] = true
		c.expr(a.Expr, ctx, nil)
	}
	for _, k := range keyFields(t) {
		if !seen[k.Name] {
			c.errf(s.Pos, ErrInvalid, "give every key field a value", "INSERT INTO %s is missing key field %s", t.Name, k.Name)
		}
	}
}

// ifStmt checks the condition and both branches, each with the condition
// (or its negation) on its path.
func (c *checker) ifStmt(s *If, ctx *stmtCtx) {
	c.cond(s.Cond, ctx, nil, false)
	depth := len(ctx.loops)
	c.block(s.Then, &stmtCtx{txn: ctx.txn, loops: ctx.loops, path: appendPath(ctx.path, pathCond{s.Cond, true, depth})})
	c.block(s.Else, &stmtCtx{txn: ctx.txn, loops: ctx.loops, path: appendPath(ctx.path, pathCond{s.Cond, false, depth})})
}

// foreach checks that the loop iterates a set of rows and checks the body
// inside the loop.
func (c *checker) foreach(s *Foreach, ctx *stmtCtx) {
	set := c.use(s.Pos, s.Set, ctx)
	if set == nil {
		return
	}
	if set.kind != varRows {
		c.errf(s.Pos, ErrInvalid, "iterate over the result of SELECT * AS rows", "FOREACH over %s, which is not a set of rows", s.Set)
		return
	}
	loops := append(append([]*Foreach(nil), ctx.loops...), s)
	c.define(s.Pos, s.Iter, varIter, set.table, loops, s)
	c.block(s.Body, &stmtCtx{txn: ctx.txn, loops: loops, path: ctx.path})
}

func appendPath(p []pathCond, c pathCond) []pathCond {
	return append(append([]pathCond(nil), p...), c)
}

// use resolves a variable reference at the current point.
func (c *checker) use(pos Pos, name string, ctx *stmtCtx) *varInfo {
	v := c.txn.vars[name]
	if v == nil {
		c.errf(pos, ErrInvalid, "", "undefined name %s", name)
		return nil
	}
	if v.kind == varParam {
		return v
	}
	if len(v.loops) > len(ctx.loops) {
		c.errf(pos, ErrInvalid, "a variable assigned in a FOREACH body is visible only inside it", "%s is out of scope here", name)
		return nil
	}
	for i, l := range v.loops {
		if ctx.loops[i] != l {
			c.errf(pos, ErrInvalid, "a variable assigned in a FOREACH body is visible only inside it", "%s is out of scope here", name)
			return nil
		}
	}
	return v
}

// expr checks an expression; table is the statement's table whose fields may
// be named bare (nil where fields are not allowed).
func (c *checker) expr(e Expr, ctx *stmtCtx, table *Table) {
	switch e := e.(type) {
	case *IntLit:
	case *Ref:
		c.ref(e, ctx, table)
	case *FieldOf:
		c.fieldOf(e, ctx)
	case *Binary:
		c.expr(e.L, ctx, table)
		c.expr(e.R, ctx, table)
	case *Neg:
		c.expr(e.X, ctx, table)
	}
}

// ref checks a name: a field of the statement's table (marked as such), or
// an integer variable or parameter in scope.
func (c *checker) ref(e *Ref, ctx *stmtCtx, table *Table) {
	if f := fieldOrNil(table, e.Name); f != nil {
		e.field, e.key = true, f.Key
		return
	}
	v := c.use(e.Pos, e.Name, ctx)
	if v != nil && v.kind != varParam && v.kind != varInt {
		c.errf(e.Pos, ErrInvalid, "use iter.field for a row's field", "%s is not an integer", e.Name)
	}
}

// fieldOf checks iter.field: iter is a FOREACH row in scope, and its table
// has the field.
func (c *checker) fieldOf(e *FieldOf, ctx *stmtCtx) {
	v := c.use(e.Pos, e.Iter, ctx)
	switch {
	case v == nil:
	case v.kind != varIter:
		c.errf(e.Pos, ErrInvalid, "", "%s is not a FOREACH row", e.Iter)
	case field(v.table, e.Field) == nil:
		c.errf(e.Pos, ErrInvalid, "", "table %s has no field %s", v.table.Name, e.Field)
	}
}

func (c *checker) cond(cd Cond, ctx *stmtCtx, table *Table, where bool) {
	switch cd := cd.(type) {
	case *Cmp:
		c.expr(cd.L, ctx, table)
		c.expr(cd.R, ctx, table)
	case *IsNull:
		v := c.use(cd.Pos, cd.Var, ctx)
		if v != nil && v.kind != varInt && v.kind != varParam {
			c.errf(cd.Pos, ErrInvalid, "", "IS NULL applies to integer variables, not %s", cd.Var)
		}
	case *Not:
		c.cond(cd.C, ctx, table, where)
	case *Logic:
		c.cond(cd.L, ctx, table, where)
		c.cond(cd.R, ctx, table, where)
	case *BoolLit:
	}
}

// keyEqs returns, for each key field fixed by a top-level conjunct
// "key = expr" (expr naming no field of the table), that expression.
func keyEqs(t *Table, w Cond) map[string]Expr { return fieldsFixed(t, w, true) }

// fieldEqs returns, for each non-key field of t fixed by a top-level
// conjunct "field = expr" (expr naming no field), that expression.
func fieldEqs(t *Table, w Cond) map[string]Expr { return fieldsFixed(t, w, false) }

// fieldsFixed returns, for each field of t that is a key field (key) or not
// (!key) and is fixed by a top-level conjunct "field = expr" of w, expr
// naming no field, the first such expression.
func fieldsFixed(t *Table, w Cond, key bool) map[string]Expr {
	out := map[string]Expr{}
	add := func(l, x Expr) {
		r, ok := l.(*Ref)
		if !ok || !r.field || mentionsField(x) {
			return
		}
		if f := field(t, r.Name); f != nil && f.Key == key {
			if _, dup := out[f.Name]; !dup {
				out[f.Name] = x
			}
		}
	}
	var walk func(Cond)
	walk = func(c Cond) {
		switch c := c.(type) {
		case *Logic:
			if c.And {
				walk(c.L)
				walk(c.R)
			}
		case *Cmp:
			if c.Op == "=" {
				add(c.L, c.R)
				add(c.R, c.L)
			}
		}
	}
	walk(w)
	return out
}

func missingKeys(t *Table, w Cond) []string {
	eqs := keyEqs(t, w)
	var out []string
	for _, k := range keyFields(t) {
		if _, ok := eqs[k.Name]; !ok {
			out = append(out, k.Name)
		}
	}
	return out
}

func mentionsField(e Expr) bool {
	switch e := e.(type) {
	case *Ref:
		return e.field
	case *Binary:
		return mentionsField(e.L) || mentionsField(e.R)
	case *Neg:
		return mentionsField(e.X)
	}
	return false
}

func fieldOrNil(t *Table, name string) *Field {
	if t == nil {
		return nil
	}
	return field(t, name)
}

// assumeRows binds the row names of an assumption to their tables (and
// records each row's table), reporting a name bound twice or an unknown
// table.
func (c *checker) assumeRows(a *Assume) map[string]*Table {
	rows := map[string]*Table{}
	for i := range a.Rows {
		r := &a.Rows[i]
		if rows[r.Name] != nil {
			c.errf(a.Pos, ErrInvalid, "", "ASSUME: row name %s bound twice", r.Name)
		}
		t := c.table(a.Pos, r.Table)
		if t == nil {
			continue
		}
		r.table = t
		rows[r.Name] = t
	}
	return rows
}

// checkAssume checks an ASSUME INITIALLY declaration: distinct row names over
// declared tables, and conditions that compare expressions over row.field
// and integer constants only (no parameters, variables or IS NULL: the
// initial database has no transaction context, and live rows have no NULLs).
func (c *checker) checkAssume(a *Assume) {
	rows := c.assumeRows(a)
	leaf := func(e Expr) {
		switch e := e.(type) {
		case *Ref:
			c.errf(e.Pos, ErrUnsupported, "an initial-database assumption names row fields (row.field) and constants only",
				"unsupported construct: %s in ASSUME (not a row field)", e.Name)
		case *FieldOf:
			t := rows[e.Iter]
			switch {
			case t == nil:
				c.errf(e.Pos, ErrInvalid, "bind it with FORALL "+e.Iter+" IN table", "ASSUME: unknown row %s", e.Iter)
			case field(t, e.Field) == nil:
				c.errf(e.Pos, ErrInvalid, "", "table %s has no field %s", t.Name, e.Field)
			}
		}
	}
	isNull := func(cd *IsNull) {
		c.errf(cd.Pos, ErrUnsupported, "fields of live rows are never NULL", "unsupported construct: IS NULL in ASSUME")
	}
	if a.Premise != nil {
		eachCondLeaf(a.Premise, leaf, isNull)
	}
	eachCondLeaf(a.Conclusion, leaf, isNull)
}
