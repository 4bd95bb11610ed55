package static

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"isovet/internal/smtlib"
)

// Verdict is the outcome of an analysis. The zero value is Inconclusive, so a
// verdict that was never set is never read as safe.
type Verdict int

// The verdicts.
const (
	Inconclusive  Verdict = iota // solver unknown/timeout, or a candidate the replay could not confirm
	Anomaly                      // an execution of at most K instances with a dependency cycle, confirmed by replay
	NoneUpToBound                // every execution of at most Bound instances is serializable; no unbounded proof
	Serializable                 // no cycle in any execution (Theorem 10 or 12)
)

func (v Verdict) String() string {
	return [...]string{"inconclusive", "anomaly", "none-up-to-bound", "serializable"}[v]
}

// MarshalText renders the verdict name in JSON.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// Options configure [Analyze].
type Options struct {
	Model   Model
	Bound   int // largest k for cycle detection; 0 means 4
	Solver  string
	Timeout time.Duration // per query; 0 means none
	// UnboundedTimeout, when positive and shorter than Timeout, bounds each query of the
	// unbounded proofs instead: they come after the bounded answer and only strengthen it, so
	// a timeout there costs a proof, never soundness, and should not cost a minute.
	UnboundedTimeout time.Duration
	EmptyInitialDB   bool
	Backend          smtlib.Backend
	// Emit, when set, receives every script sent to the solver.
	Emit io.Writer
	// NoUnbounded skips the shortest-path and inductive proofs.
	NoUnbounded bool
	// Txns restricts the analysis to these transaction programs (nil: all).
	Txns []string
	// IgnoreAssumptions drops the program's ASSUME INITIALLY declarations.
	IgnoreAssumptions bool
	_                 struct{}
}

// QueryResult records one solver call.
type QueryResult struct {
	Query   string        `json:"query"`
	Status  string        `json:"status"`
	Elapsed time.Duration `json:"elapsed_ns"`
	CPU     time.Duration `json:"cpu_ns"`
	Reason  string        `json:"reason,omitempty"`
}

// Witness is a concrete anomaly: instances, their abstract execution and the
// dependency cycle.
type Witness struct {
	K         int        `json:"k"`
	Instances []Instance `json:"instances"`
	Order     []int      `json:"ar"`  // instance indices in arbitration order
	Vis       [][2]int   `json:"vis"` // visibility pairs
	// ModelEdges are the dependencies the solver's model claims.
	ModelEdges []Edge `json:"model_edges"`
	// Confirmed is set when the replay found a dependency cycle in an
	// execution that satisfies the model's axioms; Cycle is that cycle.
	Confirmed bool   `json:"confirmed"`
	Cycle     []Edge `json:"cycle,omitempty"`
	// ReplayNote explains how the replay was set up or why it failed.
	ReplayNote string `json:"replay_note"`
	// Initial is the initial database of the confirming replay.
	Initial map[string][]Row `json:"initial,omitempty"`
	hints   []map[string]int64
}

// Result is the outcome of [Analyze].
type Result struct {
	Model   string   `json:"model"`
	Bound   int      `json:"bound"`
	Solver  string   `json:"solver"`
	Verdict Verdict  `json:"verdict"`
	K       int      `json:"k,omitempty"`       // cycle bound at which the anomaly was found
	Proof   string   `json:"proof,omitempty"`   // how serializability was proven
	Reason  string   `json:"reason,omitempty"`  // why the result is inconclusive
	Witness *Witness `json:"witness,omitempty"` // set for Anomaly (and unconfirmed candidates)
	// Assumptions are the ASSUME INITIALLY conditions the bounded queries
	// used ("line:col: FORALL ..."); a witness's initial database satisfies
	// them.
	Assumptions []string `json:"assumptions,omitempty"`
	// UnboundedAssumptions are the positions ("line:col") of the
	// assumptions the inductive proof's counter invariants rest on; a
	// serializable verdict then holds for executions from an initial
	// database satisfying them. The other unbounded queries use none.
	UnboundedAssumptions []string      `json:"unbounded_assumptions,omitempty"`
	Queries              []QueryResult `json:"queries"`
	Elapsed              time.Duration `json:"elapsed_ns"`
	CPU                  time.Duration `json:"cpu_ns"`
}

// ErrNoBackend is returned when Options.Backend is nil.
var ErrNoBackend = errors.New("static: no solver backend")

type analysis struct {
	ctx     context.Context
	prog    *Program
	opts    Options
	res     *Result
	timeout time.Duration // of the queries now being asked
}

// Analyze runs the bounded cycle queries for k = 2..Bound and, when none has a
// cycle, the unbounded proofs. Solver "unknown" never yields a safe verdict.
func Analyze(ctx context.Context, prog *Program, opts Options) (*Result, error) {
	if opts.Backend == nil {
		return nil, ErrNoBackend
	}
	if opts.Bound == 0 {
		opts.Bound = 4
	}
	if opts.Bound < 2 {
		return nil, fmt.Errorf("static: bound %d: %w (want at least 2)", opts.Bound, ErrInvalid)
	}
	if opts.Solver == "" {
		opts.Solver = "z3"
	}
	a := &analysis{ctx: ctx, prog: prog, opts: opts, res: &Result{Model: opts.Model.Name, Bound: opts.Bound}, timeout: opts.Timeout}
	err := a.run()
	for _, q := range a.res.Queries {
		a.res.Elapsed += q.Elapsed
		a.res.CPU += q.CPU
	}
	return a.res, err
}

func (a *analysis) solve(q smtlib.Query) (smtlib.Answer, error) {
	if a.opts.Emit != nil {
		fmt.Fprintf(a.opts.Emit, "; ---- %s ----\n", queryName(q))
		q.Script.WriteTo(a.opts.Emit)
	}
	ans, err := a.opts.Backend.Solve(a.ctx, a.opts.Solver, q, a.timeout)
	if err != nil {
		return ans, fmt.Errorf("solving %s: %w", queryName(q), err)
	}
	a.res.Solver = ans.Solver
	a.res.Queries = append(a.res.Queries, QueryResult{Query: queryName(q), Status: ans.Status.String(), Elapsed: ans.Elapsed, CPU: ans.CPU, Reason: ans.Reason})
	return ans, nil
}

func queryName(q smtlib.Query) string {
	s := q.Script.String()
	i := strings.LastIndex(s, "; query ")
	if i < 0 {
		return "query"
	}
	s = s[i+len("; query "):]
	return s[:strings.IndexByte(s, '\n')]
}

func (a *analysis) encode(txns []string) (*Encoding, error) {
	if txns == nil {
		txns = a.opts.Txns
	}
	return Encode(a.prog, EncodeOptions{Model: a.opts.Model, Txns: txns, EmptyInitialDB: a.opts.EmptyInitialDB,
		IgnoreAssumptions: a.opts.IgnoreAssumptions})
}

func (a *analysis) run() error {
	enc, err := a.encode(nil)
	if err != nil {
		return err
	}
	for _, as := range enc.assumes() {
		a.res.Assumptions = append(a.res.Assumptions, as.Pos.String()+": "+as.String())
	}
	provenUpTo := 1
	unknown := ""
	for k := 2; k <= a.opts.Bound; k++ {
		ans, err := a.solve(enc.Execution(k))
		if err != nil {
			return err
		}
		switch ans.Status {
		case smtlib.Unsat:
			// Each query covers executions of exactly k instances, so the
			// bound holds only while every smaller k was unsat too.
			if provenUpTo == k-1 {
				provenUpTo = k
			}
		case smtlib.Unknown:
			unknown = fmt.Sprintf("cycle k=%d: %s", k, ans.Reason)
		case smtlib.Sat:
			w, err := a.witness(enc, k, ans)
			if err != nil {
				return err
			}
			a.res.Witness, a.res.K = w, k
			if w.Confirmed {
				a.res.Verdict = Anomaly
				return nil
			}
			unknown = "the solver found a candidate cycle at k=" + fmt.Sprint(k) + " that the replay could not confirm: " + w.ReplayNote
		}
		if a.res.Witness != nil {
			break
		}
	}
	if provenUpTo == a.opts.Bound {
		a.res.Verdict = NoneUpToBound
	} else {
		a.res.Reason = unknown
	}
	if a.opts.NoUnbounded {
		return nil
	}
	// The unbounded proofs do not rely on the bounded queries, so they are
	// tried after an inconclusive bounded query too: a proof shows that the
	// candidate (or the unknown) hid no anomaly.
	proven, err := a.unbounded(enc)
	if err != nil || !proven {
		return err
	}
	a.res.Verdict, a.res.Reason = Serializable, ""
	if a.res.Witness != nil {
		a.res.Proof += "; the unconfirmed candidate at k=" + fmt.Sprint(a.res.K) + " was spurious"
		a.res.Witness, a.res.K = nil, 0
	}
	return nil
}

// unbounded tries the shortest-path proof (Theorem 10) and then the
// inductive one (Theorem 12), and records the proof that succeeds.
func (a *analysis) unbounded(enc *Encoding) (bool, error) {
	if u := a.opts.UnboundedTimeout; u > 0 && (a.timeout <= 0 || u < a.timeout) {
		prev := a.timeout
		a.timeout = u
		defer func() { a.timeout = prev }()
	}
	// Theorem 10 needs φ_Cycle,K over executions of any size, not only the
	// bounded executions checked above.
	cyc, err := a.solve(enc.Cycle(a.opts.Bound))
	if err != nil {
		return false, err
	}
	ans, err := a.solve(enc.ShortestPath(a.opts.Bound))
	if err != nil {
		return false, err
	}
	if cyc.Status == smtlib.Unsat && ans.Status == smtlib.Unsat {
		a.res.Proof = fmt.Sprintf("shortest path: no chordless dependency path of %d edges and no cycle of at most %d instances (Theorem 10)", a.opts.Bound, a.opts.Bound)
		return true, nil
	}
	proof, err := a.inductive()
	if err != nil {
		return false, err
	}
	a.res.Proof = proof
	return proof != "", nil
}

// inductive applies Lemma 11 repeatedly: find the types T' whose dependencies
// all follow ar, conclude every execution with one of them is serializable,
// and continue with the rest (§5.3).
func (a *analysis) inductive() (string, error) {
	var remaining []string
	for _, t := range a.prog.Txns {
		if a.opts.Txns == nil || slices.Contains(a.opts.Txns, t.Name) {
			remaining = append(remaining, t.Name)
		}
	}
	var steps []string
	var counters []string
	for len(remaining) > 0 {
		enc, err := a.encode(remaining)
		if err != nil {
			return "", err
		}
		for _, as := range enc.counterAssumes {
			if s := as.Pos.String(); !slices.Contains(counters, s) {
				counters = append(counters, s)
			}
		}
		ans, err := a.solve(enc.AnyDependency())
		if err != nil {
			return "", err
		}
		if ans.Status == smtlib.Unsat {
			steps = append(steps, fmt.Sprintf("%v have no dependencies among them", remaining))
			break
		}
		ans, err = a.solve(enc.Inductive2())
		if err != nil || ans.Status != smtlib.Unsat {
			return "", err
		}
		var ok []string
		for _, t := range remaining {
			ans, err := a.solve(enc.Inductive1(t))
			if err != nil {
				return "", err
			}
			if ans.Status == smtlib.Unsat {
				ok = append(ok, t)
			}
		}
		if len(ok) == 0 {
			return "", nil
		}
		steps = append(steps, fmt.Sprintf("%v", ok))
		remaining = slices.DeleteFunc(remaining, func(s string) bool { return slices.Contains(ok, s) })
	}
	proof := "inductive (Theorem 12): " + strings.Join(steps, ", then ")
	if len(counters) > 0 {
		// The counter invariants rest on these assumptions, so the proof
		// covers executions from an initial database satisfying them.
		a.res.UnboundedAssumptions = counters
		proof += "; for executions from an initial database satisfying the ASSUME INITIALLY at " +
			strings.Join(counters, ", ") + " (counter invariants)"
	}
	return proof, nil
}

// witness decodes a model of a cycle query and replays it.
func (a *analysis) witness(enc *Encoding, k int, ans smtlib.Answer) (*Witness, error) {
	vals := map[string]smtlib.Term{}
	for _, p := range ans.Values {
		if len(p.Elems()) == 2 {
			vals[p.Elems()[0].String()] = p.Elems()[1]
		}
	}
	cs := consts("e", k)
	// Merge constants the model makes equal.
	rep := make([]int, k)
	for i := range rep {
		rep[i] = i
		for j := range i {
			if b, _ := smtlib.BoolValue(vals[smtlib.Eq(cs[j], cs[i]).String()]); b && rep[j] == j {
				rep[i] = j
				break
			}
		}
	}
	var reps []int
	idx := map[int]int{}
	for i := range k {
		if rep[i] == i {
			idx[i] = len(reps)
			reps = append(reps, i)
		}
	}
	w := &Witness{K: k}
	txns := map[string]*Txn{}
	for _, t := range a.prog.Txns {
		txns[t.Name] = t
	}
	for n, ci := range reps {
		ty := vals[smtlib.App("typ", cs[ci]).String()].Atom()
		t := txns[strings.TrimPrefix(ty, "ty.")]
		if t == nil {
			return nil, fmt.Errorf("static: model gives %s unknown type %q", cs[ci], ty)
		}
		in := Instance{Name: fmt.Sprintf("t%d", n+1), Txn: t.Name}
		for _, p := range t.Params {
			v, err := smtlib.IntValue(vals[smtlib.App(paramSym(t, p), cs[ci]).String()])
			if err != nil {
				return nil, fmt.Errorf("static: decoding %s.%s: %w", cs[ci], p, err)
			}
			in.Params = append(in.Params, Param{Name: p, Value: v})
		}
		w.Instances = append(w.Instances, in)
		hints := map[string]int64{}
		for _, name := range sortedVars(t) {
			if v := t.vars[name]; v.kind == varInt && len(v.loops) == 0 {
				null, _ := smtlib.BoolValue(vals[smtlib.App(varSym(t, name)+".null", cs[ci]).String()])
				if n, err := smtlib.IntValue(vals[smtlib.App(varSym(t, name), cs[ci]).String()]); err == nil && !null {
					hints[name] = n
				}
			}
		}
		w.hints = append(w.hints, hints)
	}
	rel := func(r string, i, j int) bool {
		b, _ := smtlib.BoolValue(vals[smtlib.App(r, cs[reps[i]], cs[reps[j]]).String()])
		return b
	}
	n := len(reps)
	w.Order = make([]int, n)
	for i := range n {
		w.Order[i] = i
	}
	sort.SliceStable(w.Order, func(x, y int) bool { return rel("ar", w.Order[x], w.Order[y]) })
	for i := range n {
		for j := range n {
			if i == j {
				continue
			}
			if rel("vis", i, j) {
				w.Vis = append(w.Vis, [2]int{i, j})
			}
			for _, r := range relNames {
				if rel(r, i, j) {
					w.ModelEdges = append(w.ModelEdges, Edge{From: i, To: j, Rel: r})
				}
			}
		}
	}
	a.confirm(enc, w)
	return w, nil
}

// confirm replays the witness under a few initial databases and accepts the
// first replay whose dependency graph has a cycle and whose execution
// satisfies the model's axioms.
func (a *analysis) confirm(enc *Encoding, w *Witness) {
	defaults := []int64{0, 1, 1000000, -1000000}
	for _, in := range w.Instances {
		for _, p := range in.Params {
			for _, d := range []int64{p.Value, p.Value + 1, 2*abs(p.Value) + 1} {
				if !slices.Contains(defaults, d) {
					defaults = append(defaults, d)
				}
			}
		}
	}
	notes := map[string]bool{}
	// Modes: 0 model hints (first reader), 3 model hints (last reader),
	// 1 uniform default, 4 deleted rows, 2 empty database.
	for _, mode := range []int{0, 3, 1, 4, 2} {
		empty := mode == 2
		for _, def := range defaults {
			ex := &Execution{Instances: w.Instances, Order: w.Order, Vis: w.Vis, Default: def, Lazy: !empty, DeadRows: mode == 4}
			if mode == 0 || mode == 3 {
				ex.Hints, ex.HintsOverride = w.hints, mode == 3
			}
			var initial map[string][]Row
			if !empty {
				r, err := Replay(a.prog, ex)
				if err != nil {
					notes[err.Error()] = true
					continue
				}
				initial = r.Created
			}
			ex.Lazy, ex.Initial = false, initial
			if a.opts.EmptyInitialDB && !empty {
				continue
			}
			r, err := Replay(a.prog, ex)
			if err != nil {
				notes[err.Error()] = true
				continue
			}
			if r.Cycle == nil {
				notes["no dependency cycle in the replayed execution"] = true
				continue
			}
			if err := a.checkModel(w, r); err != nil {
				notes[err.Error()] = true
				continue
			}
			if err := enc.checkAssumes(initial, def); err != nil {
				notes[err.Error()] = true
				continue
			}
			w.Confirmed, w.Cycle, w.Initial = true, r.Cycle, initial
			db := "initial rows: those the transactions address by key, non-key fields " + fmt.Sprint(def)
			if mode == 0 || mode == 3 {
				db += " unless the model says what an instance read"
			}
			if mode == 4 {
				db = "initial rows: those the transactions address, present as deleted rows whose non-key fields are " + fmt.Sprint(def)
			}
			if empty {
				db = "an empty initial database"
			}
			w.ReplayNote = "replayed with " + db
			return
		}
	}
	// Then, for witnesses whose loops must visit several rows: range scans a
	// FOREACH iterates get one initial row per value the instances use
	// (parameters and the model's read values), with the model's hints.
	if spread := spreadValues(w); len(spread) > 0 && a.hasForeach() {
		for _, override := range []bool{false, true} {
			ex := &Execution{Instances: w.Instances, Order: w.Order, Vis: w.Vis, Default: 0, Lazy: true,
				Hints: w.hints, HintsOverride: override, Spread: spread}
			r, err := Replay(a.prog, ex)
			if err != nil {
				notes[err.Error()] = true
				continue
			}
			ex.Lazy, ex.Initial = false, r.Created
			if r, err = Replay(a.prog, ex); err != nil || r.Cycle == nil || a.checkModel(w, r) != nil || enc.checkAssumes(ex.Initial, 0) != nil {
				continue
			}
			// Drop the rows of iterated scans the confirmation does not
			// need, one at a time; every smaller database is confirmed again.
			ok := func(initial map[string][]Row) *ReplayResult {
				ex := &Execution{Instances: w.Instances, Order: w.Order, Vis: w.Vis, Initial: initial}
				r, err := Replay(a.prog, ex)
				if err != nil || r.Cycle == nil || a.checkModel(w, r) != nil || enc.checkAssumes(initial, 0) != nil {
					return nil
				}
				return r
			}
			initial := ex.Initial
			for _, tb := range slices.Sorted(maps.Keys(initial)) {
				if !a.iterated(tb) {
					continue // keep the rows the transactions address by key
				}
				for i := 0; i < len(initial[tb]); {
					smaller := maps.Clone(initial)
					smaller[tb] = slices.Delete(slices.Clone(initial[tb]), i, i+1)
					if r2 := ok(smaller); r2 != nil {
						initial, r = smaller, r2
						continue
					}
					i++
				}
			}
			// Then rows no statement matches any more (rows the dropped
			// ones led the loops to), all at once.
			smaller := map[string][]Row{}
			for tb, rows := range initial {
				for _, row := range rows {
					if r.Touched[tb][keyString(row.Key)] {
						smaller[tb] = append(smaller[tb], row)
					}
				}
			}
			if r2 := ok(smaller); r2 != nil {
				initial, r = smaller, r2
			}
			w.Confirmed, w.Cycle, w.Initial = true, r.Cycle, initial
			w.ReplayNote = "replayed with initial rows: those the transactions address by key, non-key fields 0 unless the model says what an instance read; range scans a FOREACH iterates first had one row per value the instances use, for the fields the loop reads (" +
				fmt.Sprint(spread) + "), then every such row the cycle does not need was dropped"
			return
		}
	}
	// Last, rows of some tables that no transaction inserts into or deletes
	// from may be absent (the solver's model may leave a row dead in every
	// snapshot): try each subset of those tables, with the model's hints.
	var static []string
	for _, tb := range a.prog.Tables {
		if !a.writesAlive(tb) {
			static = append(static, tb.Name)
		}
	}
	if len(static) <= 6 {
		for mask := 1; mask < 1<<len(static); mask++ {
			dead := map[string]bool{}
			for i, name := range static {
				if mask&(1<<i) != 0 {
					dead[name] = true
				}
			}
			for _, def := range defaults {
				ex := &Execution{Instances: w.Instances, Order: w.Order, Vis: w.Vis, Default: def, Lazy: true, DeadTables: dead, Hints: w.hints}
				r, err := Replay(a.prog, ex)
				if err != nil {
					continue
				}
				ex.Lazy, ex.Initial = false, r.Created
				if r, err = Replay(a.prog, ex); err != nil || r.Cycle == nil || a.checkModel(w, r) != nil || enc.checkAssumes(ex.Initial, def) != nil {
					continue
				}
				names := slices.Sorted(maps.Keys(dead))
				w.Confirmed, w.Cycle, w.Initial = true, r.Cycle, ex.Initial
				w.ReplayNote = fmt.Sprintf("replayed with initial rows: those the transactions address by key, non-key fields %d unless the model says what an instance read; rows of %s absent", def, strings.Join(names, ", "))
				return
			}
		}
	}
	var ns []string
	for n := range notes {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	w.ReplayNote = strings.Join(ns, "; ")
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// writesAlive reports whether some transaction inserts into or deletes from tb.
func (a *analysis) writesAlive(tb *Table) bool {
	for _, t := range a.prog.Txns {
		for _, st := range t.stmts {
			switch st := st.(type) {
			case *Insert:
				if st.ctx.table == tb {
					return true
				}
			case *Delete:
				if st.ctx.table == tb {
					return true
				}
			}
		}
	}
	return false
}

// checkModel evaluates the model's axioms on the replayed execution.
func (a *analysis) checkModel(w *Witness, r *ReplayResult) error {
	f := &finite{n: len(w.Instances), rels: map[string]map[[2]int]bool{}}
	for _, in := range w.Instances {
		f.types = append(f.types, "ty."+in.Txn)
	}
	for _, name := range []string{"vis", "ar", "WR", "WW", "RW"} {
		f.rels[name] = map[[2]int]bool{}
	}
	for _, p := range w.Vis {
		f.rels["vis"][p] = true
	}
	for i, x := range w.Order {
		for _, y := range w.Order[i+1:] {
			f.rels["ar"][[2]int{x, y}] = true
		}
	}
	for _, e := range r.Edges {
		f.rels[e.Rel][[2]int{e.From, e.To}] = true
	}
	for _, ax := range a.opts.Model.Axioms {
		ok, err := f.holds(ax)
		if err != nil {
			return fmt.Errorf("cannot re-check axiom of model %s on the replay: %w", a.opts.Model.Name, err)
		}
		if !ok {
			return fmt.Errorf("the replayed execution violates model %s axiom %s", a.opts.Model.Name, ax)
		}
	}
	return nil
}

// spreadValues are the values a witness's loops may need to visit: every
// instance's parameters and the read values the model gives, deduplicated in
// first-seen order, at most 16.
func spreadValues(w *Witness) []int64 {
	var out []int64
	add := func(v int64) {
		if !slices.Contains(out, v) && len(out) < 16 {
			out = append(out, v)
		}
	}
	for _, in := range w.Instances {
		for _, p := range in.Params {
			add(p.Value)
		}
	}
	for _, h := range w.hints {
		for _, k := range slices.Sorted(maps.Keys(h)) {
			add(h[k])
		}
	}
	return out
}

// iterated reports whether some FOREACH iterates a SELECT * from table tb.
func (a *analysis) iterated(tb string) bool {
	for _, t := range a.prog.Txns {
		for _, st := range t.stmts {
			if f, ok := st.(*Foreach); ok {
				if v := t.vars[f.Set]; v != nil && v.table != nil && v.table.Name == tb {
					return true
				}
			}
		}
	}
	return false
}

func (a *analysis) hasForeach() bool {
	for _, t := range a.prog.Txns {
		for _, st := range t.stmts {
			if _, ok := st.(*Foreach); ok {
				return true
			}
		}
	}
	return false
}
