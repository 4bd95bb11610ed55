// Package graph is a small dense-integer directed graph library for the checkers: adjacency
// lists over nodes 0..n-1, strongly connected components (iterative Tarjan), topological
// order, shortest paths and cycles (BFS), and batched reachability that never needs an n×n
// bit matrix.
//
// Nodes are int32. Edges may repeat; algorithms tolerate duplicates.
//
// # Local names
//
//	g Digraph   u, v, w node   e edge index
package graph

import (
	"iter"
	"slices"
)

// Digraph is a directed graph over nodes 0..N()-1. The zero value is an empty graph; use
// [New]. It is not safe for concurrent mutation; concurrent reads are safe.
type Digraph struct {
	out [][]int32
	m   int
}

// New returns a graph with n nodes and no edges.
func New(n int) *Digraph { return &Digraph{out: make([][]int32, n)} }

// N returns the number of nodes.
func (g *Digraph) N() int { return len(g.out) }

// M returns the number of edges added (duplicates counted).
func (g *Digraph) M() int { return g.m }

// AddNode appends a node and returns its id.
func (g *Digraph) AddNode() int32 {
	g.out = append(g.out, nil)
	return int32(len(g.out) - 1)
}

// AddEdge adds u→v.
func (g *Digraph) AddEdge(u, v int32) {
	g.out[u] = append(g.out[u], v)
	g.m++
}

// Out returns u's successors. The slice is owned by g: do not modify it.
func (g *Digraph) Out(u int32) []int32 { return g.out[u] }

// Succ iterates over u's successors.
func (g *Digraph) Succ(u int32) iter.Seq[int32] {
	return func(yield func(int32) bool) {
		for _, v := range g.out[u] {
			if !yield(v) {
				return
			}
		}
	}
}

// Clone returns a deep copy of g.
func (g *Digraph) Clone() *Digraph {
	h := &Digraph{out: make([][]int32, len(g.out)), m: g.m}
	for u, vs := range g.out {
		h.out[u] = slices.Clone(vs)
	}
	return h
}

// SCC returns the strongly connected component of every node (numbered in reverse
// topological order of the condensation, as Tarjan's algorithm finds them) and the number
// of components. It is iterative, so deep graphs do not overflow the stack.
func SCC(g *Digraph) (comp []int32, n int) {
	N := g.N()
	index := make([]int32, N)
	low := make([]int32, N)
	comp = make([]int32, N)
	for i := range comp {
		comp[i] = -1
		index[i] = -1
	}
	var stack []int32
	onStack := make([]bool, N)
	type frame struct {
		u int32
		i int32
	}
	var call []frame
	next := int32(0)
	for s := range N {
		if index[s] >= 0 {
			continue
		}
		call = append(call[:0], frame{int32(s), 0})
		index[s], low[s] = next, next
		next++
		stack = append(stack, int32(s))
		onStack[s] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			u := f.u
			if int(f.i) < len(g.out[u]) {
				v := g.out[u][f.i]
				f.i++
				if index[v] < 0 {
					index[v], low[v] = next, next
					next++
					stack = append(stack, v)
					onStack[v] = true
					call = append(call, frame{v, 0})
				} else if onStack[v] && index[v] < low[u] {
					low[u] = index[v]
				}
				continue
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].u
				if low[u] < low[p] {
					low[p] = low[u]
				}
			}
			if low[u] == index[u] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = int32(n)
					if w == u {
						break
					}
				}
				n++
			}
		}
	}
	return comp, n
}

// Topo returns a topological order of g (Kahn's algorithm, smallest id first among ready
// nodes is not guaranteed) and true, or nil and false if g has a cycle.
func Topo(g *Digraph) ([]int32, bool) {
	N := g.N()
	indeg := inDegrees(g)
	order := make([]int32, 0, N)
	for u := range N {
		if indeg[u] == 0 {
			order = append(order, int32(u))
		}
	}
	for i := 0; i < len(order); i++ {
		for _, v := range g.out[order[i]] {
			indeg[v]--
			if indeg[v] == 0 {
				order = append(order, v)
			}
		}
	}
	if len(order) != N {
		return nil, false
	}
	return order, true
}

// inDegrees returns the number of edges into each node.
func inDegrees(g *Digraph) []int32 {
	indeg := make([]int32, g.N())
	for _, vs := range g.out {
		for _, v := range vs {
			indeg[v]++
		}
	}
	return indeg
}

// ShortestPath returns a shortest path from s to t (both included) using only nodes for
// which allow returns true (nil allows all), or nil if there is none. A path from s to s is
// [s].
func ShortestPath(g *Digraph, s, t int32, allow func(int32) bool) []int32 {
	return shortestPath(g, nil, s, t, allow)
}

// ShortestPathWith is [ShortestPath] over g's edges and the extra edges u → adj[u], which g
// does not hold (a witness's path through the edges a choice would add).
func ShortestPathWith(g *Digraph, adj map[int32][]int32, s, t int32) []int32 {
	return shortestPath(g, adj, s, t, nil)
}

// shortestPath is a breadth-first search from s to t over g's edges, then adj's, of each
// node, through the nodes allow accepts (nil: all).
func shortestPath(g *Digraph, adj map[int32][]int32, s, t int32, allow func(int32) bool) []int32 {
	if s == t {
		return []int32{s}
	}
	prev := map[int32]int32{s: s}
	q := []int32{s}
	for len(q) > 0 {
		u := q[0]
		q = q[1:]
		for _, out := range [2][]int32{g.out[u], adj[u]} {
			for _, v := range out {
				if _, ok := prev[v]; ok {
					continue
				}
				if allow != nil && v != t && !allow(v) {
					continue
				}
				prev[v] = u
				if v == t {
					return pathTo(prev, s, t)
				}
				q = append(q, v)
			}
		}
	}
	return nil
}

// pathTo follows prev back from t to s and returns the path from s to t.
func pathTo(prev map[int32]int32, s, t int32) []int32 {
	var p []int32
	for w := t; ; w = prev[w] {
		p = append(p, w)
		if w == s {
			break
		}
	}
	slices.Reverse(p)
	return p
}

// CycleThrough returns a shortest cycle that uses the edge u→v, as the node list [u, v, ...]
// (the closing edge back to u implied), assuming u→v is or would be an edge; nil if v does not
// reach u.
func CycleThrough(g *Digraph, u, v int32) []int32 {
	if u == v {
		return []int32{u}
	}
	p := ShortestPath(g, v, u, nil)
	if p == nil {
		return nil
	}
	return append([]int32{u}, p[:len(p)-1]...)
}

// FindCycle returns a short cycle of g as a node list (closing edge implied), or nil if g is
// acyclic. It searches the smallest non-trivial strongly connected component and returns a
// shortest cycle through one of its nodes.
func FindCycle(g *Digraph) []int32 {
	comp, n := SCC(g)
	if u := selfLoop(g); u >= 0 {
		return []int32{u}
	}
	best := smallestCyclicSCC(comp, n)
	if best < 0 {
		return nil
	}
	var bestCyc []int32
	tries := 0
	for u := range g.out {
		if comp[u] != best {
			continue
		}
		bestCyc = shorterCycleAt(g, comp, int32(u), bestCyc)
		tries++
		if tries >= 32 || len(bestCyc) == 2 {
			break
		}
	}
	return bestCyc
}

// shorterCycleAt returns a shortest cycle through an edge out of u that
// stays in u's component if it is shorter than cyc (or cyc is nil), else cyc.
func shorterCycleAt(g *Digraph, comp []int32, u int32, cyc []int32) []int32 {
	c := comp[u]
	for _, v := range g.out[u] {
		if comp[v] != c {
			continue
		}
		p := ShortestPath(g, v, u, func(w int32) bool { return comp[w] == c })
		if p != nil && (cyc == nil || len(p) < len(cyc)) {
			cyc = append([]int32{u}, p[:len(p)-1]...)
		}
	}
	return cyc
}

// selfLoop returns the first node with an edge to itself, or -1.
func selfLoop(g *Digraph) int32 {
	for u, vs := range g.out {
		if slices.Contains(vs, int32(u)) {
			return int32(u)
		}
	}
	return -1
}

// smallestCyclicSCC returns the smallest of the n components in comp with
// more than one node (the first among equals), or -1.
func smallestCyclicSCC(comp []int32, n int) int32 {
	size := make([]int, n)
	for _, c := range comp {
		size[c]++
	}
	best := -1
	for c, s := range size {
		if s > 1 && (best < 0 || s < size[best]) {
			best = c
		}
	}
	return int32(best)
}
