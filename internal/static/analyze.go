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

	"github.com/isovet/isovet/internal/smtlib"
)

// Verdict is the outcome of an analysis. The zero value is Inconclusive, so a
// verdict that was never set is never read as safe.
type Verdict int

// The verdicts.
const (
	Inconclusive  Verdict = iota // solver unknown, budget spent, or candidates the replay could not confirm
	Anomaly                      // an execution of at most K instances with a dependency cycle, confirmed by replay
	NoneUpToBound                // no confirmed anomaly in executions of at most Bound instances; no unbounded proof
	Serializable                 // no cycle in any execution (Fekete et al.'s Theorem 3.1 under SI, or Theorem 10 or 12)
)

func (v Verdict) String() string {
	return [...]string{"inconclusive", "anomaly", "none-up-to-bound", "serializable"}[v]
}

// MarshalText renders the verdict name in JSON.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// Options configure [Analyze].
type Options struct {
	Model  Model
	Bound  int // largest k for cycle detection; 0 means 4
	Solver string
	// Timeout is a wall-clock safety limit per query; 0 means none. The
	// budget proper is solver work (RLimit, UnboundedRLimit, MaxRefinements),
	// so a loaded machine reaches the same verdicts, only later.
	Timeout time.Duration
	// UnboundedTimeout, when positive and shorter than Timeout, is the
	// wall-clock safety limit of each query of the unbounded proofs.
	UnboundedTimeout time.Duration
	// RLimit is the solver's own resource limit per bounded query (z3's
	// rlimit, cvc5's rlimit-per; the units differ between solvers); 0 means
	// none.
	RLimit int64
	// UnboundedRLimit is the resource limit of each query of the serial
	// check and the unbounded proofs; 0 means RLimit.
	UnboundedRLimit int64
	// MaxRefinements is how many solver models the replay refutes, and the
	// refinement excludes, before the bounded search gives up (0 means 256;
	// negative means none: the first refuted model ends the search).
	MaxRefinements int
	EmptyInitialDB bool
	Backend        smtlib.Backend
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
	Proof   string   `json:"proof,omitempty"`   // how serializability was proven, naming the theorem
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
	UnboundedAssumptions []string `json:"unbounded_assumptions,omitempty"`
	// Refuted are the solver models the replay refuted, which the refinement
	// excluded from later queries (their instances, vis and why the replay
	// failed), in the order found.
	Refuted []*Witness `json:"refuted,omitempty"`
	// SerialCheck says how the model was shown to admit serial executions,
	// or why it could not be shown (empty when the check did not run).
	SerialCheck string        `json:"serial_check,omitempty"`
	Queries     []QueryResult `json:"queries"`
	Elapsed     time.Duration `json:"elapsed_ns"`
	CPU         time.Duration `json:"cpu_ns"`
}

// ErrNoBackend is returned when Options.Backend is nil.
var ErrNoBackend = errors.New("static: no solver backend")

type analysis struct {
	ctx     context.Context
	prog    *Program
	opts    Options
	res     *Result
	timeout time.Duration // of the queries now being asked
	rlimit  int64         // of the queries now being asked
	// serialUnknown is set when the solver could not decide whether the
	// model admits serial executions: no safe verdict may then stand.
	serialUnknown string
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
	if opts.MaxRefinements == 0 {
		opts.MaxRefinements = 256
	}
	a := &analysis{ctx: ctx, prog: prog, opts: opts, res: &Result{Model: opts.Model.Name, Bound: opts.Bound}, timeout: opts.Timeout, rlimit: opts.RLimit}
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
	ans, err := a.opts.Backend.Solve(a.ctx, a.opts.Solver, withRLimit(q, a.opts.Solver, a.rlimit), a.timeout)
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
	err := a.search()
	a.guardSafe()
	return err
}

// search checks that the model admits serial executions, tries the
// dependency-graph proof under SI, runs the bounded search with refinement
// and, without a confirmed anomaly, the unbounded proofs.
func (a *analysis) search() error {
	enc, err := a.encode(nil)
	if err != nil {
		return err
	}
	for _, as := range enc.assumes() {
		a.res.Assumptions = append(a.res.Assumptions, as.Pos.String()+": "+as.String())
	}
	if err := a.serialCheck(enc); err != nil {
		return err
	}
	if proven, err := a.fekete(enc); err != nil || proven {
		return err
	}
	if err := a.bounded(enc); err != nil || a.res.Verdict == Anomaly || a.opts.NoUnbounded {
		return err
	}
	// The unbounded proofs do not rely on the bounded queries, so they are
	// tried after an inconclusive bounded query too: a proof shows that the
	// candidates (or the unknown) hid no anomaly.
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

// bounded asks the bounded queries for k = 2, 3, ..., K, each refined
// (boundedK) until a confirmed anomaly, unsat or the budget. The verdict is
// Anomaly when the replay confirms a candidate, NoneUpToBound when every
// query ended unsat; otherwise the reason says what was left open.
func (a *analysis) bounded(enc *Encoding) error {
	provenUpTo := 1
	open := ""
	for k := 2; k <= a.opts.Bound; k++ {
		st, note, err := a.boundedK(enc, k)
		if err != nil || a.res.Verdict == Anomaly {
			return err
		}
		// Each query covers executions of exactly k instances, so the
		// bound holds only while every smaller k was unsat too.
		if st == smtlib.Unsat && provenUpTo == k-1 {
			provenUpTo = k
		}
		if st != smtlib.Unsat && open == "" {
			open = note
		}
	}
	if provenUpTo == a.opts.Bound {
		a.res.Verdict = NoneUpToBound
	} else {
		a.res.Reason = open
	}
	return nil
}

// boundedK is the refinement loop at k instances: ask the bounded query;
// when the replay refutes the model, exclude its execution (blockingClause)
// and ask again, until the replay confirms a model (Anomaly), the query is
// unsat, the solver answers unknown, or MaxRefinements refuted models in
// all are spent (then Unknown, with the last candidate as the witness).
func (a *analysis) boundedK(enc *Encoding, k int) (smtlib.Status, string, error) {
	var blocks []smtlib.Term
	for {
		ans, err := a.solve(enc.ExecutionExcluding(k, blocks))
		if err != nil || ans.Status == smtlib.Unsat {
			return ans.Status, "", err
		}
		if ans.Status == smtlib.Unknown {
			return ans.Status, fmt.Sprintf("cycle k=%d: %s", k, ans.Reason), nil
		}
		w, err := a.witness(enc, k, ans)
		if err != nil {
			return smtlib.Unknown, "", err
		}
		if w.Confirmed {
			a.res.Witness, a.res.K, a.res.Verdict = w, k, Anomaly
			return smtlib.Sat, "", nil
		}
		a.res.Refuted = append(a.res.Refuted, w)
		if len(a.res.Refuted) > max(a.opts.MaxRefinements, 0) {
			a.res.Witness, a.res.K = w, k
			return smtlib.Unknown, fmt.Sprintf("the replay refuted %d candidate executions, the refinement budget (%d); the last, at k=%d: %s",
				len(a.res.Refuted), max(a.opts.MaxRefinements, 0), k, w.ReplayNote), nil
		}
		blocks = append(blocks, blockingClause(enc, w))
	}
}

// blockingClause excludes a refuted model's execution from the bounded
// query of its size: the instances' transactions, the visibility between
// them (arbitration is the index order in that query) and their parameters
// up to renaming the equality-only ones (paramClass, refine.go). Whether an
// execution has a dependency cycle depends on nothing else; the model's
// other values (claimed dependencies, values read) are not part of the
// execution and stay free.
func blockingClause(enc *Encoding, w *Witness) smtlib.Term {
	es := consts("e", len(w.Instances))
	vis := map[[2]int]bool{}
	for _, p := range w.Vis {
		vis[p] = true
	}
	var conj []smtlib.Term
	for i, in := range w.Instances {
		conj = append(conj, isType(es[i], enc.txnByName(in.Txn)))
		for j := range es {
			if i != j {
				conj = append(conj, boolLit(smtlib.App("vis", es[i], es[j]), vis[[2]int{i, j}]))
			}
		}
	}
	conj = append(conj, paramClass(enc, w, es)...)
	return smtlib.Not(smtlib.And(conj...))
}

// unbounded tries the shortest-path proof (Theorem 10) and then the
// inductive one (Theorem 12), and records the proof that succeeds.
func (a *analysis) unbounded(enc *Encoding) (bool, error) {
	defer a.unboundedLimits()()
	ok, err := a.shortestPath(enc)
	if err != nil {
		return false, err
	}
	if ok {
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

// unboundedTimeout is the time limit of each unbounded query:
// UnboundedTimeout when it is set and tighter than the bounded queries'.
func (a *analysis) unboundedTimeout() time.Duration {
	if u := a.opts.UnboundedTimeout; u > 0 && (a.timeout <= 0 || u < a.timeout) {
		return u
	}
	return a.timeout
}

// shortestPath reports whether the premises of Theorem 10 hold: no
// dependency cycle of at most K instances in executions of any size (not
// only the bounded executions checked before) and no chordless dependency
// path of K edges.
func (a *analysis) shortestPath(enc *Encoding) (bool, error) {
	cyc, err := a.solve(enc.Cycle(a.opts.Bound))
	if err != nil {
		return false, err
	}
	ans, err := a.solve(enc.ShortestPath(a.opts.Bound))
	if err != nil {
		return false, err
	}
	return cyc.Status == smtlib.Unsat && ans.Status == smtlib.Unsat, nil
}

// inductive applies Lemma 11 repeatedly: find the types T' whose dependencies
// all follow ar, conclude every execution with one of them is serializable,
// and continue with the rest (§5.3).
func (a *analysis) inductive() (string, error) {
	var remaining []string
	for _, t := range selected(a.prog, a.opts.Txns) {
		remaining = append(remaining, t.Name)
	}
	var steps []string
	var counters []string
	for len(remaining) > 0 {
		enc, err := a.encode(remaining)
		if err != nil {
			return "", err
		}
		counters = enc.addCounterAssumes(counters)
		ok, independent, err := a.inductiveRound(enc, remaining)
		if err != nil {
			return "", err
		}
		if independent {
			steps = append(steps, fmt.Sprintf("%v have no dependencies among them", remaining))
			break
		}
		if len(ok) == 0 {
			return "", nil
		}
		steps = append(steps, fmt.Sprintf("%v", ok))
		remaining = slices.DeleteFunc(remaining, func(s string) bool { return slices.Contains(ok, s) })
	}
	return a.inductiveProof(steps, counters), nil
}

// addCounterAssumes adds to counters the positions of the assumptions
// e's counter invariants rest on, once each.
func (e *Encoding) addCounterAssumes(counters []string) []string {
	for _, as := range e.counterAssumes {
		if s := as.Pos.String(); !slices.Contains(counters, s) {
			counters = append(counters, s)
		}
	}
	return counters
}

// inductiveRound is one application of Lemma 11 to the remaining types:
// independent when no two of their instances depend on each other, else
// ok lists the types whose dependencies all follow ar (none when the
// second disjunct of Eq. 7 is not unsat).
func (a *analysis) inductiveRound(enc *Encoding, remaining []string) (ok []string, independent bool, err error) {
	ans, err := a.solve(enc.AnyDependency())
	if err != nil {
		return nil, false, err
	}
	if ans.Status == smtlib.Unsat {
		return nil, true, nil
	}
	ans, err = a.solve(enc.Inductive2())
	if err != nil || ans.Status != smtlib.Unsat {
		return nil, false, err
	}
	for _, t := range remaining {
		ans, err := a.solve(enc.Inductive1(t))
		if err != nil {
			return nil, false, err
		}
		if ans.Status == smtlib.Unsat {
			ok = append(ok, t)
		}
	}
	return ok, false, nil
}

// inductiveProof states the inductive proof of the steps, and records the
// assumptions its counter invariants rest on.
func (a *analysis) inductiveProof(steps, counters []string) string {
	proof := "inductive (Theorem 12): " + strings.Join(steps, ", then ")
	if len(counters) > 0 {
		// The counter invariants rest on these assumptions, so the proof
		// covers executions from an initial database satisfying them.
		a.res.UnboundedAssumptions = counters
		proof += "; for executions from an initial database satisfying the ASSUME INITIALLY at " +
			strings.Join(counters, ", ") + " (counter invariants)"
	}
	return proof
}

// witness decodes a model of a cycle query and replays it.
func (a *analysis) witness(enc *Encoding, k int, ans smtlib.Answer) (*Witness, error) {
	m := answerModel{vals: map[string]smtlib.Term{}, cs: consts("e", k)}
	for _, p := range ans.Values {
		if len(p.Elems()) == 2 {
			m.vals[p.Elems()[0].String()] = p.Elems()[1]
		}
	}
	reps := m.distinct()
	w := &Witness{K: k}
	if err := a.decodeInstances(w, m, reps); err != nil {
		return nil, err
	}
	m.decodeExecution(w, reps)
	a.confirm(enc, w)
	return w, nil
}

// answerModel is a solver's model of a bounded query: the values of the
// get-value terms by their text, and the query's instance constants.
type answerModel struct {
	vals map[string]smtlib.Term
	cs   []smtlib.Term
}

func (m answerModel) value(t smtlib.Term) smtlib.Term { return m.vals[t.String()] }

func (m answerModel) holds(t smtlib.Term) bool {
	b, _ := smtlib.BoolValue(m.value(t))
	return b
}

// distinct returns the instance constants that stand for different
// instances: a constant the model makes equal to an earlier one is merged
// into the first.
func (m answerModel) distinct() []int {
	rep := make([]int, len(m.cs))
	var reps []int
	for i := range rep {
		rep[i] = i
		for j := range i {
			if m.holds(smtlib.Eq(m.cs[j], m.cs[i])) && rep[j] == j {
				rep[i] = j
				break
			}
		}
		if rep[i] == i {
			reps = append(reps, i)
		}
	}
	return reps
}

// decodeInstances adds the instances t1, t2, ... of the constants reps to w:
// their transaction, parameters and the model's values of their variables.
func (a *analysis) decodeInstances(w *Witness, m answerModel, reps []int) error {
	txns := map[string]*Txn{}
	for _, t := range a.prog.Txns {
		txns[t.Name] = t
	}
	for n, ci := range reps {
		c := m.cs[ci]
		ty := m.value(smtlib.App("typ", c)).Atom()
		t := txns[strings.TrimPrefix(ty, "ty.")]
		if t == nil {
			return fmt.Errorf("static: model gives %s unknown type %q", c, ty)
		}
		in := Instance{Name: fmt.Sprintf("t%d", n+1), Txn: t.Name}
		for _, p := range t.Params {
			v, err := smtlib.IntValue(m.value(smtlib.App(paramSym(t, p), c)))
			if err != nil {
				return fmt.Errorf("static: decoding %s.%s: %w", c, p, err)
			}
			in.Params = append(in.Params, Param{Name: p, Value: v})
		}
		w.Instances = append(w.Instances, in)
		w.hints = append(w.hints, m.hints(t, c))
	}
	return nil
}

// hints are the model's non-NULL values of the instance c's top-level
// integer variables.
func (m answerModel) hints(t *Txn, c smtlib.Term) map[string]int64 {
	hints := map[string]int64{}
	for _, name := range sortedVars(t) {
		if v := t.vars[name]; v.kind != varInt || len(v.loops) > 0 {
			continue
		}
		null := m.holds(smtlib.App(varSym(t, name)+".null", c))
		if n, err := smtlib.IntValue(m.value(smtlib.App(varSym(t, name), c))); err == nil && !null {
			hints[name] = n
		}
	}
	return hints
}

// decodeExecution sets w's arbitration order, visibility and the
// dependencies the model claims, between the instances of reps.
func (m answerModel) decodeExecution(w *Witness, reps []int) {
	rel := func(r string, i, j int) bool { return m.holds(smtlib.App(r, m.cs[reps[i]], m.cs[reps[j]])) }
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
}

// confirm replays the witness under a few initial databases and accepts the
// first replay whose dependency graph has a cycle and whose execution
// satisfies the model's axioms (and the initial database the program's
// assumptions). The databases are tried in three rounds: per-mode uniform
// databases (byDefaults), range scans spread over the instances' values
// (bySpread), and tables whose rows may be absent (byDeadTables). When none
// confirms, the replay note lists why.
func (a *analysis) confirm(enc *Encoding, w *Witness) {
	c := &confirmation{a: a, enc: enc, w: w, notes: map[string]bool{}, defaults: replayDefaults(w)}
	if c.byDefaults() || c.bySpread() || c.byDeadTables() {
		return
	}
	w.ReplayNote = c.failureNote()
}

// confirmation is one witness's confirmation by replay.
type confirmation struct {
	a        *analysis
	enc      *Encoding
	w        *Witness
	defaults []int64         // values of non-key fields to try
	notes    map[string]bool // why replays failed
}

// replayDefaults are the values tried for non-key fields: 0, 1, ±10⁶, and
// for each parameter value p, p, p+1 and 2|p|+1.
func replayDefaults(w *Witness) []int64 {
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
	return defaults
}

// execution is the witness's execution, to replay.
func (c *confirmation) execution() *Execution {
	return &Execution{Instances: c.w.Instances, Order: c.w.Order, Vis: c.w.Vis}
}

// replay replays ex on its initial database and checks the result: a
// dependency cycle, the model's axioms, and the program's assumptions on the
// initial database (non-key fields def where not given).
func (c *confirmation) replay(ex *Execution, def int64) (*ReplayResult, error) {
	r, err := Replay(c.a.prog, ex)
	if err != nil {
		return nil, err
	}
	if r.Cycle == nil {
		return nil, errors.New("no dependency cycle in the replayed execution")
	}
	if err := c.a.checkModel(c.w, r); err != nil {
		return nil, err
	}
	if err := c.enc.checkAssumes(ex.Initial, def); err != nil {
		return nil, err
	}
	return r, nil
}

// accept marks the witness confirmed by a replay from initial.
func (c *confirmation) accept(cycle []Edge, initial map[string][]Row, note string) {
	c.w.Confirmed, c.w.Cycle, c.w.Initial = true, cycle, initial
	c.w.ReplayNote = note
}

func (c *confirmation) note(err error) { c.notes[err.Error()] = true }

// failureNote lists, sorted, why the replays failed.
func (c *confirmation) failureNote() string {
	ns := slices.Sorted(maps.Keys(c.notes))
	return strings.Join(ns, "; ")
}

// dbMode is how the first replay pass builds an initial database.
type dbMode int

// The modes, in the order they are tried (confirmModes).
const (
	modeHints     dbMode = iota // the model's hints, the first reader's winning
	modeHintsLast               // the model's hints, the last reader's winning
	modeUniform                 // every non-key field the default
	modeDead                    // the addressed rows present as deleted rows
	modeEmpty                   // no rows at all
)

var confirmModes = []dbMode{modeHints, modeHintsLast, modeUniform, modeDead, modeEmpty}

func (m dbMode) hinted() bool { return m == modeHints || m == modeHintsLast }

// describe is the replay note's account of the initial database.
func (m dbMode) describe(def int64) string {
	switch m {
	case modeEmpty:
		return "an empty initial database"
	case modeDead:
		return "initial rows: those the transactions address, present as deleted rows whose non-key fields are " + fmt.Sprint(def)
	}
	db := "initial rows: those the transactions address by key, non-key fields " + fmt.Sprint(def)
	if m.hinted() {
		db += " unless the model says what an instance read"
	}
	return db
}

// byDefaults tries every mode with every default.
func (c *confirmation) byDefaults() bool {
	for _, mode := range confirmModes {
		for _, def := range c.defaults {
			if c.tryMode(mode, def) {
				return true
			}
		}
	}
	return false
}

// tryMode builds an initial database by a lazy replay in the mode (none for
// modeEmpty) and confirms the witness on it. With EmptyInitialDB only the
// empty database is tried.
func (c *confirmation) tryMode(mode dbMode, def int64) bool {
	empty := mode == modeEmpty
	ex := c.execution()
	ex.Default, ex.Lazy, ex.DeadRows = def, !empty, mode == modeDead
	if mode.hinted() {
		ex.Hints, ex.HintsOverride = c.w.hints, mode == modeHintsLast
	}
	var initial map[string][]Row
	if !empty {
		r, err := Replay(c.a.prog, ex)
		if err != nil {
			c.note(err)
			return false
		}
		initial = r.Created
	}
	ex.Lazy, ex.Initial = false, initial
	if c.a.opts.EmptyInitialDB && !empty {
		return false
	}
	r, err := c.replay(ex, def)
	if err != nil {
		c.note(err)
		return false
	}
	c.accept(r.Cycle, initial, "replayed with "+mode.describe(def))
	return true
}

// bySpread is for witnesses whose loops must visit several rows: range
// scans a FOREACH iterates get one initial row per value the instances use
// (parameters and the model's read values), with the model's hints.
func (c *confirmation) bySpread() bool {
	spread := spreadValues(c.w)
	if len(spread) == 0 || !c.a.hasForeach() {
		return false
	}
	for _, override := range []bool{false, true} {
		if c.trySpread(spread, override) {
			return true
		}
	}
	return false
}

func (c *confirmation) trySpread(spread []int64, override bool) bool {
	ex := c.execution()
	ex.Lazy, ex.Hints, ex.HintsOverride, ex.Spread = true, c.w.hints, override, spread
	r, err := Replay(c.a.prog, ex)
	if err != nil {
		c.note(err)
		return false
	}
	ex.Lazy, ex.Initial = false, r.Created
	if r, err = c.replay(ex, 0); err != nil {
		return false
	}
	initial, r := c.shrinkIterated(ex.Initial, r)
	initial, r = c.dropUntouched(initial, r)
	c.accept(r.Cycle, initial, "replayed with initial rows: those the transactions address by key, non-key fields 0 unless the model says what an instance read; range scans a FOREACH iterates first had one row per value the instances use, for the fields the loop reads ("+
		fmt.Sprint(spread)+"), then every such row the cycle does not need was dropped")
	return true
}

// confirmsFrom replays the witness from initial (non-key fields 0 where not
// given) and returns the replay if it confirms the witness.
func (c *confirmation) confirmsFrom(initial map[string][]Row) *ReplayResult {
	ex := c.execution()
	ex.Initial = initial
	r, err := c.replay(ex, 0)
	if err != nil {
		return nil
	}
	return r
}

// shrinkIterated drops the rows of iterated scans the confirmation does not
// need, one at a time; every smaller database is confirmed again. Rows of
// other tables are those the transactions address by key, and stay.
func (c *confirmation) shrinkIterated(initial map[string][]Row, r *ReplayResult) (map[string][]Row, *ReplayResult) {
	for _, tb := range slices.Sorted(maps.Keys(initial)) {
		if !c.a.iterated(tb) {
			continue
		}
		for i := 0; i < len(initial[tb]); {
			smaller := maps.Clone(initial)
			smaller[tb] = slices.Delete(slices.Clone(initial[tb]), i, i+1)
			if r2 := c.confirmsFrom(smaller); r2 != nil {
				initial, r = smaller, r2
				continue
			}
			i++
		}
	}
	return initial, r
}

// dropUntouched then drops, all at once, the rows no statement matches any
// more (rows the dropped ones led the loops to), if the rest still confirms.
func (c *confirmation) dropUntouched(initial map[string][]Row, r *ReplayResult) (map[string][]Row, *ReplayResult) {
	smaller := map[string][]Row{}
	for tb, rows := range initial {
		for _, row := range rows {
			if r.Touched[tb][keyString(row.Key)] {
				smaller[tb] = append(smaller[tb], row)
			}
		}
	}
	if r2 := c.confirmsFrom(smaller); r2 != nil {
		return smaller, r2
	}
	return initial, r
}

// byDeadTables is the last round: rows of tables no transaction inserts into
// or deletes from may be absent (the solver's model may leave a row dead in
// every snapshot), so each subset of those tables (when there are at most
// six) is tried with the model's hints.
func (c *confirmation) byDeadTables() bool {
	var static []string
	for _, tb := range c.a.prog.Tables {
		if !c.a.writesAlive(tb) {
			static = append(static, tb.Name)
		}
	}
	if len(static) > 6 {
		return false
	}
	for mask := 1; mask < 1<<len(static); mask++ {
		dead := subset(static, mask)
		for _, def := range c.defaults {
			if c.tryDead(dead, def) {
				return true
			}
		}
	}
	return false
}

// subset is the set of the names whose bit is set in mask.
func subset(names []string, mask int) map[string]bool {
	out := map[string]bool{}
	for i, name := range names {
		if mask&(1<<i) != 0 {
			out[name] = true
		}
	}
	return out
}

func (c *confirmation) tryDead(dead map[string]bool, def int64) bool {
	ex := c.execution()
	ex.Default, ex.Lazy, ex.DeadTables, ex.Hints = def, true, dead, c.w.hints
	r, err := Replay(c.a.prog, ex)
	if err != nil {
		return false
	}
	ex.Lazy, ex.Initial = false, r.Created
	if r, err = c.replay(ex, def); err != nil {
		return false
	}
	names := slices.Sorted(maps.Keys(dead))
	c.accept(r.Cycle, ex.Initial, fmt.Sprintf("replayed with initial rows: those the transactions address by key, non-key fields %d unless the model says what an instance read; rows of %s absent", def, strings.Join(names, ", ")))
	return true
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
		if slices.ContainsFunc(t.stmts, func(st Stmt) bool { return writesRows(st, tb) }) {
			return true
		}
	}
	return false
}

// writesRows reports whether st is an INSERT into or a DELETE from tb (a
// write of its rows' Alive).
func writesRows(st Stmt, tb *Table) bool {
	switch st := st.(type) {
	case *Insert:
		return st.ctx.table == tb
	case *Delete:
		return st.ctx.table == tb
	}
	return false
}

// checkModel evaluates the model's axioms on the replayed execution.
func (a *analysis) checkModel(w *Witness, r *ReplayResult) error {
	f := replayedExecution(w, r)
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

// replayedExecution is the replay as a finite structure: the witness's
// instance types, vis and arbitration order, and the replay's dependencies.
func replayedExecution(w *Witness, r *ReplayResult) *finite {
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
	return f
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
