package static

import "fmt"

// Pos is a 1-based line and column in the program source.
type Pos struct{ Line, Col int }

func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Program is a parsed and checked set of tables and transaction programs.
type Program struct {
	Tables  []*Table
	Txns    []*Txn
	Assumes []*Assume
}

// Assume is a condition the initial database is assumed to satisfy:
//
//	ASSUME INITIALLY FORALL d IN District, n IN NewOrders WHERE premise: conclusion;
//
// For every combination of rows live in the initial database, one bound to
// each name, premise implies conclusion (no WHERE: the premise is TRUE).
// Conditions compare integer expressions over row.field and constants. The
// bounded queries use it (it constrains only the database before the first
// transaction, so it needs no proof); the unbounded proofs do not.
type Assume struct {
	Pos        Pos
	Rows       []AssumeRow
	Premise    Cond // nil: TRUE
	Conclusion Cond
}

// AssumeRow binds a name to the rows of a table in an [Assume].
type AssumeRow struct {
	Name  string
	Table string
	table *Table
}

// Table declares a table: its fields, some of them the primary key.
type Table struct {
	Pos    Pos
	Name   string
	Fields []*Field
}

// Field is a column of a table. Every field holds an integer.
type Field struct {
	Name string
	Key  bool
}

// Txn is a transaction program: parameters and a body.
type Txn struct {
	Pos    Pos
	Name   string
	Params []string
	Body   []Stmt
	vars   map[string]*varInfo
	stmts  []Stmt // every statement in source order, nested ones included
}

// Stmt is one statement of a transaction body.
type Stmt interface{ At() Pos }

// SelectKind says what a SELECT returns.
type SelectKind int

// The kinds of SELECT.
const (
	SelectInvalid SelectKind = iota
	SelectFields             // SELECT f AS v, g AS w ... (a full key is fixed: scalars)
	SelectRows               // SELECT * AS s (a set of rows)
	SelectMin
	SelectMax
	SelectCount
)

var selectNames = [...]string{"invalid", "fields", "rows", "MIN", "MAX", "COUNT"}

func (k SelectKind) String() string { return selectNames[k] }

// Select reads from a table.
type Select struct {
	Pos    Pos
	Kind   SelectKind
	Table  string
	Fields []string // selected fields (SelectFields), or the aggregated field (MIN, MAX; COUNT: empty)
	Vars   []string // the AS variables, one per field (one for rows and aggregates)
	Where  Cond
	ctx    *stmtCtx
}

// Assign is "field = expr" in SET or VALUES.
type Assign struct {
	Pos   Pos
	Field string
	Expr  Expr
}

// Update writes fields of the rows matching Where.
type Update struct {
	Pos   Pos
	Table string
	Sets  []Assign
	Where Cond
	ctx   *stmtCtx
}

// Insert adds a row; every key field must be given, other fields default to 0.
type Insert struct {
	Pos    Pos
	Table  string
	Values []Assign
	ctx    *stmtCtx
}

// Delete removes the rows matching Where.
type Delete struct {
	Pos   Pos
	Table string
	Where Cond
	ctx   *stmtCtx
}

// Let assigns an expression to a local variable.
type Let struct {
	Pos  Pos
	Var  string
	Expr Expr
	ctx  *stmtCtx
}

// If branches on a condition over variables and parameters.
type If struct {
	Pos        Pos
	Cond       Cond
	Then, Else []Stmt
}

// Foreach runs Body once per row of the set variable Set, binding Iter.
type Foreach struct {
	Pos  Pos
	Iter string
	Set  string
	Body []Stmt
}

// Skip does nothing.
type Skip struct{ Pos Pos }

func (s *Select) At() Pos  { return s.Pos }
func (s *Update) At() Pos  { return s.Pos }
func (s *Insert) At() Pos  { return s.Pos }
func (s *Delete) At() Pos  { return s.Pos }
func (s *Let) At() Pos     { return s.Pos }
func (s *If) At() Pos      { return s.Pos }
func (s *Foreach) At() Pos { return s.Pos }
func (s *Skip) At() Pos    { return s.Pos }

// Expr is an integer expression.
type Expr interface{ exprPos() Pos }

// IntLit is an integer constant.
type IntLit struct {
	Pos Pos
	V   int64
}

// Ref names a parameter, a local variable or (inside WHERE and SET) a field
// of the statement's table. Check resolves which.
type Ref struct {
	Pos   Pos
	Name  string
	field bool // resolved: a field of the statement's table
	key   bool // resolved: a key field
}

// FieldOf is iter.field, a field of the row bound by a FOREACH.
type FieldOf struct {
	Pos   Pos
	Iter  string
	Field string
}

// Binary is L op R for op in + - *.
type Binary struct {
	Pos  Pos
	Op   string
	L, R Expr
}

// Neg is -X.
type Neg struct {
	Pos Pos
	X   Expr
}

func (e *IntLit) exprPos() Pos  { return e.Pos }
func (e *Ref) exprPos() Pos     { return e.Pos }
func (e *FieldOf) exprPos() Pos { return e.Pos }
func (e *Binary) exprPos() Pos  { return e.Pos }
func (e *Neg) exprPos() Pos     { return e.Pos }

// Cond is a Boolean condition.
type Cond interface{ condPos() Pos }

// Cmp is L op R for op in < <= = <> > >=. A comparison involving NULL is false.
type Cmp struct {
	Pos  Pos
	Op   string
	L, R Expr
}

// IsNull is "v IS NULL" (or IS NOT NULL when Negated).
type IsNull struct {
	Pos     Pos
	Var     string
	Negated bool
}

// Not negates a condition.
type Not struct {
	Pos Pos
	C   Cond
}

// Logic is L AND R or L OR R.
type Logic struct {
	Pos  Pos
	And  bool
	L, R Cond
}

// BoolLit is TRUE or FALSE.
type BoolLit struct {
	Pos Pos
	V   bool
}

func (c *Cmp) condPos() Pos     { return c.Pos }
func (c *IsNull) condPos() Pos  { return c.Pos }
func (c *Not) condPos() Pos     { return c.Pos }
func (c *Logic) condPos() Pos   { return c.Pos }
func (c *BoolLit) condPos() Pos { return c.Pos }

// keyField is set by the checker for Refs naming key fields.
func (e *Ref) keyField() bool { return e.field && e.key }

// eachLeaf calls fn on every operand of e that is not itself an operator (Binary, Neg), left
// to right.
func eachLeaf(e Expr, fn func(Expr)) {
	switch x := e.(type) {
	case *Binary:
		eachLeaf(x.L, fn)
		eachLeaf(x.R, fn)
	case *Neg:
		eachLeaf(x.X, fn)
	case nil:
	default:
		fn(e)
	}
}

// eachCondLeaf calls fn on the leaf operands (eachLeaf) of every comparison in c, through
// NOT, AND and OR, and isNull, unless nil, on every IS NULL test (whose operand fn does not
// see).
func eachCondLeaf(c Cond, fn func(Expr), isNull func(*IsNull)) {
	switch x := c.(type) {
	case *Cmp:
		eachLeaf(x.L, fn)
		eachLeaf(x.R, fn)
	case *IsNull:
		if isNull != nil {
			isNull(x)
		}
	case *Not:
		eachCondLeaf(x.C, fn, isNull)
	case *Logic:
		eachCondLeaf(x.L, fn, isNull)
		eachCondLeaf(x.R, fn, isNull)
	}
}

// eachStmt calls fn on every statement of body in source order, nested ones
// included (a statement before the ones it contains).
func eachStmt(body []Stmt, fn func(Stmt)) {
	for _, st := range body {
		fn(st)
		switch st := st.(type) {
		case *If:
			eachStmt(st.Then, fn)
			eachStmt(st.Else, fn)
		case *Foreach:
			eachStmt(st.Body, fn)
		}
	}
}

// stmtLeaves calls fn on the leaf operands (eachLeaf) of the expressions
// and conditions of st itself, in source order, not those of the statements
// it contains.
func stmtLeaves(st Stmt, fn func(Expr)) {
	switch st := st.(type) {
	case *Select:
		eachCondLeaf(st.Where, fn, nil)
	case *Update:
		eachCondLeaf(st.Where, fn, nil)
		for _, a := range st.Sets {
			eachLeaf(a.Expr, fn)
		}
	case *Insert:
		for _, a := range st.Values {
			eachLeaf(a.Expr, fn)
		}
	case *Delete:
		eachCondLeaf(st.Where, fn, nil)
	case *Let:
		eachLeaf(st.Expr, fn)
	case *If:
		eachCondLeaf(st.Cond, fn, nil)
	}
}
