// Package si checks black-box snapshot isolation at three levels: snapshot isolation (Adya
// SI, no session order), strong-session snapshot isolation (session order; PolySI's SI) and
// strong snapshot isolation (client real-time order too).
//
// # Characterization
//
// A history satisfies SI iff it is internally consistent and some choice of read-from and
// version orders makes (SO ∪ WR ∪ WW) ; RW? acyclic (Cerone and Gotsman, JACM 2018, Thm.
// 4.1; PolySI Thm. 6; VeriStrong App. A): every cycle of the dependency graph must contain
// two adjacent anti-dependencies. The graph built from SO, WR, WW (and RT at the strong
// level) plus every such edge followed by one RW edge is the induced SI graph.
//
// # Pipeline
//
//	basic checks ─▶ deps.Build ─▶ build ─▶ prune ─▶ encode ─▶ sat.Solve (+ acyclic) ─▶ witness
//
//	  - build: the generalized polygraph with duplicate values allowed (VeriStrong's
//	    hyper-polygraph): one WW choice per unordered pair of writers, merged across the keys
//	    they share (PolySI's coalescing), one WR choice per read with several candidate
//	    writers, one commit variable per transaction of unknown outcome. Raw edges keep their
//	    kind: dep (so, wr, ww, rt), rw, and tail (ρ(k)→writer, the second half of an
//	    anti-dependency on the initial version, which never composes further).
//	  - split graph (model.go): two nodes per node u, u and u* ("reached by a dep edge"); a
//	    dep edge u→v is u→v*, an rw edge u→v is u*→v, and u*→u. Its cycles are exactly those
//	    of the induced graph, with one edge per raw edge instead of one composite edge per
//	    (dep in-edge, rw out-edge) pair of every node.
//	  - prune (PolySI Alg. 2): each pass builds the known split graph and its reachability
//	    once, then eliminates every option one of whose edges closes a cycle (also a dep edge
//	    and an rw edge of the option itself, composed), and fixes choices left with one
//	    option. An induced self-loop (T -so-> R -rw-> T) is a cycle.
//	  - encode: every raw edge is justified by a conjunction of literals and is one edge of
//	    the acyclicity theory (internal/sat/acyclic) over the split graph: a plain edge, a
//	    composite edge (a ∧ b: an anti-dependency a write order and a read choice derive), or
//	    an auxiliary AND variable first.
//	  - witness (PolySI Alg. 3, reconstructed): a violation found by pruning is the cycle of
//	    each option it ruled out; one only the solver finds is shrunk to a minimal set of
//	    choices (selectors, failed assumptions, deletion), and every combination of their
//	    options is replayed on the known split graph for its shortest cycle. Each cycle is
//	    expanded back into raw steps with reasons (restoring the writer of every
//	    anti-dependency), the shortest names the anomaly (classify.go), and every combination
//	    is a RuledOut sentence: together they form a complete adjoining cycle set (App. E).
//
// # What is internal/polygraph's
//
// The stages that do not depend on the graph are serializability's, from internal/polygraph:
// the choices themselves (polygraph.WW, never blocks here, and polygraph.WR) with their
// options, alternatives and violations; pruning's fixpoint, its decisions from the answers
// and the violations they prove (polygraph.Fixpoint, Answers.DecideWW and DecideWR,
// WWViolation and WRViolation); the read choices' clauses, the folding of a conjunction to
// at most two literals and the theory over the reduced known graph (ReadCandidate, ReadOne,
// Ands.Fold, Attach); the minimal core (MinimalCore); the combinations of a core's options
// (Enumerate, Selection); the breadth-first search of a witness's cycle is
// graph.ShortestPathWith.
//
// What stays here is what the composite edges of the induced graph change. An rw edge is
// an edge only after a dep edge, so every question is asked on the split graph, whose
// edges polygraph's known graph (one node per transaction, version nodes relaying every
// reader of a version to the writers after it) cannot express: a raw edge keeps its kind
// (dep, rw, tail) to find its split-graph ends, so the model (model.go) keeps known edges
// by kind rather than as a polygraph.Polygraph. An option's queries differ too: besides one
// per edge, an rw edge of an option after a dep edge of the same option composes into an
// induced edge the known graph does not hold, and an option can close an induced
// self-loop by itself (T -so-> R -rw-> T), which no query asks (polygraph.Span.Loop). The
// justified edges are split-graph edges, deduplicated, and a write-write choice's derived
// anti-dependencies, justified by the conjunction of its order and a read choice, leave
// the reader's starred node. A witness's cycle is found on the split graph and expanded
// back into raw edges, the shortest counted in raw edges; the clocks of a schedule
// (schedule.go), the pair reductions (sinks, free writers) and the naming of cycles
// (classify.go) are SI's alone.
//
// # Local names
//
//	m *model   d *deps.Deps   c WW choice   rc WR choice   ri read index   en *encoding
package si

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/certify"
	"github.com/isovet/isovet/internal/check/basic"
	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/polygraph"
	"github.com/isovet/isovet/internal/report"
	"github.com/isovet/isovet/internal/sat"
	"github.com/isovet/isovet/internal/sat/acyclic"
)

// Levels are the levels this package checks.
var Levels = []anomaly.Level{anomaly.SnapshotIsolation, anomaly.StrongSessionSI, anomaly.StrongSI}

// Options tune a check. The zero value is usable.
type Options struct {
	MaxAnomalies int // 0: 20
	// CoreBudget bounds the solver calls spent shrinking an unsatisfiable core (0: 200).
	CoreBudget int
	// Now, if set, is read to time the phases; nil leaves timings zero.
	Now func() time.Time
	// Theory tunes the acyclicity theory (benchmarks compare settings).
	Theory acyclic.Options
	// Shortcuts turns off proof shortcuts, the basic checks and the scheduled witness
	// (schedule.go), for tests that compare the paths or test the graph stages alone:
	// certify.SkipShortcuts skips the certificates tried before the SI pipeline (row,
	// snapshot, time), the pass through strong-session SI and the strong-SI route taken when
	// the pipeline refuses a predicate history with client time.
	Shortcuts certify.Skip
	// PredWords bounds the reads of rows predicates did not return (deps.Options.PredWords;
	// 0: deps' default) at this level; a strong-SI check made on the way keeps the default.
	// Tests set it to reach the bound on small histories.
	PredWords int
	// Progress, when set, is told of each stage as it starts and ends, and of the solver's
	// work every few hundred conflicts (report.Meter); it never changes the verdict.
	Progress func(report.Progress)
	_        struct{}
}

// ErrNeedsTime is returned for strong snapshot isolation on a history in which no
// transaction has a client interval. When only some lack one, they are checked as
// unbounded (no real-time edges) and a pass becomes Unknown (see [deps.Deps.Untimed]).
var ErrNeedsTime = errors.New("si: strong snapshot isolation needs a client interval, and no transaction has one")

// Check checks h against level.
func Check(ctx context.Context, h *history.History, level anomaly.Level, o Options) (*report.Report, error) {
	if err := checkable(h, level); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	if level == anomaly.SnapshotIsolation && !o.Shortcuts.Has(certify.SkipSession) && !h.HasTime() && h.SessionOrdered() {
		if srep, ok, err := passBySession(ctx, h, o); ok {
			return srep, err
		}
	}
	rep := &report.Report{Level: level, Checker: "si", History: h}
	c := &run{ctx: ctx, h: h, level: level, o: o, rep: rep, meter: report.NewMeter(o.Progress, level, "si", len(h.Txns)), ph: report.PlaceholdersOf(h)}
	c.t0 = c.now()
	c.tp = c.t0
	err := report.Ended(ctx, rep, c.run())
	c.caveats()
	rep.Stats.Elapsed = c.now().Sub(c.t0)
	c.meter.Update(func(p *report.Progress) { p.Anomalies = len(rep.Anomalies) })
	c.meter.End()
	return report.Settle(ctx, rep, err)
}

// checkable rejects a level this package does not check and strong snapshot isolation
// on a history without client time.
func checkable(h *history.History, level anomaly.Level) error {
	switch level {
	case anomaly.SnapshotIsolation, anomaly.StrongSessionSI, anomaly.StrongSI:
	default:
		return fmt.Errorf("si: level %s is not a snapshot isolation level", level)
	}
	if level.Info().Realtime && !slices.ContainsFunc(h.Txns, func(t history.Txn) bool { return t.HasTime }) {
		return ErrNeedsTime
	}
	return nil
}

// withDefaults fills the zero options with their defaults.
func (o Options) withDefaults() Options {
	if o.MaxAnomalies <= 0 {
		o.MaxAnomalies = 20
	}
	if o.CoreBudget <= 0 {
		o.CoreBudget = 200
	}
	return o
}

// caveats adds what limits a pass: partly modelled predicates, transactions without
// client time, placeholder writers.
func (c *run) caveats() {
	rep := c.rep
	if c.partial {
		rep.AddCaveat(report.CaveatPartial, "predicate operations are only partly modelled (rows a predicate did not return are ignored): no violation was found, but that proves nothing")
	}
	if c.untimed > 0 {
		rep.AddCaveat(report.CaveatUntimed, deps.UntimedNote(c.untimed))
	}
	// Placeholder writers ([history.PlaceholderSession]): their other operations were never
	// recorded, so a pass proves nothing about them.
	if ph := c.h.Placeholders(); len(ph) > 0 {
		rep.AddCaveat(report.CaveatPlaceholders, report.PlaceholderFinding(c.h))
	}
}

// passBySession tries to pass snapshot isolation by passing strong-session snapshot
// isolation, which implies it (snapshots that also see each session's earlier transactions
// are snapshots). Without client time, dropping session order leaves far more orders open:
// on VeriStrong's WH-10k, HD-10k and rubis-10k the plain level's pipeline did not finish in
// 60 s, while the session level decides them in seconds. ok says the returned report is
// the answer: a pass, or the session check's Unknown when ctx ended during it. Otherwise (a
// violation at the session level need not be one here) the caller runs the plain pipeline.
func passBySession(ctx context.Context, h *history.History, o Options) (*report.Report, bool, error) {
	return report.ByStronger(ctx, anomaly.SnapshotIsolation, "passed by passing strong-session-snapshot-isolation, which implies this level: snapshots that also see each session's earlier transactions are snapshots", func() (*report.Report, error) {
		return Check(ctx, h, anomaly.StrongSessionSI, o)
	})
}

type run struct {
	ctx    context.Context
	h      *history.History
	level  anomaly.Level
	o      Options
	rep    *report.Report
	t0, tp time.Time
	meter  *report.Meter // nil without Options.Progress
	ph     report.Placeholders
	// partial: deps modelled some operations only in part (predicates); a pass proves
	// nothing.
	partial bool
	// untimed: counted transactions without a client interval (deps.Deps.Untimed); a pass
	// proves nothing about real time.
	untimed int
}

func (c *run) now() time.Time {
	if c.o.Now == nil {
		return time.Time{}
	}
	return c.o.Now()
}

func (c *run) phase(name string) {
	t := c.now()
	c.rep.Stats.Phases = append(c.rep.Stats.Phases, report.Phase{Name: name, Elapsed: t.Sub(c.tp)})
	c.tp = t
}

// fail records violation a: those among recorded transactions are kept first in claim
// (report.Placeholders.Add).
func (c *run) fail(a report.Anomaly) {
	c.rep.Verdict = report.Fail
	c.rep.Anomalies = c.ph.Add(c.rep.Anomalies, a, c.o.MaxAnomalies)
}

// strictFollowup records, for a pass on a serial order that respects client real time and
// session order, that the level's real-time counterpart holds too.
func (c *run) strictFollowup() {
	if rt, ok := c.level.RealtimeCounterpart(); ok {
		c.rep.Followup = &report.Followup{Level: rt, Verdict: report.Pass, Why: "the history is strict-serializable, which implies it"}
	}
}

// run is the pipeline, one phase after another until one decides: the basic checks
// and the certificates that need no dependency graph, the dependencies, the model
// (schedule, pairs, pruning), the solver and the explanation of a violation.
func (c *run) run() error {
	c.countStats()
	info := c.level.Info()
	if done, err := c.shortcuts(); done || err != nil {
		return err
	}
	d, err := c.buildDeps(info)
	if d == nil || err != nil {
		return err
	}
	return c.decide(d, info)
}

// countStats fills the history's sizes into the report's statistics.
func (c *run) countStats() {
	h, st := c.h, &c.rep.Stats
	st.Txns, st.Sessions, st.Keys = len(h.Txns), len(h.Sessions), len(h.Keys)
	for i := range h.Txns {
		st.Ops += len(h.Txns[i].Ops)
		switch h.Txns[i].Outcome {
		case history.OutcomeCommitted:
			st.Committed++
		case history.OutcomeAborted:
			st.Aborted++
		default:
			st.Unknown++
		}
	}
}

// shortcuts runs the basic checks while the proofs that need no dependency graph
// (certify.Try) look for one of the level, then takes the proof; done says the report is
// decided. The basic checks' findings come first.
//
// A serial order proves snapshot isolation (each snapshot taken just before its
// transaction), at the session and real-time levels when it keeps those orders too: the
// row certificate finds one from the history's own clocks without building anything, and
// on predicate histories with client time the time certificate (the strict
// serializability fast path) is cheap, while without real time a row a predicate did not
// return may have read any non-matching version and the expansion can take gigabytes. A
// history that is snapshot isolated but not serializable has no serial order; the
// execution its clocks describe (snapshot at each start, writes installed at each commit),
// replayed on whole rows, proves it (the snapshot certificate): on memdb's SI BlindW-Pred
// of 10,000 transactions, 0.6 s, where the strict certificate spent 8 s failing and the
// pipeline could not decide.
func (c *run) shortcuts() (done bool, err error) {
	var (
		p    certify.Proof
		ok   bool
		perr error
		wait sync.WaitGroup
	)
	pctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	c.meter.Start(report.StageBasic)
	wait.Go(func() { p, ok, perr = certify.Try(pctx, c.h, c.level, 0, c.o.Shortcuts) })
	if !c.o.Shortcuts.Has(certify.SkipBasic) {
		if done, err := c.basic(); done || err != nil {
			cancel()
			wait.Wait()
			return done, err
		}
	}
	wait.Wait()
	if !ok {
		return false, perr
	}
	c.pass(p)
	return true, nil
}

// pass passes the history on p, with the follow-up it proves: the real-time counterpart of
// the level, through strict serializability for a serial order that keeps real time and
// session order, or directly for snapshots that follow them.
func (c *run) pass(p certify.Proof) {
	c.phase(p.Route.String())
	c.rep.Notes = append(c.rep.Notes, p.Note(c.level))
	c.rep.Verdict = report.Pass
	rt, ok := c.level.RealtimeCounterpart()
	switch {
	case !ok:
	case p.Serial() && p.Proves(anomaly.StrictSerializable):
		c.strictFollowup()
	case !p.Serial() && p.Proves(rt):
		c.rep.Followup = &report.Followup{Level: rt, Verdict: report.Pass, Why: "the snapshots that passed this level follow client real time and session order"}
	}
}

// basic reports the basic checks' findings the level forbids; done says they failed it.
func (c *run) basic() (done bool, err error) {
	f, err := basic.Check(c.ctx, c.h, basic.Options{MaxAnomalies: c.o.MaxAnomalies})
	if err != nil {
		return false, err
	}
	for _, a := range f.Anomalies {
		if c.level.Forbids(a.Kind) {
			c.fail(a)
		}
	}
	c.phase("basic")
	return c.rep.Verdict == report.Fail, nil
}

// buildDeps builds the dependencies and reports their findings; nil (with a nil
// error) says the report is decided.
func (c *run) buildDeps(info anomaly.LevelInfo) (*deps.Deps, error) {
	do := deps.Options{Session: info.Session, Realtime: info.Realtime, PredWords: c.o.PredWords}
	c.meter.Start(report.StageDependencies)
	d, err := deps.BuildContext(c.ctx, c.h, do)
	if errors.Is(err, deps.ErrUnsupported) {
		return nil, c.refused(err, do)
	}
	if err != nil {
		return nil, err
	}
	c.rep.Notes = append(c.rep.Notes, d.Notes...)
	if d.Undecided != "" {
		c.rep.Notes = append(c.rep.Notes, d.Undecided)
	}
	c.partial = d.Partial
	c.untimed = d.Untimed
	for _, a := range d.Findings {
		c.fail(a)
	}
	c.phase("deps")
	if c.rep.Verdict == report.Fail {
		return nil, nil
	}
	return d, nil
}

// refused answers a history the dependencies cannot model at this level, through
// strong snapshot isolation where certificates are allowed.
func (c *run) refused(err error, do deps.Options) error {
	var through func() (*report.Report, error)
	if !c.o.Shortcuts.Has(certify.SkipRefusal) {
		through = func() (*report.Report, error) {
			so := c.o
			so.PredWords = 0 // the bound was for this level's reads
			return Check(c.ctx, c.h, anomaly.StrongSI, so)
		}
	}
	passed, err := deps.Refused(c.ctx, c.rep, err, c.h, do, anomaly.StrongSI, through)
	if passed {
		c.phase("strong-snapshot-isolation")
	}
	return err
}

// decide runs the model's phases on the dependencies: the schedule, the pairs and
// pruning, the solver, and the explanation of a violation.
func (c *run) decide(d *deps.Deps, info anomaly.LevelInfo) error {
	c.meter.Start(report.StageConstructing)
	m := buildBase(d)
	c.phase("construct")
	passed, ck, err := c.schedule(m, info.Session)
	if passed || err != nil {
		return err
	}
	w := &witness{m: m, h: c.h}
	open, err := c.prune(m, ck, w)
	if !open || err != nil {
		return err
	}
	unsat, err := c.solve(m)
	if !unsat || err != nil {
		return err
	}
	return c.explainCore(m, w)
}

// schedule tries to pass with a schedule from the history's clocks; it returns the
// clocks for the pairs when it does not pass.
func (c *run) schedule(m *model, session bool) (passed bool, ck *clocks, err error) {
	if c.o.Shortcuts.Has(certify.SkipSchedule) {
		return false, nil, nil
	}
	ok, k, err := m.schedule(c.ctx, c.h, session)
	if err != nil {
		return false, nil, err
	}
	c.phase("schedule")
	if ok {
		c.rep.Stats.KnownEdges = len(m.why)
		c.rep.Verdict = report.Pass
		return true, nil, nil
	}
	return false, k, nil
}

// prune adds the choices and prunes them; open says undecided choices remain for the
// solver (otherwise the report is decided).
func (c *run) prune(m *model, ck *clocks, w *witness) (open bool, err error) {
	st := &c.rep.Stats
	if err := m.addPairs(c.ctx, ck); err != nil {
		return false, err
	}
	st.Constraints = len(m.ww) + len(m.wr) + m.clockDecided
	c.phase("pairs")
	c.meter.Update(func(p *report.Progress) { p.Edges, p.Constraints = len(m.why)+m.clockEdges, st.Constraints })
	c.meter.Start(report.StagePruning)
	v, err := m.prune(c.ctx)
	if err != nil {
		return false, err
	}
	nww, nwr := m.remaining()
	st.PrunedConstraints = st.Constraints - nww - nwr
	st.KnownEdges = len(m.why) + m.clockEdges
	c.phase("prune")
	c.meter.Update(func(p *report.Progress) { p.Edges, p.Pruned = st.KnownEdges, st.PrunedConstraints })
	if v != nil {
		c.meter.Start(report.StageExplaining)
		c.fail(w.anomaly(v.Alternatives()))
		return false, nil
	}
	if nww+nwr == 0 {
		c.rep.Verdict = report.Pass
		return false, nil
	}
	return true, nil
}

// solve encodes the undecided choices and solves them; unsat says no acyclic choice
// exists (the verdict is then Fail, to be explained).
func (c *run) solve(m *model) (unsat bool, err error) {
	st := &c.rep.Stats
	c.meter.Start(report.StageSolving)
	en, err := m.encode(c.ctx, false, c.o.Theory)
	if err != nil {
		return false, err
	}
	c.phase("encode")
	observe := c.meter.Solver()
	if observe != nil {
		en.s.Observe(func(st sat.Stats) { observe(st.Conflicts, st.Decisions) })
	}
	status, err := en.s.Solve(c.ctx)
	polygraph.AddSolverStats(st, en.s.Stats())
	if observe != nil {
		sst := en.s.Stats()
		observe(sst.Conflicts, sst.Decisions)
	}
	c.phase("solve")
	if err != nil {
		return false, err
	}
	switch status {
	case sat.Sat:
		c.rep.Verdict = report.Pass
		return false, nil
	case sat.Unknown:
		c.rep.Verdict = report.Unknown
		return false, nil
	}
	c.rep.Verdict = report.Fail
	return true, nil
}

// explainCore extracts a small unsatisfiable core and reports the cycles its options
// close.
func (c *run) explainCore(m *model, w *witness) error {
	c.meter.Start(report.StageExplaining)
	ens, err := m.encode(c.ctx, true, c.o.Theory)
	if err != nil {
		return err
	}
	core, err := ens.minimalCore(c.ctx, c.o.CoreBudget)
	if err != nil {
		return err
	}
	c.phase("core")
	if len(core) == 0 {
		c.fail(report.Anomaly{Kind: anomaly.GSingle, Key: -1, Message: "no snapshot-isolated execution explains every read (the solver found no acyclic choice; no smaller explanation was extracted)"})
		return nil
	}
	c.fail(w.anomaly(m.explain(core)))
	return nil
}

// explain enumerates the combinations of options of the choices in core and, for each,
// the shortest induced cycle it closes with the known edges (see [polygraph.Enumerate]).
func (m *model) explain(core []int) []polygraph.Alternative {
	return polygraph.Enumerate(m.d, m.ww, m.wr, core, m.selectionCycle)
}

// selectionCycle is the shortest induced cycle the edges of a selection close with the
// known ones: the chosen write orders' and reads' raw edges, and the guarded edges of the
// transactions that take part.
func (m *model) selectionCycle(sel *polygraph.Selection) []deps.Edge {
	var extra []deps.Edge
	for _, s := range sel.WW {
		if sel.LivePair(s) {
			extra = m.wwEdges(s.C, s.A, s.B, extra)
		}
	}
	for _, s := range sel.WR {
		extra = m.selectedRead(sel, s, extra)
	}
	for _, e := range m.guarded {
		if sel.LiveEdge(e) {
			extra = append(extra, e)
		}
	}
	return m.shortestCycle(extra)
}

// selectedRead appends the edges of chosen read s: its own, and an rw edge from its reader
// to the writer a chosen write-write order puts after the writer it reads.
func (m *model) selectedRead(sel *polygraph.Selection, s polygraph.ReadFrom, extra []deps.Edge) []deps.Edge {
	d := m.d
	for _, e := range m.readEdges(s.Read, s.W) {
		if sel.LiveEdge(e) {
			extra = append(extra, e)
		}
	}
	r := &d.Reads[s.Read]
	for _, x := range sel.WW {
		if !sel.LivePair(x) || x.A != s.W || x.B == r.Txn {
			continue
		}
		for _, k := range x.C.Keys {
			if k == r.Key {
				wb, _ := d.WriteOf(x.B, k)
				extra = append(extra, deps.Edge{From: r.Txn, To: x.B, Rel: report.RW, Key: k, Value: r.Value, Value2: wb.Value, Via: s.W, Guards: [3]int32{-1, -1, -1}})
			}
		}
	}
	return extra
}
