package graph

import (
	"cmp"
	"errors"
	"math"
	"slices"
)

// TimeClosure is the reachability relation of a directed graph over nodes 0..n-1 whose
// edges are explicit ones plus the real-time order of closed intervals: u → v whenever
// End(u) < Begin(v). It is Vbox's compact transitive closure (Vbox §3.4): nodes are sorted
// by Begin, and reachability is stored only inside each node's window, the nodes that may
// overlap it. Outside the window the answer follows from time alone: a node that began
// after u ended is reachable from u, and a node that ended before u began is not (that
// would close a cycle). With d the mean window width, memory is about n·d/8 bytes and
// never n².
//
// The graph must stay acyclic: [NewTimeClosure] reports a cycle of the initial graph and
// [TimeClosure.AddEdge] refuses an edge that would close one.
type TimeClosure struct {
	n          int
	at         []int32 // position → node
	pos        []int32 // node → position
	begin, end []int64 // by position
	lo, hi     []int32 // window [lo, hi] by position
	msucc      []int32 // last time successor a search must visit (Vbox's r_{m_i}); hi if none
	minReach   []int32 // by position: the first position it reaches (merges from nodes reaching nothing in a window are skipped)
	off        []int   // first word of each row; off[n] = len(words)
	words      []uint64
	head, adj  []int32    // the initial explicit edges by position (CSR)
	added      [][2]int32 // edges added since, as positions
}

// Errors of [NewTimeClosure].
var (
	ErrCycle    = errors.New("graph: the graph has a cycle")
	ErrTooLarge = errors.New("graph: the windows of overlapping intervals exceed the memory bound")
)

// NewTimeClosure builds the closure of the explicit edges plus the real-time order of the
// intervals [begin[u], end[u]]. It returns [ErrCycle] if the graph has a cycle (an interval
// that ends before it begins counts as one), and [ErrTooLarge] if the rows would take more
// than maxWords 64-bit words: a window runs from the first interval whose running maximum of
// ends reaches a node's begin, so one very long transaction widens every later window, and
// the caller then needs another method.
func NewTimeClosure(begin, end []int64, edges [][2]int32, maxWords int) (*TimeClosure, error) {
	c := &TimeClosure{n: len(begin)}
	c.sortIntervals(begin, end)
	if err := c.windows(maxWords); err != nil {
		return nil, err
	}
	c.timeSuccessors()
	if err := c.explicitEdges(edges); err != nil {
		return nil, err
	}
	post, ok := c.postorder(c.head, c.adj, nil, nil)
	if !ok {
		return nil, ErrCycle
	}
	c.close(post)
	return c, nil
}

// sortIntervals numbers the nodes by position: by begin, then end, then node.
func (c *TimeClosure) sortIntervals(begin, end []int64) {
	n := c.n
	type node struct {
		b, e int64
		u    int32
	}
	ns := make([]node, n)
	for u := range ns {
		ns[u] = node{begin[u], end[u], int32(u)}
	}
	slices.SortFunc(ns, func(x, y node) int {
		return cmp.Or(cmp.Compare(x.b, y.b), cmp.Compare(x.e, y.e), cmp.Compare(x.u, y.u))
	})
	c.at = make([]int32, n)
	c.pos = make([]int32, n)
	c.begin = make([]int64, n)
	c.end = make([]int64, n)
	for p, x := range ns {
		c.at[p] = x.u
		c.pos[x.u] = int32(p)
		c.begin[p] = x.b
		c.end[p] = x.e
	}
}

// windows sets each position's window and row offset: hi is the last node that began by
// p's end; lo the first whose running maximum of ends reaches p's begin.
func (c *TimeClosure) windows(maxWords int) error {
	n := c.n
	pmE := make([]int64, n)
	for p := range n {
		pmE[p] = c.end[p]
		if p > 0 {
			pmE[p] = max(pmE[p], pmE[p-1])
		}
	}
	c.lo = make([]int32, n)
	c.hi = make([]int32, n)
	c.off = make([]int, n+1)
	for p := range n {
		e, b := c.end[p], c.begin[p]
		hi := n // the first node that began after e
		if e < math.MaxInt64 {
			hi, _ = slices.BinarySearch(c.begin, e+1)
		}
		c.hi[p] = int32(hi) - 1
		lo, _ := slices.BinarySearch(pmE, b)
		c.lo[p] = int32(lo)
		if c.hi[p] < int32(p) || c.lo[p] > int32(p) {
			return ErrCycle // end < begin: the node precedes itself
		}
		c.off[p+1] = c.off[p] + (int(c.hi[p]-c.lo[p])+64)/64
		if c.off[p+1] > maxWords {
			return ErrTooLarge
		}
	}
	return nil
}

// timeSuccessors sets msucc: successors beyond hi[m] of the time successor m that ends
// first are time successors of m, so a search visits only (hi[p], hi[m]].
func (c *TimeClosure) timeSuccessors() {
	n := c.n
	sufArg := make([]int32, n+1)
	sufArg[n] = -1
	for p := n - 1; p >= 0; p-- {
		sufArg[p] = int32(p)
		if q := sufArg[p+1]; q >= 0 && c.end[q] < c.end[p] {
			sufArg[p] = q
		}
	}
	c.msucc = make([]int32, n)
	for p := range n {
		c.msucc[p] = c.hi[p]
		if m := sufArg[c.hi[p]+1]; m >= 0 {
			c.msucc[p] = c.hi[m]
		}
	}
}

// explicitEdges stores the edges by position (CSR in head, adj); a self-loop is a cycle.
func (c *TimeClosure) explicitEdges(edges [][2]int32) error {
	n := c.n
	head := make([]int32, n+1)
	for _, e := range edges {
		if e[0] == e[1] {
			return ErrCycle
		}
		head[c.pos[e[0]]+1]++
	}
	for p := range n {
		head[p+1] += head[p]
	}
	adj := make([]int32, len(edges))
	fill := slices.Clone(head[:n])
	for _, e := range edges {
		p := c.pos[e[0]]
		adj[fill[p]] = c.pos[e[1]]
		fill[p]++
	}
	c.head, c.adj = head, adj
	return nil
}

// close fills the rows in postorder: each position reaches itself, its explicit successors'
// sets and its time successors' sets.
func (c *TimeClosure) close(post []int32) {
	head, adj := c.head, c.adj
	c.words = make([]uint64, c.off[c.n])
	c.minReach = make([]int32, c.n)
	for _, p := range post {
		c.set(p, p)
		c.minReach[p] = p
		for _, s := range adj[head[p]:head[p+1]] {
			c.merge(p, s)
		}
		for s := c.hi[p] + 1; s <= c.msucc[p]; s++ {
			c.merge(p, s)
		}
	}
}

// N returns the number of nodes.
func (c *TimeClosure) N() int { return c.n }

// Words returns the number of 64-bit words the closure stores.
func (c *TimeClosure) Words() int { return len(c.words) }

// Reach reports whether v is reachable from u (u reaches itself).
func (c *TimeClosure) Reach(u, v int32) bool { return c.reach(c.pos[u], c.pos[v]) }

// Before reports whether u ended before v began.
func (c *TimeClosure) Before(u, v int32) bool { return c.end[c.pos[u]] < c.begin[c.pos[v]] }

func (c *TimeClosure) reach(p, q int32) bool {
	switch {
	case p == q || q > c.hi[p]:
		return true
	case q < c.lo[p]:
		return false
	}
	i := int(q - c.lo[p])
	return c.words[c.off[p]+i/64]>>(i%64)&1 != 0
}

// AddEdge adds u → v and updates the closure (Vbox's Italiano+ update: only rows of nodes
// between v's window start and the earlier of the two windows' ends can change). It returns
// false, changing nothing, if the edge would close a cycle.
func (c *TimeClosure) AddEdge(u, v int32) bool {
	i, j := c.pos[u], c.pos[v]
	if c.reach(i, j) {
		return true
	}
	if c.reach(j, i) {
		return false
	}
	// No row bit r(·,i) or r(j,·) changes while the edge is added (j does not reach i), so
	// the rows can be updated in any order.
	for w := c.lo[j]; w <= min(c.hi[i], c.hi[j]); w++ {
		if c.reach(w, i) {
			c.merge(w, j)
			c.minReach[w] = min(c.minReach[w], c.minReach[j])
		}
	}
	c.added = append(c.added, [2]int32{i, j})
	return true
}

// Order returns a topological order of the nodes (explicit edges, added edges and real
// time).
func (c *TimeClosure) Order() []int32 {
	// The added edges get a CSR of their own; the initial one is kept.
	var head2, adj2 []int32
	if len(c.added) > 0 {
		head2 = make([]int32, c.n+1)
		for _, e := range c.added {
			head2[e[0]+1]++
		}
		for p := range c.n {
			head2[p+1] += head2[p]
		}
		adj2 = make([]int32, len(c.added))
		fill := slices.Clone(head2[:c.n])
		for _, e := range c.added {
			adj2[fill[e[0]]] = e[1]
			fill[e[0]]++
		}
	}
	post, ok := c.postorder(c.head, c.adj, head2, adj2)
	if !ok {
		panic("graph: TimeClosure became cyclic")
	}
	order := make([]int32, c.n)
	for i, p := range post {
		order[c.n-1-i] = c.at[p]
	}
	return order
}

// postorder returns the positions in depth-first post-order over explicit and time edges
// (a node after all its successors), or false if there is a cycle.
func (c *TimeClosure) postorder(head, adj, head2, adj2 []int32) ([]int32, bool) {
	state := make([]uint8, c.n) // 0 new, 1 on the stack, 2 done
	post := make([]int32, 0, c.n)
	type frame struct{ p, i int32 }
	var stack []frame
	// Roots in descending position: when root r starts, every position above it is done, and
	// time successors are all above their node, so a search need not step to those above r
	// (Vbox's o_g): the roots themselves walk no time edges at all.
	for root := int32(c.n) - 1; root >= 0; root-- {
		if state[root] != 0 {
			continue
		}
		og := root + 1 // every position >= og is done
		state[root] = 1
		stack = append(stack, frame{root, 0})
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			p := f.p
			ne := head[p+1] - head[p]
			ne2 := ne
			if head2 != nil {
				ne2 += head2[p+1] - head2[p]
			}
			s := int32(-1)
			for {
				switch {
				case f.i < ne:
					s = adj[head[p]+f.i]
				case f.i < ne2:
					s = adj2[head2[p]+f.i-ne]
				case c.hi[p]+1+(f.i-ne2) <= min(c.msucc[p], og-1):
					s = c.hi[p] + 1 + (f.i - ne2)
				default:
					s = -1
				}
				if s < 0 {
					break
				}
				f.i++
				if state[s] == 1 {
					return nil, false
				}
				if state[s] == 0 {
					break
				}
			}
			if s < 0 {
				state[p] = 2
				post = append(post, p)
				stack = stack[:len(stack)-1]
				continue
			}
			state[s] = 1
			stack = append(stack, frame{s, 0})
		}
	}
	return post, true
}

// set sets r(p, q) for q inside p's window.
func (c *TimeClosure) set(p, q int32) {
	i := int(q - c.lo[p])
	c.words[c.off[p]+i/64] |= 1 << (i % 64)
}

// merge adds to row p everything s reaches, for p → s (an edge or a path).
func (c *TimeClosure) merge(p, s int32) {
	if c.minReach[s] > c.hi[p] && c.hi[s] >= c.hi[p] {
		return // s reaches nothing in p's window
	}
	c.minReach[p] = min(c.minReach[p], c.minReach[s])
	row := c.words[c.off[p]:c.off[p+1]]
	a, b := max(c.lo[p], c.lo[s]), min(c.hi[p], c.hi[s])
	if a <= b {
		orBits(row, int(a-c.lo[p]), c.words[c.off[s]:c.off[s+1]], int(a-c.lo[s]), int(b-a+1))
	}
	// s reaches by time every node that began after it ended.
	if a := max(c.hi[s]+1, c.lo[p]); a <= c.hi[p] {
		setBits(row, int(a-c.lo[p]), int(c.hi[p]-a+1))
	}
}

// orBits ORs n bits of src starting at bit so into dst starting at bit do.
func orBits(dst []uint64, do int, src []uint64, so int, n int) {
	for n > 0 {
		i, sh := so/64, uint(so%64)
		w := src[i] >> sh
		if sh != 0 && i+1 < len(src) {
			w |= src[i+1] << (64 - sh)
		}
		k := min(n, 64-do%64)
		if k < 64 {
			w &= 1<<uint(k) - 1
		}
		dst[do/64] |= w << uint(do%64)
		do, so, n = do+k, so+k, n-k
	}
}

// setBits sets n bits of dst starting at bit at.
func setBits(dst []uint64, at, n int) {
	for n > 0 {
		k := min(n, 64-at%64)
		m := ^uint64(0)
		if k < 64 {
			m = 1<<uint(k) - 1
		}
		dst[at/64] |= m << uint(at%64)
		at, n = at+k, n-k
	}
}
