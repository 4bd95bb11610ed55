package deps

import (
	"cmp"
	"context"
	"math"
	"math/bits"
	"slices"

	"isovet/history"
)

// # Versions in reach (strict levels)
//
// Real time leaves reader r (interval [Br, Er], widened by the skew) only some versions of
// a row x in reach (see feasible): not one whose writer w began after r ended (Bw > Er), and
// not one overwritten before r began, i.e. followed by a committed writer w' of x with
// Bw' > Ew and Ew' < Br. Let
//
//	S(w, x) = min { Ew' : w' a committed writer of x with Bw' > Ew }   (+inf if none)
//	S(init, x) = min { Ew' : w' a committed writer of x }
//
// S does not depend on the reader, and the version is in reach of r exactly when
// Bw <= Er and S(w, x) >= Br: the version is "live" over [Bw, S] and r's interval meets
// that. (r itself is never such a w': Er >= Br.) Two indexes follow from this.
//
//   - Per row, the versions sorted by End: S grows with Ew, so the versions with S >= Br
//     are a suffix, found by binary search, and those with Bw <= Er end by Er + the
//     row's longest writer interval. The versions in reach of r are then a short run
//     instead of all of the row's versions.
//   - Per field, a sweep over the readers by End: writers are added when they begin,
//     into buckets by the value of the field they wrote, and dropped once no later reader
//     can reach them (S below the least Br still to come). A reader looks only into the
//     buckets of its range, so it visits the rows with a matching version in reach, not
//     every row with a matching version somewhere in the history.
//
// Both give exactly what the scan (scanSource) gives; pred_test.go checks that they agree
// on random histories.

// reachSource finds rows and versions through the indexes above.
type reachSource struct {
	d  *Deps
	vs *versions
	iv []history.Interval // per transaction, widened
	// Per key: the versions (indexes into vs.byKey[k]) by End, their S (indexed like
	// vs.byKey[k]), S of the initial state, and the longest writer interval.
	byEnd   [][]int32
	sup     [][]int64
	supEnd  [][]int64 // S in the order of byEnd (non-decreasing)
	initSup []int64
	maxLen  []int64
	// Per predicate op, the rows the sweep found: opKeys[opOff[i]:opOff[i+1]].
	opKeys []history.Key
	opOff  []int32
	// Fields swept so far; keys of the ops on the others are filled in on demand.
	swept map[string]bool
	ctx   context.Context
}

func (d *Deps) newReachSource(ctx context.Context, vs *versions) *reachSource {
	h := d.H
	s := &reachSource{d: d, vs: vs, ctx: ctx, swept: make(map[string]bool)}
	s.iv = make([]history.Interval, len(h.Txns))
	for t := range h.Txns {
		s.iv[t] = h.Txns[t].Time.Widen(d.Opts.Skew)
	}
	nk := len(vs.byKey)
	s.byEnd = make([][]int32, nk)
	s.sup = make([][]int64, nk)
	s.supEnd = make([][]int64, nk)
	s.initSup = make([]int64, nk)
	s.maxLen = make([]int64, nk)
	var com []int32 // committed writers by begin
	var suf []int64 // suffix minimum of their ends
	for k, ws := range vs.byKey {
		com = com[:0]
		var ml int64
		for _, w := range ws {
			if h.Txns[w].Outcome == history.OutcomeCommitted {
				com = append(com, w)
			}
			ml = max(ml, s.iv[w].End-s.iv[w].Begin)
		}
		s.maxLen[k] = ml
		slices.SortFunc(com, func(a, b int32) int { return cmp.Compare(s.iv[a].Begin, s.iv[b].Begin) })
		suf = slices.Grow(suf[:0], len(com)+1)[:len(com)+1]
		suf[len(com)] = math.MaxInt64
		for i := len(com) - 1; i >= 0; i-- {
			suf[i] = min(suf[i+1], s.iv[com[i]].End)
		}
		s.initSup[k] = suf[0]
		sup := make([]int64, len(ws))
		for i, w := range ws {
			e := s.iv[w].End
			j, _ := slices.BinarySearchFunc(com, e, func(c int32, e int64) int {
				if s.iv[c].Begin > e {
					return 1
				}
				return -1
			})
			sup[i] = suf[j]
		}
		s.sup[k] = sup
		be := make([]int32, len(ws))
		for i := range be {
			be[i] = int32(i)
		}
		slices.SortFunc(be, func(a, b int32) int { return cmp.Or(cmp.Compare(s.iv[ws[a]].End, s.iv[ws[b]].End), cmp.Compare(a, b)) })
		s.byEnd[k] = be
		se := make([]int64, len(be))
		for j, i := range be {
			se[j] = sup[i]
		}
		s.supEnd[k] = se
	}
	s.opOff = make([]int32, len(d.predOps)+1)
	return s
}

// reach returns the versions of k in reach of r, with their truths.
func (s *reachSource) reach(r int32, k history.Key, pr *history.Predicate, fi *fieldIndex, dst []verTruth) []verTruth {
	ri := s.iv[r]
	ws, be := s.vs.byKey[k], s.byEnd[k]
	start, _ := slices.BinarySearchFunc(s.supEnd[k], ri.Begin, func(x, b int64) int {
		if x >= b {
			return 1
		}
		return -1
	})
	limit := int64(math.MaxInt64)
	if ml := s.maxLen[k]; ri.End < math.MaxInt64-ml {
		limit = ri.End + ml
	}
	n0 := len(dst)
	for _, i := range be[start:] {
		w := ws[i]
		wi := s.iv[w]
		if wi.End > limit {
			break // every later version began after r ended
		}
		if w != r && wi.Begin <= ri.End {
			dst = append(dst, verTruth{1 + i, fi.truthOf(pr, k, 1+i)})
		}
	}
	slices.SortFunc(dst[n0:], func(a, b verTruth) int { return cmp.Compare(a.j, b.j) })
	if s.initSup[k] >= ri.Begin {
		dst = append(dst, verTruth{0, fi.truthOf(pr, k, 0)})
	}
	return dst
}

// keys returns the rows the sweep found for op i, sweeping the op's field first if needed.
func (s *reachSource) keys(i int, pr *history.Predicate, fi *fieldIndex, dst []history.Key) []history.Key {
	name := pr.Field.String()
	if !s.swept[name] {
		s.swept[name] = true
		s.sweep(name, fi)
	}
	return append(dst, s.opKeys[s.opOff[i]:s.opOff[i+1]]...)
}

// entry is a version in the sweep: its row, its writer (or -1, the initial state) and S.
type entry struct {
	k   history.Key
	w   int32
	sup int64
}

// sweep finds, for every predicate op on field name, the rows with a version in reach on
// which the predicate may hold (its value is in range, or not a plain value).
func (s *reachSource) sweep(name string, fi *fieldIndex) {
	d, h := s.d, s.d.H
	// The ops on this field, by reader End.
	var ops []int32
	for i, po := range d.predOps {
		o := h.Txns[po.txn].Ops[po.op]
		if h.Pred(o).Pred.Field.String() == name {
			ops = append(ops, int32(i))
		}
	}
	if len(ops) == 0 {
		return
	}
	end := func(i int32) int64 { return s.iv[d.predOps[i].txn].End }
	slices.SortFunc(ops, func(a, b int32) int { return cmp.Or(cmp.Compare(end(a), end(b)), cmp.Compare(a, b)) })
	// least[i]: the least Br among ops[i:].
	least := make([]int64, len(ops))
	m := int64(math.MaxInt64)
	for i := len(ops) - 1; i >= 0; i-- {
		m = min(m, s.iv[d.predOps[ops[i]].txn].Begin)
		least[i] = m
	}
	// Distinct values of the field, for the buckets.
	var vals []int64
	for k, vv := range fi.vals {
		if fi.states[k] == nil {
			vals = append(vals, vv...)
			continue
		}
		for j := range vv {
			if x := fi.at(history.Key(k), int32(j)); x.state == fieldSet {
				vals = append(vals, x.v)
			}
		}
	}
	slices.Sort(vals)
	vals = slices.Compact(vals)
	b := newBuckets(len(vals))
	var other []entry // versions whose truth is not a plain comparison
	add := func(e entry, x fieldVal) {
		switch x.state {
		case fieldSet:
			r, _ := slices.BinarySearch(vals, x.v)
			b.add(r, e)
		case fieldUnset, fieldUnknown:
			other = append(other, e)
		}
	}
	for k := range fi.vals {
		add(entry{history.Key(k), -1, s.initSup[k]}, fi.at(history.Key(k), 0))
	}
	// Writers by begin.
	var writers []int32
	for t := range h.Txns {
		if h.Txns[t].Outcome != history.OutcomeAborted && len(d.Writes[t]) > 0 {
			writers = append(writers, int32(t))
		}
	}
	slices.SortFunc(writers, func(a, b int32) int { return cmp.Or(cmp.Compare(s.iv[a].Begin, s.iv[b].Begin), cmp.Compare(a, b)) })
	found := make([][]history.Key, len(d.predOps))
	seen := make([]uint32, len(h.Keys))
	var gen uint32
	next := 0
	var keys []history.Key
	for n, i := range ops {
		if n&63 == 0 && s.ctx.Err() != nil {
			break // expandWith stops too
		}
		r := d.predOps[i].txn
		ri := s.iv[r]
		for ; next < len(writers) && s.iv[writers[next]].Begin <= ri.End; next++ {
			w := writers[next]
			for j, wr := range d.Writes[w] {
				vi := s.vs.idx[w][j]
				add(entry{wr.Key, w, s.sup[wr.Key][vi]}, fi.at(wr.Key, 1+vi))
			}
		}
		gen++
		keys = keys[:0]
		visit := func(e entry) bool {
			if e.sup < least[n] {
				return false // no reader still to come reaches it
			}
			if e.sup >= ri.Begin && e.w != r && seen[e.k] != gen {
				seen[e.k] = gen
				keys = append(keys, e.k)
			}
			return true
		}
		pr := &h.Pred(h.Txns[r].Ops[d.predOps[i].op]).Pred
		lo, _ := slices.BinarySearch(vals, pr.Lo)
		hi, _ := slices.BinarySearch(vals, pr.Hi)
		if hi < len(vals) && vals[hi] == pr.Hi {
			hi++
		}
		b.visit(lo, hi, visit)
		other = slices.DeleteFunc(other, func(e entry) bool { return !visit(e) })
		found[i] = slices.Clone(keys)
	}
	// Lay the rows out by op; ops on other fields keep what they had.
	var all []history.Key
	off := make([]int32, len(d.predOps)+1)
	for i := range d.predOps {
		off[i] = int32(len(all))
		if found[i] != nil {
			all = append(all, found[i]...)
		} else {
			all = append(all, s.opKeys[s.opOff[i]:s.opOff[i+1]]...)
		}
	}
	off[len(d.predOps)] = int32(len(all))
	s.opKeys, s.opOff = all, off
}

// buckets holds entries by the rank of their value, with a two-level bitset of the
// non-empty buckets so that a range query skips empty ones.
type buckets struct {
	b  [][]entry
	l0 []uint64 // bit r: bucket r is non-empty
	l1 []uint64 // bit w: word w of l0 is non-zero
}

func newBuckets(n int) *buckets {
	n0 := (n + 63) / 64
	return &buckets{b: make([][]entry, n), l0: make([]uint64, n0), l1: make([]uint64, (n0+63)/64)}
}

func (b *buckets) add(r int, e entry) {
	b.b[r] = append(b.b[r], e)
	b.l0[r/64] |= 1 << (r % 64)
	b.l1[r/4096] |= 1 << ((r / 64) % 64)
}

// next returns the first non-empty bucket at or after r, or len(b.b).
func (b *buckets) next(r int) int {
	n := len(b.b)
	for r < n {
		w := r / 64
		if x := b.l0[w] >> (r % 64); x != 0 {
			return r + bits.TrailingZeros64(x)
		}
		// Find the next non-zero word of l0 through l1.
		w++
		for w < len(b.l0) {
			if x := b.l1[w/64] >> (w % 64); x != 0 {
				w += bits.TrailingZeros64(x)
				break
			}
			w = (w/64 + 1) * 64
		}
		if w >= len(b.l0) {
			return n
		}
		r = w * 64
	}
	return n
}

// visit calls f on the entries of buckets lo..hi-1, dropping those for which it returns false.
func (b *buckets) visit(lo, hi int, f func(entry) bool) {
	for r := b.next(lo); r < hi; r = b.next(r + 1) {
		es := slices.DeleteFunc(b.b[r], func(e entry) bool { return !f(e) })
		b.b[r] = es
		if len(es) == 0 {
			b.b[r] = nil
			b.l0[r/64] &^= 1 << (r % 64)
			if b.l0[r/64] == 0 {
				b.l1[r/4096] &^= 1 << ((r / 64) % 64)
			}
		}
	}
}
