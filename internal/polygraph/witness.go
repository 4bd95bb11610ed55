package polygraph

import (
	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/graph"
	"github.com/isovet/isovet/internal/report"
)

// Forced reports whether known edge u→v was added by pruning (the other option closed a
// cycle), as opposed to being known from the history itself.
func (p *Polygraph) Forced(u, v int32) bool {
	return p.fixedBy[edgeKey(u, v)]
}

// Alternative is one combination of options for a set of constraints, with the cycle it
// closes.
type Alternative struct {
	Options []Option
	Cycle   []deps.Edge // nil if no cycle was found (should not happen for a true core)
	// SelfContradictory is set when the chosen write orders alone order some transactions
	// in a cycle (A before B, B before C, C before A). No execution makes such a choice, so
	// the alternative explains nothing: witnesses skip it.
	SelfContradictory bool
}

// Useful drops the alternatives whose write orders alone are cyclic: they explain nothing
// (no execution chooses them), so they are kept only if the enumeration, which is capped,
// found nothing else.
func Useful(alts []Alternative) []Alternative {
	var useful []Alternative
	for _, alt := range alts {
		if !alt.SelfContradictory {
			useful = append(useful, alt)
		}
	}
	if len(useful) > 0 {
		return useful
	}
	return alts
}

// MaxAlternatives caps the combinations [Enumerate] lists.
const MaxAlternatives = 64

// Explain enumerates the combinations of options of the given constraints (indexes as in
// [Encoding.MinimalCore]: WW i as i, WR j as len(WW)+j) and, for each, the shortest cycle
// its edges close with the known graph. For a core every combination closes one. Transactions
// of unknown outcome count as committed exactly when a chosen read reads from them. At most
// 64 combinations are enumerated.
func (p *Polygraph) Explain(core []int) []Alternative {
	return Enumerate(p.D, p.WW, p.WR, core, p.alternativeCycle)
}

// Enumerate lists the combinations of options of the constraints core (indexes into ww,
// then len(ww) plus indexes into wr), at most [MaxAlternatives], the first constraint's
// option varying fastest: each as the alternative of its selection, with the cycle cycle
// finds for it and whether its write orders contradict each other. Both checkers explain
// an unsatisfiable core this way; each builds the edges of a selection as its graph has
// them.
func Enumerate(d *deps.Deps, ww []WW, wr []WR, core []int, cycle func(*Selection) []deps.Edge) []Alternative {
	var alts []Alternative
	choice := make([]int, len(core))
	nopt := func(i int) int {
		if core[i] < len(ww) {
			return 2
		}
		return len(wr[core[i]-len(ww)].Cands)
	}
	for len(alts) < MaxAlternatives {
		sel := Select(d, ww, wr, core, choice)
		alts = append(alts, Alternative{Options: sel.Options, Cycle: cycle(sel), SelfContradictory: sel.cyclicOrder()})
		if !nextChoice(choice, nopt) {
			break
		}
	}
	return alts
}

// nextChoice advances choice, an odometer whose digit i counts to nopt(i), to the next
// combination; false after the last.
func nextChoice(choice []int, nopt func(i int) int) bool {
	for i := range choice {
		choice[i]++
		if choice[i] < nopt(i) {
			return true
		}
		choice[i] = 0
	}
	return false
}

// alternativeCycle is the shortest cycle the edges of the selection close with the known
// graph: the chosen write orders' and reads' edges, and the guarded edges of the
// transactions that take part.
func (p *Polygraph) alternativeCycle(sel *Selection) []deps.Edge {
	var extra []deps.Edge
	for _, s := range sel.WW {
		if sel.LivePair(s) {
			extra = p.orientEdges(s.C, s.A, s.B, extra)
		}
	}
	for _, s := range sel.WR {
		extra = p.selectedRead(sel, s, extra)
	}
	for _, e := range p.D.Guarded {
		if sel.LiveEdge(e) {
			extra = append(extra, e)
		}
	}
	return p.shortestCycle(extra)
}

// Ordered is a WW constraint C taken as A before B; ReadFrom is read Read reading from W.
type (
	Ordered struct {
		C    *WW
		A, B int32
	}
	ReadFrom struct{ Read, W int32 }
)

// Selection is one option of each constraint of a core: its options, the write orders and
// reads they choose, and the transactions of unknown outcome a chosen read makes
// committed (its reader and writer).
type Selection struct {
	Options   []Option
	WW        []Ordered
	WR        []ReadFrom
	d         *deps.Deps
	committed map[int32]bool
}

// Select is option choice[i] of every constraint core[i] (indexes as in [Enumerate]).
func Select(d *deps.Deps, ww []WW, wr []WR, core, choice []int) *Selection {
	sel := &Selection{d: d, committed: make(map[int32]bool)}
	for i, ci := range core {
		if ci < len(ww) {
			sel.orders(ww, ci, choice[i])
		} else {
			sel.reads(wr, ci-len(ww), choice[i])
		}
	}
	return sel
}

// orders selects option ch of WW constraint ci: A first (0) or B first (1).
func (sel *Selection) orders(ww []WW, ci, ch int) {
	c := &ww[ci]
	a, b := c.A, c.B
	if ch == 1 {
		a, b = b, a
	}
	sel.Options = append(sel.Options, Option{WW: int32(ci), First: a, WR: -1})
	sel.WW = append(sel.WW, Ordered{c, a, b})
}

// reads selects candidate ch of WR constraint wi.
func (sel *Selection) reads(wr []WR, wi, ch int) {
	rc := &wr[wi]
	w := rc.Cands[ch]
	sel.Options = append(sel.Options, Option{WW: -1, WR: int32(wi), Writer: w})
	sel.WR = append(sel.WR, ReadFrom{rc.Read, w})
	sel.committed[w] = true
	sel.committed[sel.d.Reads[rc.Read].Txn] = true
}

// Live reports whether node t takes part: a committed transaction, one a chosen read
// makes committed, or a node that is no transaction.
func (sel *Selection) Live(t int32) bool {
	d := sel.d
	return t < 0 || t >= int32(d.N) || d.Status[t] == deps.Committed || sel.committed[t]
}

// LivePair reports whether both transactions of a chosen order take part.
func (sel *Selection) LivePair(s Ordered) bool { return sel.Live(s.A) && sel.Live(s.B) }

// LiveEdge reports whether all of e's guards take part.
func (sel *Selection) LiveEdge(e deps.Edge) bool {
	return sel.Live(e.Guards[0]) && sel.Live(e.Guards[1]) && sel.Live(e.Guards[2])
}

// cyclicOrder reports whether the chosen write orders alone are cyclic (see
// [Alternative.SelfContradictory]).
func (sel *Selection) cyclicOrder() bool {
	pairs := make([][2]int32, len(sel.WW))
	for i, w := range sel.WW {
		pairs[i] = [2]int32{w.A, w.B}
	}
	return CyclicOrder(pairs)
}

// selectedRead appends the live edges of chosen read s, and the anti-dependencies a chosen
// write order puts after the version it reads.
func (p *Polygraph) selectedRead(sel *Selection, s ReadFrom, extra []deps.Edge) []deps.Edge {
	d := p.D
	for _, e := range p.readEdges(s.Read, s.W) {
		if sel.LiveEdge(e) {
			extra = append(extra, e)
		}
	}
	r := &d.Reads[s.Read]
	for _, ww := range sel.WW {
		if !sel.LivePair(ww) {
			continue
		}
		for i, k := range ww.C.Keys {
			from, to := ww.C.sideEnds(ww.A, i)
			if k == r.Key && from == s.W && to != r.Txn {
				wb, _ := d.WriteOf(to, k)
				extra = append(extra, deps.Edge{From: r.Txn, To: to, Rel: report.RW, Key: k, Value: r.Value, Value2: wb.Value, Via: s.W, Guards: [3]int32{-1, -1, -1}})
			}
		}
	}
	return extra
}

// CyclicOrder reports whether the chosen orders (pairs {a, b}: a before b) contain a cycle:
// a combination of choices that no execution makes.
func CyclicOrder(pairs [][2]int32) bool {
	succ := make(map[int32][]int32, len(pairs))
	for _, p := range pairs {
		succ[p[0]] = append(succ[p[0]], p[1])
	}
	const (
		white = iota
		grey
		black
	)
	color := make(map[int32]int, len(succ))
	var visit func(u int32) bool
	visit = func(u int32) bool {
		color[u] = grey
		for _, v := range succ[u] {
			switch color[v] {
			case grey:
				return true
			case white:
				if visit(v) {
					return true
				}
			}
		}
		color[u] = black
		return false
	}
	for u := range succ {
		if color[u] == white && visit(u) {
			return true
		}
	}
	return false
}

// shortestCycle finds the shortest cycle through one of extra's edges in the known graph
// plus extra.
func (p *Polygraph) shortestCycle(extra []deps.Edge) []deps.Edge {
	adj := make(map[int32][]int32)
	reason := make(map[uint64]deps.Edge)
	for _, e := range extra {
		k := edgeKey(e.From, e.To)
		if _, ok := reason[k]; !ok {
			reason[k] = e
			adj[e.From] = append(adj[e.From], e.To)
		}
	}
	var best []deps.Edge
	for _, e := range extra {
		if e.From == e.To {
			continue
		}
		path := graph.ShortestPathWith(p.G, adj, e.To, e.From)
		if path == nil {
			continue
		}
		// The cycle is e, then the path e.To → … → e.From.
		cyc := []deps.Edge{e}
		for i := 0; i+1 < len(path); i++ {
			cyc = append(cyc, p.edgeWith(reason, path[i], path[i+1]))
		}
		if best == nil || len(cyc) < len(best) {
			best = cyc
		}
	}
	return best
}

// edgeWith is the reason of edge u→v: known, else one of the extra edges (reason).
func (p *Polygraph) edgeWith(reason map[uint64]deps.Edge, u, v int32) deps.Edge {
	if e, ok := p.Why(u, v); ok {
		return e
	}
	return reason[edgeKey(u, v)]
}
