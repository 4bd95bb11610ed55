// Package ser checks black-box serializability at three levels: serializable (no session
// order), strong-session serializable (session order; what Cobra, PolySI and VeriStrong call
// SER) and strict serializable (client real-time order, widened by a clock-skew allowance).
//
// It is glue over shared stages (HOUSE-STYLE §9), run in this order until one decides:
//
//	[serializable, untimed: strong-session-serializable passes ─▶ pass]     passBySession
//	basic checks, in a goroutine alongside what follows up to the fast path (their findings come first)
//	certify.Try: row certificate; time certificate (predicates, client time, no real time) ─▶ pass
//	deps.Build ─▶ [refused: through strict-serializable]                     refused
//	  ─▶ findings ─▶ fail
//	  ─▶ [strict: certify.Strict, the fast path on this analysis ─▶ pass]
//	  ─▶ [no real time, client time: certify.Time ─▶ pass]
//	─▶ polygraph.Build ─▶ Prune ─▶ Encode ─▶ sat.Solve, per component ─▶ witness
//
// The proof shortcuts (package certify) only ever prove a pass; Options.Shortcuts turns
// them off, and the verdict is the same.
//
// A violation found by the basic checks, by construction or by pruning comes with its cycle
// of typed, reasoned edges. A violation only the solver finds comes with a minimal set of
// choices (selector literals, the solver's failed assumptions, then deletion), every
// combination of which closes a cycle: one is the anomaly's cycle, each is a RuledOut
// sentence. Every cycle is classified by a table (classify.go).
//
// Cancellation (ctx, --timeout) gives Verdict Unknown with the statistics so far, never a
// wrong verdict.
package ser

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
)

// Levels are the levels this package checks.
var Levels = []anomaly.Level{anomaly.Serializable, anomaly.StrongSessionSerializable, anomaly.StrictSerializable}

// Options tune a check. The zero value is usable.
type Options struct {
	ClockSkew    time.Duration // widens every client interval on both sides (strict level)
	MaxAnomalies int           // 0: 20
	// Parallelism bounds how many components are solved at once (0: 2).
	Parallelism int
	// CoreBudget bounds the solver calls spent shrinking an unsatisfiable core (0: 200).
	CoreBudget int
	// Now, if set, is read to time the phases (core packages never read the clock
	// themselves); nil leaves timings zero.
	Now func() time.Time
	// Shortcuts turns off proof shortcuts and the basic checks, for tests that compare the
	// paths or test the graph stages alone: certify.SkipShortcuts makes every level use the
	// general pipeline (no row or time certificate, no strict fast path, no pass through
	// the session level, no route through strict serializability for a refused history).
	Shortcuts certify.Skip
	// PredWords bounds the memory of the predicate reads' expansion (deps.Options.PredWords;
	// 0: 1 GiB); tests lower it.
	PredWords int
	// Progress, when set, is told of each stage as it starts and ends, and of the solver's
	// work every few hundred conflicts (report.Meter); it never changes the verdict.
	Progress func(report.Progress)
	_        struct{}
}

// errBasicFailed cancels the dependency analysis when the basic checks failed the history.
var errBasicFailed = errors.New("ser: the basic checks failed the history")

// ErrNeedsTime is returned for the strict level on a history in which no transaction has a
// client interval. When only some lack one, they are checked as unbounded (no real-time
// edges) and a pass becomes Unknown (see [deps.Deps.Untimed]).
var ErrNeedsTime = errors.New("ser: strict serializability needs a client interval, and no transaction has one")

// Check checks h against level.
func Check(ctx context.Context, h *history.History, level anomaly.Level, o Options) (*report.Report, error) {
	if err := checkable(h, level); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	if sessionRoute(h, level, o) {
		if srep, ok, err := passBySession(ctx, h, o); ok {
			return srep, err
		}
	}
	rep := &report.Report{Level: level, Checker: "ser", History: h}
	c := &run{ctx: ctx, h: h, level: level, o: o, rep: rep, meter: report.NewMeter(o.Progress, level, "ser", len(h.Txns)), ph: report.PlaceholdersOf(h)}
	c.t0 = c.now()
	c.tp = c.t0
	err := report.Ended(ctx, rep, c.run())
	c.caveats(err)
	rep.Stats.Elapsed = c.now().Sub(c.t0)
	c.meter.Update(func(p *report.Progress) { p.Anomalies = len(rep.Anomalies) })
	c.meter.End()
	return report.Settle(ctx, rep, err)
}

// checkable rejects a level this package does not check and strict serializability on a
// history without client time.
func checkable(h *history.History, level anomaly.Level) error {
	switch level {
	case anomaly.Serializable, anomaly.StrongSessionSerializable, anomaly.StrictSerializable:
	default:
		return fmt.Errorf("ser: level %s is not a serializability level", level)
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
	if o.Parallelism <= 0 {
		o.Parallelism = 2
	}
	return o
}

// caveats adds what limits the check's answer (err, if it has none): placeholder writers,
// partly checked predicates, transactions without client time; and, for a pass on a serial
// order that respects real time, the real-time counterpart it proves too.
func (c *run) caveats(err error) {
	rep := c.rep
	if err == nil {
		placeholderCaveat(c.h, rep)
	}
	if c.partial {
		rep.AddCaveat(report.CaveatPartial, "predicate operations could only partly be checked (see the notes above): no violation was found, but that proves nothing")
	}
	if c.untimed > 0 {
		rep.AddCaveat(report.CaveatUntimed, deps.UntimedNote(c.untimed))
	}
	if err == nil {
		c.followup()
	}
}

// followup records, for a proved pass on a serial order that respects real time, that the
// level's real-time counterpart holds too.
func (c *run) followup() {
	if rt, ok := c.level.RealtimeCounterpart(); ok && c.rep.Proved() && c.timeCert {
		c.rep.Followup = &report.Followup{Level: rt, Verdict: report.Pass, Why: "the serial order that passed this level respects client real time and session order"}
	}
}

// sessionRoute reports whether Check tries passBySession first: at plain serializability
// on a history with session order and without client time.
func sessionRoute(h *history.History, level anomaly.Level, o Options) bool {
	return level == anomaly.Serializable && !o.Shortcuts.Has(certify.SkipSession) && !h.HasTime() && h.SessionOrdered()
}

// passBySession tries to pass serializable by passing strong-session-serializable, which
// implies it (a serial order that keeps each session's order is a serial order). Without
// client time to narrow them, dropping session order leaves blind writes far more orders
// to choose between: on VeriStrong's WH-10k, HD-10k and rubis-10k the plain level's
// pipeline did not finish in 60 s, while the session level decides them in seconds. ok
// says the returned report is the answer: a pass, or the session check's Unknown when ctx
// ended during it. Otherwise (a violation at the session level need not be one here) the
// caller runs the plain pipeline; the cost is the session check, which finds a violation
// quickly as a rule.
func passBySession(ctx context.Context, h *history.History, o Options) (*report.Report, bool, error) {
	return report.ByStronger(ctx, anomaly.Serializable, "passed by passing strong-session-serializable, which implies this level: a serial order that keeps each session's order is a serial order", func() (*report.Report, error) {
		return Check(ctx, h, anomaly.StrongSessionSerializable, o)
	})
}

// placeholderCaveat records a caveat when the history holds placeholder writers
// ([history.PlaceholderSession]): their other operations were never recorded, so a pass
// proves nothing about them. A witness that involves one gets a note: its writes were
// inferred from the reads naming it, and its outcome is the reader's reading of the format.
func placeholderCaveat(h *history.History, rep *report.Report) {
	ph := h.Placeholders()
	if len(ph) == 0 {
		return
	}
	if rep.Verdict == report.Pass {
		rep.AddCaveat(report.CaveatPlaceholders, report.PlaceholderFinding(h))
		return
	}
	isPh := make(map[history.TxnID]bool, len(ph))
	for _, t := range ph {
		isPh[t] = true
	}
	for _, a := range rep.Anomalies {
		for _, t := range a.Txns {
			if isPh[t] {
				rep.Notes = append(rep.Notes, placeholderNote(h, t))
				return
			}
		}
	}
}

// placeholderNote says that a witness involves placeholder t, and what that means.
func placeholderNote(h *history.History, t history.TxnID) string {
	note := fmt.Sprintf("a witness involves %s, a placeholder the reader made for a writer no log holds: its writes are inferred from the reads that name it", h.Name(t))
	if h.Txns[t].Outcome == history.OutcomeAborted {
		note += "; it is taken as aborted, as the format's contract says (Cobra logs every committed transaction and no aborted one; a Vbox transaction id logged once, by a transaction that aborted and had begun before the reads ended, names that transaction): if log files were lost or two runs were mixed in one directory, this is where to look"
	}
	return note
}

type run struct {
	ctx   context.Context
	h     *history.History
	level anomaly.Level
	o     Options
	rep   *report.Report
	t0    time.Time
	tp    time.Time
	meter *report.Meter // nil without Options.Progress
	ph    report.Placeholders

	partial  bool
	untimed  int           // counted transactions without a client interval (deps.Deps.Untimed)
	proof    certify.Proof // the strict fast path's proof, when it passed
	timeCert bool          // a weaker level passed on a serial order that respects real time
	// undecided is the dependency analysis's sentence on the predicate evaluations it left
	// open (deps.Deps.Undecided), until a replay decides them or the report shows it.
	undecided string
}

// passByProof passes the history on p, a proof the pipeline did not build: the row
// certificate or the time certificate (certify.Try, certify.Time). Blind writes leave the
// levels without real time one write-order choice per pair of writers of a key
// (blindw_wr_10000 at serializable: 60 s of CPU in the general pipeline); real time orders
// almost all of them, so the time certificate, a serial order that respects client real
// time and session order, is cheap where it holds.
func (c *run) passByProof(p certify.Proof) {
	c.rep.Notes = append(c.rep.Notes, p.Note(c.level))
	c.timeCert = p.Realtime
	if p.Route == certify.ByRows {
		c.skewNote()
	} else {
		c.passedFast(p)
	}
	c.rep.Verdict = report.Pass
}

// passedFast takes in the statistics of the strict fast path's pass p, and what its replay
// decided.
func (c *run) passedFast(p certify.Proof) {
	st := &c.rep.Stats
	st.KnownEdges = p.Stats.Edges
	st.Constraints = p.Stats.Constraints
	st.PrunedConstraints = p.Stats.Pruned
	c.proof = p
	c.decidedByRows()
}

// skewNote says, at a real-time level, that the client intervals were widened for skew.
func (c *run) skewNote() {
	if c.level.Info().Realtime && c.o.ClockSkew > 0 {
		c.rep.Notes = append(c.rep.Notes, fmt.Sprintf("client intervals widened by %v on each side for clock skew", c.o.ClockSkew))
	}
}

// decidedByRows records that a pass of the fast path is a whole proof: its serial order was
// replayed read by read, and, where the dependency analysis left predicate evaluations open
// (partial row images), on whole rows too (rowReplay). The analysis's sentence that a pass
// would prove nothing is not shown; one saying how they were decided is.
func (c *run) decidedByRows() {
	c.partial = false
	switch {
	case c.proof.Stats.Rows:
		c.rep.Notes = append(c.rep.Notes, "the predicate evaluations on partial row images were decided by replaying the serial order on whole rows (each image merged into the row it updates): every predicate operation selected exactly the rows its predicate holds on")
	case c.undecided != "":
		c.rep.Notes = append(c.rep.Notes, "the predicate evaluations left open without real time were all decided with it, in the serial order that passed")
	}
	c.undecided = ""
}

// keepUndecided shows the analysis's sentence on the predicate evaluations it left open,
// when no replay decided them.
func (c *run) keepUndecided() {
	if c.undecided != "" {
		c.rep.Notes = append(c.rep.Notes, c.undecided)
		c.undecided = ""
	}
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

// run is the pipeline of one check, in order: the basic checks alongside everything else
// (their findings come first), the row certificate, the time certificate (first, on
// predicate histories with client time), the dependency analysis with the strict fast path,
// the time certificate (otherwise), and the polygraph: construction, pruning, a SAT
// solver per component, and a minimal core to explain a failure.
func (c *run) run() error {
	c.countStats()
	info := c.level.Info()
	// The strict fast path reads every committed transaction's interval, so it runs only
	// when every transaction has one (with some missing, the general pipeline treats them
	// as unbounded, and a pass becomes Unknown anyway).
	fast := info.Realtime && !c.o.Shortcuts.Has(certify.SkipFastPath) && c.h.HasTime()
	c.meter.Start(report.StageBasic)
	b := c.startBasic()
	defer b.cancel(nil)
	if done, err := c.certificates(b); done || err != nil {
		return err
	}
	a := c.analyze(b, fast)
	if failed, err := b.done(); failed || err != nil {
		return err
	}
	return c.decide(a, fast)
}

// decide takes the analysis a to a verdict: a refused history through strict
// serializability, the analysis's own findings and proofs, else the polygraph (on the
// edges the fast path did not need, built now).
func (c *run) decide(a analysis, fast bool) error {
	if errors.Is(a.err, deps.ErrUnsupported) {
		return c.refused(a.err, a.do)
	}
	if a.err != nil {
		return a.err
	}
	if done, err := c.analyzed(a); done || err != nil {
		return err
	}
	if fast {
		c.meter.Start(report.StageDependencies)
		if err := a.d.BuildEdgesContext(c.ctx); err != nil {
			return err
		}
	}
	return c.polygraph(a.d)
}

// analysis is what the dependency analysis, and the strict fast path on it, gave.
type analysis struct {
	do     deps.Options
	d      *deps.Deps
	err    error         // the analysis's
	fp     certify.Proof // the strict fast path's attempt, if any
	fastOK bool          // it passed
	ferr   error         // its error
}

// analyze builds the dependencies under the basic checks' context (a forbidden finding
// stops it) and, when fast, tries the strict fast path on them (with no edges built: the
// fast path needs none, and the pipeline builds them only if it must).
func (c *run) analyze(b *basicRun, fast bool) analysis {
	info := c.level.Info()
	a := analysis{do: deps.Options{Session: info.Session, Realtime: info.Realtime, Skew: int64(c.o.ClockSkew), NoEdges: fast, PredWords: c.o.PredWords}}
	c.meter.Start(report.StageDependencies)
	a.d, a.err = deps.BuildContext(b.ctx, c.h, a.do)
	c.phase("deps")
	if a.err == nil && fast && len(a.d.Findings) == 0 {
		c.meter.Start(report.StageCertifying)
		a.fp, a.fastOK, a.ferr = certify.Strict(b.ctx, a.d)
		c.phase(a.fp.Route.String())
	}
	return a
}

// countStats fills the report's counts of the history.
func (c *run) countStats() {
	h, st := c.h, &c.rep.Stats
	st.Txns = len(h.Txns)
	st.Sessions = len(h.Sessions)
	st.Keys = len(h.Keys)
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

// basicRun is the basic checks running alongside the rest of the pipeline: both only read
// the history. A finding the level forbids (or an error) cancels ctx, which the dependency
// analysis and the strict fast path run under.
type basicRun struct {
	c      *run
	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
	f      *basic.Findings
	err    error
	dur    time.Duration
}

func (c *run) startBasic() *basicRun {
	b := &basicRun{c: c}
	b.ctx, b.cancel = context.WithCancelCause(c.ctx)
	if c.o.Shortcuts.Has(certify.SkipBasic) {
		return b
	}
	b.wg.Go(func() {
		t0 := c.now()
		b.f, b.err = basic.Check(c.ctx, c.h, basic.Options{MaxAnomalies: c.o.MaxAnomalies})
		b.dur = c.now().Sub(t0)
		if b.err != nil {
			b.cancel(b.err)
			return
		}
		for _, a := range b.f.Anomalies {
			if c.level.Forbids(a.Kind) {
				b.cancel(errBasicFailed)
				return
			}
		}
	})
	return b
}

// done waits for the basic checks and reports what they found that the level forbids,
// first in the report as if they had run alone: failed says the history failed on them.
func (b *basicRun) done() (failed bool, err error) {
	b.wg.Wait()
	c := b.c
	if c.o.Shortcuts.Has(certify.SkipBasic) {
		return false, nil
	}
	if b.err != nil {
		return false, b.err
	}
	c.rep.Stats.Phases = append(c.rep.Stats.Phases, report.Phase{Name: "basic", Elapsed: b.dur})
	for _, a := range b.f.Anomalies {
		if c.level.Forbids(a.Kind) {
			c.fail(a)
		}
	}
	return c.rep.Verdict == report.Fail, nil
}

// stop cancels the basic checks with err and waits for them.
func (b *basicRun) stop(err error) error {
	b.cancel(err)
	b.wg.Wait()
	return err
}

// certificates tries the proofs that need nothing built (certify.Try): the row certificate,
// which replays an order taken from the history's clocks and, on a history that passes, is
// the whole check; and, on predicate histories with client time at the levels without real
// time, the time certificate. They run alongside the basic checks. done says the check is
// decided.
func (c *run) certificates(b *basicRun) (done bool, err error) {
	p, ok, err := certify.Try(c.ctx, c.h, c.level, int64(c.o.ClockSkew), c.o.Shortcuts)
	if err != nil {
		return true, b.stop(err)
	}
	if !ok {
		return false, nil
	}
	c.phase(p.Route.String())
	// A basic finding the level forbids cannot survive a replayed serial order; it is still
	// reported first, as everywhere.
	if failed, err := b.done(); failed || err != nil {
		return true, err
	}
	c.passByProof(p)
	return true, nil
}

// refused settles the check when the dependency analysis refused the history (err, under
// do): through strict serializability where real time decides it (deps.Refused).
func (c *run) refused(err error, do deps.Options) error {
	var through func() (*report.Report, error)
	if !c.o.Shortcuts.Has(certify.SkipRefusal) {
		through = func() (*report.Report, error) {
			so := c.o
			so.PredWords = 0 // the bound was for this level's reads
			return Check(c.ctx, c.h, anomaly.StrictSerializable, so)
		}
	}
	passed, err := deps.Refused(c.ctx, c.rep, err, c.h, do, anomaly.StrictSerializable, through)
	if passed {
		c.phase("strict-serializable")
	}
	return err
}

// analyzed takes in what the dependency analysis a.d found: its findings fail the history,
// the strict fast path's pass passes it, and at the levels without real time the time
// certificate may. done says the check is decided.
func (c *run) analyzed(a analysis) (done bool, err error) {
	rep, d := c.rep, a.d
	c.takeIn(d)
	if rep.Verdict == report.Fail {
		c.keepUndecided()
		return true, nil
	}
	if a.ferr != nil {
		return true, a.ferr
	}
	if a.fastOK {
		c.passedFast(a.fp)
		rep.Verdict = report.Pass
		return true, nil
	}
	if !c.timeApplies(d) {
		c.keepUndecided()
		return false, nil
	}
	c.meter.Start(report.StageCertifying)
	p, ok, err := certify.Time(c.ctx, c.h)
	if err != nil || !ok {
		c.keepUndecided()
		return err != nil, err
	}
	c.phase(p.Route.String())
	c.passByProof(p)
	return true, nil
}

// takeIn records what the dependency analysis d says of the history: its notes, whether it
// modelled predicates only in part, its sentence on the evaluations it left open, its
// untimed transactions, and its findings (which fail the history).
func (c *run) takeIn(d *deps.Deps) {
	c.rep.Notes = append(c.rep.Notes, d.Notes...)
	c.partial = d.Partial
	c.undecided = d.Undecided
	c.untimed = d.Untimed
	c.skewNote()
	for _, a := range d.Findings {
		c.fail(a)
	}
}

// timeApplies reports whether the time certificate is worth trying after the dependency
// analysis d: at a level without real time, on a history with client time, and not on
// lists or guarded reads, which the strict fast path declines.
func (c *run) timeApplies(d *deps.Deps) bool {
	return !c.level.Info().Realtime && !c.o.Shortcuts.Has(certify.SkipTime) && c.h.HasTime() && !d.HasLists() && len(d.Guarded) == 0
}

// polygraph decides the history from d: the polygraph's construction and pruning, then the
// components with undecided constraints solved separately.
func (c *run) polygraph(d *deps.Deps) error {
	st := &c.rep.Stats
	c.meter.Start(report.StageConstructing)
	p, err := polygraph.BuildContext(c.ctx, d)
	if err != nil {
		return err
	}
	st.KnownEdges = p.G.M()
	st.Constraints = len(p.WW) + len(p.WR)
	c.phase("construct")
	c.meter.Update(func(pr *report.Progress) { pr.Edges, pr.Constraints = st.KnownEdges, st.Constraints })
	c.meter.Start(report.StagePruning)
	w := &witness{p: p, d: d, h: c.h}
	v, err := p.Prune(c.ctx)
	if err != nil {
		return err
	}
	nww, nwr := p.Remaining()
	st.PrunedConstraints = st.Constraints - nww - nwr
	st.KnownEdges = p.G.M()
	c.phase("prune")
	c.meter.Update(func(pr *report.Progress) { pr.Edges, pr.Pruned = st.KnownEdges, st.PrunedConstraints })
	if v != nil {
		c.meter.Start(report.StageExplaining)
		c.fail(w.anomaly(v.Alternatives()))
		return nil
	}
	if nww+nwr == 0 {
		c.rep.Verdict = report.Pass
		return nil
	}
	return c.solve(p, d, w)
}

// busyComponents returns the components of p that hold an undecided constraint, and every
// transaction's component.
func busyComponents(p *polygraph.Polygraph, d *deps.Deps) (todo, comp []int32) {
	comp, ncomp := p.Components()
	busy := make([]bool, ncomp)
	for ci := range p.WW {
		if p.WW[ci].Fixed == 0 {
			busy[comp[p.WW[ci].A]] = true
		}
	}
	for wi := range p.WR {
		if !p.WR[wi].Fixed {
			busy[comp[d.Reads[p.WR[wi].Read].Txn]] = true
		}
	}
	for id, b := range busy {
		if b {
			todo = append(todo, int32(id))
		}
	}
	return todo, comp
}

// solved is what solving one component gave.
type solved struct {
	status sat.Status
	stats  sat.Stats
	err    error
}

// solve solves the components with undecided constraints separately, in parallel, stopping
// at the first that fails, and explains a failure by a minimal set of its choices.
func (c *run) solve(p *polygraph.Polygraph, d *deps.Deps, w *witness) error {
	todo, comp := busyComponents(p, d)
	c.rep.Stats.Components = len(todo)
	results := make([]solved, len(todo))
	ctx, cancel := context.WithCancelCause(c.ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, c.o.Parallelism))
	c.meter.Start(report.StageSolving)
	for i, id := range todo {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = solveComponent(ctx, cancel, p, comp, id, c.meter.Solver())
		})
	}
	wg.Wait()
	c.phase("solve")
	failed, unknown, err := c.tally(results, todo)
	switch {
	case err != nil:
		return err
	case failed >= 0:
		return c.explain(p, w, comp, failed)
	case unknown && c.ctx.Err() != nil:
		return context.Cause(c.ctx)
	case unknown:
		c.rep.Verdict = report.Unknown
	default:
		c.rep.Verdict = report.Pass
	}
	return nil
}

// errFailed cancels the other components' solvers when one failed.
var errFailed = errors.New("ser: another component failed")

// solveComponent encodes and solves component id (comp gives every transaction's) under
// ctx, and cancels the others (cancel) when it has no acyclic choice. observe, when not
// nil, is told of the solver's work as it goes (report.Meter.Solver).
func solveComponent(ctx context.Context, cancel context.CancelCauseFunc, p *polygraph.Polygraph, comp []int32, id int32, observe func(conflicts, decisions int64)) solved {
	if ctx.Err() != nil {
		return solved{err: context.Cause(ctx)}
	}
	en, err := p.Encode(ctx, polygraph.EncodeOptions{Comp: comp, Only: id})
	if err != nil {
		return solved{err: err}
	}
	if observe != nil {
		en.S.Observe(func(st sat.Stats) { observe(st.Conflicts, st.Decisions) })
		defer func() { st := en.S.Stats(); observe(st.Conflicts, st.Decisions) }()
	}
	stt, err := en.Solve(ctx)
	if stt == sat.Unsat {
		cancel(errFailed)
	}
	return solved{stt, en.S.Stats(), err}
}

// tally adds the solvers' statistics to the report and reads their results: the first
// component that failed (-1 if none), whether one was left undecided, or the error one
// returned that is not the check's cancellation.
func (c *run) tally(results []solved, todo []int32) (failed int32, unknown bool, err error) {
	st := &c.rep.Stats
	failed = -1
	for i, r := range results {
		polygraph.AddSolverStats(st, r.stats)
		switch {
		case r.status == sat.Unsat:
			if failed < 0 {
				failed = todo[i]
			}
		case r.err != nil && errors.Is(r.err, errFailed):
		case r.err != nil && c.ctx.Err() == nil && !errors.Is(r.err, context.Canceled):
			return failed, unknown, r.err
		case r.status != sat.Sat:
			unknown = true
		}
	}
	return failed, unknown, nil
}

// explain fails the history on component failed, which has no acyclic choice: it finds a
// minimal set of the component's choices and explains it.
func (c *run) explain(p *polygraph.Polygraph, w *witness, comp []int32, failed int32) error {
	c.meter.Start(report.StageExplaining)
	c.rep.Verdict = report.Fail
	ens, err := p.Encode(c.ctx, polygraph.EncodeOptions{Selectors: true, Comp: comp, Only: failed})
	if err != nil {
		return err
	}
	core, err := ens.MinimalCore(c.ctx, c.o.CoreBudget)
	if err != nil {
		return err
	}
	c.phase("core")
	if len(core) == 0 {
		c.fail(report.Anomaly{Kind: anomaly.G2, Key: -1, Message: "no serial order explains every read (the solver found no acyclic choice; no smaller explanation was extracted)"})
		return nil
	}
	c.fail(w.anomaly(p.Explain(core)))
	return nil
}
