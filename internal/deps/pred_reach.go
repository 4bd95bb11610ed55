package deps

import (
	"cmp"
	"context"
	"math"
	"math/bits"
	"slices"

	"github.com/isovet/isovet/history"
)

// # Versions in reach (strict levels)
//
// Real time leaves reader r (interval [Br, Er], read as Deps.Iv reads it: widened by the
// skew, an unknown outcome ending at +inf, no interval unbounded) only some versions of
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
	iv []history.Interval // per transaction, as Deps.Iv reads them (timeIntervals)
	// byEnd and supEnd: per key, laid out like the writers of vs.byKey (versions.wrange),
	// its versions (indexes into vs.byKey[k]) by End and their S in that order
	// (non-decreasing).
	byEnd  []int32
	supEnd []int64
	// sup: S of every version, by number (the initial state's too); maxLen: per key, the
	// longest writer interval.
	sup    []int64
	maxLen []int64
	// Per predicate op, the rows the sweep found: opKeys[opOff[i]:opOff[i+1]].
	opKeys []history.Key
	opOff  []int32
	// Fields swept so far; keys of the ops on the others are filled in on demand.
	swept map[string]bool
	ctx   context.Context
}

func (d *Deps) newReachSource(ctx context.Context, vs *versions) *reachSource {
	s := &reachSource{d: d, vs: vs, ctx: ctx, swept: make(map[string]bool)}
	s.iv = d.timeIntervals()
	nk := len(vs.byKey)
	nw := vs.base[nk] - int32(nk)
	s.byEnd = make([]int32, nw)
	s.supEnd = make([]int64, nw)
	s.sup = make([]int64, vs.base[nk])
	s.maxLen = make([]int64, nk)
	var com []int32 // committed writers by begin
	var suf []int64 // suffix minimum of their ends
	for k := range vs.byKey {
		com, suf = s.indexKey(k, com[:0], suf)
	}
	s.opOff = make([]int32, len(d.predOps)+1)
	return s
}

// indexKey fills the reach index of key k's versions: the longest writer interval, each
// version's S (the least End of the committed writers that began after its writer ended)
// and the versions by End with their S. com and suf are scratch, returned for reuse.
func (s *reachSource) indexKey(k int, com []int32, suf []int64) ([]int32, []int64) {
	h, vs := s.d.H, s.vs
	ws := vs.byKey[k]
	var ml int64
	for _, w := range ws {
		if h.Txns[w].Outcome == history.OutcomeCommitted {
			com = append(com, w)
		}
		ml = max(ml, length(s.iv[w]))
	}
	s.maxLen[k] = ml
	slices.SortFunc(com, func(a, b int32) int { return cmp.Compare(s.iv[a].Begin, s.iv[b].Begin) })
	suf = slices.Grow(suf[:0], len(com)+1)[:len(com)+1]
	suf[len(com)] = math.MaxInt64
	for i := len(com) - 1; i >= 0; i-- {
		suf[i] = min(suf[i+1], s.iv[com[i]].End)
	}
	g0 := vs.base[k]
	s.sup[g0] = suf[0]
	lo, hi := vs.wrange(history.Key(k))
	be := s.byEnd[lo:hi]
	for i, w := range ws {
		// The first committed writer that began after w ended.
		e := s.iv[w].End
		a, b := 0, len(com)
		for a < b {
			m := int(uint(a+b) >> 1)
			if s.iv[com[m]].Begin <= e {
				a = m + 1
			} else {
				b = m
			}
		}
		s.sup[g0+1+int32(i)] = suf[a]
		be[i] = int32(i)
	}
	slices.SortFunc(be, func(a, b int32) int { return cmp.Or(cmp.Compare(s.iv[ws[a]].End, s.iv[ws[b]].End), cmp.Compare(a, b)) })
	se := s.supEnd[lo:hi]
	for j, i := range be {
		se[j] = s.sup[g0+1+i]
	}
	return com, suf
}

// length is the length of an interval, +inf (math.MaxInt64) when it is unbounded or too
// long to hold.
func length(x history.Interval) int64 {
	if x.Begin < 0 && x.End > math.MaxInt64+x.Begin {
		return math.MaxInt64
	}
	return x.End - x.Begin
}

// reach returns the versions of k in reach of r, with their truths.
func (s *reachSource) reach(r int32, k history.Key, pr *history.Predicate, fi *fieldIndex, dst []verTruth) []verTruth {
	ri := s.iv[r]
	ws := s.vs.byKey[k]
	lo, hi := s.vs.wrange(k)
	se, be := s.supEnd[lo:hi], s.byEnd[lo:hi]
	// The first version by End with S >= Br. Readers mostly read recent versions, so the
	// search gallops back from the last one to a bracket, then bisects it.
	a, b := 0, len(se)
	for step := 1; b > 0; step *= 2 {
		m := max(b-step, 0)
		if se[m] < ri.Begin {
			a = m + 1
			break
		}
		b = m
	}
	for a < b {
		m := int(uint(a+b) >> 1)
		if se[m] < ri.Begin {
			a = m + 1
		} else {
			b = m
		}
	}
	limit := int64(math.MaxInt64) // with an unbounded writer interval, no limit
	if ml := s.maxLen[k]; ml < math.MaxInt64 && ri.End < math.MaxInt64-ml {
		limit = ri.End + ml
	}
	g0 := s.vs.base[k]
	n0 := len(dst)
	for _, i := range be[a:] {
		w := ws[i]
		wi := s.iv[w]
		if wi.End > limit {
			break // every later version began after r ended
		}
		if w != r && wi.Begin <= ri.End {
			dst = append(dst, verTruth{1 + i, fi.truthOf(pr, k, g0+1+i)})
		}
	}
	if run := dst[n0:]; len(run) <= 16 {
		for i := 1; i < len(run); i++ { // insertion sort by version: a handful
			for j := i; j > 0 && run[j].j < run[j-1].j; j-- {
				run[j], run[j-1] = run[j-1], run[j]
			}
		}
	} else {
		slices.SortFunc(run, func(a, b verTruth) int { return cmp.Compare(a.j, b.j) })
	}
	if s.sup[g0] >= ri.Begin {
		dst = append(dst, verTruth{0, fi.truthOf(pr, k, g0)})
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

// Ranks of versions that are in no bucket.
const (
	rankAbsent = -1 // no row: no range holds on it
	rankOther  = -2 // a partial image, or not an image: its truth is not a comparison
)

// ranks returns each version's bucket (by number; or rankAbsent, rankOther), the number
// of buckets, and how a range [lo, hi] of values maps to a range of buckets. The buckets
// are the values themselves, offset, when they span little more than there are versions
// (the runner's columns), else the distinct values, sorted.
func ranks(fi *fieldIndex) (rank []int32, nb int, span func(lo, hi int64) (int, int)) {
	rank = make([]int32, len(fi.vals))
	mn, mx, nset := fi.setRange()
	if nset > 0 && uint64(mx)-uint64(mn) < uint64(2*nset+64) {
		nb, span = offsetRanks(fi, rank, mn, mx)
	} else {
		nb, span = sortedRanks(fi, rank, nset)
	}
	if fi.states != nil {
		for g, st := range fi.states {
			switch st {
			case fieldAbsent:
				rank[g] = rankAbsent
			case fieldUnset, fieldUnknown:
				rank[g] = rankOther
			}
		}
	}
	return rank, nb, span
}

// isSet reports whether version g's image sets the field.
func (fi *fieldIndex) isSet(g int) bool { return fi.states == nil || fi.states[g] == fieldSet }

// setRange returns the least and greatest value of the versions that set the field, and
// how many do.
func (fi *fieldIndex) setRange() (mn, mx int64, nset int) {
	for g, v := range fi.vals {
		if !fi.isSet(g) {
			continue
		}
		if nset == 0 || v < mn {
			mn = v
		}
		if nset == 0 || v > mx {
			mx = v
		}
		nset++
	}
	return mn, mx, nset
}

// offsetRanks ranks the versions by their values offset by mn (the values span
// [mn, mx]), for ranks.
func offsetRanks(fi *fieldIndex, rank []int32, mn, mx int64) (int, func(lo, hi int64) (int, int)) {
	nb := int(uint64(mx)-uint64(mn)) + 1
	for g, v := range fi.vals {
		rank[g] = int32(v - mn)
	}
	span := func(lo, hi int64) (int, int) {
		a, b := 0, nb
		switch {
		case lo > mx:
			a = nb
		case lo > mn:
			a = int(lo - mn)
		}
		switch {
		case hi < mn:
			b = 0
		case hi < mx:
			b = int(hi-mn) + 1
		}
		return a, b
	}
	return nb, span
}

// sortedRanks ranks the versions that set the field (nset of them) by their place among
// the distinct values, sorted, for ranks.
func sortedRanks(fi *fieldIndex, rank []int32, nset int) (int, func(lo, hi int64) (int, int)) {
	vals := make([]int64, 0, nset)
	for g, v := range fi.vals {
		if fi.isSet(g) {
			vals = append(vals, v)
		}
	}
	slices.Sort(vals)
	vals = slices.Compact(vals)
	for g, v := range fi.vals {
		if fi.isSet(g) {
			r, _ := slices.BinarySearch(vals, v)
			rank[g] = int32(r)
		}
	}
	span := func(lo, hi int64) (int, int) {
		a, _ := slices.BinarySearch(vals, lo)
		b, found := slices.BinarySearch(vals, hi)
		if found {
			b++
		}
		return a, b
	}
	return len(vals), span
}

// sweep finds, for every predicate op on field name, the rows with a version in reach on
// which the predicate may hold (its value is in range, or not a plain value).
func (s *reachSource) sweep(name string, fi *fieldIndex) {
	d, h, vs := s.d, s.d.H, s.vs
	ops := s.fieldOps(name)
	if len(ops) == 0 {
		return
	}
	least := s.leastBegins(ops)
	rank, nb, span := ranks(fi)
	b := rankBuckets(rank, nb)
	var other []entry // versions whose truth is not a plain comparison
	add := func(e entry, r int32) {
		switch {
		case r >= 0:
			b.add(int(r), e)
		case r == rankOther:
			other = append(other, e)
		}
	}
	for k := range vs.byKey {
		g := vs.base[k]
		add(entry{history.Key(k), -1, s.sup[g]}, rank[g])
	}
	writers := s.writersByBegin()
	// The rows found, per op: buf[at[i]:at[i]+n[i]] for the ops on this field.
	var buf []history.Key
	at := make([]int32, len(d.predOps))
	n := make([]int32, len(d.predOps))
	mine := make([]bool, len(d.predOps))
	seen := make([]uint32, len(h.Keys))
	var gen uint32
	next := 0
	for x, i := range ops {
		if x&63 == 0 && s.ctx.Err() != nil {
			break // expandWith stops too
		}
		r := d.predOps[i].txn
		ri := s.iv[r]
		for ; next < len(writers) && s.iv[writers[next]].Begin <= ri.End; next++ {
			w := writers[next]
			for j, wr := range d.Writes[w] {
				g := vs.gid[w][j]
				add(entry{wr.Key, w, s.sup[g]}, rank[g])
			}
		}
		gen++
		start := len(buf)
		lst := least[x]
		visit := func(e entry) bool {
			if e.sup < lst {
				return false // no reader still to come reaches it
			}
			if e.sup >= ri.Begin && e.w != r && seen[e.k] != gen {
				seen[e.k] = gen
				buf = append(buf, e.k)
			}
			return true
		}
		pr := &h.Pred(h.Txns[r].Ops[d.predOps[i].op]).Pred
		lo, hi := span(pr.Lo, pr.Hi)
		b.visit(lo, hi, visit)
		if len(other) > 0 {
			other = slices.DeleteFunc(other, func(e entry) bool { return !visit(e) })
		}
		at[i], n[i], mine[i] = int32(start), int32(len(buf)-start), true
	}
	s.layOut(buf, at, n, mine)
}

// rankBuckets returns the buckets of the nb ranks, each sized to the versions of its rank
// (rank: per version). Every version enters the sweep at most once: a bucket holds at most
// the versions of its value.
func rankBuckets(rank []int32, nb int) *buckets {
	caps := make([]int32, nb)
	for _, r := range rank {
		if r >= 0 {
			caps[r]++
		}
	}
	return newBuckets(caps)
}

// fieldOps returns the predicate ops on field name, by reader End.
func (s *reachSource) fieldOps(name string) []int32 {
	d, h := s.d, s.d.H
	var ops []int32
	for i, po := range d.predOps {
		o := h.Txns[po.txn].Ops[po.op]
		if h.Pred(o).Pred.Field.String() == name {
			ops = append(ops, int32(i))
		}
	}
	end := func(i int32) int64 { return s.iv[d.predOps[i].txn].End }
	slices.SortFunc(ops, func(a, b int32) int { return cmp.Or(cmp.Compare(end(a), end(b)), cmp.Compare(a, b)) })
	return ops
}

// leastBegins returns, for each i, the least Br among the readers of ops[i:].
func (s *reachSource) leastBegins(ops []int32) []int64 {
	least := make([]int64, len(ops))
	m := int64(math.MaxInt64)
	for i := len(ops) - 1; i >= 0; i-- {
		m = min(m, s.iv[s.d.predOps[ops[i]].txn].Begin)
		least[i] = m
	}
	return least
}

// writersByBegin returns the transactions that did not abort and wrote, by Begin.
func (s *reachSource) writersByBegin() []int32 {
	d, h := s.d, s.d.H
	var writers []int32
	for t := range h.Txns {
		if h.Txns[t].Outcome != history.OutcomeAborted && len(d.Writes[t]) > 0 {
			writers = append(writers, int32(t))
		}
	}
	slices.SortFunc(writers, func(a, b int32) int { return cmp.Or(cmp.Compare(s.iv[a].Begin, s.iv[b].Begin), cmp.Compare(a, b)) })
	return writers
}

// layOut lays the rows the sweep found out by op (op i's, where mine[i], are
// buf[at[i]:at[i]+n[i]]); ops on other fields keep what they had.
func (s *reachSource) layOut(buf []history.Key, at, n []int32, mine []bool) {
	d := s.d
	total := 0
	for i := range d.predOps {
		if mine[i] {
			total += int(n[i])
		} else {
			total += int(s.opOff[i+1] - s.opOff[i])
		}
	}
	all := make([]history.Key, 0, total)
	off := make([]int32, len(d.predOps)+1)
	for i := range d.predOps {
		off[i] = int32(len(all))
		if mine[i] {
			all = append(all, buf[at[i]:at[i]+n[i]]...)
		} else {
			all = append(all, s.opKeys[s.opOff[i]:s.opOff[i+1]]...)
		}
	}
	off[len(d.predOps)] = int32(len(all))
	s.opKeys, s.opOff = all, off
}

// buckets holds entries by the rank of their value, with a two-level bitset of the
// non-empty buckets so that a range query skips empty ones. Bucket r holds at most caps[r]
// entries (newBuckets), carved from one array.
type buckets struct {
	e   []entry
	off []int32  // bucket r: e[off[r] : off[r]+n[r]]
	n   []int32  // entries per bucket
	l0  []uint64 // bit r: bucket r is non-empty
	l1  []uint64 // bit w: word w of l0 is non-zero
}

func newBuckets(caps []int32) *buckets {
	nb := len(caps)
	off := make([]int32, nb+1)
	for r, c := range caps {
		off[r+1] = off[r] + c
	}
	n0 := (nb + 63) / 64
	return &buckets{e: make([]entry, off[nb]), off: off, n: make([]int32, nb), l0: make([]uint64, n0), l1: make([]uint64, (n0+63)/64)}
}

// add puts e into bucket r, which must have room (its capacity is the number of versions
// of its value, and each version is added once).
func (b *buckets) add(r int, e entry) {
	b.e[b.off[r]+b.n[r]] = e
	b.n[r]++
	b.l0[r/64] |= 1 << (r % 64)
	b.l1[r/4096] |= 1 << ((r / 64) % 64)
}

// next returns the first non-empty bucket at or after r, or the number of buckets.
func (b *buckets) next(r int) int {
	n := len(b.n)
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
		es := b.e[b.off[r] : b.off[r]+b.n[r]]
		kept := 0
		for _, e := range es {
			if f(e) {
				es[kept] = e
				kept++
			}
		}
		b.n[r] = int32(kept)
		if kept == 0 {
			b.l0[r/64] &^= 1 << (r % 64)
			if b.l0[r/64] == 0 {
				b.l1[r/4096] &^= 1 << ((r / 64) % 64)
			}
		}
	}
}
