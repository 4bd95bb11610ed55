package deps

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

// # Predicates
//
// A predicate read sees, for every row x of its relation, one version of x: the rows it
// returned are versions on which the predicate holds, every other row is a version on which
// it does not (Vbox's invisible predicate reads, Def. 2.4). A predicate write (UPDATE …
// WHERE) reads the same way and then writes the rows it matched.
//
// In a serial execution a transaction reads the latest version of each row before it, so
// "T read some version of x on which θ is δ" is exactly an item read of x whose candidate
// writers are the writers of the versions with θ = δ (and the initial state, if θ is δ on
// it). That is a read with several candidates, which the hyper-polygraph already handles
// (one WR choice, anti-dependencies to every later writer): no separate predicate, truth or
// edge-set constraints are needed, and the reduction is exact, not an approximation:
//
//   - a serial order satisfying the history gives each such read its latest version before
//     the reader, a candidate, with every edge of that choice pointing forward;
//   - an acyclic choice gives a serial order (any topological order) in which each reader
//     directly follows the chosen version of x, whose θ is δ.
//
// Vbox's truth constraints are not needed either: a recorded predicate write says which rows
// it matched (Row.Match), so its truth is observed, not chosen.
//
// Rows whose versions all have θ ≠ δ… cannot be missed; rows whose versions all have θ = δ
// constrain nothing (every position reads such a version) and get no read, which keeps the
// expansion small: for a range predicate only the rows with a matching version somewhere
// are looked at, found through a per-field index of the versions' values.
//
// Versions are the initial state and the last write of x of every transaction that did not
// abort. A nil value is an absent row (unborn or deleted): no predicate holds on it. A
// version whose image does not set the predicate's field (a partial update) has the field
// as the transaction's earlier writes of x set it (pred_partial.go), else the field's
// previous value: when every version of x that sets the field agrees on θ, so does it;
// otherwise its truth is unknown. A version whose truth is unknown is a candidate for both
// outcomes (so no violation is invented), and the history is then only partly modelled
// ([Deps.Partial]): a violation found is real, a pass proves nothing.

// ReadKind says where an external read comes from.
type ReadKind uint8

// Read kinds.
const (
	ReadItem        ReadKind = iota // an item read (or list read)
	ReadPredVisible                 // a row a predicate read returned
	ReadPredMiss                    // a row a predicate read did not return: θ false on the version read
	ReadPredMatch                   // a row a predicate write matched: θ true on the version read
)

// predOp is a predicate operation of a transaction that did not abort, waiting for the writes
// of the whole history.
type predOp struct {
	txn, op int32
}

// extractPred handles a predicate op of transaction ti at position i, with the
// transaction's own writes so far in cur; it returns the updated cur map.
func (d *Deps) extractPred(ti int32, i int, o history.Op, cur map[history.Key]history.Value, curOp map[history.Key]int32) (map[history.Key]history.Value, map[history.Key]int32) {
	if cap(d.predOps) == 0 {
		d.reservePreds()
	}
	po := d.H.Pred(o)
	evaluable := po.Pred.IsRange
	if !evaluable {
		// A predicate known only as text: its returned rows are real reads and its matched
		// rows real writes, but what it did not return cannot be interpreted.
		d.Partial = true
		d.notePartial(fmt.Sprintf("predicate %q is not a range over an integer column, so the rows it did not return were not checked", po.Pred.Expr))
	} else {
		d.predOps = append(d.predOps, predOp{ti, int32(i)})
	}
	d.ReadsOf[ti] = slices.Grow(d.ReadsOf[ti], len(po.Rows))
	for ri, row := range po.Rows {
		if !row.Match {
			continue
		}
		if o.Kind == history.OpPredRead {
			if _, own := cur[row.Key]; own {
				continue
			}
			d.ReadsOf[ti] = append(d.ReadsOf[ti], int32(len(d.Reads)))
			d.Reads = append(d.Reads, Read{Txn: ti, Op: int32(i), Key: row.Key, Value: row.Value, Src: po.Src(ri), Kind: ReadPredVisible})
			continue
		}
		if _, own := cur[row.Key]; !own && evaluable {
			// The update read the row before writing it; which version is settled later.
			d.ReadsOf[ti] = append(d.ReadsOf[ti], int32(len(d.Reads)))
			d.Reads = append(d.Reads, Read{Txn: ti, Op: int32(i), Key: row.Key, Value: history.Nil, Kind: ReadPredMatch})
		}
		if cur == nil {
			cur = make(map[history.Key]history.Value, len(po.Rows))
			curOp = make(map[history.Key]int32, len(po.Rows))
		}
		cur[row.Key] = row.Value
		curOp[row.Key] = int32(i)
	}
	return cur, curOp
}

// reservePreds sizes d.predOps and d.Reads, on the first predicate op, for every predicate
// op and row of the history: the reads of returned and matched rows are most of a
// predicate history's reads (5 million for BlindW-Pred with up to 1,000 rows a predicate),
// and grown by doubling they were copied about twice over.
func (d *Deps) reservePreds() {
	nops, nrows := 0, 0
	for t := range d.H.Txns {
		if d.H.Txns[t].Outcome == history.OutcomeAborted {
			continue
		}
		for _, o := range d.H.Txns[t].Ops {
			if o.Kind == history.OpPredRead || o.Kind == history.OpPredWrite {
				nops++
				nrows += len(d.H.Pred(o).Rows)
			}
		}
	}
	d.predOps = make([]predOp, 0, max(1, nops))
	// cap(d.Reads)-len(d.Reads) is what Build reserved for the item reads still to come.
	// The slack is for the rows a predicate did not return, which are not known yet: with
	// real time they are few (BlindW-Pred, 10,000 transactions, up to 1,000 rows a
	// predicate: 6 % of the others), and beyond the slack expandWith copies d.Reads once
	// (0.85 s for those 5 million reads). Capacity never written costs address space, not
	// memory.
	rs := make([]Read, len(d.Reads), cap(d.Reads)+nrows+nrows/4+1024)
	copy(rs, d.Reads)
	d.Reads = rs
}

func (d *Deps) notePartial(s string) {
	if !slices.Contains(d.Notes, s) {
		d.Notes = append(d.Notes, s)
	}
}

// versions indexes, per key, the writers of its versions (transactions that did not abort),
// and per field the versions' values of that field, parsed once. Every version has a
// number, g: version j of key k (0 the initial state, 1+i the version of byKey[k][i]) is
// base[k]+j, so that per-version data lives in flat arrays, not one slice per key.
type versions struct {
	byKey [][]int32 // sub-slices of one array
	base  []int32   // per key, and base[len(byKey)] the number of versions
	gid   [][]int32 // per transaction, per write (d.Writes[t][j]): its version's number
	// fields: per field name, the field in each version; filled on first use of the field.
	fields map[string]*fieldIndex
}

// wrange returns the range of k's writers in the array byKey's slices are carved from
// (and in reachSource's arrays laid out the same way).
func (vs *versions) wrange(k history.Key) (lo, hi int32) {
	return vs.base[k] - int32(k), vs.base[k+1] - int32(k) - 1
}

// fieldVal is a version's value of one field.
type fieldVal struct {
	v     int64
	state uint8 // fieldSet, fieldAbsent (no row), fieldUnset (image without it), fieldUnknown
}

const (
	fieldSet uint8 = iota
	fieldAbsent
	fieldUnset
	fieldUnknown
)

type fieldIndex struct {
	base []int32 // versions.base
	// vals and states: the field in each version (by number); states is nil when every
	// version sets it.
	vals   []int64
	states []uint8
	// partial: per key with a version that does not set the field, what resolving it
	// needs (see truths), so that it takes no scan.
	partial map[history.Key]*partialKey
	// By value, for the scan (built on first use): set values with their keys, and the
	// keys with versions that do not set the field or are not images.
	sorted []keyVal
	other  []history.Key
	byVal  bool
}

// partialKey summarises the versions of a key some version of which does not set the field.
type partialKey struct {
	set     []int64 // the values of the versions that set it, ascending
	hasNil  bool    // some version is an absent row
	unknown bool    // some version's field is unknown (not an image): it may be inherited
}

type keyVal struct {
	v int64
	k history.Key
}

// field returns the index of one field, building it on first use.
func (d *Deps) field(vs *versions, name string) *fieldIndex {
	if fi, ok := vs.fields[name]; ok {
		return fi
	}
	h := d.H
	nk := len(vs.byKey)
	nv := vs.base[nk]
	fi := &fieldIndex{base: vs.base, vals: make([]int64, nv), partial: make(map[history.Key]*partialKey)}
	parse := func(v history.Datum) fieldVal { return parseField(v, name) }
	set := func(g int32, x fieldVal) {
		fi.vals[g] = x.v
		if x.state != fieldSet {
			if fi.states == nil {
				fi.states = make([]uint8, nv)
			}
			fi.states[g] = x.state
		}
	}
	for k := range nk {
		set(vs.base[k], parse(h.Value(h.InitialValue(history.Key(k)))))
	}
	for t, ws := range d.Writes {
		if h.Txns[t].Outcome == history.OutcomeAborted {
			continue
		}
		for j, w := range ws {
			set(vs.gid[t][j], parse(h.Value(w.Value)))
		}
	}
	d.fieldBack(vs, fi, parse)
	if fi.states != nil {
		fi.indexPartial(nk)
	}
	vs.fields[name] = fi
	return fi
}

// parseField is the field name of value v: absent (a nil row), an integer (v itself, or
// its image's column name), unset (an image without the column) or unknown (not an image).
func parseField(v history.Datum, name string) fieldVal {
	if v.IsNil() {
		return fieldVal{state: fieldAbsent}
	}
	if i, ok := v.Int(); ok {
		return fieldVal{v: i}
	}
	s, ok := v.Str()
	if !ok {
		return fieldVal{state: fieldUnknown}
	}
	n, found, ok := history.ImageInt(s, name)
	switch {
	case !ok:
		return fieldVal{state: fieldUnknown}
	case !found:
		return fieldVal{state: fieldUnset}
	}
	return fieldVal{v: n}
}

// indexPartial summarizes, for each of the nk keys with a version that leaves the field
// unset, what its other versions hold (fi.partial).
func (fi *fieldIndex) indexPartial(nk int) {
	for k := range nk {
		g0, g1 := fi.base[k], fi.base[k+1]
		if !slices.Contains(fi.states[g0:g1], fieldUnset) {
			continue
		}
		p := &partialKey{}
		for g := g0; g < g1; g++ {
			switch fi.states[g] {
			case fieldSet:
				p.set = append(p.set, fi.vals[g])
			case fieldAbsent:
				p.hasNil = true
			case fieldUnknown:
				p.unknown = true
			}
		}
		slices.Sort(p.set)
		fi.partial[history.Key(k)] = p
	}
}

// at returns the field in version g.
func (fi *fieldIndex) at(g int32) fieldVal {
	if fi.states != nil {
		return fieldVal{fi.vals[g], fi.states[g]}
	}
	return fieldVal{v: fi.vals[g]}
}

// byValue builds the by-value index of the scan: a counting sort by the values' ranks
// (see ranks) of the versions taken in key order, so sorted by value, then key.
func (fi *fieldIndex) byValue() {
	if fi.byVal {
		return
	}
	fi.byVal = true
	rank, nb, _ := ranks(fi)
	at := make([]int32, nb+1)
	for _, r := range rank {
		if r >= 0 {
			at[r+1]++
		}
	}
	for r := range nb {
		at[r+1] += at[r]
	}
	fi.sorted = make([]keyVal, at[nb])
	for k := range len(fi.base) - 1 {
		other := false
		for g := fi.base[k]; g < fi.base[k+1]; g++ {
			switch r := rank[g]; {
			case r >= 0:
				fi.sorted[at[r]] = keyVal{fi.vals[g], history.Key(k)}
				at[r]++
			case r == rankOther:
				other = true
			}
		}
		if other {
			fi.other = append(fi.other, history.Key(k))
		}
	}
}

// unsetTruth is the predicate's truth on the versions of k that do not set its field: when
// every version that sets the field agrees, so do they (a row that never had the field,
// NULL, matches no range); a nil version before a partial one would leave the field NULL,
// so only "false" is safe then, and a version whose field is unknown may be the one
// inherited, so nothing is. What stays undecided is TruthUnknown.
func (fi *fieldIndex) unsetTruth(pr *history.Predicate, k history.Key) history.Truth {
	p := fi.partial[k]
	if p == nil {
		return history.TruthFalse
	}
	if len(p.set) == 0 {
		if p.unknown {
			return history.TruthUnknown
		}
		return history.TruthFalse
	}
	i, _ := slices.BinarySearch(p.set, pr.Lo)
	setTrue := i < len(p.set) && p.set[i] <= pr.Hi
	setFalse := p.set[0] < pr.Lo || p.set[len(p.set)-1] > pr.Hi
	switch {
	case p.unknown:
	case !setTrue:
		return history.TruthFalse
	case !setFalse && !p.hasNil:
		return history.TruthTrue
	}
	return history.TruthUnknown
}

// truthOf is the predicate's truth on version g of k.
func (fi *fieldIndex) truthOf(pr *history.Predicate, k history.Key, g int32) history.Truth {
	if fi.states == nil || fi.states[g] == fieldSet {
		if v := fi.vals[g]; pr.Lo <= v && v <= pr.Hi {
			return history.TruthTrue
		}
		return history.TruthFalse
	}
	switch fi.states[g] {
	case fieldAbsent:
		return history.TruthFalse
	case fieldUnset:
		return fi.unsetTruth(pr, k)
	}
	return history.TruthUnknown
}

// expandPreds turns the predicate ops into reads once every write is known: candidates of
// matched rows, and reads of the rows a predicate did not return where that matters. With
// real time it finds the versions in reach through an index (pred_reach.go); without, every
// version of a row is in reach and a scan is as good.
func (d *Deps) expandPreds(ctx context.Context) error {
	if len(d.predOps) == 0 {
		return nil
	}
	vs := d.newVersions()
	if d.Opts.Realtime && d.Opts.Skew >= 0 {
		return d.expandWith(ctx, vs, d.newReachSource(ctx, vs))
	}
	return d.expandWith(ctx, vs, &scanSource{d: d, vs: vs})
}

// newVersions indexes the versions of every key: the last writes of the transactions that
// did not abort.
func (d *Deps) newVersions() *versions {
	h := d.H
	nk := len(h.Keys)
	vs := &versions{byKey: make([][]int32, nk), base: make([]int32, nk+1), gid: make([][]int32, len(d.Writes)), fields: make(map[string]*fieldIndex)}
	cnt := make([]int32, nk)
	nw := 0
	for t, ws := range d.Writes {
		if h.Txns[t].Outcome == history.OutcomeAborted {
			continue
		}
		for _, w := range ws {
			cnt[w.Key]++
		}
		nw += len(ws)
	}
	writers := make([]int32, nw)
	off := int32(0)
	for k := range nk {
		vs.base[k] = off + int32(k)
		vs.byKey[k] = writers[off : off : off+cnt[k]]
		off += cnt[k]
	}
	vs.base[nk] = off + int32(nk)
	gids := make([]int32, nw)
	for t, ws := range d.Writes {
		if h.Txns[t].Outcome == history.OutcomeAborted {
			continue
		}
		g := gids[:len(ws):len(ws)]
		gids = gids[len(ws):]
		for j, w := range ws {
			g[j] = vs.base[w.Key] + 1 + int32(len(vs.byKey[w.Key]))
			vs.byKey[w.Key] = append(vs.byKey[w.Key], int32(t))
		}
		vs.gid[t] = g
	}
	return vs
}

// verTruth is a version of a row a reader may have read (index j: 0 the initial state,
// 1+i the version of versions.byKey[k][i]) and the predicate's truth on it.
type verTruth struct {
	j int32
	t history.Truth
}

// predSource finds, for the predicate ops, the rows that matter and the versions in reach.
// The two implementations must give the same reads: scanSource looks at every version,
// reachSource only at those real time leaves in reach.
type predSource interface {
	// keys returns the rows predicate op i (d.predOps[i]) may have missed: a superset of
	// the rows with a version in reach on which the predicate is not false, each once.
	keys(i int, pr *history.Predicate, fi *fieldIndex, dst []history.Key) []history.Key
	// reach returns the versions of k reader r may have read, with the predicate's truth
	// on each (never TruthUnset): versions in ascending order, then the initial state.
	reach(r int32, k history.Key, pr *history.Predicate, fi *fieldIndex, dst []verTruth) []verTruth
}

// expandWith is expandPreds over a given source of keys and versions.
func (d *Deps) expandWith(ctx context.Context, vs *versions, src predSource) error {
	if err := context.Cause(ctx); err != nil {
		return err
	}
	bound := d.predWords()
	if _, ok := src.(*scanSource); ok {
		if err := d.scanFits(ctx, vs, bound); err != nil {
			return err
		}
	}
	x := d.newExpansion(vs, src, bound)
	for i, po := range d.predOps {
		if i&63 == 0 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if err := x.op(i, po); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		// The sweep stops early when cancelled, leaving ops without their rows: never
		// return what it left unfinished as if it were complete.
		return context.Cause(ctx)
	}
	x.appendMisses()
	if x.undecided > 0 {
		d.Partial = true
		d.Undecided = fmt.Sprintf("%d predicate evaluations could not be decided (partial row images, or values that are not rows), e.g. %s: the versions they may have seen were taken either way, so a pass proves nothing", x.undecided, x.example)
	}
	x.falseRows.note(d)
	return nil
}

// scanFits refuses, before any read is made, a scan whose reads cannot fit in bound words.
// Without real time the reads can need gigabytes, and finding that out by making them took
// 10 s (BlindW-Pred, 10,000 transactions, up to 100 rows a predicate). A count of reads
// they must at least make settles it at once.
func (d *Deps) scanFits(ctx context.Context, vs *versions, bound int) error {
	n, err := d.missFloor(ctx, vs, bound/readWords)
	if err != nil {
		return err
	}
	if n > bound/readWords {
		return fmt.Errorf("%w: the predicate reads need more than %d MiB (at least %d rows not returned, by %d predicate operations): every version of such a row in reach of the reader is a candidate, and without real time every version is in reach", ErrUnsupported, bound>>18, n, len(d.predOps))
	}
	return nil
}

// expansion is the state of one expandWith: scratch reused from one predicate op to the
// next, and what the ops gather (the reads of rows not returned, the evaluations left
// undecided, the returned rows on which the predicate holds on no version).
type expansion struct {
	d     *Deps
	vs    *versions
	src   predSource
	bound int
	// budget is what is left of bound for the reads of rows not returned.
	budget int
	// matchRead[k] is the read of row k of the current update (extractPred made one per
	// matched row the transaction had not written), valid when matchGen[k] == gen.
	matchRead []int32
	matchGen  []uint32
	// returned[k] == gen: row k was returned (matched) by the current op.
	returned []uint32
	gen      uint32
	vt       []verTruth
	cs       []int32
	ar       arena
	keys     []history.Key
	own      *ownWrites
	oc       *ownCtx
	// misses are the reads of rows not returned, appended to d.Reads once all are known
	// (d.Reads is sized for the others: growing it by doubling copied it about twice over).
	misses    []miss
	falseRows returnedFalse
	undecided int
	example   string
}

// miss is a read of a row a predicate op did not return, with its candidates.
type miss struct {
	txn, op int32
	k       history.Key
	cands   []int32
}

func (d *Deps) newExpansion(vs *versions, src predSource, bound int) *expansion {
	nk := len(d.H.Keys)
	return &expansion{
		d: d, vs: vs, src: src, bound: bound, budget: bound,
		matchRead: make([]int32, nk),
		matchGen:  make([]uint32, nk),
		returned:  make([]uint32, nk),
		own:       &ownWrites{at: make([]uint32, nk), val: make([]history.Value, nk)},
		oc:        &ownCtx{txn: -1},
	}
}

// undecidable counts an evaluation of pr on row k that could not be decided, keeping the
// first as the example.
func (x *expansion) undecidable(pr *history.Predicate, k history.Key) {
	x.undecided++
	if x.example == "" {
		x.example = fmt.Sprintf("%q on row %v", pr.Expr, x.d.H.Key(k))
	}
}

// op expands predicate op i (po): the rows an update matched, the rows its transaction
// wrote itself, the rows a read returned, and the rows it did not return.
func (x *expansion) op(i int, po predOp) error {
	h := x.d.H
	t := &h.Txns[po.txn]
	o := t.Ops[po.op]
	pr := &h.Pred(o).Pred
	fi := x.d.field(x.vs, pr.Field.String())
	x.d.ownWritesBefore(t, int(po.op), x.own)
	x.gen++
	for _, row := range h.Pred(o).Rows {
		if row.Match {
			x.returned[row.Key] = x.gen
		}
	}
	if o.Kind == history.OpPredWrite {
		x.matched(po, t, o, pr, fi)
	}
	x.ownRows(po, t, pr, fi)
	if o.Kind == history.OpPredRead {
		x.returnedRows(po, t, o, pr, fi)
	}
	return x.notReturned(i, po, pr, fi)
}

// matched gives the rows an update matched their candidates: the versions on which θ
// holds, or, for a row the transaction wrote before, checks θ on its own version.
func (x *expansion) matched(po predOp, t *history.Txn, o history.Op, pr *history.Predicate, fi *fieldIndex) {
	d := x.d
	for _, ri := range d.ReadsOf[po.txn] {
		if r := &d.Reads[ri]; r.Op == po.op && r.Kind == ReadPredMatch {
			x.matchRead[r.Key], x.matchGen[r.Key] = ri, x.gen
		}
	}
	for _, row := range d.H.Pred(o).Rows {
		if !row.Match {
			continue
		}
		if v, ok := x.own.get(row.Key); ok {
			switch d.ownTruth(x.oc, po.txn, int(po.op), row.Key, v, pr, fi, x.vs) {
			case history.TruthFalse:
				d.predInternal(t, pr, row.Key, v, true)
			case history.TruthUnknown:
				x.undecidable(pr, row.Key)
			}
			continue
		}
		if x.matchGen[row.Key] != x.gen {
			continue
		}
		ri := x.matchRead[row.Key]
		x.vt = x.src.reach(po.txn, row.Key, pr, fi, x.vt[:0])
		if hasTruth(x.vt, history.TruthUnknown) {
			x.undecidable(pr, row.Key)
		}
		x.cs = d.predCands(x.cs[:0], row.Key, x.vs, x.vt, history.TruthTrue)
		d.Reads[ri].Cands = x.ar.clone(x.cs)
	}
}

// ownRows checks θ on the rows the transaction wrote itself and the op did not return: the
// predicate sees its own version. (In key order: the findings come out the same on every
// run.)
func (x *expansion) ownRows(po predOp, t *history.Txn, pr *history.Predicate, fi *fieldIndex) {
	d := x.d
	slices.Sort(x.own.keys)
	for _, k := range x.own.keys {
		if v := x.own.val[k]; x.returned[k] != x.gen {
			switch d.ownTruth(x.oc, po.txn, int(po.op), k, v, pr, fi, x.vs) {
			case history.TruthTrue:
				d.predInternal(t, pr, k, v, false)
			case history.TruthUnknown:
				x.undecidable(pr, k)
			}
		}
	}
}

// returnedRows checks θ on the rows a predicate read returned: its own version must be the
// one it wrote last and satisfy θ, another's version must satisfy θ too.
func (x *expansion) returnedRows(po predOp, t *history.Txn, o history.Op, pr *history.Predicate, fi *fieldIndex) {
	d := x.d
	p := d.H.Pred(o)
	for ri, row := range p.Rows {
		if !row.Match {
			continue
		}
		v, ok := x.own.get(row.Key)
		switch {
		case ok && row.Value != v:
			d.predInternal(t, pr, row.Key, v, false)
		case ok:
			// Its own version, returned: the predicate must hold on it.
			switch d.ownTruth(x.oc, po.txn, int(po.op), row.Key, v, pr, fi, x.vs) {
			case history.TruthFalse:
				d.predReturnedOwnFalse(t, pr, row.Key, v)
			case history.TruthUnknown:
				x.undecidable(pr, row.Key)
			}
		default:
			// Another's version, returned: the predicate must hold on it too.
			switch d.visibleTruth(po.txn, row.Key, row.Value, p.Src(ri), pr, fi, x.vs) {
			case history.TruthFalse:
				x.falseRows.add(d, t, pr, row)
			case history.TruthUnknown:
				x.undecidable(pr, row.Key)
			}
		}
	}
}

// notReturned makes the reads of the rows op i (po) did not return: θ was false on the
// version read. It fails once they need more than the bound.
func (x *expansion) notReturned(i int, po predOp, pr *history.Predicate, fi *fieldIndex) error {
	d := x.d
	own, returned, gen := x.own, x.returned, x.gen
	// The scratch is in locals for the loop below, handed back when it ends.
	vt, cs := x.vt, x.cs
	defer func() { x.vt, x.cs = vt, cs }()
	x.keys = x.src.keys(i, pr, fi, x.keys[:0])
	for _, k := range x.keys {
		if own.at[k] == own.gen || returned[k] == gen {
			continue
		}
		vt = x.src.reach(po.txn, k, pr, fi, vt[:0])
		anyTrue, anyUnknown := false, false
		for _, v := range vt {
			anyTrue = anyTrue || v.t == history.TruthTrue
			anyUnknown = anyUnknown || v.t == history.TruthUnknown
		}
		if !anyTrue && !anyUnknown {
			continue // θ is false on every version the reader may see: any position reads one
		}
		if anyUnknown {
			// Which version the predicate may have seen is not known: the row is not
			// checked (no violation can come of it), and a pass proves nothing.
			x.undecidable(pr, k)
			continue
		}
		cs = d.predCands(cs[:0], k, x.vs, vt, history.TruthFalse)
		if x.budget -= readWords + len(cs); x.budget < 0 {
			return fmt.Errorf("%w: the predicate reads need more than %d MiB (%d rows not returned so far, by %d of %d predicate operations): every version of such a row in reach of the reader is a candidate, and without real time every version is in reach", ErrUnsupported, x.bound>>18, len(x.misses), i+1, len(d.predOps))
		}
		x.misses = append(x.misses, miss{po.txn, po.op, k, x.ar.clone(cs)})
	}
	return nil
}

// appendMisses appends the reads of rows not returned to d.Reads and d.ReadsOf, growing
// d.Reads once.
func (x *expansion) appendMisses() {
	d, misses := x.d, x.misses
	if len(d.Reads)+len(misses) > cap(d.Reads) {
		rs := make([]Read, len(d.Reads), len(d.Reads)+len(misses))
		copy(rs, d.Reads)
		d.Reads = rs
	}
	for i := 0; i < len(misses); {
		// The misses of one transaction are consecutive (d.predOps is in transaction order).
		t := misses[i].txn
		j := i + 1
		for j < len(misses) && misses[j].txn == t {
			j++
		}
		d.ReadsOf[t] = slices.Grow(d.ReadsOf[t], j-i)
		for _, m := range misses[i:j] {
			d.ReadsOf[t] = append(d.ReadsOf[t], int32(len(d.Reads)))
			d.Reads = append(d.Reads, Read{Txn: m.txn, Op: m.op, Key: m.k, Value: history.Nil, Kind: ReadPredMiss, Cands: m.cands})
		}
		i = j
	}
}

// missFloor counts reads of rows a predicate did not return that expandWith must make
// without real time: rows with a version (not the reader's) on which the predicate holds,
// that the op did not return and its transaction does not write, and whose versions all
// set the field or are absent rows (so none is undecided). Each such row has a version in
// reach on which the predicate holds and none of unknown truth, so it becomes a read. It
// stops counting once past limit.
func (d *Deps) missFloor(ctx context.Context, vs *versions, limit int) (int, error) {
	h := d.H
	seen := make([]uint32, len(h.Keys))
	var gen uint32
	n := 0
	for i, po := range d.predOps {
		if i&63 == 0 && ctx.Err() != nil {
			return 0, context.Cause(ctx)
		}
		p := h.Pred(h.Txns[po.txn].Ops[po.op])
		pr := &p.Pred
		fi := d.field(vs, pr.Field.String())
		fi.byValue()
		gen++
		d.markSettled(seen, gen, po, p, fi)
		j, _ := slices.BinarySearchFunc(fi.sorted, pr.Lo, func(a keyVal, v int64) int { return cmp.Compare(a.v, v) })
		for ; j < len(fi.sorted) && fi.sorted[j].v <= pr.Hi; j++ {
			if k := fi.sorted[j].k; seen[k] != gen {
				seen[k] = gen
				n++
			}
		}
		if n > limit {
			break
		}
	}
	return n, nil
}

// defaultPredWords bounds, in 4-byte words, what the reads of rows a predicate did not
// return may take when Options.PredWords is 0 (a read is about readWords, plus its
// candidates): 1 GiB. Beyond it the check stops with ErrUnsupported (verdict unknown)
// instead of running out of memory. Without real time every version of a row that may be
// missed is a candidate: BlindW-Pred with 1 to 100 rows a predicate and 10,000 transactions
// needs about 20 million such reads with 40 candidates each.
const defaultPredWords = 1 << 28

// predWords is the bound in force (Options.PredWords, or the default).
func (d *Deps) predWords() int {
	if d.Opts.PredWords > 0 {
		return d.Opts.PredWords
	}
	return defaultPredWords
}

const readWords = 32

// markSettled marks in seen (with gen) the rows missFloor does not count for predicate op
// po (payload p, on field fi): those it returned, those its transaction writes, and those
// with a version that does not set the field or is not an image (fi.other).
func (d *Deps) markSettled(seen []uint32, gen uint32, po predOp, p *history.PredOp, fi *fieldIndex) {
	for _, row := range p.Rows {
		if row.Match {
			seen[row.Key] = gen
		}
	}
	for _, w := range d.Writes[po.txn] {
		seen[w.Key] = gen
	}
	for _, k := range fi.other {
		seen[k] = gen
	}
}

// arena hands out the candidate lists of the predicate reads from large blocks: millions of
// short lists, one allocation per block instead of one each.
type arena struct{ buf []int32 }

// clone copies s into the arena; the copy's capacity is its length, so appending to it
// never writes into its neighbour.
func (a *arena) clone(s []int32) []int32 {
	if len(s) == 0 {
		return nil
	}
	if cap(a.buf)-len(a.buf) < len(s) {
		a.buf = make([]int32, 0, max(1<<14, len(s)))
	}
	n := len(a.buf)
	a.buf = append(a.buf, s...)
	return a.buf[n:len(a.buf):len(a.buf)]
}

func hasTruth(vt []verTruth, t history.Truth) bool {
	for _, x := range vt {
		if x.t == t {
			return true
		}
	}
	return false
}

// scanSource finds the rows and versions by looking at every version of a row.
type scanSource struct {
	d    *Deps
	vs   *versions
	iv   []history.Interval // with real time: as Deps.Iv reads it (timeIntervals)
	tv   []history.Truth
	seen []uint32
	gen  uint32
}

func (s *scanSource) keys(_ int, pr *history.Predicate, fi *fieldIndex, dst []history.Key) []history.Key {
	if s.seen == nil {
		s.seen = make([]uint32, len(s.d.H.Keys))
	}
	s.gen++
	return predKeys(pr, fi, dst, s.seen, s.gen)
}

func (s *scanSource) reach(r int32, k history.Key, pr *history.Predicate, fi *fieldIndex, dst []verTruth) []verTruth {
	s.tv = truths(pr, fi, k, s.tv)
	if s.iv == nil && s.d.Opts.Realtime {
		s.iv = s.d.timeIntervals()
	}
	s.d.feasible(r, k, s.vs, s.iv, s.tv)
	for i, x := range s.tv[1:] {
		if x != infeasible {
			dst = append(dst, verTruth{int32(1 + i), x})
		}
	}
	if s.tv[0] != infeasible {
		dst = append(dst, verTruth{0, s.tv[0]})
	}
	return dst
}

// ownWrites is a transaction's own last writes before a predicate op: a key's entry is
// valid when at[k] == gen (dense per key, so that no map is built per op).
type ownWrites struct {
	gen  uint32
	at   []uint32
	val  []history.Value
	keys []history.Key // the keys written
}

func (w *ownWrites) get(k history.Key) (history.Value, bool) {
	if w.at[k] == w.gen {
		return w.val[k], true
	}
	return history.Nil, false
}

func (w *ownWrites) set(k history.Key, v history.Value) {
	if w.at[k] != w.gen {
		w.at[k] = w.gen
		w.keys = append(w.keys, k)
	}
	w.val[k] = v
}

// ownWritesBefore fills own with the transaction's own last writes before op i.
func (d *Deps) ownWritesBefore(t *history.Txn, i int, own *ownWrites) {
	own.gen++
	own.keys = own.keys[:0]
	d.eachWrite(t.Ops[:i], func(_ int, k history.Key, v history.Value, _ history.OpKind) { own.set(k, v) })
}

// predInternal records a predicate that disagrees with the transaction's own write.
func (d *Deps) predInternal(t *history.Txn, pr *history.Predicate, k history.Key, v history.Value, matched bool) {
	h := d.H
	if t.Outcome != history.OutcomeCommitted {
		d.intBad[t.ID] = true
		return
	}
	msg := fmt.Sprintf("%s's predicate %q did not return row %v as %s had itself written it, %s", h.Name(t.ID), pr.Expr, h.Key(k), h.Name(t.ID), h.KV(k, v))
	if matched {
		msg = fmt.Sprintf("%s's update with predicate %q changed row %v, although %s had itself written %s, which does not match it", h.Name(t.ID), pr.Expr, h.Key(k), h.Name(t.ID), h.KV(k, v))
	}
	d.Findings = append(d.Findings, report.Anomaly{Kind: anomaly.Internal, Txns: []history.TxnID{t.ID}, Key: k, Message: msg})
}

// truths evaluates the predicate on every version of k: dst[0] is the initial state,
// dst[1+i] the version of vs.byKey[k][i]. Unset fields are resolved as the package comment
// says; what stays unknown is TruthUnknown.
func truths(pr *history.Predicate, fi *fieldIndex, k history.Key, dst []history.Truth) []history.Truth {
	dst = dst[:0]
	g0, g1 := fi.base[k], fi.base[k+1]
	vals := fi.vals[g0:g1]
	if fi.states == nil {
		// Every version sets the field.
		for _, v := range vals {
			t := history.TruthFalse
			if pr.Lo <= v && v <= pr.Hi {
				t = history.TruthTrue
			}
			dst = append(dst, t)
		}
		return dst
	}
	states := fi.states[g0:g1]
	var set [2]bool
	unset, hasNil, unknown := false, false, false
	for j, v := range vals {
		x := fieldVal{v, states[j]}
		t := history.TruthUnknown
		switch x.state {
		case fieldSet:
			t = history.TruthFalse
			if pr.Lo <= x.v && x.v <= pr.Hi {
				t = history.TruthTrue
			}
			set[t] = true
		case fieldAbsent:
			t, hasNil = history.TruthFalse, true
		case fieldUnset:
			t, unset = history.TruthUnset, true
		default:
			unknown = true
		}
		dst = append(dst, t)
	}
	if unset {
		// Every version that sets the field agrees: so do the ones inheriting it (a row
		// that never had the field, NULL, matches no range). A nil version before a partial
		// one would leave the field NULL: only "false" is safe then. A version whose field
		// is unknown may be the one inherited: nothing is safe.
		r := history.TruthUnknown
		switch {
		case unknown:
		case !set[history.TruthTrue]:
			r = history.TruthFalse
		case !set[history.TruthFalse] && !hasNil:
			r = history.TruthTrue
		}
		for i, x := range dst {
			if x == history.TruthUnset {
				dst[i] = r
			}
		}
	}
	return dst
}

// infeasible marks, in a truths slice, a version the reader cannot have read.
const infeasible history.Truth = 255

// feasible marks in tv the versions of k reader r cannot have read: its own, and with real
// time (strict levels) those real time rules out. A version whose writer began after r
// ended comes after r; a version (or the initial state) followed, by real time, by a
// committed write that ended before r began was overwritten before r (committed writers
// ordered by real time are ordered so on every key, Vbox's W^t). Reading either would close
// a cycle with certain edges, so no solution can choose it, and leaving it out can neither
// hide nor invent a violation; it lets rows whose only matching versions are out of reach
// drop out altogether. Time is read as the real-time edges read it, iv = [Deps.timeIntervals]:
// a transaction of unknown outcome may end at any time (+inf), one without an interval is
// unbounded, so neither ever overwrites a version by time nor has one overwritten.
func (d *Deps) feasible(r int32, k history.Key, vs *versions, iv []history.Interval, tv []history.Truth) {
	ws := vs.byKey[k]
	for i, w := range ws {
		if w == r {
			tv[1+i] = infeasible
		}
	}
	if !d.Opts.Realtime {
		return
	}
	h := d.H
	ri := iv[r]
	// The latest begin among committed writers that ended before r began.
	var mb int64
	found := false
	for _, w := range ws {
		if w == r || h.Txns[w].Outcome != history.OutcomeCommitted {
			continue
		}
		if wi := iv[w]; wi.End < ri.Begin && (!found || wi.Begin > mb) {
			mb, found = wi.Begin, true
		}
	}
	if found {
		tv[0] = infeasible
	}
	for i, w := range ws {
		if w == r {
			continue
		}
		wi := iv[w]
		if ri.End < wi.Begin || (found && wi.End < mb) {
			tv[1+i] = infeasible
		}
	}
}

// predCands lists the writers of the versions in vt on which θ may be want.
func (d *Deps) predCands(dst []int32, k history.Key, vs *versions, vt []verTruth, want history.Truth) []int32 {
	for _, x := range vt {
		if x.t == want || x.t == history.TruthUnknown {
			if x.j == 0 {
				dst = append(dst, d.Init)
			} else {
				dst = append(dst, vs.byKey[k][x.j-1])
			}
		}
	}
	return dst
}

// predKeys returns the keys on some version of which the predicate may hold: the keys of
// versions whose image sets the field within the range, and those with versions that do not
// set it or are not images (the initial state counts as a version).
func predKeys(pr *history.Predicate, fi *fieldIndex, dst []history.Key, seen []uint32, gen uint32) []history.Key {
	fi.byValue()
	lo, _ := slices.BinarySearchFunc(fi.sorted, pr.Lo, func(a keyVal, v int64) int { return cmp.Compare(a.v, v) })
	dst = dst[:0]
	for i := lo; i < len(fi.sorted) && fi.sorted[i].v <= pr.Hi; i++ {
		if k := fi.sorted[i].k; seen[k] != gen {
			seen[k] = gen
			dst = append(dst, k)
		}
	}
	for _, k := range fi.other {
		if seen[k] != gen {
			seen[k] = gen
			dst = append(dst, k)
		}
	}
	return dst
}

// predNoSource explains a committed predicate read left without a candidate version.
func (d *Deps) predNoSource(r *Read) report.Anomaly {
	h := d.H
	t := history.TxnID(r.Txn)
	pr := &h.Pred(h.Txns[t].Ops[r.Op]).Pred
	a := report.Anomaly{Txns: []history.TxnID{t}, Key: r.Key}
	if r.Kind == ReadPredMiss {
		a.Kind = anomaly.Phantom
		a.Message = fmt.Sprintf("%s's predicate %q did not return row %v, but every version of %v that may have committed matches it", h.Name(t), pr.Expr, h.Key(r.Key), h.Key(r.Key))
		return a
	}
	a.Kind = anomaly.ThinAirRead
	a.Message = fmt.Sprintf("%s's update with predicate %q changed row %v, but no version of %v that may have committed matches it", h.Name(t), pr.Expr, h.Key(r.Key), h.Key(r.Key))
	return a
}
