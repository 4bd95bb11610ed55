package acyclic

import (
	"slices"

	"github.com/isovet/isovet/internal/sat"
)

// insert puts edge e, about to be justified by j, into the graph, keeping
// the topological order (Pearce and Kelly, JEA 2006). If e closes a cycle,
// the graph is unchanged and the conflict clause is returned: the
// negations of the justifications of a shortest cycle through e within the
// affected region.
func (g *Theory) insert(e, j int32) ([]sat.Lit, bool) {
	u, v := g.from[e], g.to[e]
	g.stats.Inserts++
	if u == v {
		return g.conflict(j, nil), false
	}
	if g.ord[u] > g.ord[v] {
		g.stats.Reorders++
		if !g.reorder(u, v) {
			// parent pointers hold a shortest path v ⇝ u.
			var path []int32
			for x := u; x != v; {
				pe := g.parent[x]
				path = append(path, pe)
				x = g.from[pe]
			}
			return g.conflict(j, path), false
		}
	}
	g.link(e)
	if g.opts.Propagate {
		g.propagate(u, v)
	}
	return nil, true
}

// link adds edge e to the adjacency lists.
func (g *Theory) link(e int32) {
	u, v := g.from[e], g.to[e]
	g.outPos[e] = int32(len(g.out[u]))
	g.out[u] = append(g.out[u], e)
	g.inPos[e] = int32(len(g.in[v]))
	g.in[v] = append(g.in[v], e)
}

// settle computes a topological order of the edges linked so far with
// Kahn's algorithm. If they contain a cycle, g.broken becomes its clause
// (empty if every edge on it is fixed), to be reported as a conflict.
func (g *Theory) settle() {
	g.settled = true
	indeg := make([]int32, g.n)
	for v := range g.n {
		indeg[v] = int32(len(g.in[v]))
	}
	pos := g.placeAcyclic(indeg)
	if int(pos) == g.n {
		return
	}
	x, step := g.cycleAmong(indeg)
	g.conf = g.conf[:0]
	for y := x; ; {
		e := step[y]
		g.explain(e, 1<<62)
		y = g.from[e]
		if y == x {
			break
		}
	}
	g.broken = append([]sat.Lit{}, g.dedupe()...)
	g.stats.Conflicts++
	for u := range g.n {
		if indeg[u] > 0 {
			g.ord[u] = pos
			g.at[pos] = int32(u)
			pos++
		}
	}
}

// placeAcyclic is Kahn's algorithm: it places, from position 0, every node
// no cycle leads to, and returns the next free position. indeg, the nodes'
// in-degrees, stays positive exactly at the nodes left unplaced.
func (g *Theory) placeAcyclic(indeg []int32) int32 {
	q := g.queue[:0]
	for u := range g.n {
		if indeg[u] == 0 {
			q = append(q, int32(u))
		}
	}
	pos := int32(0)
	for i := 0; i < len(q); i++ {
		u := q[i]
		g.ord[u] = pos
		g.at[pos] = u
		pos++
		for _, e := range g.out[u] {
			v := g.to[e]
			if indeg[v]--; indeg[v] == 0 {
				q = append(q, v)
			}
		}
	}
	g.queue = q[:0]
	return pos
}

// cycleAmong finds a cycle among the nodes placeAcyclic left unplaced
// (indeg > 0): every such node has an unplaced predecessor, so walking
// backwards from one repeats a node x. step maps each node of the cycle
// through x to the in-edge the walk took.
func (g *Theory) cycleAmong(indeg []int32) (x int32, step map[int32]int32) {
	for u := range g.n {
		if indeg[u] > 0 {
			x = int32(u)
			break
		}
	}
	step = make(map[int32]int32) // node -> in-edge taken
	for {
		if _, ok := step[x]; ok {
			return x, step
		}
		for _, e := range g.in[x] {
			if w := g.from[e]; indeg[w] > 0 {
				step[x] = e
				x = w
				break
			}
		}
	}
}

// conflict builds the clause for a cycle made of the edge justified by j
// and the edges of path.
func (g *Theory) conflict(j int32, path []int32) []sat.Lit {
	g.stats.Conflicts++
	g.conf = g.conf[:0]
	jj := g.justs[j]
	if jj.a != sat.LitNull {
		g.conf = append(g.conf, jj.a.Not())
	}
	if jj.b != sat.LitNull {
		g.conf = append(g.conf, jj.b.Not())
	}
	for _, e := range path {
		g.explain(e, 1<<62)
	}
	c := g.dedupe()
	g.stats.ConflictLits += int64(len(c))
	return c
}

// remove takes edge e out of the graph. The order stays valid.
func (g *Theory) remove(e int32) {
	u, v := g.from[e], g.to[e]
	i := g.outPos[e]
	last := g.out[u][len(g.out[u])-1]
	g.out[u][i] = last
	g.outPos[last] = i
	g.out[u] = g.out[u][:len(g.out[u])-1]
	g.outPos[e] = -1
	i = g.inPos[e]
	last = g.in[v][len(g.in[v])-1]
	g.in[v][i] = last
	g.inPos[last] = i
	g.in[v] = g.in[v][:len(g.in[v])-1]
	g.inPos[e] = -1
}

// nextGen returns a fresh mark value.
func (g *Theory) nextGen() uint32 {
	g.markGen++
	if g.markGen == 0 {
		clear(g.mark)
		g.markGen = 1
	}
	return g.markGen
}

// reorder restores the order for a new edge u→v with ord[u] > ord[v]. It
// returns false, with parent pointers from v to u, if u is reachable from
// v (a cycle).
func (g *Theory) reorder(u, v int32) bool {
	lb, ub := g.ord[v], g.ord[u]
	// Forward breadth-first search from v among nodes ordered before u.
	fg := g.nextGen()
	g.fwd = append(g.fwd[:0], v)
	g.mark[v] = fg
	g.parent[v] = -1
	for i := 0; i < len(g.fwd); i++ {
		x := g.fwd[i]
		for _, e := range g.out[x] {
			w := g.to[e]
			if w == u {
				g.parent[u] = e
				g.stats.Visited += int64(len(g.fwd))
				return false
			}
			if g.ord[w] < ub && g.mark[w] != fg {
				g.mark[w] = fg
				g.parent[w] = e
				g.fwd = append(g.fwd, w)
			}
		}
	}
	// Backward search from u among nodes ordered after v.
	bg := g.nextGen()
	g.bwd = append(g.bwd[:0], u)
	g.mark[u] = bg
	for i := 0; i < len(g.bwd); i++ {
		x := g.bwd[i]
		for _, e := range g.in[x] {
			w := g.from[e]
			if g.ord[w] > lb && g.mark[w] != bg {
				g.mark[w] = bg
				g.bwd = append(g.bwd, w)
			}
		}
	}
	g.stats.Visited += int64(len(g.fwd) + len(g.bwd))
	// Reassign the positions of both sets: backward set first, each in its
	// old relative order.
	byOrd := func(a, b int32) int { return int(g.ord[a]) - int(g.ord[b]) }
	slices.SortFunc(g.fwd, byOrd)
	slices.SortFunc(g.bwd, byOrd)
	g.pos = g.pos[:0]
	for _, x := range g.bwd {
		g.pos = append(g.pos, g.ord[x])
	}
	for _, x := range g.fwd {
		g.pos = append(g.pos, g.ord[x])
	}
	slices.Sort(g.pos)
	i := 0
	for _, x := range g.bwd {
		g.ord[x] = g.pos[i]
		g.at[g.pos[i]] = x
		i++
	}
	for _, x := range g.fwd {
		g.ord[x] = g.pos[i]
		g.at[g.pos[i]] = x
		i++
	}
	return true
}

// propagate looks, after edge u→v entered the graph, for unassigned edge
// literals whose edge a→b would close a cycle b ⇝ u → v ⇝ a, within
// PropagateLimit nodes on each side, and queues their negations.
func (g *Theory) propagate(u, v int32) {
	k := g.opts.PropagateLimit
	// Backward from u: nodes that reach u.
	bg := g.nextGen()
	g.bwd = append(g.bwd[:0], u)
	g.mark[u] = bg
	for i := 0; i < len(g.bwd) && len(g.bwd) < k; i++ {
		for _, e := range g.in[g.bwd[i]] {
			if w := g.from[e]; g.mark[w] != bg && len(g.bwd) < k {
				g.mark[w] = bg
				g.bwd = append(g.bwd, w)
			}
		}
	}
	// Forward from v: nodes reachable from v.
	fg := g.nextGen()
	g.fwd = append(g.fwd[:0], v)
	g.mark[v] = fg
	for i := 0; i < len(g.fwd) && len(g.fwd) < k; i++ {
		for _, e := range g.out[g.fwd[i]] {
			if w := g.to[e]; g.mark[w] != fg && g.mark[w] != bg && len(g.fwd) < k {
				g.mark[w] = fg
				g.fwd = append(g.fwd, w)
			}
		}
	}
	g.stats.Visited += int64(len(g.fwd) + len(g.bwd))
	level := int32(g.s.DecisionLevel())
	for _, a := range g.fwd {
		for _, c := range g.cand[a] {
			if g.mark[c.to] != bg {
				continue
			}
			j := c.j
			p := g.justs[j].a.Not()
			if g.s.LitValue(p) != sat.Undef {
				continue
			}
			if g.prop[p].j >= 0 {
				continue // already queued at this level
			}
			g.prop[p] = propagation{j: j, limit: g.clock + 2}
			g.trail = append(g.trail, entry{j: -2, m: p, level: level})
			g.props = append(g.props, p)
			g.stats.Propagations++
		}
	}
}

// Reason implements [sat.Theory]: the reason of ¬x, propagated because
// x's edge a→b would close a cycle, is ¬x ∨ ¬(justifications of a path
// b ⇝ a present at propagation time).
func (g *Theory) Reason(p sat.Lit, dst []sat.Lit) []sat.Lit {
	g.stats.Reasons++
	var info propagation
	if int(p) < len(g.prop) {
		info = g.prop[p]
	}
	if info.j < 0 {
		panic("acyclic: reason asked for a literal the theory did not propagate")
	}
	jj := g.justs[info.j]
	a, b := g.from[jj.e], g.to[jj.e]
	g.conf = append(g.conf[:0], p)
	if a != b {
		fg := g.nextGen()
		g.fwd = append(g.fwd[:0], b)
		g.mark[b] = fg
		found := false
		hi := g.ord[a]
	search:
		for i := 0; i < len(g.fwd); i++ {
			x := g.fwd[i]
			for _, e := range g.out[x] {
				w := g.to[e]
				if g.first[e].stamp >= info.limit || g.mark[w] == fg || g.ord[w] > hi {
					continue
				}
				g.mark[w] = fg
				g.parent[w] = e
				if w == a {
					found = true
					break search
				}
				g.fwd = append(g.fwd, w)
			}
		}
		if !found {
			panic("acyclic: no path for a propagated literal")
		}
		for x := a; x != b; {
			e := g.parent[x]
			g.explain(e, info.limit)
			x = g.from[e]
		}
	}
	return append(dst, g.dedupe()...)
}
