package polygraph

import (
	"isovet/internal/deps"
	"isovet/internal/report"
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

// maxAlternatives caps the combinations Explain enumerates.
const maxAlternatives = 64

// Explain enumerates the combinations of options of the given constraints (indexes as in
// [Encoding.MinimalCore]: WW i as i, WR j as len(WW)+j) and, for each, the shortest cycle
// its edges close with the known graph. For a core every combination closes one. Transactions
// of unknown outcome count as committed exactly when a chosen read reads from them. At most
// 64 combinations are enumerated.
func (p *Polygraph) Explain(core []int) []Alternative {
	var alts []Alternative
	choice := make([]int, len(core))
	nopt := func(i int) int {
		if core[i] < len(p.WW) {
			return 2
		}
		return len(p.WR[core[i]-len(p.WW)].Cands)
	}
	for len(alts) < maxAlternatives {
		alts = append(alts, p.alternative(core, choice))
		// Next combination.
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

// alternative is the alternative the core's constraints take with the given choices: its
// options, the shortest cycle their edges close, and whether its write orders contradict
// each other.
func (p *Polygraph) alternative(core []int, choice []int) Alternative {
	ab := &altBuilder{p: p, committed: make(map[int32]bool)}
	for i, ci := range core {
		ab.choose(ci, choice[i])
	}
	ab.orientedEdges()
	for _, s := range ab.wrSel {
		ab.readEdges(s)
	}
	for _, e := range p.D.Guarded {
		ab.addIfLive(e)
	}
	ab.alt.Cycle = p.shortestCycle(ab.extra)
	pairs := make([][2]int32, len(ab.wwSel))
	for i, w := range ab.wwSel {
		pairs[i] = [2]int32{w.a, w.b}
	}
	ab.alt.SelfContradictory = CyclicOrder(pairs)
	return ab.alt
}

// wwChoice is a WW pair ordered a before b; wrChoice is read ri reading from w.
type (
	wwChoice struct {
		c    *WW
		a, b int32
	}
	wrChoice struct{ ri, w int32 }
)

// altBuilder is the state of [Polygraph.alternative].
type altBuilder struct {
	p         *Polygraph
	alt       Alternative
	extra     []deps.Edge
	committed map[int32]bool // transactions a chosen read makes committed
	wwSel     []wwChoice
	wrSel     []wrChoice
}

// choose records choice ch of constraint ci (a WW index, or len(WW) plus a WR index).
func (ab *altBuilder) choose(ci, ch int) {
	p := ab.p
	if ci < len(p.WW) {
		c := &p.WW[ci]
		a, b := c.A, c.B
		if ch == 1 {
			a, b = b, a
		}
		ab.alt.Options = append(ab.alt.Options, Option{WW: int32(ci), First: a, WR: -1})
		ab.wwSel = append(ab.wwSel, wwChoice{c, a, b})
		return
	}
	wi := ci - len(p.WW)
	rc := &p.WR[wi]
	w := rc.Cands[ch]
	ab.alt.Options = append(ab.alt.Options, Option{WW: -1, WR: int32(wi), Writer: w})
	ab.wrSel = append(ab.wrSel, wrChoice{rc.Read, w})
	ab.committed[w] = true
	ab.committed[p.D.Reads[rc.Read].Txn] = true
}

// live reports whether transaction t (or a non-transaction node) takes part.
func (ab *altBuilder) live(t int32) bool {
	d := ab.p.D
	return t < 0 || t >= int32(d.N) || d.Status[t] == deps.Committed || ab.committed[t]
}

// livePair reports whether both transactions of a chosen order take part.
func (ab *altBuilder) livePair(s wwChoice) bool { return ab.live(s.a) && ab.live(s.b) }

// addIfLive adds edge e if all its guards take part.
func (ab *altBuilder) addIfLive(e deps.Edge) {
	if ab.live(e.Guards[0]) && ab.live(e.Guards[1]) && ab.live(e.Guards[2]) {
		ab.extra = append(ab.extra, e)
	}
}

// orientedEdges adds the edges of each chosen write order between live transactions.
func (ab *altBuilder) orientedEdges() {
	for _, s := range ab.wwSel {
		if ab.livePair(s) {
			ab.extra = ab.p.orientEdges(s.c, s.a, s.b, ab.extra)
		}
	}
}

// readEdges adds the edges of chosen read s, and the anti-dependencies a chosen write order
// puts after the version it reads.
func (ab *altBuilder) readEdges(s wrChoice) {
	d := ab.p.D
	for _, e := range ab.p.readEdges(s.ri, s.w) {
		ab.addIfLive(e)
	}
	r := &d.Reads[s.ri]
	for _, ww := range ab.wwSel {
		if !ab.livePair(ww) {
			continue
		}
		for i, k := range ww.c.Keys {
			from, to := ww.c.sideEnds(ww.a, i)
			if k == r.Key && from == s.w && to != r.Txn {
				wb, _ := d.WriteOf(to, k)
				ab.extra = append(ab.extra, deps.Edge{From: r.Txn, To: to, Rel: report.RW, Key: k, Value: r.Value, Value2: wb.Value, Via: s.w, Guards: [3]int32{-1, -1, -1}})
			}
		}
	}
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
	edge := func(u, v int32) deps.Edge {
		if e, ok := p.Why(u, v); ok {
			return e
		}
		return reason[edgeKey(u, v)]
	}
	var best []deps.Edge
	for _, e := range extra {
		if e.From == e.To {
			continue
		}
		// BFS from e.To to e.From.
		prev := map[int32]int32{e.To: e.To}
		q := []int32{e.To}
		found := false
		for len(q) > 0 && !found {
			u := q[0]
			q = q[1:]
			visit := func(v int32) {
				if found {
					return
				}
				if _, ok := prev[v]; ok {
					return
				}
				prev[v] = u
				if v == e.From {
					found = true
					return
				}
				q = append(q, v)
			}
			for _, v := range p.G.Out(u) {
				visit(v)
			}
			for _, v := range adj[u] {
				visit(v)
			}
		}
		if !found {
			continue
		}
		var nodes []int32
		for w := e.From; w != e.To; w = prev[w] {
			nodes = append(nodes, w)
		}
		nodes = append(nodes, e.To)
		// nodes is From ... To reversed path; build cycle e, then path To→...→From.
		cyc := []deps.Edge{e}
		for i := len(nodes) - 1; i > 0; i-- {
			cyc = append(cyc, edge(nodes[i], nodes[i-1]))
		}
		if best == nil || len(cyc) < len(best) {
			best = cyc
		}
	}
	return best
}
