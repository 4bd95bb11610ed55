// Package ser checks black-box serializability at three levels: serializable (no session
// order), strong-session serializable (session order; what Cobra, PolySI and VeriStrong call
// SER) and strict serializable (client real-time order, widened by a clock-skew allowance).
//
// It is glue over shared stages (HOUSE-STYLE §9):
//
//	basic checks ─▶ deps.Build ─▶ polygraph.Build ─▶ Prune ─▶ Encode ─▶ sat.Solve ─▶ witness
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

	"isovet/history"
	"isovet/internal/anomaly"
	"isovet/internal/check/basic"
	"isovet/internal/deps"
	"isovet/internal/polygraph"
	"isovet/internal/report"
	"isovet/internal/sat"
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
	// SkipBasic skips the basic checks (tests use it to test the graph stages alone).
	SkipBasic bool
	// NoFastPath makes every level use the general pipeline even when the strict fast path
	// (strict.go) could decide: the strict level directly, the weaker levels through
	// certifyByTime (tests compare the two).
	NoFastPath bool
	// NoRowCertificate skips the row certificate (rowcert.go) alone; NoFastPath skips it
	// too (tests compare the paths).
	NoRowCertificate bool
	// PredWords bounds the memory of the predicate reads' expansion (deps.Options.PredWords;
	// 0: 1 GiB); tests lower it.
	PredWords int
	_         struct{}
}

// errBasicFailed cancels the dependency analysis when the basic checks failed the history.
var errBasicFailed = errors.New("ser: the basic checks failed the history")

// ErrNeedsTime is returned for the strict level on a history in which no transaction has a
// client interval. When only some lack one, they are checked as unbounded (no real-time
// edges) and a pass becomes Unknown (see [deps.Deps.Untimed]).
var ErrNeedsTime = errors.New("ser: strict serializability needs a client interval, and no transaction has one")

// Check checks h against level.
func Check(ctx context.Context, h *history.History, level anomaly.Level, o Options) (*report.Report, error) {
	info := level.Info()
	rep := &report.Report{Level: level, Checker: "ser", History: h}
	if level != anomaly.Serializable && level != anomaly.StrongSessionSerializable && level != anomaly.StrictSerializable {
		return nil, fmt.Errorf("ser: level %s is not a serializability level", level)
	}
	if info.Realtime && !slices.ContainsFunc(h.Txns, func(t history.Txn) bool { return t.HasTime }) {
		return nil, ErrNeedsTime
	}
	if o.MaxAnomalies <= 0 {
		o.MaxAnomalies = 20
	}
	if o.CoreBudget <= 0 {
		o.CoreBudget = 200
	}
	if o.Parallelism <= 0 {
		o.Parallelism = 2
	}
	if level == anomaly.Serializable && !o.NoFastPath && !h.HasTime() && h.SessionOrdered() {
		if srep, ok, err := passBySession(ctx, h, o); ok {
			return srep, err
		}
	}
	c := &run{ctx: ctx, h: h, level: level, o: o, rep: rep}
	c.t0 = c.now()
	c.tp = c.t0
	err := c.run()
	if err == nil && rep.Verdict != report.Fail && ctx.Err() != nil {
		err = context.Cause(ctx) // a pass reached as ctx ended: the caller stopped waiting
	}
	if err == nil {
		placeholderCaveat(h, rep)
	}
	if c.partial {
		rep.AddCaveat(report.CaveatPartial, "predicate operations could only partly be checked (see the notes above): no violation was found, but that proves nothing")
	}
	if c.untimed > 0 {
		rep.AddCaveat(report.CaveatUntimed, deps.UntimedNote(c.untimed))
	}
	if rt, ok := level.RealtimeCounterpart(); ok && err == nil && rep.Proved() && c.timeCert {
		rep.Followup = &report.Followup{Level: rt, Verdict: report.Pass, Why: "the serial order that passed this level respects client real time and session order"}
	}
	report.Finish(rep)
	rep.Stats.Elapsed = c.now().Sub(c.t0)
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil) {
		rep.Verdict = report.Unknown
		rep.Anomalies = nil
		rep.Notes = append(rep.Notes, "the check was stopped before it could decide: "+err.Error())
		return rep, context.Cause(ctx)
	}
	if err != nil {
		return nil, err
	}
	return rep, nil
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
		rep.AddCaveat(report.CaveatPlaceholders, deps.PlaceholderNote(len(ph)))
		return
	}
	isPh := make(map[history.TxnID]bool, len(ph))
	for _, t := range ph {
		isPh[t] = true
	}
	for _, a := range rep.Anomalies {
		for _, t := range a.Txns {
			if !isPh[t] {
				continue
			}
			note := fmt.Sprintf("a witness involves %s, a placeholder the reader made for a writer no log holds: its writes are inferred from the reads that name it", h.Name(t))
			if h.Txns[t].Outcome == history.OutcomeAborted {
				note += "; it is taken as aborted, as the format's contract says (Cobra logs every committed transaction and no aborted one; a Vbox transaction id logged once, by an aborted transaction, names that transaction): if log files were lost or two runs were mixed in one directory, this is where to look"
			}
			rep.Notes = append(rep.Notes, note)
			return
		}
	}
}

type run struct {
	ctx   context.Context
	h     *history.History
	level anomaly.Level
	o     Options
	rep   *report.Report
	t0    time.Time
	tp    time.Time

	partial  bool
	untimed  int       // counted transactions without a client interval (deps.Deps.Untimed)
	fast     fastStats // the strict fast path's attempt, if any
	timeCert bool      // a weaker level passed through the strict fast path's serial order
	// undecided is the dependency analysis's sentence on the predicate evaluations it left
	// open (deps.Deps.Undecided), until a replay decides them or the report shows it.
	undecided string
}

// certifyByTime tries to pass serializable or strong-session-serializable through the strict
// fast path: a serial order that respects client real time and session order is a serial
// order for the weaker levels too, and the fast path replays the order it finds before it
// answers. Blind writes leave the weaker levels one write-order choice per pair of writers
// of a key (blindw_wr_10000 at serializable: 60 s of CPU in the general pipeline); real time
// orders almost all of them. It only ever proves a pass: when it cannot (the history is not
// strict-serializable, or is outside the fast path's scope), the general pipeline decides,
// so the verdict is the same either way.
func (c *run) certifyByTime() (bool, error) {
	ok, fs, err := certifyStrict(c.ctx, c.h, 0)
	if ok {
		c.fast = fs
	}
	return ok, err
}

// passByTime passes the history on the time certificate certifyByTime found.
func (c *run) passByTime() {
	st := &c.rep.Stats
	st.KnownEdges = c.fast.edges
	st.Constraints = c.fast.constraints
	st.PrunedConstraints = c.fast.pruned
	c.rep.Notes = append(c.rep.Notes, "passed with a serial order that also respects the client intervals and session order (found by the strict fast path and replayed): the history is strict-serializable too")
	c.timeCert = true
	c.decidedByRows()
	c.rep.Verdict = report.Pass
}

// passByRows passes the history on the row certificate rc.
func (c *run) passByRows(rc RowCertificate) {
	c.rep.Notes = append(c.rep.Notes, rc.Note())
	c.skewNote()
	c.timeCert = rc.Realtime
	c.rep.Verdict = report.Pass
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
	case c.fast.rows:
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

func (c *run) fail(a report.Anomaly) {
	c.rep.Verdict = report.Fail
	if len(c.rep.Anomalies) < c.o.MaxAnomalies {
		c.rep.Anomalies = append(c.rep.Anomalies, a)
	}
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
	fast := info.Realtime && !c.o.NoFastPath && c.h.HasTime()
	b := c.startBasic()
	defer b.cancel(nil)
	if done, err := c.certificates(b); done || err != nil {
		return err
	}
	do := deps.Options{Session: info.Session, Realtime: info.Realtime, Skew: int64(c.o.ClockSkew), NoEdges: fast, PredWords: c.o.PredWords}
	d, err := deps.BuildContext(b.ctx, c.h, do)
	var (
		fastOK bool
		ferr   error
	)
	c.phase("deps")
	if err == nil && fast && len(d.Findings) == 0 {
		fastOK, c.fast, ferr = strictFast(b.ctx, d)
		c.phase("strict-fast")
	}
	if failed, err := b.done(); failed || err != nil {
		return err
	}
	if errors.Is(err, deps.ErrUnsupported) {
		return c.refused(err, do)
	}
	if err != nil {
		return err
	}
	if done, err := c.analyzed(d, fastOK, ferr); done || err != nil {
		return err
	}
	if fast {
		if err := d.BuildEdgesContext(c.ctx); err != nil {
			return err
		}
	}
	return c.polygraph(d)
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
	if c.o.SkipBasic {
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
	if c.o.SkipBasic {
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

// certificates tries the proofs that need nothing built: the row certificate (rowcert.go),
// which replays an order taken from the history's clocks and, on a history that passes, is
// the whole check; and, on predicate histories with client time at the levels without real
// time, the time certificate. Without real time, a row a predicate read did not return can
// have read any of the row's non-matching versions, and the expansion can take gigabytes
// (BlindW-Pred with 1-100 rows a predicate: 20 million reads); with real time almost every
// read has one candidate. done says the check is decided.
func (c *run) certificates(b *basicRun) (done bool, err error) {
	info := c.level.Info()
	if !c.o.NoFastPath && !c.o.NoRowCertificate {
		if rc, ok := certifyRows(c.ctx, c.h, int64(c.o.ClockSkew)); ok && rc.Proves(info.Session, info.Realtime) {
			c.phase("row-certificate")
			if failed, err := b.done(); failed || err != nil {
				return true, err
			}
			c.passByRows(rc)
			return true, nil
		}
		if err := context.Cause(c.ctx); err != nil {
			return true, b.stop(err)
		}
	}
	if info.Realtime || c.o.NoFastPath || !c.h.HasTime() || len(c.h.Preds) == 0 {
		return false, nil
	}
	ok, err := c.certifyByTime()
	if err != nil {
		return true, b.stop(err)
	}
	if !ok {
		return false, nil
	}
	c.phase("time-certificate")
	// A basic finding the level forbids cannot survive a replayed serial order; it is still
	// reported first, as everywhere.
	if failed, err := b.done(); failed || err != nil {
		return true, err
	}
	c.passByTime()
	return true, nil
}

// refused settles the check when the dependency analysis refused the history (err, under
// do): through strict serializability where real time decides it (deps.Refused).
func (c *run) refused(err error, do deps.Options) error {
	var through func() (*report.Report, error)
	if !c.o.NoFastPath {
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

// analyzed takes in what the dependency analysis d found: its findings fail the history,
// the strict fast path's pass (fastOK) passes it, and at the levels without real time the
// time certificate may. done says the check is decided.
func (c *run) analyzed(d *deps.Deps, fastOK bool, ferr error) (done bool, err error) {
	rep, st := c.rep, &c.rep.Stats
	rep.Notes = append(rep.Notes, d.Notes...)
	c.partial = d.Partial
	c.undecided = d.Undecided
	c.untimed = d.Untimed
	c.skewNote()
	for _, a := range d.Findings {
		c.fail(a)
	}
	if rep.Verdict == report.Fail {
		c.keepUndecided()
		return true, nil
	}
	if ferr != nil {
		return true, ferr
	}
	if fastOK {
		st.KnownEdges = c.fast.edges
		st.Constraints = c.fast.constraints
		st.PrunedConstraints = c.fast.pruned
		c.decidedByRows()
		rep.Verdict = report.Pass
		return true, nil
	}
	if c.level.Info().Realtime || c.o.NoFastPath || !c.h.HasTime() || d.HasLists() || len(d.Guarded) > 0 {
		c.keepUndecided()
		return false, nil
	}
	ok, err := c.certifyByTime()
	if err != nil || !ok {
		c.keepUndecided()
		return err != nil, err
	}
	c.phase("time-certificate")
	c.passByTime()
	return true, nil
}

// polygraph decides the history from d: the polygraph's construction and pruning, then the
// components with undecided constraints solved separately.
func (c *run) polygraph(d *deps.Deps) error {
	st := &c.rep.Stats
	p, err := polygraph.BuildContext(c.ctx, d)
	if err != nil {
		return err
	}
	st.KnownEdges = p.G.M()
	st.Constraints = len(p.WW) + len(p.WR)
	c.phase("construct")
	w := &witness{p: p, d: d, h: c.h}
	v, err := p.Prune(c.ctx)
	if err != nil {
		return err
	}
	nww, nwr := p.Remaining()
	st.PrunedConstraints = st.Constraints - nww - nwr
	st.KnownEdges = p.G.M()
	c.phase("prune")
	if v != nil {
		var alts []polygraph.Alternative
		for i := range v.Cycles {
			alts = append(alts, polygraph.Alternative{Options: []polygraph.Option{v.Options[i]}, Cycle: v.Cycles[i]})
		}
		c.fail(w.anomaly(alts))
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
	st := &c.rep.Stats
	todo, comp := busyComponents(p, d)
	st.Components = len(todo)
	results := make([]solved, len(todo))
	ctx, cancel := context.WithCancelCause(c.ctx)
	defer cancel(nil)
	errFailed := errors.New("ser: another component failed")
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, c.o.Parallelism))
	for i, id := range todo {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if ctx.Err() != nil {
				results[i].err = context.Cause(ctx)
				return
			}
			en, err := p.Encode(ctx, polygraph.EncodeOptions{Comp: comp, Only: id})
			if err != nil {
				results[i].err = err
				return
			}
			stt, err := en.Solve(ctx)
			results[i] = solved{stt, en.S.Stats(), err}
			if stt == sat.Unsat {
				cancel(errFailed)
			}
		})
	}
	wg.Wait()
	c.phase("solve")
	failed := int32(-1)
	unknown := false
	for i, r := range results {
		polygraph.AddSolverStats(st, r.stats)
		switch {
		case r.status == sat.Unsat:
			if failed < 0 {
				failed = todo[i]
			}
		case r.err != nil && errors.Is(r.err, errFailed):
		case r.err != nil && c.ctx.Err() == nil && !errors.Is(r.err, context.Canceled):
			return r.err
		case r.status != sat.Sat:
			unknown = true
		}
	}
	switch {
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

// explain fails the history on component failed, which has no acyclic choice: it finds a
// minimal set of the component's choices and explains it.
func (c *run) explain(p *polygraph.Polygraph, w *witness, comp []int32, failed int32) error {
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
