// Package weak decides read committed in Adya's sense (PL-2: no G0, G1a, G1b or G1c), read
// atomic and causal consistency (Biswas and Enea's axioms) for histories of item, row, list
// and predicate reads and writes.
//
// # Why it is a graph check
//
// G1a (aborted reads) and G1b (intermediate reads) are properties of single reads; the basic
// checks find them ([basic.Run]). G0 and G1c are cycles of write-write and write-read
// dependencies, and a black-box history does not give the version order that fixes the
// write-write ones. But the version order is free: when the write-read dependencies are
// acyclic, take any order of the transactions that follows them and order every key's
// versions by it; every write-write and write-read edge then goes forward, so there is no
// G0 and no G1c. And when the write-read dependencies close a cycle, every version order
// has it: G1c. So read committed holds exactly when the basic checks pass and the
// write-read graph is acyclic (session order and anti-dependencies play no part). Read
// atomic and causal add the edges their axioms force (saturation), which depend only on the
// reads, so the same argument holds for the graph with them.
//
// List appends fix part of the version order: a list read shows the appends of its key in
// order, so each appender in it directly follows the one before (write-write edges; deps
// gives them as the synthetic reads of its list model), and every appender it does not show
// comes after the last one it shows. Those edges join the write-read ones; the order left
// free is still free, so the argument above holds with them. Predicate operations add
// dependencies: deps reduces each row a predicate read returned or did not return (and each
// row a predicate write matched) to a read with several candidate versions, on which the
// predicate holds or does not; every level checks them like any read (a predicate operation
// reads every row), and read committed may always choose the initial state.
//
// # Choices
//
// Reads are resolved as the black-box checkers resolve them ([deps.Build]): by explicit
// source, or by value among the transactions whose last write of the key wrote it.
// Transactions of unknown outcome count if they may have been read from. When a read may
// have read from several transactions (repeated values) or from one of unknown outcome, the
// level depends on the choice. The check uses the union of the candidate edges to pass
// (every choice is then acyclic) and the certain edges to fail (every choice has the cycle);
// in between, a linear-time guess (greedy.go) and then a SAT search over the choices with
// the acyclicity theory (search.go) decide, each choice they propose checked exactly as a
// history without choices.
package weak

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/anomaly/cycle"
	"github.com/isovet/isovet/internal/check/basic"
	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/graph"
	"github.com/isovet/isovet/internal/report"
)

// Levels are the levels this package decides.
var Levels = []anomaly.Level{anomaly.ReadCommitted, anomaly.ReadAtomic, anomaly.Causal}

// Options configure [Check].
type Options struct {
	MaxAnomalies int // 0: 20
	// MaxClockWords bounds the causal check's vector clocks (transactions times sessions;
	// 0: 32 M words, 128 MB); beyond it causal is Unknown.
	MaxClockWords int
	// SearchConflicts bounds the conflicts of the search over choices of writers (0: no
	// bound); past it the check stops, Unknown, with the stopped caveat. check.Check bounds a
	// first attempt so that a stronger level may decide a large history sooner.
	SearchConflicts int64
	// SearchOnly skips the linear-time guess at a choice of writers (greedy.go), so that
	// every history the graphs leave open goes to the search: for tests that pin it.
	SearchOnly bool
	// Progress, when set, is told of each stage as it starts and ends, and of the search's
	// work as it goes (report.Meter); it never changes the verdict.
	Progress func(report.Progress)
}

// Check decides read committed, read atomic or causal consistency for h. Stopped by ctx,
// it returns Verdict Unknown with context.Cause(ctx), or a violation proved before.
func Check(ctx context.Context, h *history.History, level anomaly.Level, o Options) (*report.Report, error) {
	m := report.NewMeter(o.Progress, level, "weak", len(h.Txns))
	rep, err := decide(ctx, h, level, o, m)
	if rep != nil {
		m.Update(func(p *report.Progress) { p.Anomalies = len(rep.Anomalies) })
	}
	m.End()
	if rep == nil {
		return nil, err
	}
	// A stage stopped by ctx gives up without a verdict (the repair of choices, for one,
	// reports no choice found): Settle says that it was stopped rather than undecidable.
	return report.Settle(ctx, rep, report.Ended(ctx, rep, err))
}

// decide is Check before it says whether ctx stopped it; m is told of its stages.
func decide(ctx context.Context, h *history.History, level anomaly.Level, o Options, m *report.Meter) (*report.Report, error) {
	if !slices.Contains(Levels, level) {
		return nil, fmt.Errorf("weak: level %s is not read committed, read atomic or causal", level)
	}
	o = o.withDefaults()
	m.Start(report.StageBasic)
	rep, err := basic.Run(ctx, h, level, basic.Options{MaxAnomalies: o.MaxAnomalies})
	if rep != nil {
		rep.Checker = "weak"
	}
	if err != nil || rep.Verdict == report.Fail {
		return rep, err
	}
	session := level.Info().Session
	m.Start(report.StageDependencies)
	d, rep, err := buildDeps(ctx, h, level, rep)
	if d == nil {
		return rep, err
	}
	if addFindings(rep, d, o.MaxAnomalies) {
		rep.Verdict = report.Fail
		return rep, nil
	}

	// The graphs: certain edges, and every edge some choice of writers could give. Node
	// d.Init (= d.N) is the initial state, before every transaction.
	c := newCheck(d, session)
	c.meter = m
	choices := c.edges(level == anomaly.ReadCommitted)
	m.Update(func(p *report.Progress) { p.Edges = c.certain.M() })
	if level != anomaly.ReadCommitted {
		m.Start(report.StageSaturating)
		if stop, err := c.saturateBoth(ctx, level, o.MaxClockWords, rep); stop {
			return rep, err
		}
	}
	return rep, c.judge(ctx, level, choices, o, rep)
}

// withDefaults returns o with its zero fields set to their defaults.
func (o Options) withDefaults() Options {
	if o.MaxAnomalies <= 0 {
		o.MaxAnomalies = 20
	}
	if o.MaxClockWords <= 0 {
		o.MaxClockWords = 32 << 20
	}
	return o
}

// buildDeps builds the dependencies of h. When it cannot, it returns no Deps but what
// decide returns: rep made Unknown for a history deps does not support (with no error), rep
// and the error for a build stopped by ctx (Check says so), else no report and the error.
func buildDeps(ctx context.Context, h *history.History, level anomaly.Level, rep *report.Report) (*deps.Deps, *report.Report, error) {
	d, err := deps.BuildContext(ctx, h, deps.Options{Session: level.Info().Session})
	if errors.Is(err, deps.ErrUnsupported) {
		rep.Verdict = report.Unknown
		rep.Notes = append(rep.Notes, fmt.Sprintf("the %s checker cannot decide this history: %v", level, err))
		return nil, rep, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, rep, err // Check says it was stopped
		}
		return nil, nil, err
	}
	return d, rep, nil
}

// addFindings adds d's notes and findings to rep (at most maxAnomalies anomalies) and reports
// whether rep then has an anomaly. Every finding is a read no committed state explains (own
// writes, aborted, intermediate or thin-air versions, a predicate result no version gives),
// which every level forbids, whatever name it goes by.
func addFindings(rep *report.Report, d *deps.Deps, maxAnomalies int) bool {
	rep.Notes = append(rep.Notes, d.Notes...)
	if d.Undecided != "" {
		rep.Notes = append(rep.Notes, d.Undecided)
	}
	ph := report.PlaceholdersOf(d.H)
	for _, a := range d.Findings {
		// Those among recorded transactions first in claim (report.Placeholders.Add).
		rep.Anomalies = ph.Add(rep.Anomalies, a, maxAnomalies)
	}
	return len(rep.Anomalies) > 0
}

// saturateBoth saturates the certain graph, then the possible one (read atomic, causal).
// It reports whether decide must stop there, with rep made Unknown: stopped by ctx (with
// the error, which Check turns into a stopped report) or past the vector clocks' bound.
func (c *check) saturateBoth(ctx context.Context, level anomaly.Level, maxClockWords int, rep *report.Report) (bool, error) {
	for _, certain := range []bool{true, false} {
		ok, err := c.saturate(ctx, level, certain, maxClockWords)
		if err != nil {
			return true, err // Check says it was stopped
		}
		if !ok {
			rep.Verdict = report.Unknown
			rep.Notes = append(rep.Notes, fmt.Sprintf("the causal check needs a vector clock per transaction and session: %d transactions times %d sessions is over its bound", c.d.N, len(c.d.H.Sessions)))
			return true, nil
		}
	}
	return false, nil
}

// judge gives rep its verdict from the graphs: Fail on a cycle of certain edges, Pass when
// no choice of writers can close one (with a caveat for a partly modelled history), and
// otherwise the verdict of the search over the choices (search.go).
func (c *check) judge(ctx context.Context, level anomaly.Level, choices int, o Options, rep *report.Report) error {
	if cyc := graph.FindCycle(c.certain); cyc != nil {
		rep.Verdict = report.Fail
		rep.Anomalies = append(rep.Anomalies, c.anomaly(level, cyc))
		return nil
	}
	note := passNote(level, choices)
	if _, acyclic := graph.Topo(c.possible); !acyclic {
		var err error
		if note, err = c.decideChoices(ctx, level, o, rep); err != nil || note == "" {
			return err
		}
	}
	rep.Verdict = report.Pass
	if c.d.Partial {
		rep.AddCaveat(report.CaveatPartial, "predicate operations could only partly be checked (see the notes above): no violation was found, but that proves nothing")
		report.Finish(rep)
		return nil
	}
	rep.Notes = append(rep.Notes, note)
	return nil
}

// passNote says why level holds when no choice of writers (choices reads had several) can
// close a cycle.
func passNote(level anomaly.Level, choices int) string {
	if choices > 0 && level == anomaly.ReadCommitted {
		return fmt.Sprintf("%d reads could have read from more than one transaction, and no choice among them closes a cycle: %s", choices, passWhy(level))
	}
	return passWhy(level)
}

// passWhy says why level holds once every read has its writer.
func passWhy(level anomaly.Level) string {
	switch level {
	case anomaly.ReadCommitted:
		return "no transaction read, directly or through others, from a transaction that read from it: the write-read dependencies are acyclic, so ordering every key's versions by an order that follows them gives no G0 or G1c cycle"
	case anomaly.ReadAtomic:
		return "an order of the transactions follows every write-read dependency and puts, for every read, each transaction the reader also read from and that wrote the key before the one it read from: every transaction saw all or none of each other's writes"
	}
	return "an order of the transactions follows session order and every write-read dependency and puts, for every read, each transaction in the reader's causal past that wrote the key before the one it read from: every transaction saw the causes of what it saw"
}

// check holds the graphs of one history and why each certain edge is there.
type check struct {
	d                 *deps.Deps
	n                 int32 // transactions; node n is the initial state
	session           bool
	certain, possible *graph.Digraph
	edgeOf            map[[2]int32]deps.Edge
	why               map[[2]int32]string // a reason that overrides edgeOf's
	forced            map[[2]int32]forced // saturation's edges
	// alts are, for a history resolved by the search, the other writers each chosen read
	// (writer, reader, key; key -1: any read of the reader from the writer) could have read
	// from.
	alts map[[3]int32][]int32
	// src and past are the certain sources and causal graph (reads and session order), kept
	// by the causal saturation for the witnesses' paths.
	src  [][]int32
	past *graph.Digraph
	// meter is told of the search's progress (nil: not).
	meter *report.Meter
}

// counter returns whether a transaction counts: with certain, only committed ones; else
// every one that may have committed.
func counter(d *deps.Deps, certain bool) func(t int32) bool {
	if certain {
		return func(t int32) bool { return d.Status[t] == deps.Committed }
	}
	return func(t int32) bool { return d.Status[t] != deps.Excluded }
}

// causalGraph is the graph of reads (src: per transaction, the ones it read from) and of
// session order among the transactions that count.
func causalGraph(d *deps.Deps, src [][]int32, counts func(int32) bool) *graph.Digraph {
	g := graph.New(d.N)
	for t := range src {
		for _, w := range src[t] {
			g.AddEdge(w, int32(t))
		}
	}
	for si := range d.H.Sessions {
		var prev int32 = -1
		for _, t := range d.H.Sessions[si].Txns {
			if !counts(int32(t)) {
				continue
			}
			if prev >= 0 {
				g.AddEdge(prev, int32(t))
			}
			prev = int32(t)
		}
	}
	return g
}

// forced is an edge a read atomic or causal axiom forces: t1's version of the key comes
// before t2's, because reader's read (index read in Reads) read it from t2 and t1 is in what
// reader had seen.
type forced struct {
	t1, t2, reader, read int32
}

func newCheck(d *deps.Deps, session bool) *check {
	return &check{
		d: d, n: int32(d.N), session: session,
		certain: graph.New(d.N + 1), possible: graph.New(d.N + 1),
		edgeOf: make(map[[2]int32]deps.Edge), why: make(map[[2]int32]string), forced: make(map[[2]int32]forced),
	}
}

func (c *check) addCertain(e deps.Edge) {
	c.certain.AddEdge(e.From, e.To)
	c.possible.AddEdge(e.From, e.To)
	// A read is the plainer reason: keep it over a write order between the same two.
	if old, ok := c.edgeOf[[2]int32{e.From, e.To}]; !ok || old.Rel != report.WR && e.Rel == report.WR {
		c.edgeOf[[2]int32{e.From, e.To}] = e
	}
}

// edges adds the write-read, write-write (list order) and, with sessions, session-order
// edges, and returns how many reads have a choice of writer. With initFree (read
// committed), a read that may have read the initial state adds no possible edge: choosing
// the initial state orders nothing, as nothing comes before it, so a pass may choose it.
// (A row a predicate did not return is such a read whenever the predicate does not hold on
// its initial state.)
func (c *check) edges(initFree bool) int {
	c.depEdges()
	return c.readEdges(initFree)
}

// depEdges adds deps' edges among transactions that weak uses (write-read, write-write,
// and with sessions session order; guarded ones as possible only), and the list orders.
func (c *check) depEdges() {
	d, n := c.d, c.n
	keep := func(e deps.Edge) bool {
		return e.From < n && e.To < n && (e.Rel == report.WR || e.Rel == report.WW || c.session && e.Rel == report.SO)
	}
	for _, e := range d.Known {
		if keep(e) {
			c.addCertain(e)
		}
	}
	for _, e := range d.Guarded {
		if keep(e) {
			c.possible.AddEdge(e.From, e.To)
		}
	}
	c.listOrderEdges()
}

// listOrderEdges adds the write orders list reads show: those of committed readers and
// writers as certain (with their reasons), those of every reader and writer that may have
// committed as possible.
func (c *check) listOrderEdges() {
	for _, le := range listEdges(c.d, true) {
		c.addCertain(le.Edge)
		c.why[[2]int32{le.From, le.To}] = le.why
	}
	for _, le := range listEdges(c.d, false) {
		c.possible.AddEdge(le.From, le.To)
	}
}

// readEdges adds a possible edge from every candidate writer of every read that counts
// (with initFree, not of reads that may have read the initial state) and returns how many
// of them have a choice of writer.
func (c *check) readEdges(initFree bool) int {
	d, n := c.d, c.n
	choices := 0
	for ri := range d.Reads {
		r := &d.Reads[ri]
		if d.Status[r.Txn] == deps.Excluded {
			continue
		}
		if initFree && slices.Contains(r.Cands, d.Init) {
			continue
		}
		if len(r.Cands) > 1 || d.Status[r.Txn] == deps.Maybe {
			choices++
		}
		for _, w := range r.Cands {
			if w < n && w != r.Txn && d.Status[w] != deps.Excluded {
				c.possible.AddEdge(w, r.Txn)
			}
		}
	}
	return choices
}

// sources returns, per transaction, the transactions it read from: the writers of its
// item reads and every appender its list reads show. With certain, only reads with one
// candidate, of committed readers and writers, count; else every candidate.
func (c *check) sources(certain bool) [][]int32 {
	d := c.d
	counts := counter(d, certain)
	src := make([][]int32, d.N)
	for ri := range d.Reads {
		r := &d.Reads[ri]
		if r.Op < 0 || !counts(r.Txn) || certain && len(r.Cands) != 1 {
			continue
		}
		for _, w := range r.Cands {
			c.addSource(src, counts, r.Txn, w)
		}
		for _, w := range r.Needs {
			c.addSource(src, counts, r.Txn, w)
		}
	}
	return src
}

// addSource adds w to the sources of r in src, once, if it is a transaction other than r
// that counts.
func (c *check) addSource(src [][]int32, counts func(int32) bool, r, w int32) {
	if w >= 0 && w < c.n && w != r && counts(w) && !slices.Contains(src[r], w) {
		src[r] = append(src[r], w)
	}
}

// saturate adds the edges the read-atomic or causal axiom forces (Biswas and Enea, OOPSLA
// 2019): when reader read key k from t2, every other transaction t1 that wrote k and that
// reader had seen (read from, for read atomic; in its causal past through session order and
// reads, for causal) must come before t2. It reports false when the causal check's vector
// clocks would exceed maxWords.
func (c *check) saturate(ctx context.Context, level anomaly.Level, certain bool, maxWords int) (bool, error) {
	s := &saturator{c: c, certain: certain, src: c.sources(certain), counts: counter(c.d, certain)}
	if level == anomaly.ReadAtomic {
		s.readAtomic()
		return true, nil
	}
	return s.causal(ctx, maxWords)
}

// saturator is one saturation of the certain (or the possible) graph.
type saturator struct {
	c       *check
	certain bool
	src     [][]int32 // per transaction: the transactions it read from
	counts  func(t int32) bool
}

// add forces t1 before t2, which read ri read from.
func (s *saturator) add(t1, t2, ri int32) {
	c := s.c
	r := &c.d.Reads[ri]
	reader := r.Txn
	if t1 == t2 || t1 == reader {
		return
	}
	if !s.certain {
		c.possible.AddEdge(t1, t2)
		if t2 == c.n {
			c.possible.AddEdge(t2, t1)
		}
		return
	}
	key := [2]int32{t1, t2}
	if _, ok := c.forced[key]; ok {
		return
	}
	c.forced[key] = forced{t1, t2, reader, ri}
	c.certain.AddEdge(t1, t2)
	c.possible.AddEdge(t1, t2)
	if t2 == c.n { // before the initial state: the initial state precedes t1
		c.certain.AddEdge(t2, t1)
		c.possible.AddEdge(t2, t1)
		c.why[[2]int32{t2, t1}] = "the initial state comes before every transaction"
	}
}

// readFrom returns the writers r read from (Init for the initial state), per candidate.
func (s *saturator) readFrom(r *deps.Read) []int32 {
	d := s.c.d
	if s.certain && len(r.Cands) != 1 {
		return nil
	}
	var out []int32
	for _, w := range r.Cands {
		if w == d.Init || s.counts(w) {
			out = append(out, w)
		}
	}
	return out
}

// readAtomic forces, for each read of k from t2, every transaction the reader read from that
// wrote k before t2.
func (s *saturator) readAtomic() {
	d := s.c.d
	for ri := range d.Reads {
		r := &d.Reads[ri]
		if r.Op < 0 || !s.counts(r.Txn) {
			continue
		}
		for _, t2 := range s.readFrom(r) {
			for _, t1 := range s.src[r.Txn] {
				if _, wrote := d.WriteOf(t1, r.Key); wrote {
					s.add(t1, t2, int32(ri))
				}
			}
		}
	}
}

// causal forces, for each read of k from t2, the latest writer of k in each session within
// the reader's causal past before t2. The causal past is a vector clock over sessions per
// transaction.
func (s *saturator) causal(ctx context.Context, maxWords int) (bool, error) {
	c, d := s.c, s.c.d
	ns := len(d.H.Sessions)
	if d.N*ns > maxWords {
		return false, nil
	}
	g := causalGraph(d, s.src, s.counts)
	if s.certain {
		c.src, c.past = s.src, g
	}
	clock, ok, err := vectorClocks(ctx, d, g)
	if err != nil || !ok {
		return true, err // !ok: a cycle of session order and reads; the graphs have it already
	}
	return true, s.forceCausal(ctx, clock, ns)
}

// forceCausal applies the causal axiom to every read that counts, with clock the vector
// clocks (ns sessions a transaction): the latest writer of the key in each session of the
// reader's causal past comes before the one it read from.
func (s *saturator) forceCausal(ctx context.Context, clock []int32, ns int) error {
	d := s.c.d
	perKey := s.sessionWriters()
	for ri := range d.Reads {
		if ri%4096 == 0 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		r := &d.Reads[ri]
		if r.Op < 0 || !s.counts(r.Txn) {
			continue
		}
		cr := clock[int(r.Txn)*ns : int(r.Txn)*ns+ns]
		for _, t2 := range s.readFrom(r) {
			for _, sw := range perKey[r.Key] {
				if t1, ok := sw.latestIn(cr); ok {
					s.add(t1, t2, int32(ri))
				}
			}
		}
	}
	return nil
}

// vectorClocks returns, per transaction and session, the last seq of that session in the
// transaction's causal past (g's predecessors), -1 for none; ok is false when g has a cycle.
func vectorClocks(ctx context.Context, d *deps.Deps, g *graph.Digraph) (clock []int32, ok bool, err error) {
	h := d.H
	ns := len(h.Sessions)
	order, ok := graph.Topo(g)
	if !ok {
		return nil, false, nil
	}
	clock = make([]int32, d.N*ns)
	for i := range clock {
		clock[i] = -1
	}
	for i, u := range order {
		if i%4096 == 0 && ctx.Err() != nil {
			return nil, true, context.Cause(ctx)
		}
		cu := clock[int(u)*ns : int(u)*ns+ns]
		x := &h.Txns[u]
		for _, v := range g.Out(u) {
			cv := clock[int(v)*ns : int(v)*ns+ns]
			for s := range cv {
				cv[s] = max(cv[s], cu[s])
			}
			cv[x.Session] = max(cv[x.Session], x.Seq)
		}
	}
	return clock, true, nil
}

// sessWriters are the counted writers of a key in one session, by seq.
type sessWriters struct {
	s          history.SessionID
	seqs, txns []int32
}

// latestIn returns the latest of the writers within the causal past clock cr: the earlier
// ones precede it in session order, so its edge orders them too.
func (sw *sessWriters) latestIn(cr []int32) (int32, bool) {
	last := cr[sw.s]
	if last < 0 {
		return 0, false
	}
	i, found := slices.BinarySearch(sw.seqs, last)
	if found {
		i++
	}
	if i == 0 {
		return 0, false
	}
	return sw.txns[i-1], true
}

// sessionWriters lists, per key, per session that wrote it, the counted writers by seq.
func (s *saturator) sessionWriters() [][]sessWriters {
	d := s.c.d
	h := d.H
	perKey := make([][]sessWriters, len(h.Keys))
	for t := range d.N {
		if !s.counts(int32(t)) {
			continue
		}
		x := &h.Txns[t]
		for _, w := range d.Writes[t] {
			sw := perKey[w.Key]
			i := slices.IndexFunc(sw, func(e sessWriters) bool { return e.s == x.Session })
			if i < 0 {
				sw = append(sw, sessWriters{s: x.Session})
				i = len(sw) - 1
			}
			// Ascending t is ascending seq within a session.
			sw[i].seqs, sw[i].txns = append(sw[i].seqs, x.Seq), append(sw[i].txns, int32(t))
			perKey[w.Key] = sw
		}
	}
	return perKey
}

// anomaly reports the cycle cyc of the certain graph (a node list, each node's edge to the
// next, the last's to the first) with each step's reason. Its kind: a fractured read or a
// causality violation when a step is one the read atomic or causal axiom forced (causal:
// when the reader had seen the writer only through others), a causality violation when
// session order closes it, G1c when a read does, G0 when only write orders do.
func (c *check) anomaly(level anomaly.Level, cyc []int32) report.Anomaly {
	h := c.d.H
	name := func(t int32) string {
		if t == c.n {
			return "the initial state"
		}
		return h.Name(history.TxnID(t))
	}
	// A cycle through the initial state closes as soon as some t1 must come before it:
	// nothing does. Report that step alone, as t1 before itself.
	if i := slices.Index(cyc, c.n); i >= 0 {
		cyc = []int32{cyc[(i+len(cyc)-1)%len(cyc)]}
	}
	a := report.Anomaly{Key: -1}
	var whys, path []string
	var sh cycle.Shape // what names the cycle: counted by what each step is, not by its Rel
	for i, from := range cyc {
		to := cyc[(i+1)%len(cyc)]
		key := [2]int32{from, to}
		if from == to {
			key[1] = c.n // the step before the initial state
		}
		st, f, isForced := c.step(level, from, to, key, name, &sh)
		a.Cycle = append(a.Cycle, st)
		if from != c.n && !slices.Contains(a.Txns, st.From) {
			a.Txns = append(a.Txns, st.From)
		}
		if isForced && !slices.Contains(a.Txns, history.TxnID(f.reader)) {
			a.Txns = append(a.Txns, history.TxnID(f.reader)) // whose reads force the step
		}
		whys = append(whys, st.Why)
		path = append(path, fmt.Sprintf("%s -%s->", name(from), st.Rel))
	}
	path = append(path, name(cyc[0]))
	sh.Len = len(a.Cycle)
	a.Kind, a.Also = cycle.Classify(cycle.Weak, sh)
	a.Message = fmt.Sprintf("%s; so %s, %s", strings.Join(whys, "; "), strings.Join(path, " "), what(level, a.Kind, sh))
	return a
}

// step is the step from from to to of a cycle of the certain graph (key: the edge whose
// reason it gives), with its reason, counted in sh by what it is; f is the forced edge it
// is, if isForced.
func (c *check) step(level anomaly.Level, from, to int32, key [2]int32, name func(int32) string, sh *cycle.Shape) (st report.Step, f forced, isForced bool) {
	d, h := c.d, c.d.H
	e, hasEdge := c.edgeOf[key]
	st = report.Step{From: history.TxnID(from), To: history.TxnID(to), Rel: e.Rel, Key: e.Key, Value: e.Value, Value2: e.Value2}
	f, isForced = c.forced[key]
	why, hasWhy := c.why[key]
	switch {
	case isForced && !hasEdge:
		sh.Axiom = true
		r := &c.d.Reads[f.read]
		st.Rel, st.Key, st.Value = report.WW, r.Key, r.Value
		st.Why = c.forcedWhy(level, f, name, sh)
	case hasWhy:
		sh.WW++ // a list order, or the initial state's
		st.Why = why
		if from == c.n {
			st.Rel = report.WW
		}
	case e.Rel == report.SO:
		sh.SO++
		st.Key = -1
		st.Why = fmt.Sprintf("%s precedes %s in their session", name(from), name(to))
	case e.Rel == report.WR:
		if ls, ok := d.AppendStep(st, e.Via, false); ok {
			st = ls
			sh.WW++
		} else {
			sh.WR++
			st.Why = fmt.Sprintf("%s read %s, which %s wrote%s", name(to), h.KV(e.Key, e.Value), name(from), c.alsoWrote(from, to, e.Key, name))
		}
	default:
		sh.WW++
		st.Why = fmt.Sprintf("%s overwrote %s's %s with %s", name(to), name(from), h.KV(e.Key, e.Value), h.KV(e.Key, e.Value2))
	}
	return st, f, isForced
}

// alsoWrote says, for a read the search chose the writer of, who else it could have read
// from: " (T2 wrote that value too)"; else "".
func (c *check) alsoWrote(from, to int32, k history.Key, name func(int32) string) string {
	others := c.alts[[3]int32{from, to, int32(k)}]
	if len(others) == 0 {
		return ""
	}
	if len(others) == 1 && others[0] == c.n {
		return " (the initial state held that value too)"
	}
	var names []string
	for _, w := range others[:min(len(others), 3)] {
		names = append(names, name(w))
	}
	if len(others) > 3 {
		names = append(names, fmt.Sprintf("%d others", len(others)-3))
	}
	list := names[len(names)-1]
	if len(names) > 1 {
		list = strings.Join(names[:len(names)-1], ", ") + " and " + list
	}
	return fmt.Sprintf(" (%s wrote that value too)", list)
}

// forcedWhy is the reason of an edge f the read atomic or causal axiom forced: what the
// reader had seen (at causal, through others: sh.Indirect), and what it read.
func (c *check) forcedWhy(level anomaly.Level, f forced, name func(int32) string, sh *cycle.Shape) string {
	h := c.d.H
	seen := fmt.Sprintf("%s had read from %s%s", name(f.reader), name(f.t1), c.alsoWrote(f.t1, f.reader, -1, name))
	if level == anomaly.Causal {
		if p := c.pathWhy(f.t1, f.reader); p != "" {
			seen, sh.Indirect = fmt.Sprintf("%s precedes %s causally (%s)", name(f.t1), name(f.reader), p), true
		}
	}
	r := &c.d.Reads[f.read]
	why := fmt.Sprintf("%s; %s wrote %v, and %s, so %s's version of %v comes before %s's", seen, name(f.t1), h.Key(r.Key), readFrom(h, r, name(f.reader), name(f.t2)), name(f.t1), h.Key(r.Key), name(f.t2))
	if f.t2 == c.n {
		why += ", which comes before every transaction"
	}
	return why
}

// readFrom says that reader read r's version from src: "T3 read x=1 from T2", or for a
// row of a predicate operation, what the predicate made of it.
func readFrom(h *history.History, r *deps.Read, reader, src string) string {
	if r.Kind == deps.ReadItem {
		return fmt.Sprintf("%s read %s from %s", reader, h.KV(r.Key, r.Value), src)
	}
	o := h.Txns[r.Txn].Ops[r.Op]
	pred := h.Pred(o).Pred.Expr
	switch {
	case r.Kind == deps.ReadPredVisible:
		return fmt.Sprintf("%s's predicate read %q returned %s from %s", reader, pred, h.KV(r.Key, r.Value), src)
	case r.Kind == deps.ReadPredMatch:
		return fmt.Sprintf("%s's update with predicate %q changed row %v, so it read a version on which the predicate holds, %s's", reader, pred, h.Key(r.Key), src)
	case o.Kind == history.OpPredWrite:
		return fmt.Sprintf("%s's update with predicate %q did not change row %v, so it read a version on which the predicate is false, %s's", reader, pred, h.Key(r.Key), src)
	}
	return fmt.Sprintf("%s's predicate read %q did not return row %v, so it read a version on which the predicate is false, %s's", reader, pred, h.Key(r.Key), src)
}

// what says, after a cycle's steps, what kind of cycle it is (kind, as [cycle.Classify]
// named it) and that level forbids it.
func what(level anomaly.Level, kind anomaly.Kind, sh cycle.Shape) string {
	switch {
	case kind == anomaly.CausalityViolation && sh.Axiom:
		return "a transaction saw an effect without its cause, which causal consistency forbids"
	case kind == anomaly.FracturedRead:
		return fmt.Sprintf("a transaction saw some of another's writes but not all, which %s forbids", level)
	case kind == anomaly.CausalityViolation:
		return "a cycle of session order and write-read dependencies, which causal consistency forbids"
	case kind == anomaly.G1c:
		return fmt.Sprintf("a cycle of write-read and write-write dependencies, which %s forbids (circular information flow, G1c)", level)
	}
	return fmt.Sprintf("a cycle of write-write dependencies, which %s forbids (G0)", level)
}

// pathWhy names a shortest chain of session order and reads from t1 to t (certain edges),
// as "T1 -wr-> T4 -so-> T3", or "" when t read from t1 directly.
func (c *check) pathWhy(t1, t int32) string {
	src := c.src
	if c.past == nil || slices.Contains(src[t], t1) {
		return ""
	}
	p := graph.ShortestPath(c.past, t1, t, nil)
	if len(p) < 2 {
		return ""
	}
	var b strings.Builder
	b.WriteString(c.d.H.Name(history.TxnID(p[0])))
	for i := 1; i < len(p); i++ {
		rel := "so"
		if slices.Contains(src[p[i]], p[i-1]) {
			rel = "wr"
		}
		fmt.Fprintf(&b, " -%s-> %s", rel, c.d.H.Name(history.TxnID(p[i])))
	}
	return b.String()
}

// listEdge is a write-write edge a list read implies: From's append is the last the read
// shows, To appended to the key and the read does not show it.
type listEdge struct {
	deps.Edge
	why string
}

// listEdges returns, for the list reads that stand for all ([shownListReads]), the edges
// from the appender of the last element each shows to every appender it does not show: a
// list read shows a prefix of the version order. With certain, only committed readers and
// appenders count; else every transaction that may have committed.
func listEdges(d *deps.Deps, certain bool) []listEdge {
	counts := counter(d, certain)
	var out []listEdge
	for _, ri := range shownListReads(d, counts) {
		out = appendAfterLast(out, d, d.Reads[ri].Key, &d.Reads[ri], counts)
	}
	return out
}

// shownListReads returns the indexes in d.Reads of the list reads whose orders stand for
// all (those that count, with a single candidate for the last element, in d.Reads order):
// of the readers the history records as committed, the longest read of each key (the basic
// checks found every other one a prefix of it, whose order its own reads fix); every read
// of another reader (of unknown outcome, whose reads nothing compared).
func shownListReads(d *deps.Deps, counts func(int32) bool) []int {
	longest := make(map[history.Key]int)
	var out []int
	for ri := range d.Reads {
		r := &d.Reads[ri]
		if r.Op < 0 || len(r.Prefix) == 0 || !counts(r.Txn) || len(r.Cands) != 1 || r.Cands[0] >= int32(d.N) {
			continue
		}
		if d.H.Txns[r.Txn].Outcome != history.OutcomeCommitted {
			out = append(out, ri)
			continue
		}
		if li, ok := longest[r.Key]; !ok || len(d.Reads[li].Prefix) < len(r.Prefix) {
			longest[r.Key] = ri
		}
	}
	for _, ri := range longest {
		out = append(out, ri)
	}
	slices.Sort(out)
	return out
}

// appendAfterLast appends to out an edge from the last appender list read r of k shows to
// every appender of k that counts and that r does not show: it appended after.
func appendAfterLast(out []listEdge, d *deps.Deps, k history.Key, r *deps.Read, counts func(int32) bool) []listEdge {
	last := r.Cands[0]
	if !counts(last) {
		return out
	}
	shown := map[int32]bool{last: true, r.Txn: true}
	for _, w := range r.Needs {
		shown[w] = true
	}
	name := func(t int32) string { return d.H.Name(history.TxnID(t)) }
	for _, w := range d.Writers[k] {
		if shown[w] || !counts(w) {
			continue
		}
		mine, _ := d.WriteOf(w, k)
		e := deps.Edge{From: last, To: w, Rel: report.WW, Key: k, Value: r.Value, Value2: mine.Value, Via: -1}
		why := fmt.Sprintf("%s appended %s after %s's %s (%s's read of %v ends with %s's append and does not show %s's)",
			name(w), d.H.KV(k, mine.Value), name(last), d.H.KV(k, r.Value), name(r.Txn), d.H.Key(k), name(last), name(w))
		out = append(out, listEdge{e, why})
	}
	return out
}
