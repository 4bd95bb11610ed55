package ts

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

// Options tune a timestamp check. The zero value is usable.
type Options struct {
	// Session overrides whether SESSION is checked (default: strong-session levels only).
	Session SessionCheck
	// MaxAnomalies caps the anomalies put in a [report.Report] (0: all). [Run] returns
	// every violation regardless.
	MaxAnomalies int
	// Progress, when set, is told of the replay as it starts, every few thousand events,
	// and as it ends (report.Meter); it never changes the verdict.
	Progress func(report.Progress)
	_        struct{}
}

// Result is what [Run] found.
type Result struct {
	Violations []Violation
	// Skipped counts transactions not checked because they did not commit (aborted, or
	// of unknown outcome).
	Skipped int
	Stats   report.Stats
}

// Check checks h against level with Chronos and returns a report. Every transaction named
// in an anomaly is a dense id of h.
func Check(ctx context.Context, h *history.History, level anomaly.Level, opts Options) (*report.Report, error) {
	oc := settleOutcomes(h)
	res, err := Run(ctx, withCommitted(h, oc.committed), level, opts)
	rep := &report.Report{Level: level, Checker: "chronos", History: h}
	if err == nil && len(res.Violations) == 0 && ctx.Err() != nil {
		err = context.Cause(ctx) // a pass reached as ctx ended: the caller stopped waiting
	}
	if err != nil {
		if report.StoppedBy(ctx, err) {
			rep.Stopped(err)
			report.Finish(rep)
		}
		return rep, err
	}
	rep.Stats = res.Stats
	rep.Verdict = report.Pass
	if len(res.Violations) > 0 {
		rep.Verdict = report.Fail
	}
	if n := oc.note(); n != "" {
		rep.Notes = append(rep.Notes, n)
	}
	if m, _ := modeOf(level, opts.Session); m.ser && len(res.Violations) > 0 && h.DerivedTimestamps() {
		withdraw(rep, &res)
	}
	if d := oc.doubt(); d != "" && len(res.Violations) > 0 {
		rep.AddCaveat(report.CaveatUncertainOutcome, d)
		res.Violations = nil // not proved violations of the history: Finish says why
	}
	addViolations(rep, h, res.Violations, opts.MaxAnomalies)
	if res.Skipped > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d transactions that did not commit (aborted or of unknown outcome) were not checked and their writes were taken as invisible", res.Skipped))
	}
	if n := len(h.Preds); n > 0 { // one payload per predicate op
		// Chronos replays item and list operations only: a predicate read that missed a row
		// its snapshot held (a phantom) would go unseen, so finding nothing proves nothing.
		rep.AddCaveat(report.CaveatPartial, fmt.Sprintf("the timestamp checker does not evaluate predicate reads and writes (left unchecked: %d); the black-box checker does (--method black-box)", n))
	}
	report.Finish(rep)
	return rep, nil
}

// withdraw records that res's violations of serializability were found in an order of
// commits derived from snapshots, and drops them: Finish makes the failure Unknown (a
// chosen-order caveat). Snapshots fix which commits each transaction saw, not the order of
// commits that no snapshot tells apart: that order was chosen here, and commit-order
// serializability failing in it does not make the history unserializable. (A pass stands:
// the order is then a serial order every read agrees with.)
func withdraw(rep *report.Report, res *Result) {
	n := len(res.Violations)
	rep.AddCaveat(report.CaveatChosenOrder, fmt.Sprintf("the timestamps were derived from the database's snapshots, which do not say in which order concurrent transactions committed: the %s of serializability in the order isovet chose %s not reported, as another order may have none; the black-box checker decides (--method black-box)", count(n, "violation"), plural(n, "is", "are")))
	res.Violations = nil
}

// count says n things: "1 violation", "2 violations".
func count(n int, thing string) string {
	return fmt.Sprintf("%d %s", n, plural(n, thing, thing+"s"))
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// checkedKinds are the kinds of violations Chronos finds, in the order the report counts
// them.
var checkedKinds = []anomaly.Kind{anomaly.ExtViolation, anomaly.Internal, anomaly.NoConflict, anomaly.SessionViolation, anomaly.TimestampOrder}

// addViolations adds vs to rep as anomalies (at most maxAnomalies, if positive), and notes
// how many were shown and how many there are of each kind.
func addViolations(rep *report.Report, h *history.History, vs []Violation, maxAnomalies int) {
	counts := map[anomaly.Kind]int{}
	for i := range vs {
		v := &vs[i]
		counts[v.Kind]++
		if maxAnomalies > 0 && len(rep.Anomalies) >= maxAnomalies {
			continue
		}
		rep.Anomalies = append(rep.Anomalies, v.Anomaly(h))
	}
	if len(rep.Anomalies) < len(vs) {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d violations found, %d shown", len(vs), len(rep.Anomalies)))
	}
	for _, k := range checkedKinds {
		if counts[k] > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %d", k, counts[k]))
		}
	}
}

// Anomaly converts v into a report anomaly naming dense ids of h.
func (v *Violation) Anomaly(h *history.History) report.Anomaly {
	a := report.Anomaly{Kind: v.Kind, Key: -1, Message: v.String()}
	if v.TxnID >= 0 {
		a.Txns = append(a.Txns, v.TxnID)
	}
	if v.OtherID >= 0 {
		a.Txns = append(a.Txns, v.OtherID)
	}
	var k history.Key = -1
	if v.HasKey {
		k = keyIndex(h, v.Key)
		a.Key = k
	}
	if v.Kind == anomaly.ExtViolation && v.OtherID >= 0 && v.TxnID >= 0 {
		a.Cycle = []report.Step{{From: v.OtherID, To: v.TxnID, Rel: report.WR, Key: k, Why: fmt.Sprintf("%s read %v=%s written by %s (%s)", v.Txn, v.Key, v.Observed, v.Other, v.Ext)}}
	}
	if v.Kind == anomaly.SessionViolation {
		a.Cycle = []report.Step{{From: v.OtherID, To: v.TxnID, Rel: report.SO, Key: -1, Why: "session order"}}
	}
	return a
}

// keyIndex returns the dense key of h whose datum is key, or -1.
func keyIndex(h *history.History, key history.Datum) history.Key {
	for i, d := range h.Keys {
		if d == key {
			return history.Key(i)
		}
	}
	return -1
}

// event is one replay event: a start, a commit or a point transaction.
type event struct {
	ts history.Timestamp
	ph uint8 // order among equal timestamps
	do uint8 // what to do: phStart, phCommit, or phPoint (reads then writes)
	t  history.TxnID
}

// chronos is the offline replay state.
type chronos struct {
	h    *history.History
	m    mode
	out  []Violation
	live []*xtxn // per txn, between its start and commit events
	free []*xtxn
	ints []intFinding

	fv      []history.Value   // frontier value per key
	fw      []history.TxnID   // frontier writer per key (-1: initial)
	fl      [][]history.Value // frontier list per key
	ongoing [][]history.TxnID // started, uncommitted writers per key
	ties    map[history.Key][]history.TxnID

	names  []history.Datum // tie-break datum per txn, filled on demand
	widx   map[[2]int32][]history.TxnID
	widxOK bool
}

// Run replays h in timestamp order and returns every violation of level.
func Run(ctx context.Context, h *history.History, level anomaly.Level, opts Options) (Result, error) {
	var res Result
	m, err := modeOf(level, opts.Session)
	if err != nil {
		return res, err
	}
	c := &chronos{h: h, m: m, live: make([]*xtxn, len(h.Txns))}
	evs, skipped, missing := c.events()
	res.Skipped = skipped
	if missing > 0 {
		return res, fmt.Errorf("%w: %d of %d committed transactions have no start and commit timestamps", ErrNoTimestamps, missing, len(h.Txns)-res.Skipped+missing)
	}
	meter := report.NewMeter(opts.Progress, level, "chronos", len(h.Txns))
	defer meter.End()
	meter.Update(func(p *report.Progress) { p.Events = len(evs) })
	meter.Start(report.StageReplaying)
	slices.SortFunc(evs, c.cmpEvent)
	if ctx.Err() != nil {
		return res, context.Cause(ctx)
	}
	c.initKeys()
	for i, e := range evs {
		if i&4095 == 0 {
			if ctx.Err() != nil {
				return res, context.Cause(ctx)
			}
			meter.Update(func(p *report.Progress) { p.Replayed, p.Anomalies = i, len(c.out) })
		}
		c.replay(e)
	}
	if m.session {
		c.sessions()
	}
	meter.Update(func(p *report.Progress) { p.Replayed, p.Anomalies = len(evs), len(c.out) })
	res.Violations = c.out
	nk := len(h.Keys)
	res.Stats = report.Stats{Txns: len(h.Txns), Committed: len(h.Txns) - res.Skipped, Sessions: len(h.Sessions), Keys: nk}
	for i := range h.Txns {
		res.Stats.Ops += len(h.Txns[i].Ops)
	}
	return res, nil
}

// events returns the start and commit events of the committed, timestamped transactions
// (one point event where they coincide), unsorted; it reports a commit before its start
// at once. skipped counts the transactions left out, missing those committed without
// timestamps.
func (c *chronos) events() (evs []event, skipped, missing int) {
	h := c.h
	evs = make([]event, 0, 2*len(h.Txns))
	for i := range h.Txns {
		t := &h.Txns[i]
		if t.Committed() && !t.HasTimestamps {
			missing++
		}
		if !t.Committed() || !t.HasTimestamps {
			skipped++
			continue
		}
		if t.Commit.Less(t.Start) {
			c.out = append(c.out, Violation{Kind: anomaly.TimestampOrder, Txn: h.Name(t.ID), TxnID: t.ID, OtherID: -1, TxnStart: t.Start, TxnCommit: t.Commit})
			continue
		}
		ck, snap := positions(t.Start, t.Commit, c.m.ser)
		if ck == snap {
			evs = append(evs, event{ck.ts, ck.ph, phPoint, t.ID})
		} else {
			evs = append(evs, event{snap.ts, snap.ph, phStart, t.ID}, event{ck.ts, ck.ph, phCommit, t.ID})
		}
	}
	return evs, skipped, missing
}

// initKeys sets every key's final value to its initial value, with no writer yet.
func (c *chronos) initKeys() {
	nk := len(c.h.Keys)
	c.fv = make([]history.Value, nk)
	c.fw = make([]history.TxnID, nk)
	c.fl = make([][]history.Value, nk)
	c.ongoing = make([][]history.TxnID, nk)
	for k := range nk {
		c.fv[k] = c.h.InitialValue(history.Key(k))
		c.fw[k] = -1
	}
}

// replay applies one event: a start takes the snapshot and checks the reads (and, but for
// serializability, marks the writes ongoing), a commit installs the writes.
func (c *chronos) replay(e event) {
	switch e.do {
	case phStart:
		x := c.start(e.t)
		c.reads(e.t, x)
		if !c.m.ser {
			for _, w := range x.writes {
				c.ongoing[w.k] = append(c.ongoing[w.k], e.t)
			}
		}
	case phCommit:
		c.commit(e.t, c.live[e.t])
	case phPoint:
		x := c.start(e.t)
		c.reads(e.t, x)
		c.commit(e.t, x)
	}
}

func (c *chronos) name(t history.TxnID) history.Datum {
	if c.names == nil {
		c.names = make([]history.Datum, len(c.h.Txns))
	}
	if c.names[t].IsNil() {
		c.names[t] = nameDatum(c.h, t)
	}
	return c.names[t]
}

// nameDatum is the datum a transaction is known by: its source id, else "T<id>".
func nameDatum(h *history.History, t history.TxnID) history.Datum {
	if d := h.Txns[t].Source; !d.IsNil() {
		return d
	}
	return history.Str("T" + strconv.Itoa(int(t)))
}

func (c *chronos) cmpEvent(a, b event) int {
	if r := a.ts.Compare(b.ts); r != 0 {
		return r
	}
	if a.ph != b.ph {
		return int(a.ph) - int(b.ph)
	}
	if a.t == b.t {
		return 0
	}
	if r := c.name(a.t).Compare(c.name(b.t)); r != 0 {
		return r
	}
	return cmp.Compare(a.t, b.t)
}

func (c *chronos) start(t history.TxnID) *xtxn {
	var x *xtxn
	if n := len(c.free); n > 0 {
		x, c.free = c.free[n-1], c.free[:n-1]
	} else {
		x = &xtxn{}
	}
	c.ints = compile(c.h, &c.h.Txns[t], x, c.ints[:0])
	for _, f := range c.ints {
		v := c.viol(anomaly.Internal, t, -1)
		v.Key, v.HasKey, v.Observed, v.Expected = c.h.Key(f.k), true, f.observed, f.expected
		c.out = append(c.out, v)
	}
	c.live[t] = x
	return x
}

func (c *chronos) viol(k anomaly.Kind, t, o history.TxnID) Violation {
	h := c.h
	v := Violation{Kind: k, Txn: h.Name(t), TxnID: t, OtherID: o, TxnStart: h.Txns[t].Start, TxnCommit: h.Txns[t].Commit}
	if o >= 0 {
		v.Other, v.OtherStart, v.OtherCommit = h.Name(o), h.Txns[o].Start, h.Txns[o].Commit
	} else if k == anomaly.ExtViolation {
		v.Other = Initial
	}
	return v
}

// reads checks t's external reads against the frontier.
func (c *chronos) reads(t history.TxnID, x *xtxn) {
	for _, r := range x.reads {
		if r.isL {
			if slices.Equal(r.list, c.fl[r.k]) {
				continue
			}
		} else if r.v == c.fv[r.k] {
			continue
		}
		c.ext(t, r)
	}
}

func (c *chronos) ext(t history.TxnID, r xread) {
	h := c.h
	w := c.fw[r.k]
	v := c.viol(anomaly.ExtViolation, t, -1)
	v.Key, v.HasKey = h.Key(r.k), true
	if w >= 0 {
		v.Writer = h.Name(w)
	} else {
		v.Writer = Initial
	}
	if r.isL {
		v.Observed, v.Expected = renderValues(h, r.list), renderValues(h, c.fl[r.k])
	} else {
		v.Observed, v.Expected = h.Value(r.v).String(), h.Value(c.fv[r.k]).String()
	}
	c.classify(&v, t, r)
	c.out = append(c.out, v)
}

// classify finds where an EXT read's value came from.
func (c *chronos) classify(v *Violation, t history.TxnID, r xread) {
	h := c.h
	val, initial := r.v, false
	if r.isL {
		if len(r.list) == 0 {
			initial = true
		} else {
			val = r.list[len(r.list)-1]
		}
	} else {
		initial = val == h.InitialValue(r.k)
	}
	before, unc, after := c.writersOf(t, r.k, val)
	pick := func(w history.TxnID, k ExtKind) {
		v.Ext, v.OtherID = k, w
		v.Other, v.OtherStart, v.OtherCommit = h.Name(w), h.Txns[w].Start, h.Txns[w].Commit
	}
	switch {
	case before >= 0:
		pick(before, ExtBefore)
	case initial:
		v.Ext, v.Other = ExtBefore, Initial
	case unc >= 0:
		pick(unc, ExtUncommitted)
	case after >= 0:
		pick(after, ExtAfter)
	default:
		v.Ext, v.Other = ExtNever, ""
	}
}

// writersOf returns the transactions other than t that wrote val to k (a list: appended
// it), or -1: the last one committed before t's snapshot, the first one committed after it
// that started before it (uncommitted at the snapshot), and the first one that started
// after it.
func (c *chronos) writersOf(t history.TxnID, k history.Key, val history.Value) (before, unc, after history.TxnID) {
	h := c.h
	if !c.widxOK {
		c.buildIndex()
	}
	_, rsnap := positions(h.Txns[t].Start, h.Txns[t].Commit, c.m.ser)
	before, unc, after = -1, -1, -1
	for _, w := range c.widx[[2]int32{int32(k), int32(val)}] {
		if w == t {
			continue
		}
		wt := &h.Txns[w]
		wck, wsnap := positions(wt.Start, wt.Commit, c.m.ser)
		switch {
		case c.less(wck, w, rsnap, t):
			if before < 0 || c.lessCk(before, w) {
				before = w
			}
		case c.less(wsnap, w, rsnap, t):
			if unc < 0 || c.lessCk(w, unc) {
				unc = w
			}
		default:
			if after < 0 || c.lessCk(w, after) {
				after = w
			}
		}
	}
	return before, unc, after
}

func (c *chronos) less(a pos, at history.TxnID, b pos, bt history.TxnID) bool {
	if r := a.cmp(b); r != 0 {
		return r < 0
	}
	return c.cmpEvent(event{ts: a.ts, ph: a.ph, t: at}, event{ts: b.ts, ph: b.ph, t: bt}) < 0
}

func (c *chronos) lessCk(a, b history.TxnID) bool {
	ta, tb := &c.h.Txns[a], &c.h.Txns[b]
	ca, _ := positions(ta.Start, ta.Commit, c.m.ser)
	cb, _ := positions(tb.Start, tb.Commit, c.m.ser)
	return c.less(ca, a, cb, b)
}

func (c *chronos) buildIndex() {
	c.widxOK = true
	c.widx = make(map[[2]int32][]history.TxnID)
	var x xtxn
	for i := range c.h.Txns {
		t := &c.h.Txns[i]
		if !t.Committed() || !t.HasTimestamps {
			continue
		}
		compile(c.h, t, &x, nil)
		for _, w := range x.writes {
			if w.isL {
				for _, a := range w.app {
					c.widx[[2]int32{int32(w.k), int32(a)}] = append(c.widx[[2]int32{int32(w.k), int32(a)}], t.ID)
				}
			} else {
				c.widx[[2]int32{int32(w.k), int32(w.v)}] = append(c.widx[[2]int32{int32(w.k), int32(w.v)}], t.ID)
			}
		}
	}
}

// commit applies t's writes: NOCONFLICT against writers still ongoing, equal commit
// timestamps, then the frontier. x is released.
func (c *chronos) commit(t history.TxnID, x *xtxn) {
	h := c.h
	tt := &h.Txns[t]
	for _, w := range x.writes {
		k := w.k
		if !c.m.ser {
			c.noConflict(t, k)
		}
		if p := c.fw[k]; p >= 0 && h.Txns[p].Commit == tt.Commit {
			c.tie(t, p, k)
		}
		c.fw[k] = t
		if w.isL {
			c.fl[k] = append(c.fl[k], w.app...)
		} else {
			c.fv[k] = w.v
		}
	}
	c.live[t] = nil
	c.free = append(c.free, x)
}

// noConflict checks NOCONFLICT for t's write of k: t is no longer an ongoing writer of k,
// and every writer of k still ongoing conflicts with it.
func (c *chronos) noConflict(t history.TxnID, k history.Key) {
	h := c.h
	og := c.ongoing[k]
	for i := 0; i < len(og); i++ {
		if og[i] == t {
			og = slices.Delete(og, i, i+1)
			i--
			continue
		}
	}
	for _, o := range og {
		v := c.viol(anomaly.NoConflict, t, o)
		v.Key, v.HasKey = h.Key(k), true
		c.out = append(c.out, v)
	}
	c.ongoing[k] = og
}

// tie reports t's write of k, which commits at the same timestamp as p, the last writer of
// k, against every writer of k at that timestamp.
func (c *chronos) tie(t, p history.TxnID, k history.Key) {
	h := c.h
	tt := &h.Txns[t]
	run := c.ties[k]
	if len(run) == 0 || h.Txns[run[0]].Commit != tt.Commit {
		run = append(run[:0], p)
	}
	for _, o := range run {
		v := c.viol(anomaly.TimestampOrder, t, o)
		v.Key, v.HasKey = h.Key(k), true
		c.out = append(c.out, v)
	}
	if c.ties == nil {
		c.ties = make(map[history.Key][]history.TxnID)
	}
	c.ties[k] = append(run, t)
}

// sessions checks SESSION: consecutive committed transactions of a session.
func (c *chronos) sessions() {
	h := c.h
	for _, s := range h.Sessions {
		prev := history.TxnID(-1)
		for _, t := range s.Txns {
			tt := &h.Txns[t]
			if !tt.Committed() || !tt.HasTimestamps || tt.Commit.Less(tt.Start) {
				continue
			}
			if prev >= 0 {
				pt := &h.Txns[prev]
				pck, _ := positions(pt.Start, pt.Commit, c.m.ser)
				ck, snap := positions(tt.Start, tt.Commit, c.m.ser)
				if c.m.ser {
					snap = ck
				}
				if !c.less(pck, prev, snap, t) {
					c.out = append(c.out, c.viol(anomaly.SessionViolation, t, prev))
				}
			}
			prev = t
		}
	}
}
