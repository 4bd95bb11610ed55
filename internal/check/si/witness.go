package si

import (
	"fmt"
	"slices"
	"strings"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/graph"
	"github.com/isovet/isovet/internal/polygraph"
	"github.com/isovet/isovet/internal/report"
)

// shortestCycle returns the shortest cycle of the split graph (known edges plus the raw
// edges extra) through one of extra's edges, as raw edges in order; nil if there is none.
func (m *model) shortestCycle(extra []deps.Edge) []deps.Edge {
	g := m.known()
	xwhy, adj, xs := m.splitExtra(extra)
	var best []int32
	for _, e := range xs {
		path := graph.ShortestPathWith(g, adj, e[1], e[0]) // e[1] … e[0]
		if path == nil {
			continue
		}
		cyc := append([]int32{e[0]}, path[:len(path)-1]...)
		if best == nil || m.rawLen(cyc) < m.rawLen(best) {
			best = cyc
		}
	}
	if best == nil {
		return nil
	}
	return m.expand(best, xwhy)
}

// splitExtra returns the raw edges extra (each once, self-loops left out) by key, as
// split-graph adjacency, and as split-graph edges in order.
func (m *model) splitExtra(extra []deps.Edge) (xwhy map[ekey]deps.Edge, adj map[int32][]int32, xs [][2]int32) {
	xwhy = make(map[ekey]deps.Edge)
	adj = make(map[int32][]int32)
	for _, e := range extra {
		if e.From == e.To {
			continue
		}
		k := ekey{e.From, e.To, m.edgeKind(e)}
		if _, ok := xwhy[k]; ok {
			continue
		}
		xwhy[k] = e
		x, y := m.split(e)
		adj[x] = append(adj[x], y)
		xs = append(xs, [2]int32{x, y})
	}
	return xwhy, adj, xs
}

// rawLen is the number of raw edges on a split-graph node cycle.
func (m *model) rawLen(cyc []int32) int {
	n := 0
	for i, x := range cyc {
		if _, _, _, ok := m.raw(x, cyc[(i+1)%len(cyc)]); ok {
			n++
		}
	}
	return n
}

// cycleWith is shortestCycle for pruning's violations.
func (m *model) cycleWith(es []deps.Edge) []deps.Edge { return m.shortestCycle(es) }

// expand turns a node cycle of the split graph into the raw edges it is made of.
func (m *model) expand(cyc []int32, xwhy map[ekey]deps.Edge) []deps.Edge {
	var out []deps.Edge
	for i, x := range cyc {
		u, v, k, ok := m.raw(x, cyc[(i+1)%len(cyc)])
		if !ok {
			continue
		}
		e, found := m.why[ekey{u, v, k}]
		if !found {
			e, found = xwhy[ekey{u, v, k}]
		}
		if !found {
			e, found = m.clockReason(u, v, k)
		}
		if !found {
			e = deps.Edge{From: u, To: v, Key: -1, Via: -1}
		}
		out = append(out, e)
	}
	return out
}

// witness turns raw cycles into report data.
type witness struct {
	m *model
	h *history.History
}

func (w *witness) isTxn(u int32) bool { return u < int32(w.m.d.N) }

// steps turns a raw cycle into steps between transactions, collapsing virtual nodes: a
// run through time nodes is one rt step, reader→ρ(k)→writer one rw step.
func (w *witness) steps(cyc []deps.Edge) []report.Step {
	start := slices.IndexFunc(cyc, func(e deps.Edge) bool { return w.isTxn(e.From) })
	if start < 0 {
		return nil
	}
	cyc = append(slices.Clone(cyc[start:]), cyc[:start]...)
	d := w.m.d
	var out []report.Step
	for i := 0; i < len(cyc); {
		e := cyc[i]
		st, j := w.run(cyc, i)
		i = j + 1
		forced := w.m.forced[ekey{e.From, e.To, w.m.edgeKind(e)}]
		if ls, ok := d.AppendStep(st, e.Via, forced); ok {
			// A list order, not a read: a write dependency (see deps.AppendStep).
			out = append(out, ls)
			continue
		}
		st.Why = w.why(st, e, forced)
		out = append(out, st)
	}
	return out
}

// run returns the step that the edges of cyc from i to j make, j the first at or after i
// that enters a transaction (or the last): through time nodes an rt step, through ρ(k) an
// rw step; it has no key between sessions or in real time. Its Why is left to fill.
func (w *witness) run(cyc []deps.Edge, i int) (report.Step, int) {
	e := cyc[i]
	j := i
	for j < len(cyc)-1 && !w.isTxn(cyc[j].To) {
		j++
	}
	last := cyc[j]
	st := report.Step{From: history.TxnID(e.From), To: history.TxnID(last.To), Rel: e.Rel, Key: e.Key, Value: e.Value, Value2: e.Value2}
	if j > i {
		switch w.m.d.Nodes[e.To].Kind {
		case deps.NodeTime:
			st.Rel, st.Key = report.RT, -1
		case deps.NodeInitVersion:
			st.Rel, st.Key, st.Value, st.Value2 = report.RW, e.Key, e.Value, last.Value2
		}
	}
	if st.Rel == report.SO || st.Rel == report.RT {
		st.Key = -1
	}
	return st, j
}

func (w *witness) name(t history.TxnID) string { return w.h.Name(t) }

func (w *witness) kv(k history.Key, v history.Value) string {
	return w.h.KV(k, v)
}

// why says in a sentence why a step holds.
func (w *witness) why(s report.Step, e deps.Edge, forced bool) string {
	a, b := w.name(s.From), w.name(s.To)
	var out string
	switch s.Rel {
	case report.WR:
		out = fmt.Sprintf("%s read %s, which %s wrote", b, w.kv(s.Key, s.Value), a)
	case report.WW:
		out = w.whyWW(s, a, b, forced)
	case report.RW:
		out = w.whyRW(s, e, b, forced)
	case report.SO:
		out = fmt.Sprintf("%s precedes %s in their session", a, b)
	case report.RT:
		out = fmt.Sprintf("%s ended before %s began (real time)", a, b)
	default:
		out = fmt.Sprintf("%s precedes %s", a, b)
	}
	if forced {
		out += deps.RuledOut
	}
	return out
}

// whyWW says why write-write step s (from a to b) holds: b overwrote a's value, and, unless
// pruning forced the order, what fixes it.
func (w *witness) whyWW(s report.Step, a, b string, forced bool) string {
	out := fmt.Sprintf("%s overwrote %s's %s with %s", b, a, w.kv(s.Key, s.Value), w.kv(s.Key, s.Value2))
	if !forced {
		out += w.m.d.OrderWhy(int32(s.From), int32(s.To), s.Key)
	}
	return out
}

// whyRW says why anti-dependency s (raw edge e, to b) holds: its reader read a version b
// overwrote, and, unless pruning forced the order, what puts b after the version's writer.
func (w *witness) whyRW(s report.Step, e deps.Edge, b string, forced bool) string {
	out := fmt.Sprintf("%s, which %s overwrote with %s", w.m.d.ReadPhrase(int32(s.From), e.Via, s.Key, s.Value), b, w.kv(s.Key, s.Value2))
	if !forced && e.Via >= 0 && e.Via < int32(w.m.d.N) {
		out += w.m.d.OrderWhy(e.Via, int32(s.To), s.Key)
	}
	return out
}

// chain renders a cycle as "A -ww-> B -rw-> A".
func (w *witness) chain(st []report.Step) string {
	if len(st) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(w.name(st[0].From))
	for _, s := range st {
		fmt.Fprintf(&b, " -%s-> %s", s.Rel, w.name(s.To))
	}
	return b.String()
}

// option describes one alternative of a choice.
func (w *witness) option(o polygraph.Option) string {
	m := w.m
	if o.WW >= 0 {
		c := &m.ww[o.WW]
		a, b := c.A, c.B
		if o.First == b {
			a, b = b, a
		}
		var ks []string
		for _, k := range c.Keys {
			ks = append(ks, fmt.Sprint(w.h.Key(k)))
		}
		return fmt.Sprintf("%s's write of %s came before %s's", w.name(history.TxnID(a)), strings.Join(ks, ", "), w.name(history.TxnID(b)))
	}
	if o.WR >= 0 {
		rc := &m.wr[o.WR]
		r := &m.d.Reads[rc.Read]
		src := "the initial state"
		if o.Writer != m.d.Init {
			src = w.name(history.TxnID(o.Writer))
		}
		return fmt.Sprintf("%s read %s from %s", w.name(history.TxnID(r.Txn)), w.kv(r.Key, r.Value), src)
	}
	return "the known dependencies"
}

// anomaly builds the report anomaly from the alternatives that were ruled out: the
// shortest cycle is the anomaly's; every alternative is a RuledOut sentence; the
// transactions of all of them are the anomaly's.
func (w *witness) anomaly(alts []polygraph.Alternative) report.Anomaly {
	alts = polygraph.Useful(alts)
	best := w.bestCycle(alts)
	if best < 0 {
		return report.Anomaly{Kind: anomaly.GSingle, Key: -1, Message: "no snapshot-isolated execution explains every read (no cycle was extracted)"}
	}
	st := w.steps(alts[best].Cycle)
	kind, also := classify(st)
	a := report.Anomaly{Kind: kind, Also: also, Key: -1, Cycle: st}
	seen := make(map[history.TxnID]bool)
	a.Txns = addTxns(a.Txns, seen, st)
	lead := ""
	choices := len(alts) > 1 || alts[0].Options[0].WW >= 0 || alts[0].Options[0].WR >= 0
	if choices {
		lead = fmt.Sprintf("no snapshot-isolated execution explains what these transactions read: each of the %d alternatives below closes a cycle with no two adjacent anti-dependencies, e.g. ", len(alts))
	}
	a.Message = lead + strings.Join(whys(st), "; ") + "; so " + w.chain(st) + ", a cycle snapshot isolation forbids (" + kind.Info().Title + ")"
	if choices {
		for _, alt := range alts {
			cs := w.steps(alt.Cycle)
			a.Txns = addTxns(a.Txns, seen, cs)
			a.RuledOut = append(a.RuledOut, w.ruledOut(alt, cs))
		}
	}
	return a
}

// bestCycle is the index of the alternative whose cycle the anomaly shows, or -1 if none
// has a cycle. PolySI's Resolve step: edges pruning forced are effects of the violation,
// not its cause; prefer the cycle with the fewest of them, then the shortest.
func (w *witness) bestCycle(alts []polygraph.Alternative) int {
	best := -1
	for i, a := range alts {
		if a.Cycle == nil {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		fa, fb := w.forcedEdges(a.Cycle), w.forcedEdges(alts[best].Cycle)
		if fa < fb || (fa == fb && len(a.Cycle) < len(alts[best].Cycle)) {
			best = i
		}
	}
	return best
}

// forcedEdges counts the edges of cyc that pruning forced.
func (w *witness) forcedEdges(cyc []deps.Edge) int {
	n := 0
	for _, e := range cyc {
		if w.m.forced[ekey{e.From, e.To, w.m.edgeKind(e)}] {
			n++
		}
	}
	return n
}

// addTxns appends to txns the transactions the steps leave from, each once (seen).
func addTxns(txns []history.TxnID, seen map[history.TxnID]bool, st []report.Step) []history.TxnID {
	for _, s := range st {
		if !seen[s.From] {
			seen[s.From] = true
			txns = append(txns, s.From)
		}
	}
	return txns
}

// whys are the steps' reasons.
func whys(st []report.Step) []string {
	var ws []string
	for _, s := range st {
		ws = append(ws, s.Why)
	}
	return ws
}

// ruledOut is the RuledOut sentence of alternative alt, whose cycle has steps cs.
func (w *witness) ruledOut(alt polygraph.Alternative, cs []report.Step) string {
	var opts []string
	for _, o := range alt.Options {
		opts = append(opts, w.option(o))
	}
	if cs == nil {
		return fmt.Sprintf("if %s: ruled out", strings.Join(opts, " and "))
	}
	return fmt.Sprintf("if %s: %s; so %s", strings.Join(opts, " and "), strings.Join(whys(cs), "; "), w.chain(cs))
}
