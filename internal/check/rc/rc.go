// Package rc decides read committed in Adya's sense (PL-2: no G0, G1a, G1b or G1c) for
// histories of item and row reads and writes.
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
// write-read graph is acyclic (session order and anti-dependencies play no part).
//
// Reads are resolved as the black-box checkers resolve them ([deps.Build]): by explicit
// source, or by value among the transactions whose last write of the key wrote it.
// Transactions of unknown outcome count if they may have been read from. When a read may
// have read from several transactions (duplicate values), the check uses the union of the
// candidate edges to pass (every choice is then acyclic) and the certain edges to fail
// (every choice has the cycle), and says Unknown in between.
//
// List appends fix part of the version order: a list read shows the appends of its key in
// order, so each appender in it directly follows the one before (write-write edges; deps
// gives them as the synthetic reads of its list model), and every appender it does not show
// comes after the last one it shows. Those edges join the write-read ones; the order left
// free is still free, so the argument above holds with them. Predicate operations add
// dependencies this package does not model yet: for histories with them it runs the basic
// checks only.
package rc

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"isovet/history"
	"isovet/internal/anomaly"
	"isovet/internal/check/basic"
	"isovet/internal/deps"
	"isovet/internal/graph"
	"isovet/internal/report"
)

// Levels are the levels this package decides.
var Levels = []anomaly.Level{anomaly.ReadCommitted}

// Options configure [Check].
type Options struct {
	MaxAnomalies int // 0: 20
}

// Check decides read committed for h.
func Check(ctx context.Context, h *history.History, level anomaly.Level, o Options) (*report.Report, error) {
	if level != anomaly.ReadCommitted {
		return nil, fmt.Errorf("rc: level %s is not read committed", level)
	}
	if o.MaxAnomalies <= 0 {
		o.MaxAnomalies = 20
	}
	rep, err := basic.Run(ctx, h, level, basic.Options{MaxAnomalies: o.MaxAnomalies})
	if rep != nil {
		rep.Checker = "rc"
	}
	if err != nil || rep.Verdict == report.Fail {
		return rep, err
	}
	if kind, ok := unmodelled(h); ok {
		rep.Verdict = report.Unknown
		rep.Notes = append(rep.Notes, fmt.Sprintf("the history has %s, whose version order and dependencies the read-committed checker does not model yet: only the basic checks ran, and they found nothing", kind))
		return rep, nil
	}
	d, err := deps.BuildContext(ctx, h, deps.Options{})
	if errors.Is(err, deps.ErrUnsupported) {
		rep.Verdict = report.Unknown
		rep.Notes = append(rep.Notes, "the read-committed checker cannot decide this history: "+err.Error())
		return rep, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			rep.Verdict = report.Unknown
			rep.Notes = append(rep.Notes, "the check was stopped before it could decide: "+err.Error())
			return rep, context.Cause(ctx)
		}
		return nil, err
	}
	rep.Notes = append(rep.Notes, d.Notes...)
	for _, a := range d.Findings {
		if level.Forbids(a.Kind) && len(rep.Anomalies) < o.MaxAnomalies {
			rep.Anomalies = append(rep.Anomalies, a)
		}
	}
	if len(rep.Anomalies) > 0 {
		rep.Verdict = report.Fail
		return rep, nil
	}

	// The certain write-read edges, and every edge some choice of writers could give.
	n := int32(d.N)
	certain, possible := graph.New(d.N), graph.New(d.N)
	edgeOf := make(map[[2]int32]deps.Edge)
	addCertain := func(e deps.Edge) {
		certain.AddEdge(e.From, e.To)
		// A read is the plainer reason: keep it over a write order between the same two.
		if old, ok := edgeOf[[2]int32{e.From, e.To}]; !ok || old.Rel != report.WR && e.Rel == report.WR {
			edgeOf[[2]int32{e.From, e.To}] = e
		}
	}
	for _, e := range d.Known {
		if (e.Rel == report.WR || e.Rel == report.WW) && e.From < n && e.To < n {
			addCertain(e)
		}
	}
	for _, e := range d.Guarded {
		if (e.Rel == report.WR || e.Rel == report.WW) && e.From < n && e.To < n {
			possible.AddEdge(e.From, e.To)
		}
	}
	lastShown := make(map[[2]int32]string) // list edges: why
	for _, le := range listEdges(d, true) {
		addCertain(le.Edge)
		lastShown[[2]int32{le.From, le.To}] = le.why
	}
	for _, le := range listEdges(d, false) {
		possible.AddEdge(le.From, le.To)
	}
	for _, e := range d.Known {
		if (e.Rel == report.WR || e.Rel == report.WW) && e.From < n && e.To < n {
			possible.AddEdge(e.From, e.To)
		}
	}
	choices := 0
	for ri := range d.Reads {
		r := &d.Reads[ri]
		if d.Status[r.Txn] == deps.Excluded {
			continue
		}
		if len(r.Cands) > 1 || d.Status[r.Txn] == deps.Maybe {
			choices++
		}
		for _, w := range r.Cands {
			if w < n && w != r.Txn && d.Status[w] != deps.Excluded {
				possible.AddEdge(w, r.Txn)
			}
		}
	}
	if cyc := graph.FindCycle(certain); cyc != nil {
		rep.Verdict = report.Fail
		rep.Anomalies = append(rep.Anomalies, g1c(d, cyc, edgeOf, lastShown))
		return rep, nil
	}
	if graph.FindCycle(possible) != nil {
		rep.Verdict = report.Unknown
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d reads could have read from more than one transaction (repeated values, or writers of unknown outcome): some choices close a cycle of write-read dependencies and the certain ones do not; the read-committed checker does not search the choices yet", choices))
		return rep, nil
	}
	rep.Verdict = report.Pass
	rep.Notes = append(rep.Notes, "no transaction read, directly or through others, from a transaction that read from it: the write-read dependencies are acyclic, so ordering every key's versions by an order that follows them gives no G0 or G1c cycle")
	return rep, nil
}

// unmodelled names the operations of h this package does not model, if any.
func unmodelled(h *history.History) (string, bool) {
	for i := range h.Txns {
		for _, o := range h.Txns[i].Ops {
			if o.Kind == history.OpPredRead || o.Kind == history.OpPredWrite {
				return "predicate operations", true
			}
		}
	}
	return "", false
}

// g1c reports the cycle cyc (a node list, each node's edge to the next, the last's to the
// first) as an anomaly: G1c when some step is a write-read dependency, G0 when all are
// write-write (list orders).
func g1c(d *deps.Deps, cyc []int32, edgeOf map[[2]int32]deps.Edge, lastShown map[[2]int32]string) report.Anomaly {
	h := d.H
	a := report.Anomaly{Kind: anomaly.G0, Key: -1}
	var whys, names []string
	for i, from := range cyc {
		to := cyc[(i+1)%len(cyc)]
		e := edgeOf[[2]int32{from, to}]
		st := report.Step{From: history.TxnID(from), To: history.TxnID(to), Rel: e.Rel, Key: e.Key, Value: e.Value, Value2: e.Value2}
		switch why, ok := lastShown[[2]int32{from, to}]; {
		case ok:
			st.Why = why
		case e.Rel == report.WR:
			if ls, ok := d.AppendStep(st, e.Via, false); ok {
				st = ls
			} else {
				st.Why = fmt.Sprintf("%s read %s, which %s wrote", h.Name(st.To), h.KV(e.Key, e.Value), h.Name(st.From))
			}
		default:
			st.Why = fmt.Sprintf("%s overwrote %s's %s with %s", h.Name(st.To), h.Name(st.From), h.KV(e.Key, e.Value), h.KV(e.Key, e.Value2))
		}
		if st.Rel == report.WR {
			a.Kind = anomaly.G1c
		}
		a.Cycle = append(a.Cycle, st)
		a.Txns = append(a.Txns, st.From)
		whys = append(whys, st.Why)
		names = append(names, fmt.Sprintf("%s -%s->", h.Name(st.From), st.Rel))
	}
	names = append(names, h.Name(history.TxnID(cyc[0])))
	what := "a cycle of write-read and write-write dependencies, which read committed forbids (circular information flow, G1c)"
	if a.Kind == anomaly.G0 {
		what = "a cycle of write-write dependencies, which read committed forbids (G0)"
	}
	a.Message = fmt.Sprintf("%s; so %s, %s", strings.Join(whys, "; "), strings.Join(names, " "), what)
	return a
}

// listEdge is a write-write edge a list read implies: From's append is the last the read
// shows, To appended to the key and the read does not show it.
type listEdge struct {
	deps.Edge
	why string
}

// listEdges returns, for each list key, the edges from the appender of the last element of
// its longest read to every appender that read does not show: a list read shows a prefix
// of the version order. With certain, only committed readers and appenders count; else
// every transaction that may have committed.
func listEdges(d *deps.Deps, certain bool) []listEdge {
	counts := func(t int32) bool {
		if certain {
			return d.Status[t] == deps.Committed
		}
		return d.Status[t] != deps.Excluded
	}
	longest := make(map[history.Key]int) // key: index into d.Reads
	for ri := range d.Reads {
		r := &d.Reads[ri]
		if r.Op < 0 || len(r.Prefix) == 0 || !counts(r.Txn) || len(r.Cands) != 1 || r.Cands[0] >= int32(d.N) {
			continue
		}
		if li, ok := longest[r.Key]; !ok || len(d.Reads[li].Prefix) < len(r.Prefix) {
			longest[r.Key] = ri
		}
	}
	var out []listEdge
	for k, ri := range longest {
		r := &d.Reads[ri]
		last := r.Cands[0]
		if !counts(last) {
			continue
		}
		shown := map[int32]bool{last: true, r.Txn: true}
		for _, w := range r.Needs {
			shown[w] = true
		}
		for _, w := range d.Writers[k] {
			if shown[w] || !counts(w) {
				continue
			}
			mine, _ := d.WriteOf(w, k)
			e := deps.Edge{From: last, To: w, Rel: report.WW, Key: k, Value: r.Value, Value2: mine.Value, Via: -1}
			name := func(t int32) string { return d.H.Name(history.TxnID(t)) }
			why := fmt.Sprintf("%s appended %s after %s's %s (%s's read of %v ends with %s's append and does not show %s's)",
				name(w), d.H.KV(k, mine.Value), name(last), d.H.KV(k, r.Value), name(r.Txn), d.H.Key(k), name(last), name(w))
			out = append(out, listEdge{e, why})
		}
	}
	return out
}
