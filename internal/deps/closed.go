package deps

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

// Closed reads: a set S of committed transactions in which each one has a read whose every
// possible writer is another member of S. Whichever member comes first in any order (a
// serial order, a commit order, any order the write-read edges must respect) read a value
// no one before it had written: every choice of writers for those reads closes a cycle of
// write-read dependencies inside S (follow each member to the writer its read chose; in a
// finite set the walk returns to a member it has visited), which every level forbids (G1c).
//
// The largest such S is a greatest fixpoint, computed in time linear in the reads and
// writes by counting, per group of last writes of one (key, value), the writers outside S:
// a read supports its reader while its group has none (the reader itself aside, which is
// in S whenever its reads are looked at). Only item reads that name no writer take part;
// their possible writers are the group's other writers (aborted ones are not in it; one
// of unknown outcome is, and is never in S), and a key whose initial value is the value
// read gives the read the initial state as a writer, so the read supports nothing.
//
// This decides, in linear time and memory, histories whose every possible writer repeats a
// value: n transactions r(x,1) w(x,1) have n(n-1) candidate writers, which the candidate
// lists hold one by one, and a solver over those choices meets a pigeonhole (10 of them
// were undecided after a minute). Where a closed set is found among reads with a single
// possible writer, the known edges already hold a cycle the rest of the pipeline explains
// edge by edge, and nothing is reported here.

// closedReads looks for a closed set among the reads extracted so far and, when it finds
// one the single-writer reads do not already close, records the finding and returns true.
// It runs before the candidate lists are made, on histories of item reads and writes only
// (no predicates, lists or appends).
// Its loops poll ctx (closure.stopped); when ctx ends it returns the context's cause.
func (d *Deps) closedReads(ctx context.Context, finals *finalIndex, aborted []bool) (bool, error) {
	if len(d.predOps) > 0 || d.hasLists || d.hasAppends || len(d.Reads) == 0 {
		return false, nil
	}
	c := newClosure(ctx, d, finals, aborted)
	if c.err != nil || len(c.reads) == 0 {
		return false, c.err
	}
	if single := c.fixpoint(true); c.err != nil || len(single) > 0 {
		return false, c.err // a cycle of certain write-read edges: the pipeline explains it
	}
	s := c.fixpoint(false)
	if c.err != nil || len(s) == 0 {
		return false, c.err
	}
	part := c.largest(s)
	if len(part) < minClosed {
		return false, nil
	}
	d.Findings = append(d.Findings, c.finding(part))
	return true, nil
}

// stopped counts a unit of work and, every 4,096, looks at the context: once it has ended,
// it records the cause in c.err and reports true from then on.
func (c *closure) stopped() bool {
	if c.err != nil {
		return true
	}
	if c.work++; c.work&4095 == 0 && c.ctx.Err() != nil {
		c.err = context.Cause(c.ctx)
	}
	return c.err != nil
}

// minClosed is the smallest closed set reported here. Smaller ones are left to the rest of
// the pipeline, which decides them quickly and names, for each choice of writers, the
// cycle it closes; from about this size its search over the choices grows like a
// pigeonhole (n transactions r(x,1) w(x,1): 6 took 0.4 s, 7 took 1.2 s, 8 took 6.8 s, 10
// were undecided after a minute).
const minClosed = 6

// largest returns the largest part of closed set s that reads tie together (a connected
// component through reads and the writers they may read; the first such of the largest
// size): closed itself, and a shorter story to tell when s is the union of independent
// ones.
func (c *closure) largest(s []int32) []int32 {
	d, fin := c.d, c.finals.fin
	in := make([]bool, d.N)
	for _, t := range s {
		in[t] = true
	}
	parent := make(map[int32]int32, len(s))
	var find func(x int32) int32
	find = func(x int32) int32 {
		p, ok := parent[x]
		if !ok || p == x {
			return x
		}
		r := find(p)
		parent[x] = r
		return r
	}
	// Tie each group's writers in the set together, once per group, then each reader to
	// its groups.
	rep := make(map[int32]int32) // group -> a writer of it in the set, or -1
	for i, ri := range c.reads {
		t, g := d.Reads[ri].Txn, c.group[i]
		if !in[t] {
			continue
		}
		w, done := rep[g]
		if !done {
			w = -1
			for j := g; j < c.gend[i]; j++ {
				if x := fin[j].w; in[x] {
					if w >= 0 {
						parent[find(x)] = find(w)
					} else {
						w = x
					}
				}
			}
			rep[g] = w
		}
		if w >= 0 {
			parent[find(t)] = find(w)
		}
	}
	size := make(map[int32]int, len(s))
	root := int32(-1)
	for _, t := range s {
		r := find(t)
		size[r]++
		if root < 0 || size[r] > size[root] {
			root = r
		}
	}
	var part []int32
	for _, t := range s {
		if find(t) == root {
			part = append(part, t)
		}
	}
	return part
}

// closure is the state of the closed-set computation: groups are runs of finals.fin (one
// (key, value) each), named by their start.
type closure struct {
	ctx    context.Context
	work   int   // units of work done, for stopped's polls
	err    error // the context's cause, once stopped saw it end
	d      *Deps
	finals *finalIndex
	reads  []int32   // the reads that may support their reader
	group  []int32   // per read of reads: its group's start
	gend   []int32   // and end
	size   []int32   // per read of reads: how many writers its group has besides the reader
	byTxn  [][]int32 // per transaction: positions in reads of its supporting reads
	ofWrt  [][]int32 // per transaction: the groups it writes in
}

// newClosure collects the reads that may take part: committed readers' item reads, by
// value, of a value the key did not start with, that some other transaction wrote.
func newClosure(ctx context.Context, d *Deps, finals *finalIndex, aborted []bool) *closure {
	c := &closure{ctx: ctx, d: d, finals: finals}
	h := d.H
	for ri := range d.Reads {
		if c.stopped() {
			return c
		}
		r := &d.Reads[ri]
		if r.Kind != ReadItem || r.Src.Kind != history.SrcByValue || h.Txns[r.Txn].Outcome != history.OutcomeCommitted || h.InitialValue(r.Key) == r.Value {
			continue
		}
		lo, hi := finals.span(r.Key, r.Value)
		n := hi - lo
		if _, self := slices.BinarySearchFunc(finals.fin[lo:hi], r.Txn, func(x valueWriter, t int32) int { return cmp.Compare(x.w, t) }); self {
			n-- // a group is in writer order (finalIndex.build)
		}
		if n == 0 {
			continue
		}
		c.reads = append(c.reads, int32(ri))
		c.group = append(c.group, lo)
		c.gend = append(c.gend, hi)
		c.size = append(c.size, n)
	}
	c.byTxn = make([][]int32, d.N)
	for i, ri := range c.reads {
		t := d.Reads[ri].Txn
		c.byTxn[t] = append(c.byTxn[t], int32(i))
	}
	c.ofWrt = make([][]int32, d.N)
	for t, ws := range d.Writes {
		if aborted[t] {
			continue
		}
		for _, w := range ws {
			lo, hi := finals.span(w.Key, w.Value)
			if hi > lo {
				c.ofWrt[t] = append(c.ofWrt[t], lo)
			}
		}
	}
	return c
}

// fixpoint returns the largest closed set, sorted; with single, only reads with exactly
// one possible writer support their reader.
func (c *closure) fixpoint(single bool) []int32 {
	d, fin := c.d, c.finals.fin
	use := func(i int) bool { return !single || c.size[i] == 1 }
	in := make([]bool, d.N)
	for t := range d.N {
		if c.stopped() {
			return nil
		}
		in[t] = d.H.Txns[t].Outcome == history.OutcomeCommitted && slices.ContainsFunc(c.byTxn[t], func(i int32) bool { return use(int(i)) })
	}
	// out[g]: writers of group g outside the set; readers[g]: the reads it supports.
	out := make(map[int32]int32)
	readers := make(map[int32][]int32)
	for i, g := range c.group {
		if c.stopped() {
			return nil
		}
		if !use(i) {
			continue
		}
		if _, seen := out[g]; !seen {
			n := int32(0)
			for j := g; j < c.gend[i]; j++ {
				if !in[fin[j].w] {
					n++
				}
			}
			out[g] = n
		}
		readers[g] = append(readers[g], int32(i))
	}
	support := make([]int32, d.N)
	for g, rs := range readers {
		if out[g] == 0 {
			for _, i := range rs {
				support[d.Reads[c.reads[i]].Txn]++
			}
		}
	}
	var queue []int32
	for t := range d.N {
		if in[t] && support[t] == 0 {
			queue = append(queue, int32(t))
		}
	}
	for len(queue) > 0 {
		if c.stopped() {
			return nil
		}
		t := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if !in[t] {
			continue
		}
		in[t] = false
		for _, g := range c.ofWrt[t] {
			n, ok := out[g]
			if !ok {
				continue
			}
			out[g] = n + 1
			if n != 0 {
				continue
			}
			for _, i := range readers[g] {
				r := d.Reads[c.reads[i]].Txn
				if support[r]--; support[r] == 0 && in[r] {
					queue = append(queue, r)
				}
			}
		}
	}
	var s []int32
	for t, ok := range in {
		if ok {
			s = append(s, int32(t))
		}
	}
	return s
}

// finding is the anomaly of closed set s: its members, and the values they read.
func (c *closure) finding(s []int32) report.Anomaly {
	d, h := c.d, c.d.H
	in := make(map[int32]bool, len(s))
	for _, t := range s {
		in[t] = true
	}
	a := report.Anomaly{Kind: anomaly.G1c, Key: -1}
	var kvs []string
	seen := make(map[int32]bool)
	key := history.Key(-1)
	for i, ri := range c.reads {
		r := &d.Reads[ri]
		if !in[r.Txn] || seen[c.group[i]] {
			continue
		}
		seen[c.group[i]] = true
		if slices.ContainsFunc(c.finals.fin[c.group[i]:c.gend[i]], func(x valueWriter) bool { return !in[x.w] }) {
			continue // a read that does not tie its reader to the set
		}
		if len(kvs) == 0 {
			key = r.Key
		} else if r.Key != key {
			key = -1
		}
		kvs = append(kvs, h.KV(r.Key, r.Value))
	}
	if len(kvs) == 1 {
		a.Key = key
	}
	names := make([]string, 0, min(len(s), 8))
	for _, t := range s {
		if len(a.Txns) < 20 {
			a.Txns = append(a.Txns, history.TxnID(t))
		}
		if len(names) < 8 {
			names = append(names, h.Name(history.TxnID(t)))
		}
	}
	who := strings.Join(names, ", ")
	if len(s) > len(names) {
		who += fmt.Sprintf(" and %d more", len(s)-len(names))
	}
	what := strings.Join(kvs[:min(len(kvs), 4)], ", ")
	if len(kvs) > 4 {
		what += fmt.Sprintf(" and %d more", len(kvs)-4)
	}
	a.Message = fmt.Sprintf("%d committed transactions (%s) each read a value that only others among them wrote (%s; no key started with it): whichever of them comes first read a value no one before it had written, so every choice of writers for these reads closes a cycle of write-read dependencies among them", len(s), who, what)
	return a
}

// span returns where the last writes of v to k are in fin.
func (f *finalIndex) span(k history.Key, v history.Value) (lo, hi int32) {
	if f.off == nil {
		f.build()
	}
	run := f.fin[f.off[k]:f.off[k+1]]
	i, _ := slices.BinarySearchFunc(run, v, func(x valueWriter, v history.Value) int { return cmp.Compare(x.v, v) })
	j := i + sort.Search(len(run)-i, func(n int) bool { return run[i+n].v != v })
	return f.off[k] + int32(i), f.off[k] + int32(j)
}
