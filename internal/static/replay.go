package static

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Instance is one transaction instance of a witness.
type Instance struct {
	Name   string  `json:"name"` // t1, t2, ...
	Txn    string  `json:"txn"`
	Params []Param `json:"params"`
}

// Param is a parameter value of an instance.
type Param struct {
	Name  string `json:"name"`
	Value int64  `json:"value"`
}

// Edge is a dependency between two instances (indices into the witness).
type Edge struct {
	From  int    `json:"from"`
	To    int    `json:"to"`
	Rel   string `json:"rel"`             // WR, WW or RW
	Table string `json:"table,omitempty"` // empty for edges taken from the solver's model
	Row   string `json:"row,omitempty"`   // key values, e.g. "AccID=1"
	Field string `json:"field,omitempty"` // Alive for existence
	// FromStmt and ToStmt locate the statements that cause the edge.
	FromStmt string `json:"from_stmt,omitempty"`
	ToStmt   string `json:"to_stmt,omitempty"`
}

// Execution is a concrete abstract execution to replay: instances, their
// visibility and arbitration (ar is the order of Order), and the initial
// database.
type Execution struct {
	Instances []Instance
	Order     []int    // instance indices in ar order
	Vis       [][2]int // (from, to) pairs
	// Initial rows: every listed row exists initially; non-key fields not
	// given take Default.
	Initial map[string][]Row
	Default int64
	// Hints are, per instance, values of its top-level variables in the
	// solver's model; a lazily created row read by a scalar SELECT takes the
	// hinted value, so each instance reads what the model says it read.
	Hints []map[string]int64
	// DeadRows makes lazily created rows exist initially as deleted rows
	// (not live, but with field values), which predicates on non-key fields
	// still match.
	DeadRows bool
	// DeadTables makes lazily created rows of these tables exist initially as
	// deleted rows, like DeadRows for those tables only.
	DeadTables map[string]bool
	// HintsOverride lets a later reader's hint replace an earlier one. Pass 1
	// (Lazy) only proposes an initial database; a second, non-lazy replay
	// from that database is what confirms a witness.
	HintsOverride bool
	// Spread, in lazy mode, makes a SELECT * whose rows a FOREACH iterates
	// seed one initial row per value of Spread (as many as its WHERE admits,
	// with distinct keys), whose non-key fields the FOREACH bodies read take
	// that value. One seeded row per scan cannot show an anomaly that needs
	// a loop to visit several rows (TPC-C's Stock-Level long fork).
	Spread []int64
	// Lazy creates a missing row, as if it existed initially, when a statement
	// addresses it by its full key; the created keys are returned in
	// ReplayResult.Created.
	Lazy bool
}

// Row is an initial row: its key values and some non-key field values.
type Row struct {
	Key    []int64          `json:"key"`
	Values map[string]int64 `json:"values"`
	Dead   bool             `json:"dead"` // exists as a deleted row: not live, but with field values
}

// ReplayResult is the dependency graph of a replayed execution.
type ReplayResult struct {
	Edges   []Edge
	Cycle   []Edge // a shortest dependency cycle, or nil
	Created map[string][]Row
	// Touched holds, per table, the keys of the rows some statement's WHERE
	// matched ("1,2" for key (1, 2)); an initial row outside it was only
	// ever read by predicate reads of rows that do not match.
	Touched map[string]map[string]bool
}

type val struct {
	n    int64
	null bool
}

func (v val) String() string {
	if v.null {
		return "NULL"
	}
	return strconv.FormatInt(v.n, 10)
}

type rowKey struct {
	table string
	key   string // comma-joined key values in field order
}

type cell struct {
	row   rowKey
	field string // "" is Alive
}

type version struct {
	v      val
	writer int // instance index, -1 for the initial database
	stmt   Stmt
}

type readSpec struct {
	inst   int
	stmt   Stmt
	table  *Table
	x      *exec // frozen state of the reader at the statement
	where  Cond
	fields []string // read on matching rows ("" = Alive)
	all    []string // read on every row
	// upTo, set for MIN (MAX) over a key field with a non-NULL result,
	// limits the matching rows read to those whose key field is at most
	// (at least) the result (App. B, E-SELECT-MIN/MAX).
	upTo *extremum
}

type extremum struct {
	key int // index among the key fields
	max bool
	n   int64
}

// delSpec is a DELETE: it writes Alive = 0 on every row its WHERE matches,
// including rows that do not exist yet (resolved lazily).
type delSpec struct {
	x     *exec
	stmt  *Delete
	table *Table
}

func (d delSpec) matches(rk rowKey) bool {
	return rk.table == d.table.Name && d.x.cond(d.stmt.Where, d.table, &rk)
}

type replayer struct {
	prog    *Program
	ex      *Execution
	tables  map[string]*Table
	initial map[cell]version
	known   map[rowKey]bool
	writes  []map[cell]version // per instance
	dels    [][]delSpec        // per instance
	reads   []readSpec
	created map[string][]Row
	pinned  map[cell]bool
	touched map[rowKey]bool
}

func keyString(vs []int64) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = strconv.FormatInt(v, 10)
	}
	return strings.Join(parts, ",")
}

func parseKey(s string) []int64 {
	var out []int64
	for _, p := range strings.Split(s, ",") {
		n, _ := strconv.ParseInt(p, 10, 64)
		out = append(out, n)
	}
	return out
}

// Replay runs the instances of ex on a store that applies, for each instance,
// the writes of its visible predecessors in ar order (last writer wins), and
// returns the resulting dependency graph (Adya's, with the initial database as
// a virtual first writer).
func Replay(prog *Program, ex *Execution) (*ReplayResult, error) {
	rp := newReplayer(prog, ex)
	if err := rp.loadInitial(); err != nil {
		return nil, err
	}
	pos := make([]int, len(ex.Instances))
	for i, idx := range ex.Order {
		pos[idx] = i
	}
	if err := rp.runAll(pos); err != nil {
		return nil, err
	}
	rp.fillCreated()
	res := &ReplayResult{Edges: rp.edges(pos), Created: rp.created, Touched: rp.touchedRows()}
	res.Cycle = shortestCycle(len(ex.Instances), res.Edges)
	return res, nil
}

func newReplayer(prog *Program, ex *Execution) *replayer {
	rp := &replayer{prog: prog, ex: ex, tables: map[string]*Table{}, initial: map[cell]version{},
		known: map[rowKey]bool{}, writes: make([]map[cell]version, len(ex.Instances)), dels: make([][]delSpec, len(ex.Instances)),
		created: map[string][]Row{}, pinned: map[cell]bool{}, touched: map[rowKey]bool{}}
	for _, t := range prog.Tables {
		rp.tables[t.Name] = t
	}
	return rp
}

// loadInitial puts the execution's initial rows in the store: every listed
// row exists (as a deleted row if Dead), with its given values.
func (rp *replayer) loadInitial() error {
	for tname, rows := range rp.ex.Initial {
		tb := rp.tables[tname]
		if tb == nil {
			return fmt.Errorf("replay: unknown table %s", tname)
		}
		for _, row := range rows {
			rp.addInitial(tb, row.Key)
			rk := rowKey{tb.Name, keyString(row.Key)}
			if row.Dead {
				rp.initial[cell{rk, ""}] = version{v: val{n: 0}, writer: -1}
			}
			for f, v := range row.Values {
				rp.initial[cell{rk, f}] = version{v: val{n: v}, writer: -1}
			}
		}
	}
	return nil
}

// runAll runs the instances in ar order (pos is each instance's place in
// it), each on the writes of the earlier instances it sees.
func (rp *replayer) runAll(pos []int) error {
	txns := map[string]*Txn{}
	for _, t := range rp.prog.Txns {
		txns[t.Name] = t
	}
	vis := map[[2]int]bool{}
	for _, p := range rp.ex.Vis {
		vis[p] = true
	}
	for _, i := range rp.ex.Order {
		in := rp.ex.Instances[i]
		t := txns[in.Txn]
		if t == nil {
			return fmt.Errorf("replay: unknown transaction %s", in.Txn)
		}
		var seen []int
		for _, j := range rp.ex.Order[:pos[i]] {
			if vis[[2]int{j, i}] {
				seen = append(seen, j)
			}
		}
		if err := rp.run(i, t, seen); err != nil {
			return fmt.Errorf("replay %s (%s): %w", in.Name, in.Txn, err)
		}
	}
	return nil
}

// run runs instance i of t on the snapshot of the instances it sees.
func (rp *replayer) run(i int, t *Txn, seen []int) error {
	rp.writes[i] = map[cell]version{}
	x := &exec{rp: rp, inst: i, txn: t, vis: seen, vars: map[string]val{}, sets: map[string][]rowKey{}, rows: map[string]rowKey{}}
	for _, p := range rp.ex.Instances[i].Params {
		x.vars[p.Name] = val{n: p.Value}
	}
	return x.block(t.Body)
}

// fillCreated completes the rows the replay created lazily with their
// initial values and liveness, for the caller's next replay.
func (rp *replayer) fillCreated() {
	for tname, rows := range rp.created {
		for i, row := range rows {
			rk := rowKey{tname, keyString(row.Key)}
			row.Dead = rp.ex.DeadRows || rp.ex.DeadTables[tname]
			row.Values = map[string]int64{}
			for _, f := range nonKey(rp.tables[tname]) {
				if v, ok := rp.initial[cell{rk, f}]; ok && !v.v.null {
					row.Values[f] = v.v.n
				}
			}
			rows[i] = row
		}
	}
}

// touchedRows are the touched rows' keys by table.
func (rp *replayer) touchedRows() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for rk := range rp.touched {
		if out[rk.table] == nil {
			out[rk.table] = map[string]bool{}
		}
		out[rk.table][rk.key] = true
	}
	return out
}

func (rp *replayer) addInitial(tb *Table, key []int64) {
	rk := rowKey{tb.Name, keyString(key)}
	if rp.known[rk] {
		return
	}
	rp.known[rk] = true
	alive := int64(1)
	if (rp.ex.DeadRows || rp.ex.DeadTables[tb.Name]) && rp.ex.Lazy {
		alive = 0
	}
	rp.initial[cell{rk, ""}] = version{v: val{n: alive}, writer: -1}
	for _, f := range nonKey(tb) {
		rp.initial[cell{rk, f}] = version{v: val{n: rp.ex.Default}, writer: -1}
	}
}

// exec runs one instance.
type exec struct {
	rp   *replayer
	inst int
	txn  *Txn
	vis  []int // visible instances in ar order
	vars map[string]val
	sets map[string][]rowKey
	rows map[string]rowKey // FOREACH iterators
}

// get reads a cell in the instance's snapshot: the last visible writer in ar
// order wins; then the initial database.
func (x *exec) get(c cell) version {
	for k := len(x.vis) - 1; k >= 0; k-- {
		j := x.vis[k]
		if v, ok := x.rp.writes[j][c]; ok {
			return v
		}
		if c.field == "" {
			for _, d := range x.rp.dels[j] {
				if d.matches(c.row) {
					return version{v: val{n: 0}, writer: j, stmt: d.stmt}
				}
			}
		}
	}
	if v, ok := x.rp.initial[c]; ok {
		return v
	}
	if c.field == "" {
		return version{v: val{n: 0}, writer: -1}
	}
	return version{v: val{null: true}, writer: -1}
}

func (x *exec) alive(rk rowKey) bool {
	v := x.get(cell{rk, ""})
	return !v.v.null && v.v.n == 1
}

func (x *exec) write(c cell, v val, s Stmt) {
	x.rp.writes[x.inst][c] = version{v: v, writer: x.inst, stmt: s}
	x.rp.known[c.row] = true
}

func (x *exec) block(body []Stmt) error {
	for _, s := range body {
		if err := x.stmt(s); err != nil {
			return err
		}
	}
	return nil
}

// eval evaluates an expression; row is the statement's current row (or nil).
func (x *exec) eval(e Expr, tb *Table, row *rowKey) val {
	switch e := e.(type) {
	case *IntLit:
		return val{n: e.V}
	case *Ref:
		if e.field {
			return x.rowField(tb, *row, e.Name)
		}
		if v, ok := x.vars[e.Name]; ok {
			return v
		}
		return val{null: true}
	case *FieldOf:
		rk, ok := x.rows[e.Iter]
		if !ok {
			return val{null: true}
		}
		return x.rowField(x.rp.tables[rk.table], rk, e.Field)
	case *Binary:
		l, r := x.eval(e.L, tb, row), x.eval(e.R, tb, row)
		if l.null || r.null {
			return val{null: true}
		}
		return val{n: arith(e.Op, l.n, r.n)}
	case *Neg:
		v := x.eval(e.X, tb, row)
		if v.null {
			return v
		}
		return val{n: -v.n}
	}
	panic(fmt.Sprintf("static: unknown expression %T", e))
}

// rowField is field f of row rk of tb: from the key for a key field, else
// the value this instance reads.
func (x *exec) rowField(tb *Table, rk rowKey, f string) val {
	if field(tb, f).Key {
		return val{n: parseKey(rk.key)[keyIndex(tb, f)]}
	}
	return x.get(cell{rk, f}).v
}

func keyIndex(tb *Table, name string) int {
	i := 0
	for _, f := range tb.Fields {
		if f.Key {
			if f.Name == name {
				return i
			}
			i++
		}
	}
	return -1
}

func (x *exec) cond(c Cond, tb *Table, row *rowKey) bool {
	switch c := c.(type) {
	case *BoolLit:
		return c.V
	case *Cmp:
		l, r := x.eval(c.L, tb, row), x.eval(c.R, tb, row)
		return !l.null && !r.null && compareInts(c.Op, l.n, r.n)
	case *IsNull:
		v, ok := x.vars[c.Var]
		isNull := !ok || v.null
		return isNull != c.Negated
	case *Not:
		return !x.cond(c.C, tb, row)
	case *Logic:
		if c.And {
			return x.cond(c.L, tb, row) && x.cond(c.R, tb, row)
		}
		return x.cond(c.L, tb, row) || x.cond(c.R, tb, row)
	}
	panic(fmt.Sprintf("static: unknown condition %T", c))
}

// candidates returns the rows a WHERE clause may match now: every known row,
// plus (lazily) the row its key equalities address.
func (x *exec) candidates(tb *Table, where Cond) []rowKey {
	if x.rp.ex.Lazy {
		x.addAddressed(tb, where)
		x.seed(tb, where)
	}
	var out []rowKey
	for rk := range x.rp.known {
		if rk.table == tb.Name {
			out = append(out, rk)
		}
	}
	slices.SortFunc(out, func(a, b rowKey) int { return slices.Compare(parseKey(a.key), parseKey(b.key)) })
	return out
}

// addAddressed creates, in lazy mode, the initial row that where's key
// equalities address, when they fix the whole key to non-NULL values and
// the row is new.
func (x *exec) addAddressed(tb *Table, where Cond) {
	eqs := keyEqs(tb, where)
	if len(eqs) != len(keyFields(tb)) {
		return
	}
	var key []int64
	for _, k := range keyFields(tb) {
		v := x.eval(eqs[k.Name], tb, nil)
		if v.null {
			return
		}
		key = append(key, v.n)
	}
	if rk := (rowKey{tb.Name, keyString(key)}); !x.rp.known[rk] {
		x.rp.addInitial(tb, key)
		x.rp.created[tb.Name] = append(x.rp.created[tb.Name], Row{Key: key})
	}
}

// seed makes sure, in lazy mode, that some initial row matches a scan whose
// WHERE does not fix the whole key: key fields not fixed by equality take
// values near the instance's variables until the WHERE holds.
func (x *exec) seed(tb *Table, where Cond) {
	for rk := range x.rp.known {
		if rk.table == tb.Name && x.cond(where, tb, &rk) {
			return
		}
	}
	x.eachSeedKey(tb, where, 500, func(key []int64) bool {
		rk := rowKey{tb.Name, keyString(key)}
		if x.rp.known[rk] {
			return false
		}
		x.rp.addInitial(tb, key)
		if x.cond(where, tb, &rk) {
			x.rp.created[tb.Name] = append(x.rp.created[tb.Name], Row{Key: slices.Clone(key)})
			return true
		}
		x.rp.removeInitial(tb, rk)
		return false
	})
}

// eachSeedKey calls leaf with candidate keys of tb for an initial row matching where: key
// fields where fixes by equality take that value, the others values near the instance's
// variables (and 0, 1 and the default). It stops when leaf returns true, after limit+1
// keys, or at an equality whose value is NULL.
func (x *exec) eachSeedKey(tb *Table, where Cond, limit int, leaf func(key []int64) bool) {
	x.eachSeedKeyFrom(tb, where, x.seedValues(), limit, leaf)
}

// eachSeedKeyFrom is eachSeedKey with the free key fields taking the values
// cands.
func (x *exec) eachSeedKeyFrom(tb *Table, where Cond, cands []int64, limit int, leaf func(key []int64) bool) {
	eqs := keyEqs(tb, where)
	keys := keyFields(tb)
	key := make([]int64, len(keys))
	tries := 0
	var try func(i int) bool // true: stop
	try = func(i int) bool {
		if tries > limit {
			return true
		}
		if i == len(keys) {
			tries++
			return leaf(key)
		}
		if e, ok := eqs[keys[i].Name]; ok {
			v := x.eval(e, tb, nil)
			if v.null {
				return true
			}
			key[i] = v.n
			return try(i + 1)
		}
		for _, c := range cands {
			key[i] = c
			if try(i + 1) {
				return true
			}
		}
		return false
	}
	try(0)
}

// seedValues are the values a free key field of a seeded row takes: 0, 1,
// the default and v-1, v, v+1 for each non-NULL variable v, in ascending
// order.
func (x *exec) seedValues() []int64 {
	cands := []int64{0, 1, x.rp.ex.Default}
	for _, v := range x.vars {
		if !v.null {
			cands = append(cands, v.n-1, v.n, v.n+1)
		}
	}
	slices.Sort(cands)
	return slices.Compact(cands)
}

// spread seeds, in lazy mode with Execution.Spread, one initial row per
// spread value for a SELECT * whose result a FOREACH iterates: key fields not
// fixed by equality take values near the instance's variables (as in seed),
// and the non-key fields the loop bodies read take the spread value.
func (x *exec) spread(tb *Table, s *Select) {
	fields := x.loopFields(tb, s.Vars[0])
	if len(fields) == 0 || len(x.rp.ex.Spread) == 0 {
		return
	}
	next := 0
	x.eachSeedKey(tb, s.Where, 2000, func(key []int64) bool { // true when every spread value has its row
		if x.seedSpreadRow(tb, s.Where, key, fields, x.rp.ex.Spread[next]) {
			next++
		}
		return next == len(x.rp.ex.Spread)
	})
}

// loopFields lists the non-key fields of tb that the bodies of the FOREACH
// loops over set read, in source order.
func (x *exec) loopFields(tb *Table, set string) []string {
	var fields []string
	eachStmt(x.txn.Body, func(st Stmt) {
		fe, ok := st.(*Foreach)
		if !ok || fe.Set != set {
			return
		}
		for _, f := range iterFields(fe.Iter, fe.Body) {
			if !field(tb, f).Key && !slices.Contains(fields, f) {
				fields = append(fields, f)
			}
		}
	})
	return fields
}

// seedSpreadRow creates the initial row of tb with this key, its fields
// pinned to the spread value v, if the row is new and matches where.
func (x *exec) seedSpreadRow(tb *Table, where Cond, key []int64, fields []string, v int64) bool {
	rk := rowKey{tb.Name, keyString(key)}
	if x.rp.known[rk] {
		return false
	}
	x.rp.addInitial(tb, key)
	if !x.cond(where, tb, &rk) {
		x.rp.removeInitial(tb, rk)
		return false
	}
	for _, f := range fields {
		c := cell{rk, f}
		x.rp.initial[c] = version{v: val{n: v}, writer: -1}
		x.rp.pinned[c] = true
	}
	x.rp.created[tb.Name] = append(x.rp.created[tb.Name], Row{Key: slices.Clone(key)})
	return true
}

// iterFields lists the fields of iter that body reads (iter.f).
func iterFields(iter string, body []Stmt) []string {
	var out []string
	eachStmt(body, func(st Stmt) {
		stmtLeaves(st, func(e Expr) {
			if e, ok := e.(*FieldOf); ok && e.Iter == iter && !slices.Contains(out, e.Field) {
				out = append(out, e.Field)
			}
		})
	})
	return out
}

// seedAt creates, in lazy mode, the initial row a MIN or MAX over key field f
// returned according to the model (hint h): the key fields the WHERE fixes by
// equality take those values and f takes h. Without it, a scan whose range
// already holds a row written by another instance would never see the
// initial row the model's execution needs.
func (x *exec) seedAt(tb *Table, where Cond, f string, h int64) {
	key, ok := x.keyAt(tb, where, f, h)
	if !ok {
		return
	}
	rk := rowKey{tb.Name, keyString(key)}
	if _, ok := x.rp.initial[cell{rk, ""}]; ok {
		return
	}
	known := x.rp.known[rk]
	if known && x.alive(rk) {
		return // this instance already sees the row
	}
	// The row may be known from an INSERT this instance does not see: it
	// can still exist initially (and be inserted again).
	delete(x.rp.known, rk)
	x.rp.addInitial(tb, key)
	if !x.cond(where, tb, &rk) {
		x.rp.removeInitial(tb, rk)
		if known {
			x.rp.known[rk] = true
		}
		return
	}
	x.rp.created[tb.Name] = append(x.rp.created[tb.Name], Row{Key: key})
}

// keyAt is the key of tb with field f = h and the other key fields the
// values where fixes by equality; false when one is not fixed or NULL.
func (x *exec) keyAt(tb *Table, where Cond, f string, h int64) ([]int64, bool) {
	eqs := keyEqs(tb, where)
	var key []int64
	for _, k := range keyFields(tb) {
		switch e, ok := eqs[k.Name]; {
		case k.Name == f:
			key = append(key, h)
		case ok:
			v := x.eval(e, tb, nil)
			if v.null {
				return nil, false
			}
			key = append(key, v.n)
		default:
			return nil, false
		}
	}
	return key, true
}

func (rp *replayer) removeInitial(tb *Table, rk rowKey) {
	delete(rp.known, rk)
	delete(rp.initial, cell{rk, ""})
	for _, f := range nonKey(tb) {
		delete(rp.initial, cell{rk, f})
	}
}

func (x *exec) matches(tb *Table, where Cond) []rowKey {
	var out []rowKey
	for _, rk := range x.candidates(tb, where) {
		if x.cond(where, tb, &rk) {
			x.rp.touched[rk] = true
			out = append(out, rk)
		}
	}
	return out
}

// recordReads notes the reads of a statement; they are resolved against the
// final set of rows once every instance has run (phantoms included).
func (x *exec) recordReads(s Stmt, tb *Table, where Cond, fields []string) {
	x.rp.reads = append(x.rp.reads, readSpec{inst: x.inst, stmt: s, table: tb, x: x.freeze(), where: where,
		fields: fields, all: whereFields(where, tb)})
}

// freeze copies the variable state so conditions can be re-evaluated later.
func (x *exec) freeze() *exec {
	vars := map[string]val{}
	for k, v := range x.vars {
		vars[k] = v
	}
	rows := map[string]rowKey{}
	for k, v := range x.rows {
		rows[k] = v
	}
	return &exec{rp: x.rp, inst: x.inst, txn: x.txn, vis: x.vis, vars: vars, rows: rows}
}

// stmt runs one statement: one method per statement kind.
func (x *exec) stmt(s Stmt) error {
	switch s := s.(type) {
	case *Select:
		x.selectStmt(s)
	case *Update:
		x.updateStmt(s)
	case *Insert:
		x.insertStmt(s)
	case *Delete:
		x.deleteStmt(s)
	case *Let:
		x.vars[s.Var] = x.eval(s.Expr, nil, nil)
	case *If:
		if x.cond(s.Cond, nil, nil) {
			return x.block(s.Then)
		}
		return x.block(s.Else)
	case *Foreach:
		return x.foreach(s)
	case *Skip:
	}
	return nil
}

// selectStmt records the SELECT's reads, lets a lazy replay shape the
// initial database for it, and binds its variables to what the live
// matching rows hold.
func (x *exec) selectStmt(s *Select) {
	tb := x.rp.tables[s.Table]
	x.recordReads(s, tb, s.Where, selectReadFields(s, tb))
	x.prepareLazy(tb, s)
	live := x.liveMatches(tb, s.Where)
	switch s.Kind {
	case SelectFields:
		x.pinHints(tb, s, live)
		x.bindFields(tb, s, live)
	case SelectRows:
		x.sets[s.Vars[0]] = live
	case SelectCount:
		x.vars[s.Vars[0]] = val{n: int64(len(live))}
	case SelectMin, SelectMax:
		x.bindExtremum(tb, s, live)
	}
}

// selectReadFields are the fields a SELECT reads on the rows it returns:
// Alive ("") and the non-key fields it selects (all of them for SELECT *).
func selectReadFields(s *Select, tb *Table) []string {
	fields := s.Fields
	if s.Kind == SelectRows {
		fields = nonKey(tb)
	}
	var rf []string
	for _, f := range append([]string{""}, fields...) {
		if f == "" || !field(tb, f).Key {
			rf = append(rf, f)
		}
	}
	return rf
}

// prepareLazy lets a lazy replay (pass 1) spread the rows a SELECT * reads,
// and seed the row a MIN or MAX of a key field is hinted to find.
func (x *exec) prepareLazy(tb *Table, s *Select) {
	if !x.rp.ex.Lazy {
		return
	}
	switch s.Kind {
	case SelectRows:
		if len(x.rp.ex.Spread) > 0 {
			x.spread(tb, s)
		}
	case SelectMin, SelectMax:
		if h, ok := x.lazyHint(s.Vars[0]); ok && field(tb, s.Fields[0]).Key {
			x.seedAt(tb, s.Where, s.Fields[0], h)
		}
	case SelectCount:
		if h, ok := x.lazyHint(s.Vars[0]); ok && h > 0 {
			x.seedCount(tb, s.Where, h)
		}
	}
}

// seedCount creates, in lazy mode, initial rows until h live rows match the
// WHERE of a COUNT(*) the model says counted h (at most 8 new rows): free
// key fields take the instances' parameter values first (the rows the
// instances go on to address), then eachSeedKey's values; the non-key fields the WHERE fixes by a top-level
// equality pinned to that value, the others the default. Without it a
// COUNT's rows, which no statement addresses by key, never exist, and an
// anomaly that needs them (two doctors on call) cannot be replayed.
func (x *exec) seedCount(tb *Table, where Cond, h int64) {
	need := min(h, 8) - int64(len(x.liveMatches(tb, where)))
	if need <= 0 {
		return
	}
	pins := map[string]int64{}
	for f, e := range fieldEqs(tb, where) {
		if v := x.eval(e, tb, nil); !v.null {
			pins[f] = v.n
		}
	}
	var cands []int64
	for _, in := range x.rp.ex.Instances {
		for _, p := range in.Params {
			if !slices.Contains(cands, p.Value) {
				cands = append(cands, p.Value)
			}
		}
	}
	for _, v := range x.seedValues() {
		if !slices.Contains(cands, v) {
			cands = append(cands, v)
		}
	}
	x.eachSeedKeyFrom(tb, where, cands, 200, func(key []int64) bool {
		rk := rowKey{tb.Name, keyString(key)}
		if x.rp.known[rk] {
			return false
		}
		x.rp.addInitial(tb, key)
		for f, v := range pins {
			x.rp.initial[cell{rk, f}] = version{v: val{n: v}, writer: -1}
			x.rp.pinned[cell{rk, f}] = true
		}
		if !x.cond(where, tb, &rk) || !x.alive(rk) {
			x.rp.removeInitial(tb, rk)
			return false
		}
		x.rp.created[tb.Name] = append(x.rp.created[tb.Name], Row{Key: slices.Clone(key)})
		need--
		return need == 0
	})
}

// lazyHint is, in a lazy replay, the solver's value of the instance's
// variable v.
func (x *exec) lazyHint(v string) (int64, bool) {
	if !x.rp.ex.Lazy || x.inst >= len(x.rp.ex.Hints) {
		return 0, false
	}
	h, ok := x.rp.ex.Hints[x.inst][v]
	return h, ok
}

// liveMatches are the rows matching where that are live in the snapshot.
func (x *exec) liveMatches(tb *Table, where Cond) []rowKey {
	var live []rowKey
	for _, rk := range x.matches(tb, where) {
		if x.alive(rk) {
			live = append(live, rk)
		}
	}
	return live
}

// pinHints sets, in a lazy replay, the initial value of each non-key field a
// field SELECT reads from its first live row to the hinted value of its
// variable, where no visible instance wrote the field (a field pinned by an
// earlier reader keeps its value unless HintsOverride).
func (x *exec) pinHints(tb *Table, s *Select, live []rowKey) {
	if len(live) == 0 {
		return
	}
	for i, v := range s.Vars {
		c := cell{live[0], s.Fields[i]}
		h, ok := x.lazyHint(v)
		if ok && !field(tb, s.Fields[i]).Key && x.pinnable(c) {
			x.rp.initial[c] = version{v: val{n: h}, writer: -1}
			x.rp.pinned[c] = true
		}
	}
}

// pinnable reports whether a hint may set the initial value of c.
func (x *exec) pinnable(c cell) bool {
	return (!x.rp.pinned[c] || x.rp.ex.HintsOverride) && x.get(c).writer < 0
}

// bindFields binds a field SELECT's variables to its first live row's
// fields, or to NULL when no row is live.
func (x *exec) bindFields(tb *Table, s *Select, live []rowKey) {
	for i, v := range s.Vars {
		if len(live) == 0 {
			x.vars[v] = val{null: true}
		} else {
			x.vars[v] = x.eval(fieldRef(tb, s.Fields[i]), tb, &live[0])
		}
	}
}

// fieldRef is a reference to field f of the current row of tb.
func fieldRef(tb *Table, f string) *Ref { return &Ref{Name: f, field: true, key: field(tb, f).Key} }

// bindExtremum binds a MIN or MAX SELECT's variable to the extremum of the
// non-NULL values of the field over the live rows (NULL if none); for a key
// field the recorded read only covers the rows up to it.
func (x *exec) bindExtremum(tb *Table, s *Select, live []rowKey) {
	read := &x.rp.reads[len(x.rp.reads)-1]
	res := val{null: true}
	f := s.Fields[0]
	for _, rk := range live {
		v := x.eval(fieldRef(tb, f), tb, &rk)
		if !v.null && (res.null || beyond(s.Kind, v.n, res.n)) {
			res = v
		}
	}
	x.vars[s.Vars[0]] = res
	if k := keyIndex(tb, f); k >= 0 && !res.null {
		read.upTo = &extremum{key: k, max: s.Kind == SelectMax, n: res.n}
	}
}

// beyond reports whether n improves on the extremum m of a MIN or MAX.
func beyond(kind SelectKind, n, m int64) bool {
	if kind == SelectMin {
		return n < m
	}
	return n > m
}

// updateStmt records the reads of an UPDATE (Alive and the fields its SET
// expressions use) and writes its SET fields on every live matching row.
func (x *exec) updateStmt(s *Update) {
	tb := x.rp.tables[s.Table]
	x.recordReads(s, tb, s.Where, updateReadFields(s, tb))
	for _, rk := range x.matches(tb, s.Where) {
		if !x.alive(rk) {
			continue
		}
		for _, a := range s.Sets {
			x.write(cell{rk, a.Field}, x.eval(a.Expr, tb, &rk), s)
		}
	}
}

// updateReadFields are Alive ("") and the fields an UPDATE's SET
// expressions read, in order of first use.
func updateReadFields(s *Update, tb *Table) []string {
	rf := []string{""}
	for _, a := range s.Sets {
		for _, f := range whereFields(&Cmp{L: a.Expr, R: &IntLit{}}, tb) {
			if !slices.Contains(rf, f) {
				rf = append(rf, f)
			}
		}
	}
	return rf
}

// insertStmt writes Alive and every non-key field (0 when not given) of the row
// its key values address; an INSERT with a NULL key value does nothing.
func (x *exec) insertStmt(s *Insert) {
	tb := x.rp.tables[s.Table]
	vals := map[string]val{}
	for _, a := range s.Values {
		vals[a.Field] = x.eval(a.Expr, nil, nil)
	}
	var key []int64
	for _, k := range keyFields(tb) {
		if vals[k.Name].null {
			return
		}
		key = append(key, vals[k.Name].n)
	}
	rk := rowKey{tb.Name, keyString(key)}
	x.write(cell{rk, ""}, val{n: 1}, s)
	for _, f := range nonKey(tb) {
		v, ok := vals[f]
		if !ok {
			v = val{n: 0}
		}
		x.write(cell{rk, f}, v, s)
	}
}

// deleteStmt records a DELETE's reads and the DELETE itself: it writes Alive of
// every row it matches, existing or not, which the edges resolve at the end.
func (x *exec) deleteStmt(s *Delete) {
	tb := x.rp.tables[s.Table]
	x.recordReads(s, tb, s.Where, nil)
	x.matches(tb, s.Where) // lazily create the addressed row; note the matched ones
	x.rp.dels[x.inst] = append(x.rp.dels[x.inst], delSpec{x: x.freeze(), stmt: s, table: tb})
}

// foreach runs the body once per row of the set, in the set's order.
func (x *exec) foreach(s *Foreach) error {
	for _, rk := range x.sets[s.Set] {
		x.rows[s.Iter] = rk
		if err := x.block(s.Body); err != nil {
			return err
		}
	}
	delete(x.rows, s.Iter)
	return nil
}

func rowString(tb *Table, rk rowKey) string {
	key := parseKey(rk.key)
	var parts []string
	i := 0
	for _, f := range tb.Fields {
		if f.Key {
			parts = append(parts, fmt.Sprintf("%s=%d", f.Name, key[i]))
			i++
		}
	}
	return strings.Join(parts, ",")
}

func fieldName(f string) string {
	if f == "" {
		return "Alive"
	}
	return f
}

func stmtLabel(s Stmt) string {
	if s == nil {
		return ""
	}
	var kind string
	switch s.(type) {
	case *Select:
		kind = "SELECT"
	case *Update:
		kind = "UPDATE"
	case *Insert:
		kind = "INSERT"
	case *Delete:
		kind = "DELETE"
	}
	return kind + "@" + s.At().String()
}

// edges computes WR, WW and RW from the recorded reads and writes.
func (rp *replayer) edges(pos []int) []Edge {
	writers := rp.writers(pos)
	es := edgeSet{seen: map[string]bool{}}
	for c, ws := range writers {
		es.addWW(rp.tables[c.row.table], c, ws)
	}
	var rows []rowKey
	for rk := range rp.known {
		rows = append(rows, rk)
	}
	for _, r := range rp.reads {
		for _, rk := range rows {
			if rk.table != r.table.Name {
				continue
			}
			for _, f := range r.fieldsOn(rk) {
				c := cell{rk, f}
				es.addRead(r, c, r.x.get(c), writers[c], pos)
			}
		}
	}
	slices.SortFunc(es.out, compareEdges)
	return es.out
}

// cellWriter is an instance's write of a cell, by statement stmt.
type cellWriter struct {
	inst int
	stmt Stmt
}

// writers lists every cell's writers in ar order (pos is each instance's
// place in it): the instances' writes, and their DELETEs' writes of Alive on
// every known row they match.
func (rp *replayer) writers(pos []int) map[cell][]cellWriter {
	ws := map[cell][]cellWriter{}
	for i, w := range rp.writes {
		for c, v := range w {
			ws[c] = append(ws[c], cellWriter{i, v.stmt})
		}
	}
	for i, ds := range rp.dels {
		for _, d := range ds {
			rp.addDeleteWrites(ws, i, d)
		}
	}
	for c := range ws {
		slices.SortFunc(ws[c], func(a, b cellWriter) int { return cmp.Compare(pos[a.inst], pos[b.inst]) })
	}
	return ws
}

// addDeleteWrites adds instance i's DELETE d as a writer of Alive of the known
// rows it matches, unless i writes that Alive already.
func (rp *replayer) addDeleteWrites(ws map[cell][]cellWriter, i int, d delSpec) {
	for rk := range rp.known {
		c := cell{rk, ""}
		if d.matches(rk) && !slices.ContainsFunc(ws[c], func(w cellWriter) bool { return w.inst == i }) {
			ws[c] = append(ws[c], cellWriter{i, d.stmt})
		}
	}
}

// fieldsOn are the fields the read reads on row rk: the fields of its WHERE
// on every row, and its returned fields on the rows it returns.
func (r *readSpec) fieldsOn(rk rowKey) []string {
	if r.x.cond(r.where, r.table, &rk) && r.upTo.holds(rk) {
		return append(append([]string(nil), r.all...), r.fields...)
	}
	return r.all
}

// edgeSet collects distinct dependency edges between different instances.
type edgeSet struct {
	seen map[string]bool
	out  []Edge
}

func (es *edgeSet) add(e Edge) {
	k := fmt.Sprint(e)
	if e.From != e.To && !es.seen[k] {
		es.seen[k] = true
		es.out = append(es.out, e)
	}
}

// addWW adds a WW edge between every two writers of c, in ar order.
func (es *edgeSet) addWW(tb *Table, c cell, ws []cellWriter) {
	for i := range ws {
		for j := i + 1; j < len(ws); j++ {
			es.add(Edge{From: ws[i].inst, To: ws[j].inst, Rel: "WW", Table: tb.Name, Row: rowString(tb, c.row), Field: fieldName(c.field),
				FromStmt: stmtLabel(ws[i].stmt), ToStmt: stmtLabel(ws[j].stmt)})
		}
	}
}

// addRead adds the edges of r's read of c, whose value came from src: WR
// from src's writer, RW to every other writer of c after it in ar (every
// writer, when the value is the initial one).
func (es *edgeSet) addRead(r readSpec, c cell, src version, ws []cellWriter, pos []int) {
	tb := r.table
	if src.writer >= 0 {
		es.add(Edge{From: src.writer, To: r.inst, Rel: "WR", Table: tb.Name, Row: rowString(tb, c.row), Field: fieldName(c.field),
			FromStmt: stmtLabel(src.stmt), ToStmt: stmtLabel(r.stmt)})
	}
	for _, w := range ws {
		if w.inst != r.inst && (src.writer < 0 || pos[w.inst] > pos[src.writer]) {
			es.add(Edge{From: r.inst, To: w.inst, Rel: "RW", Table: tb.Name, Row: rowString(tb, c.row), Field: fieldName(c.field),
				FromStmt: stmtLabel(r.stmt), ToStmt: stmtLabel(w.stmt)})
		}
	}
}

// compareEdges orders edges by instances, relation, table, row, field and
// statements.
func compareEdges(a, b Edge) int {
	return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To), cmp.Compare(a.Rel, b.Rel),
		cmp.Compare(a.Table, b.Table), cmp.Compare(a.Row, b.Row), cmp.Compare(a.Field, b.Field), cmp.Compare(a.FromStmt+a.ToStmt, b.FromStmt+b.ToStmt))
}

// shortestCycle returns a shortest cycle through the edges, or nil. Among
// equally short cycles it prefers WW, then WR, then RW edges (so a lost
// update shows as WW and RW, as in the paper's Fig. 2).
func shortestCycle(n int, edges []Edge) []Edge {
	prio := map[string]int{"WW": 0, "WR": 1, "RW": 2}
	edges = slices.Clone(edges)
	slices.SortStableFunc(edges, func(a, b Edge) int { return cmp.Compare(prio[a.Rel], prio[b.Rel]) })
	var best []Edge
	for s := range n {
		if cyc := shortestCycleAt(n, edges, s); cyc != nil && (best == nil || len(cyc) < len(best)) {
			best = cyc
		}
	}
	return best
}

// shortestCycleAt is a shortest cycle through s (breadth-first from s back
// to s, taking edges in their order), or nil.
func shortestCycleAt(n int, edges []Edge, s int) []Edge {
	prev := make([]int, n)
	for i := range prev {
		prev[i] = -2
	}
	via := make([]Edge, n)
	queue := []int{s}
	prev[s] = -1
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, e := range edges {
			if e.From != u {
				continue
			}
			if e.To == s {
				cyc := []Edge{e}
				for v := u; v != s; v = prev[v] {
					cyc = append(cyc, via[v])
				}
				slices.Reverse(cyc)
				return cyc
			}
			if prev[e.To] == -2 {
				prev[e.To] = u
				via[e.To] = e
				queue = append(queue, e.To)
			}
		}
	}
	return nil
}

func (e *extremum) holds(rk rowKey) bool {
	if e == nil {
		return true
	}
	k := parseKey(rk.key)[e.key]
	if e.max {
		return k >= e.n
	}
	return k <= e.n
}
