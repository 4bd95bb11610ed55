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

	"isovet/history"
	"isovet/internal/anomaly"
	"isovet/internal/check/basic"
	"isovet/internal/check/ser"
	"isovet/internal/deps"
	"isovet/internal/polygraph"
	"isovet/internal/report"
	"isovet/internal/sat"
	"isovet/internal/sat/acyclic"
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
	// SkipBasic skips the basic checks (tests use it to test the graph stages alone).
	SkipBasic bool
	// Theory tunes the acyclicity theory (benchmarks compare settings).
	Theory acyclic.Options
	// NoSchedule skips the scheduled witness (schedule.go) and always builds the pairwise
	// write-order choices (tests compare both paths).
	NoSchedule bool
	// NoCertificate skips the certificates tried before the SI pipeline (the row, snapshot
	// and strict serializability certificates) and the strong-SI route taken when the
	// pipeline refuses a predicate history with client time (tests compare the paths).
	NoCertificate bool
	// NoRowCertificate skips the row and snapshot certificates.
	NoRowCertificate bool
	// PredWords bounds the reads of rows predicates did not return (deps.Options.PredWords;
	// 0: deps' default) at this level; a strong-SI check made on the way keeps the default.
	// Tests set it to reach the bound on small histories.
	PredWords int
	_         struct{}
}

// ErrNeedsTime is returned for strong snapshot isolation on a history in which no
// transaction has a client interval. When only some lack one, they are checked as
// unbounded (no real-time edges) and a pass becomes Unknown (see [deps.Deps.Untimed]).
var ErrNeedsTime = errors.New("si: strong snapshot isolation needs a client interval, and no transaction has one")

// Check checks h against level.
func Check(ctx context.Context, h *history.History, level anomaly.Level, o Options) (*report.Report, error) {
	rep := &report.Report{Level: level, Checker: "si", History: h}
	switch level {
	case anomaly.SnapshotIsolation, anomaly.StrongSessionSI, anomaly.StrongSI:
	default:
		return nil, fmt.Errorf("si: level %s is not a snapshot isolation level", level)
	}
	if level.Info().Realtime && !slices.ContainsFunc(h.Txns, func(t history.Txn) bool { return t.HasTime }) {
		return nil, ErrNeedsTime
	}
	if o.MaxAnomalies <= 0 {
		o.MaxAnomalies = 20
	}
	if o.CoreBudget <= 0 {
		o.CoreBudget = 200
	}
	if level == anomaly.SnapshotIsolation && !o.NoCertificate && !h.HasTime() && h.SessionOrdered() {
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
	if c.partial {
		rep.AddCaveat(report.CaveatPartial, "predicate operations are only partly modelled (rows a predicate did not return are ignored): no violation was found, but that proves nothing")
	}
	if c.untimed > 0 {
		rep.AddCaveat(report.CaveatUntimed, deps.UntimedNote(c.untimed))
	}
	// Placeholder writers ([history.PlaceholderSession]): their other operations were never
	// recorded, so a pass proves nothing about them.
	if ph := h.Placeholders(); len(ph) > 0 {
		rep.AddCaveat(report.CaveatPlaceholders, deps.PlaceholderNote(len(ph)))
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

func (c *run) fail(a report.Anomaly) {
	c.rep.Verdict = report.Fail
	if len(c.rep.Anomalies) < c.o.MaxAnomalies {
		c.rep.Anomalies = append(c.rep.Anomalies, a)
	}
}

// strictFollowup records, for a pass on a serial order that respects client real time and
// session order, that the level's real-time counterpart holds too.
func (c *run) strictFollowup() {
	if rt, ok := c.level.RealtimeCounterpart(); ok {
		c.rep.Followup = &report.Followup{Level: rt, Verdict: report.Pass, Why: "the history is strict-serializable, which implies it"}
	}
}

func (c *run) run() error {
	h, rep := c.h, c.rep
	st := &rep.Stats
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
	info := c.level.Info()
	// A serial order proves snapshot isolation (each snapshot taken just before its
	// transaction), at the session and real-time levels when it keeps those orders too. The
	// row certificate finds one from the history's own clocks without building anything; it
	// runs alongside the basic checks, whose findings come first.
	var (
		rc     ser.RowCertificate
		rcOK   bool
		rcWait sync.WaitGroup
	)
	rows := !c.o.NoCertificate && !c.o.NoRowCertificate
	db := ser.NewRows(h) // the row and snapshot certificates share it, one after the other
	rctx, rcancel := context.WithCancel(c.ctx)
	defer rcancel()
	if rows {
		rcWait.Go(func() { rc, rcOK = db.CertifyRows(rctx, 0) })
	}
	if !c.o.SkipBasic {
		f, err := basic.Check(c.ctx, h, basic.Options{MaxAnomalies: c.o.MaxAnomalies})
		if err != nil {
			rcancel()
			rcWait.Wait()
			return err
		}
		for _, a := range f.Anomalies {
			if c.level.Forbids(a.Kind) {
				c.fail(a)
			}
		}
		c.phase("basic")
		if rep.Verdict == report.Fail {
			rcancel()
			rcWait.Wait()
			return nil
		}
	}
	if rows {
		rcWait.Wait()
		if rcOK && rc.Proves(info.Session, info.Realtime) {
			c.phase("row-certificate")
			rep.Notes = append(rep.Notes, rc.Note()+"; a serial order is snapshot isolated at this level (each snapshot taken just before its transaction)")
			rep.Verdict = report.Pass
			if rc.Session && rc.Realtime {
				c.strictFollowup()
			}
			return nil
		}
		if err := context.Cause(c.ctx); err != nil {
			return err
		}
	}
	// A history that is snapshot isolated but not serializable has no serial order for the
	// row certificate, nor for the strict one below (which builds the dependencies first).
	// The execution its clocks describe (snapshot at each start, writes installed at each
	// commit), replayed on whole rows, proves it without building anything
	// (ser.CertifySnapshots): on memdb's SI BlindW-Pred of 10,000 transactions, 0.6 s,
	// where the strict certificate spent 8 s failing and the pipeline could not decide.
	if rows {
		if sc, ok := db.CertifySnapshots(c.ctx, 0); ok && sc.Proves(info.Session, info.Realtime) {
			c.phase("snapshot-certificate")
			rep.Notes = append(rep.Notes, sc.Note())
			rep.Verdict = report.Pass
			if rt, ok := c.level.RealtimeCounterpart(); ok && sc.Proves(rt.Info().Session, rt.Info().Realtime) {
				rep.Followup = &report.Followup{Level: rt, Verdict: report.Pass, Why: "the snapshots that passed this level follow client real time and session order"}
			}
			return nil
		}
		if err := context.Cause(c.ctx); err != nil {
			return err
		}
	}
	// A strict serializable history is snapshot isolated at every level (each transaction's
	// snapshot taken just before it in the serial order). On predicate histories with client
	// time that certificate is cheap, while without real time a row a predicate did not
	// return may have read any non-matching version and the expansion can take gigabytes.
	if h.HasTime() && len(h.Preds) > 0 && !c.o.NoCertificate {
		ok, err := ser.CertifyStrict(c.ctx, h, 0)
		if err != nil {
			return err
		}
		if ok {
			c.phase("time-certificate")
			rep.Notes = append(rep.Notes, "passed with a serial order that respects the client intervals and session order (found by the strict serializability fast path and replayed): the history is strict-serializable, which implies this level")
			rep.Verdict = report.Pass
			c.strictFollowup()
			return nil
		}
	}
	do := deps.Options{Session: info.Session, Realtime: info.Realtime, PredWords: c.o.PredWords}
	d, err := deps.BuildContext(c.ctx, h, do)
	if errors.Is(err, deps.ErrUnsupported) {
		var through func() (*report.Report, error)
		if !c.o.NoCertificate {
			through = func() (*report.Report, error) {
				so := c.o
				so.PredWords = 0 // the bound was for this level's reads
				return Check(c.ctx, h, anomaly.StrongSI, so)
			}
		}
		passed, err := deps.Refused(c.ctx, rep, err, h, do, anomaly.StrongSI, through)
		if passed {
			c.phase("strong-snapshot-isolation")
		}
		return err
	}
	if err != nil {
		return err
	}
	rep.Notes = append(rep.Notes, d.Notes...)
	c.partial = d.Partial
	c.untimed = d.Untimed
	for _, a := range d.Findings {
		c.fail(a)
	}
	c.phase("deps")
	if rep.Verdict == report.Fail {
		return nil
	}
	m := buildBase(d)
	c.phase("construct")
	var ck *clocks
	if !c.o.NoSchedule {
		ok, k, err := m.schedule(c.ctx, h, info.Session)
		if err != nil {
			return err
		}
		c.phase("schedule")
		if ok {
			st.KnownEdges = len(m.why)
			rep.Verdict = report.Pass
			return nil
		}
		ck = k
	}
	if err := m.addPairs(c.ctx, ck); err != nil {
		return err
	}
	st.Constraints = len(m.ww) + len(m.wr) + m.clockDecided
	c.phase("pairs")
	w := &witness{m: m, h: h}
	v, err := m.prune(c.ctx)
	if err != nil {
		return err
	}
	nww, nwr := m.remaining()
	st.PrunedConstraints = st.Constraints - nww - nwr
	st.KnownEdges = len(m.why) + m.clockEdges
	c.phase("prune")
	if v != nil {
		var alts []alternative
		for i := range v.cycles {
			alts = append(alts, alternative{options: []option{v.options[i]}, cycle: v.cycles[i]})
		}
		c.fail(w.anomaly(alts))
		return nil
	}
	if nww+nwr == 0 {
		rep.Verdict = report.Pass
		return nil
	}
	en, err := m.encode(c.ctx, false, c.o.Theory)
	if err != nil {
		return err
	}
	c.phase("encode")
	status, err := en.s.Solve(c.ctx)
	ss := en.s.Stats()
	st.SATVars, st.SATClauses = ss.Vars, ss.Clauses
	st.Conflicts, st.Decisions, st.Propagations = ss.Conflicts, ss.Decisions, ss.Propagations
	c.phase("solve")
	if err != nil {
		return err
	}
	switch status {
	case sat.Sat:
		rep.Verdict = report.Pass
		return nil
	case sat.Unknown:
		rep.Verdict = report.Unknown
		return nil
	}
	rep.Verdict = report.Fail
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

// maxAlternatives caps the combinations explain enumerates.
const maxAlternatives = 64

// explain enumerates the combinations of options of the choices in core and, for each,
// the shortest induced cycle it closes with the known edges.
func (m *model) explain(core []int) []alternative {
	var alts []alternative
	choice := make([]int, len(core))
	nopt := func(i int) int {
		if core[i] < len(m.ww) {
			return 2
		}
		return len(m.wr[core[i]-len(m.ww)].cands)
	}
	for len(alts) < maxAlternatives {
		alts = append(alts, m.alternative(core, choice))
		i := 0
		for ; i < len(core); i++ {
			choice[i]++
			if choice[i] < nopt(i) {
				break
			}
			choice[i] = 0
		}
		if i == len(core) {
			break
		}
	}
	return alts
}

func (m *model) alternative(core []int, choice []int) alternative {
	d := m.d
	var alt alternative
	committed := make(map[int32]bool)
	type wwSel struct {
		c    *wwc
		a, b int32
	}
	type wrSel struct{ ri, w int32 }
	var wws []wwSel
	var wrs []wrSel
	for i, ci := range core {
		if ci < len(m.ww) {
			c := &m.ww[ci]
			a, b := c.a, c.b
			if choice[i] == 1 {
				a, b = b, a
			}
			alt.options = append(alt.options, option{ww: int32(ci), first: a, wr: -1})
			wws = append(wws, wwSel{c, a, b})
			continue
		}
		wi := ci - len(m.ww)
		rc := &m.wr[wi]
		w := rc.cands[choice[i]]
		alt.options = append(alt.options, option{ww: -1, wr: int32(wi), writer: w})
		wrs = append(wrs, wrSel{rc.ri, w})
		committed[w] = true
		committed[d.Reads[rc.ri].Txn] = true
	}
	live := func(t int32) bool {
		return t < 0 || t >= int32(d.N) || d.Status[t] == deps.Committed || committed[t]
	}
	var extra []deps.Edge
	for _, s := range wws {
		if live(s.a) && live(s.b) {
			extra = m.wwEdges(s.c, s.a, s.b, extra)
		}
	}
	for _, s := range wrs {
		for _, e := range m.readEdges(s.ri, s.w) {
			if live(e.Guards[0]) && live(e.Guards[1]) && live(e.Guards[2]) {
				extra = append(extra, e)
			}
		}
		r := &d.Reads[s.ri]
		for _, x := range wws {
			if !live(x.a) || !live(x.b) || x.a != s.w || x.b == r.Txn {
				continue
			}
			for _, k := range x.c.keys {
				if k == r.Key {
					wb, _ := d.WriteOf(x.b, k)
					extra = append(extra, deps.Edge{From: r.Txn, To: x.b, Rel: report.RW, Key: k, Value: r.Value, Value2: wb.Value, Via: s.w, Guards: [3]int32{-1, -1, -1}})
				}
			}
		}
	}
	for _, e := range m.guarded {
		if live(e.Guards[0]) && live(e.Guards[1]) && live(e.Guards[2]) {
			extra = append(extra, e)
		}
	}
	alt.cycle = m.shortestCycle(extra)
	pairs := make([][2]int32, len(wws))
	for i, w := range wws {
		pairs[i] = [2]int32{w.a, w.b}
	}
	alt.selfContradictory = polygraph.CyclicOrder(pairs)
	return alt
}
