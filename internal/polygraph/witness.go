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

func (p *Polygraph) alternative(core []int, choice []int) Alternative {
	d := p.D
	var alt Alternative
	var extra []deps.Edge
	committed := make(map[int32]bool)
	var wwSel []struct {
		c    *WW
		a, b int32
	}
	var wrSel []struct {
		ri int32
		w  int32
	}
	for i, ci := range core {
		if ci < len(p.WW) {
			c := &p.WW[ci]
			a, b := c.A, c.B
			if choice[i] == 1 {
				a, b = b, a
			}
			alt.Options = append(alt.Options, Option{WW: int32(ci), First: a, WR: -1})
			wwSel = append(wwSel, struct {
				c    *WW
				a, b int32
			}{c, a, b})
			continue
		}
		wi := ci - len(p.WW)
		rc := &p.WR[wi]
		w := rc.Cands[choice[i]]
		alt.Options = append(alt.Options, Option{WW: -1, WR: int32(wi), Writer: w})
		wrSel = append(wrSel, struct {
			ri int32
			w  int32
		}{rc.Read, w})
		committed[w] = true
		committed[d.Reads[rc.Read].Txn] = true
	}
	live := func(t int32) bool {
		return t < 0 || t >= int32(d.N) || d.Status[t] == deps.Committed || committed[t]
	}
	for _, s := range wwSel {
		if !live(s.a) || !live(s.b) {
			continue
		}
		extra = p.orientEdges(s.c, s.a, s.b, extra)
	}
	for _, s := range wrSel {
		for _, e := range p.readEdges(s.ri, s.w) {
			if live(e.Guards[0]) && live(e.Guards[1]) && live(e.Guards[2]) {
				extra = append(extra, e)
			}
		}
		r := &d.Reads[s.ri]
		for _, ww := range wwSel {
			if !live(ww.a) || !live(ww.b) {
				continue
			}
			for i, k := range ww.c.Keys {
				from, to := ww.c.sideEnds(ww.a, i)
				if k == r.Key && from == s.w && to != r.Txn {
					wb, _ := d.WriteOf(to, k)
					extra = append(extra, deps.Edge{From: r.Txn, To: to, Rel: report.RW, Key: k, Value: r.Value, Value2: wb.Value, Via: s.w, Guards: [3]int32{-1, -1, -1}})
				}
			}
		}
	}
	for _, e := range d.Guarded {
		if live(e.Guards[0]) && live(e.Guards[1]) && live(e.Guards[2]) {
			extra = append(extra, e)
		}
	}
	alt.Cycle = p.shortestCycle(extra)
	pairs := make([][2]int32, len(wwSel))
	for i, w := range wwSel {
		pairs[i] = [2]int32{w.a, w.b}
	}
	alt.SelfContradictory = CyclicOrder(pairs)
	return alt
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
