// Package deps computes what a history fixes for certain about the order of its transactions:
// which transactions count (committed, of unknown outcome, excluded), each transaction's
// external reads and final writes, the candidate writers of every read, and the known edges
// of the dependency graph: session order (SO), certain write-read edges (WR), real-time order
// (RT), write orders fixed by time (Vbox's W^t) and the anti-dependencies (RW) they imply.
// Every edge is typed and carries its reason (key, values), so a cycle among them is a
// witness as it stands.
//
// # Model
//
// Following VeriStrong (Cai et al., PVLDB 2026, §2), a transaction T reads x externally when
// it reads x before writing it (every such read counts, not only the first); T's write of x is
// its last write of x. A read may read from any other transaction whose last write of x has
// the value read (values may repeat), or from the initial state. Reads after the
// transaction's own write must return it (INT); otherwise the history fails at once.
//
// # Graph nodes
//
// Transactions are nodes 0..n-1 (their [history.TxnID]); node n is the initial state Init.
// Two kinds of virtual nodes keep the graph linear in size:
//
//   - an init-version node ρ(k) per key whose initial value is read: readers of the initial
//     version point to ρ(k) and ρ(k) points to every writer of k, standing for the
//     anti-dependencies reader → writer (a reader that also writes k points to the other
//     writers directly, never to itself: the read-modify-write self-loop of VeriStrong's
//     erratum);
//   - time nodes, for the real-time order (strict levels): a chain c1→c2→… over the distinct
//     (widened) begin times, with c→B for the transactions B beginning at c and A→c for the
//     first c after A ends, so A reaches B through the chain exactly when A ended before B
//     began, with 3n edges instead of n².
//
// # Client time
//
// Real time is derived from [Deps.Iv], never from the history's intervals directly, because
// two kinds of transaction have no known end:
//
//   - a transaction of unknown outcome ends at +inf: the client gave up at its recorded end,
//     but the server may have committed it later (Jepsen's indeterminate ops complete
//     infinitely late). It keeps its in-edges (it certainly began at its begin) and gets no
//     out-edges, whether it is Maybe or was promoted to Committed;
//   - a transaction without a client interval is unbounded: no real-time edge in or out.
//     [Deps.Untimed] counts the counted ones; a checker must not pass a history with
//     Untimed > 0 (the real times might have closed a cycle), while a violation found
//     without them is real (it needs fewer constraints).
//
// Either way the real-time order only loses edges, so every cycle found is a cycle of the
// true real-time order.
//
// # Unknown outcomes
//
// A transaction of unknown outcome counts only if some counted read may read from it;
// otherwise it is excluded (removing a transaction nobody read from keeps a serial order
// valid). If it is the only possible writer of a committed read, it committed. Edges that
// need it to have committed are [Guarded] by it.
//
// # Local names
//
//	h History   t, r, w txn   k Key   v Value   d *Deps   e Edge
package deps

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

// ErrUnsupported is returned for operations the black-box checkers do not handle yet.
var ErrUnsupported = errors.New("deps: unsupported operation")

// UnsupportedNotes are the report notes for a history Build refused with ErrUnsupported
// (err) under options o: why and, when the level ignores the client time h records, that
// realtimeLevel (the level's real-time counterpart) bounds each read's candidate versions
// by it, which often decides such a history.
func UnsupportedNotes(err error, h *history.History, o Options, realtimeLevel string) []string {
	notes := []string{"the black-box checker cannot decide this history yet: " + err.Error()}
	if !o.Realtime && h.HasTime() {
		notes = append(notes, "the history records client time: at --level "+realtimeLevel+", real time bounds the versions each read may have seen, which often decides histories this level cannot (a violation found there need not be one here)")
	}
	return notes
}

// settledThrough settles rep by sub, the report of the check at rt, when sub decided: a
// pass passes rep, with a note and rt's follow-up; a failure makes rep Unknown, naming it
// in a note. It reports whether sub decided.
func settledThrough(rep *report.Report, err error, h *history.History, o Options, rt anomaly.Level, sub *report.Report) bool {
	if sub.Proved() {
		rep.Verdict = report.Pass
		rep.Notes = append(append(rep.Notes, "passed by passing "+rt.String()+", which implies this level (without real time, the rows predicates did not return were too many to resolve)"), sub.Notes...)
		rep.Followup = &report.Followup{Level: rt, Verdict: report.Pass, Why: "this level passed through it"}
		return true
	}
	if sub.Verdict == report.Fail && len(sub.Anomalies) > 0 {
		rep.Verdict = report.Unknown
		rep.Notes = append(rep.Notes, UnsupportedNotes(err, h, o, "")[0], // (the hint to try rt: done)
			fmt.Sprintf("%s, which real time decides here, does not hold (first: %s); that need not be a violation at this level", rt, sub.Anomalies[0].Name()))
		return true
	}
	return false
}

// Refused settles rep after Build refused h with err (ErrUnsupported) under o, at a level
// whose real-time counterpart is rt. Without real time, a row a predicate did not return
// may have read any of its non-matching versions, and Build refuses more than its bound of
// such reads; with client time, rt bounds them to the versions in reach, and its pass
// implies the level. So when o has no real time, h records client time and through is not
// nil, Refused runs through (the check at rt): a pass there passes rep, with a note and
// rt's follow-up; a failure there is named in a note. Otherwise, and then, rep is Unknown
// with err's notes. It returns whether rep passed, and through's error when ctx ended.
func Refused(ctx context.Context, rep *report.Report, err error, h *history.History, o Options, rt anomaly.Level, through func() (*report.Report, error)) (bool, error) {
	if !o.Realtime && h.HasTime() && through != nil {
		sub, serr := through()
		if serr != nil && ctx.Err() != nil {
			return false, serr
		}
		if serr == nil && settledThrough(rep, err, h, o, rt, sub) {
			return rep.Verdict == report.Pass, nil
		}
	}
	rep.Verdict = report.Unknown
	rep.Notes = append(rep.Notes, UnsupportedNotes(err, h, o, rt.String())...)
	return false, nil
}

// ErrNoTime is returned for real-time order on a history in which no transaction has a
// client interval.
var ErrNoTime = errors.New("deps: real-time order needs a client interval, and no transaction has one")

// Options select which orders are known.
type Options struct {
	Session  bool  // session order is part of the level
	Realtime bool  // real-time order is part of the level (needs client intervals)
	Skew     int64 // clock-skew allowance in ns; widens every interval on both sides
	// NoEdges stops Build before the known edges (session order, real time, certain reads
	// and what they imply): Known and Guarded stay empty until [Deps.BuildEdges]. The
	// strict fast path of internal/check/ser needs only the reads and writes.
	NoEdges bool
	// PredWords bounds, in 4-byte words, the reads of rows predicates did not return
	// (0: 1 GiB, defaultPredWords); beyond it Build stops with ErrUnsupported.
	PredWords int
}

// Status says whether a transaction takes part in the check.
type Status uint8

// Statuses.
const (
	Excluded  Status = iota // aborted, or of unknown outcome and read by nobody
	Committed               // committed (or of unknown outcome but certainly read from)
	Maybe                   // of unknown outcome, possibly read from: a choice
)

// NodeKind is the kind of a graph node.
type NodeKind uint8

// Node kinds.
const (
	NodeTxn         NodeKind = iota
	NodeInit                 // the initial state
	NodeInitVersion          // ρ(k): stands for "after the initial version of k"
	NodeTime                 // a point of the real-time chain
	NodeVersion              // ν(w,k): stands for "after w's version of k" (made by the polygraph)
)

// Node describes a graph node.
type Node struct {
	Kind NodeKind
	Key  history.Key // NodeInitVersion, NodeVersion
	Time int64       // NodeTime
	Txn  int32       // NodeVersion: the writer
}

// Read is an external read with its candidate writers (transaction nodes or Init).
type Read struct {
	Txn   int32
	Op    int32
	Key   history.Key
	Value history.Value
	Cands []int32
	// Prefix is, for a list read, the list observed (without the reader's own appends):
	// Value is its last element (Nil if empty), and its order is the version order.
	Prefix []history.Value
	// Needs are the other transactions whose appends the list shows: if the reader
	// committed, they committed.
	Needs []int32
	// Via is, for a synthetic read (Op < 0), the list read that shows it: the transaction
	// directly follows the version it "read".
	Via int32
	// Src is the explicit source the format gave, if any.
	Src history.Src
	// Kind says whether the read is an item read or one row of a predicate operation (Op).
	Kind ReadKind
}

// Write is a transaction's last write of a key.
type Write struct {
	Key   history.Key
	Value history.Value
	Op    int32
}

// Edge is a typed edge with its reason.
type Edge struct {
	From, To int32
	Rel      report.Rel
	Key      history.Key   // -1 for so/rt
	Value    history.Value // wr: the value read; rw: the value the reader saw; ww: the first write
	Value2   history.Value // rw, ww: the overwriting value
	Via      int32         // rw: the writer the reader read from (Init for the initial state); else -1
	// Guards are transactions of unknown outcome that must have committed for the edge to
	// exist (-1: none).
	Guards [3]int32
}

// Deps is the result of [Build]. It is immutable after Build.
type Deps struct {
	H    *history.History
	Opts Options
	N    int   // transactions
	Init int32 // node of the initial state

	Status  []Status  // per transaction
	Nodes   []Node    // per graph node
	Reads   []Read    // external reads of counted transactions
	ReadsOf [][]int32 // per transaction: indexes into Reads
	Writes  [][]Write // per transaction: last writes, sorted by key
	// Writers per key: counted transactions writing it, ascending.
	Writers [][]int32
	// InitVersion per key: the ρ(k) node, or -1.
	InitVersion []int32

	Known   []Edge // certain edges (no guards)
	Guarded []Edge // edges certain if their guards committed

	// Findings are violations found while building (INT, aborted, intermediate and
	// thin-air reads). Any finding fails the history.
	Findings []report.Anomaly
	Notes    []string
	// Undecided, when not empty, is the sentence that counts the predicate evaluations the
	// analysis left open (Partial is set with it): a checker shows it unless it decides them
	// later (the strict fast path's replay on whole rows, or real time).
	Undecided string
	// Partial is set when some operations were only partly modelled (predicates): a
	// violation found is real, but finding none proves nothing.
	Partial bool
	// Untimed is, with Realtime, the number of counted transactions without a client
	// interval: they have no real-time edges (see "Client time"), so a violation found is
	// real, but finding none proves nothing.
	Untimed int

	intBad []bool // unknown-outcome transactions that broke INT: they cannot have committed

	predOps []predOp // predicate operations, expanded once every write is known

	hasLists   bool
	hasAppends bool    // some counted transaction appends (hasLists: some reads a list)
	edges      bool    // BuildEdges ran
	wbuf       []Write // backing store of Writes for transactions of item operations only
	rbuf       []int32 // and of their ReadsOf
	cbuf       []int32 // backing store of single-candidate Cands
	appender   func(history.Key, history.Value) (int32, bool)

	// Time (Realtime only).
	// Iv is the widened interval per transaction as real time uses it: End is +inf
	// (math.MaxInt64) for unknown outcomes, and [-inf, +inf] without a client interval.
	Iv       []history.Interval
	byBegin  [][]int32 // per key: committed writers with a client interval, by begin
	sufMin   [][]int64 // per key: suffix minimum of End over byBegin
	timeNode []int32   // per distinct begin index: chain node
}

// Build computes the known dependencies of h under o.
func Build(h *history.History, o Options) (*Deps, error) {
	return BuildContext(context.Background(), h, o)
}

// BuildContext is [Build], stopping with the context's cause when ctx is done (expanding the
// predicates of a large history can take minutes). Its phases, in order: each counted
// transaction's external reads and last writes (and INT), the predicates' rows, the list
// orders, each read's candidate writers, which transactions count, the findings of reads
// left with no candidate, the writers per key, and the known edges.
func BuildContext(ctx context.Context, h *history.History, o Options) (*Deps, error) {
	if o.Realtime && !slices.ContainsFunc(h.Txns, func(t history.Txn) bool { return t.HasTime }) {
		return nil, ErrNoTime
	}
	d := newDeps(h, o)
	if err := d.buildReads(ctx); errors.Is(err, errClosed) {
		return d, nil // Findings fail the history; callers build nothing on d
	} else if err != nil {
		return nil, err
	}
	if err := d.buildCounted(ctx); err != nil {
		return nil, err
	}
	if !o.NoEdges {
		if err := d.BuildEdgesContext(ctx); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// buildReads is BuildContext's first half: each counted transaction's external reads and
// last writes (and INT), the predicates' rows, the list orders, and each read's candidate
// writers.
func (d *Deps) buildReads(ctx context.Context) error {
	aborted := d.allocReads()
	if err := d.extractAll(ctx, aborted); err != nil {
		return err
	}
	if len(d.predOps) > 0 && (d.hasLists || d.hasAppends) {
		// A predicate ranges over rows; a list's version would be read as a row holding its
		// last element, which is nothing a database evaluated.
		return fmt.Errorf("%w: predicate reads or writes in a history with lists (appends or list reads): predicates are checked over rows only", ErrUnsupported)
	}
	if err := d.expandPreds(ctx); err != nil {
		return err
	}
	if d.hasLists {
		if err := d.resolveLists(); err != nil {
			return err
		}
	}
	finals := &finalIndex{d: d, aborted: aborted}
	if closed, err := d.closedReads(ctx, finals, aborted); err != nil {
		return err
	} else if closed {
		return errClosed
	}
	return d.resolveCandidates(ctx, finals, aborted)
}

// errClosed stops BuildContext after buildReads found a closed set of reads (closed.go):
// the finding fails the history at every level, and the candidate lists it would make next
// may be quadratic in the transactions.
var errClosed = errors.New("deps: a closed set of reads fails the history")

// buildCounted is BuildContext's second half: which transactions count, the findings of
// reads left with no candidate, the writers per key, and the reads list reads imply.
func (d *Deps) buildCounted(ctx context.Context) error {
	d.decideStatus()
	if d.Opts.Realtime {
		d.countUntimed()
	}
	if err := d.dropUncounted(ctx); err != nil {
		return err
	}
	d.indexWriters()
	if d.hasLists {
		d.syntheticReads()
		d.buildLists()
	}
	return nil
}

// extractAll extracts the reads and writes of every transaction not aborted.
func (d *Deps) extractAll(ctx context.Context, aborted []bool) error {
	for i := range d.H.Txns {
		if i&4095 == 0 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if aborted[i] {
			continue
		}
		if err := d.extract(int32(i), &d.H.Txns[i]); err != nil {
			return err
		}
	}
	return nil
}

// countUntimed counts in d.Untimed the transactions that count and have no interval.
func (d *Deps) countUntimed() {
	for t := range d.N {
		if d.Status[t] != Excluded && !d.H.Txns[t].HasTime {
			d.Untimed++
		}
	}
}

// newDeps allocates the per-transaction and per-key tables of h's dependencies.
func newDeps(h *history.History, o Options) *Deps {
	n := len(h.Txns)
	d := &Deps{H: h, Opts: o, N: n, Init: int32(n)}
	d.Status = make([]Status, n)
	d.Writes = make([][]Write, n)
	d.ReadsOf = make([][]int32, n)
	d.intBad = make([]bool, n)
	d.Nodes = make([]Node, n+1)
	d.Nodes[n] = Node{Kind: NodeInit}
	nk := len(h.Keys)
	d.Writers = make([][]int32, nk)
	d.InitVersion = make([]int32, nk)
	for k := range d.InitVersion {
		d.InitVersion[k] = -1
	}
	return d
}

// allocReads sizes Reads and the write and read buffers for the item operations of the
// transactions that did not abort, and returns which aborted. Grown by doubling, Reads
// allocated about twice its final size (786 MB for fauna-page's reads; peak RSS of its check
// 620 -> 547 MB).
func (d *Deps) allocReads() (aborted []bool) {
	h := d.H
	nr, nw := 0, 0
	aborted = make([]bool, d.N) // h.Txns[t].Outcome == OutcomeAborted, without touching h.Txns[t] again
	for i := range h.Txns {
		aborted[i] = h.Txns[i].Outcome == history.OutcomeAborted
		if aborted[i] {
			continue
		}
		for _, o := range h.Txns[i].Ops {
			switch o.Kind {
			case history.OpRead, history.OpListRead:
				nr++
			case history.OpWrite, history.OpInsert, history.OpDelete:
				nw++
			}
		}
	}
	d.Reads = make([]Read, 0, nr)
	d.wbuf = make([]Write, 0, nw)
	d.rbuf = make([]int32, 0, nr)
	return aborted
}

// finalIndex indexes last writes by (key, value), for reads that do not name their writer:
// per key, its writers' values and the writers, sorted by value then writer, in one array
// carved like Writers, searched by bisection. Formats that name every writer (Vbox, Cobra's
// sources) never need it, so it is built on first use.
type finalIndex struct {
	d       *Deps
	aborted []bool
	fin     []valueWriter
	off     []int32
}

// valueWriter is one last write of a key: its value and its writer.
type valueWriter struct {
	v history.Value
	w int32
}

func (f *finalIndex) build() {
	d, nk := f.d, len(f.d.H.Keys)
	f.off = make([]int32, nk+1)
	for t, ws := range d.Writes {
		if !f.aborted[t] {
			for _, w := range ws {
				f.off[w.Key+1]++
			}
		}
	}
	for k := range nk {
		f.off[k+1] += f.off[k]
	}
	f.fin = make([]valueWriter, f.off[nk])
	at := slices.Clone(f.off[:nk])
	for t, ws := range d.Writes {
		if !f.aborted[t] {
			for _, w := range ws {
				f.fin[at[w.Key]] = valueWriter{w.Value, int32(t)}
				at[w.Key]++
			}
		}
	}
	for k := range nk {
		// Filled in writer order: a stable sort by value keeps it within a value.
		slices.SortStableFunc(f.fin[f.off[k]:f.off[k+1]], func(a, b valueWriter) int { return cmp.Compare(a.v, b.v) })
	}
}

// of returns the last writes of v to k.
func (f *finalIndex) of(k history.Key, v history.Value) []valueWriter {
	if f.off == nil {
		f.build()
	}
	run := f.fin[f.off[k]:f.off[k+1]]
	i, _ := slices.BinarySearchFunc(run, v, func(x valueWriter, v history.Value) int { return cmp.Compare(x.v, v) })
	j := i
	for j < len(run) && run[j].v == v {
		j++
	}
	return run[i:j]
}

// resolveCandidates gives each item read its candidate writers: the writer it names, the
// initial state, or every last write of its value. A value many transactions wrote gives
// each of its reads that many candidates (quadratic): it polls ctx by candidates made, not
// reads.
func (d *Deps) resolveCandidates(ctx context.Context, finals *finalIndex, aborted []bool) error {
	work := 0
	for ri := range d.Reads {
		if work++; work >= 1024 {
			if work = 0; ctx.Err() != nil {
				return context.Cause(ctx)
			}
		}
		r := &d.Reads[ri]
		if r.Kind == ReadPredMiss || r.Kind == ReadPredMatch {
			continue // candidates set by expandPreds
		}
		switch r.Src.Kind {
		case history.SrcTxn:
			w := r.Src.Txn
			if int(w) < d.N && w != history.TxnID(r.Txn) && !aborted[w] && d.isFinal(int32(w), r.Key, r.Src.Op, r.Value) {
				r.Cands = d.single(int32(w))
			}
		case history.SrcInit, history.SrcNone:
			r.Cands = d.single(d.Init)
		default:
			work += d.byValue(r, finals.of(r.Key, r.Value))
		}
	}
	return nil
}

// byValue sets the candidates of r, which names no writer, from ws, the last writes of its
// value, and the initial state when it holds the value; it returns the work done.
func (d *Deps) byValue(r *Read, ws []valueWriter) int {
	init := d.H.InitialValue(r.Key) == r.Value
	if len(ws) == 1 && ws[0].w != r.Txn && !init {
		r.Cands = d.single(ws[0].w) // the common case: one writer wrote the value
		return 0
	}
	for _, x := range ws {
		if x.w != r.Txn {
			r.Cands = append(r.Cands, x.w)
		}
	}
	if init {
		r.Cands = append(r.Cands, d.Init)
	}
	return len(ws)
}

// dropUncounted drops the candidates that do not count, and records as findings the
// committed reads left with none and the list reads that need a transaction that does not
// count.
func (d *Deps) dropUncounted(ctx context.Context) error {
	excluded := func(w int32) bool { return w != d.Init && d.Status[w] == Excluded }
	for ri := range d.Reads {
		if ri&1023 == 0 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		r := &d.Reads[ri]
		if slices.ContainsFunc(r.Cands, excluded) {
			r.Cands = slices.DeleteFunc(r.Cands, excluded)
		}
		if d.Status[r.Txn] != Committed {
			continue
		}
		if len(r.Cands) == 0 {
			d.Findings = append(d.Findings, d.explainNoSource(r))
		}
		d.unreadAppends(r)
	}
	return nil
}

// unreadAppends reports the first element committed list read r holds that no counted
// transaction appended, if there is one.
func (d *Deps) unreadAppends(r *Read) {
	for _, w := range r.Needs {
		if w < 0 || d.Status[w] == Excluded {
			d.Findings = append(d.Findings, d.explainList(r, w))
			return
		}
	}
}

// indexWriters lists each key's counted writers, carved from one slice (counted first;
// capacity-limited, so an append copies).
func (d *Deps) indexWriters() {
	nk := len(d.H.Keys)
	nwk := d.writerOffsets()
	all := make([]int32, nwk[nk])
	for k := range nk {
		d.Writers[k] = all[nwk[k]:nwk[k]:nwk[k+1]]
	}
	for t, ws := range d.Writes {
		if d.Status[t] == Excluded {
			continue
		}
		for _, w := range ws {
			d.Writers[w.Key] = append(d.Writers[w.Key], int32(t))
		}
	}
	for k := range nk {
		if len(d.Writers[k]) == 0 {
			d.Writers[k] = nil
		}
	}
}

// BuildEdges adds the known edges Build skipped under [Options.NoEdges]: real time, session
// order and certain reads. It does nothing if they are there already. Call it before
// anything reads d concurrently.
func (d *Deps) BuildEdges() {
	_ = d.BuildEdgesContext(context.Background()) // Background is never done
}

// BuildEdgesContext is [Deps.BuildEdges] polling ctx (every 1024 edges made); once ctx is
// done it returns context.Cause(ctx) and leaves d unfit to use.
func (d *Deps) BuildEdgesContext(ctx context.Context) error {
	if d.edges {
		return nil
	}
	d.edges = true
	tick := ticker(ctx)
	if d.Opts.Realtime {
		d.buildTime()
	}
	if d.Opts.Session {
		if err := d.buildSession(tick); err != nil {
			return err
		}
	}
	return d.buildCertain(tick)
}

// ticker returns a function to call with the work done since its last call (edges made,
// say); it returns context.Cause(ctx) once ctx is done, looking at ctx every 1024 units.
func ticker(ctx context.Context) func(n int) error {
	work := 0
	return func(n int) error {
		if work += n; work < 1024 {
			return nil
		}
		work = 0
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return nil
	}
}

// writerOffsets returns, per key k, where its counted writers start in one array
// (nwk[k]), and their number in all (nwk[len(keys)]).
func (d *Deps) writerOffsets() []int32 {
	nk := len(d.H.Keys)
	nwk := make([]int32, nk+1)
	for t, ws := range d.Writes {
		if d.Status[t] != Excluded {
			for _, w := range ws {
				nwk[w.Key+1]++
			}
		}
	}
	for k := range nk {
		nwk[k+1] += nwk[k]
	}
	return nwk
}

// HasLists reports whether the history has list reads (list-append).
func (d *Deps) HasLists() bool { return d.hasLists }

// extract finds t's external reads and last writes, and checks INT.
func (d *Deps) extract(ti int32, t *history.Txn) error {
	if len(t.Ops) <= 64 && !slices.ContainsFunc(t.Ops, func(o history.Op) bool {
		return o.Kind != history.OpRead && o.Kind != history.OpWrite && o.Kind != history.OpInsert && o.Kind != history.OpDelete
	}) {
		d.extractItems(ti, t)
		return nil
	}
	var cur map[history.Key]history.Value
	var curOp map[history.Key]int32
	var app map[history.Key][]history.Value
	for i, o := range t.Ops {
		var v history.Value
		switch o.Kind {
		case history.OpListRead:
			_, wrote := cur[o.Key]
			if err := d.extractListRead(ti, t, i, o, app[o.Key], wrote); err != nil {
				return err
			}
			continue
		case history.OpAppend:
			v = o.Value
			d.hasAppends = true
			app = addAppend(app, o)
		case history.OpRead:
			if w, ok := cur[o.Key]; ok {
				d.ownRead(ti, t, o, w)
				continue
			}
			d.ReadsOf[ti] = append(d.ReadsOf[ti], int32(len(d.Reads)))
			d.Reads = append(d.Reads, Read{Txn: ti, Op: int32(i), Key: o.Key, Value: o.Value, Src: o.Src})
			continue
		case history.OpPredRead, history.OpPredWrite:
			cur, curOp = d.extractPred(ti, i, o, cur, curOp)
			continue
		case history.OpWrite, history.OpInsert:
			v = o.Value
		case history.OpDelete:
			v = history.Nil
		default:
			return fmt.Errorf("%w: %s in %s", ErrUnsupported, o.Kind, d.H.Name(t.ID))
		}
		if cur == nil {
			cur = make(map[history.Key]history.Value)
			curOp = make(map[history.Key]int32)
		}
		cur[o.Key] = v
		curOp[o.Key] = int32(i)
	}
	d.setWrites(ti, cur, curOp)
	return nil
}

// addAppend adds append o to app, the transaction's appends by key, and returns it.
func addAppend(app map[history.Key][]history.Value, o history.Op) map[history.Key][]history.Value {
	if app == nil {
		app = make(map[history.Key][]history.Value)
	}
	app[o.Key] = append(app[o.Key], o.Value)
	return app
}

// setWrites sets the last writes of transaction ti, by key: value cur[k] by op curOp[k].
func (d *Deps) setWrites(ti int32, cur map[history.Key]history.Value, curOp map[history.Key]int32) {
	for k, v := range cur {
		d.Writes[ti] = append(d.Writes[ti], Write{Key: k, Value: v, Op: curOp[k]})
	}
	slices.SortFunc(d.Writes[ti], func(a, b Write) int { return cmp.Compare(a.Key, b.Key) })
}

// extractListRead handles list read o, op i of transaction ti, after the transaction's
// own appends own to its key (wrote: after a plain write of it, which is not supported).
// The list must end with own (INT); what precedes them is the state the transaction ran
// on, i.e. what it read.
func (d *Deps) extractListRead(ti int32, t *history.Txn, i int, o history.Op, own []history.Value, wrote bool) error {
	l := d.H.List(o)
	if len(own) > 0 {
		if len(l) < len(own) || !slices.Equal(l[len(l)-len(own):], own) {
			if t.Outcome != history.OutcomeCommitted {
				d.intBad[ti] = true
				return nil
			}
			d.Findings = append(d.Findings, report.Anomaly{
				Kind: anomaly.Internal, Txns: []history.TxnID{t.ID}, Key: o.Key,
				Message: fmt.Sprintf("%s read list %v=%v, which does not end with its own appends %v", d.H.Name(t.ID), d.H.Key(o.Key), d.valueList(l), d.valueList(own)),
			})
			return nil
		}
		l = l[:len(l)-len(own)]
	} else if wrote {
		return fmt.Errorf("%w: list read of %v after a plain write in %s", ErrUnsupported, d.H.Key(o.Key), d.H.Name(t.ID))
	}
	last := history.Nil
	if len(l) > 0 {
		last = l[len(l)-1]
	}
	d.ReadsOf[ti] = append(d.ReadsOf[ti], int32(len(d.Reads)))
	d.Reads = append(d.Reads, Read{Txn: ti, Op: int32(i), Key: o.Key, Value: last, Prefix: l})
	d.hasLists = true
	return nil
}

// ownRead checks a read of t after its own write of the key, which wrote w: it must return
// w and must not name another source (INT).
func (d *Deps) ownRead(ti int32, t *history.Txn, o history.Op, w history.Value) {
	own := w
	if o.Src.Kind == history.SrcInit || o.Src.Kind == history.SrcNone || (o.Src.Kind == history.SrcTxn && o.Src.Txn != t.ID) {
		w = -1
	}
	if w != o.Value && t.Outcome != history.OutcomeCommitted {
		d.intBad[ti] = true // it cannot have committed
		return
	}
	if w != o.Value {
		d.Findings = append(d.Findings, report.Anomaly{
			Kind: anomaly.Internal, Txns: []history.TxnID{t.ID}, Key: o.Key,
			Message: fmt.Sprintf("%s read %s after writing %s itself", d.H.Name(t.ID), d.H.KV(o.Key, o.Value), d.H.KV(o.Key, own)),
		})
	}
}

// extractItems is extract for a transaction of at most 64 item reads and writes: its last
// writes are kept in one shared buffer, searched linearly, instead of two maps per
// transaction (a third of Build's time on Vbox's BlindW histories).
func (d *Deps) extractItems(ti int32, t *history.Txn) {
	start, rstart := len(d.wbuf), len(d.rbuf)
	for i, o := range t.Ops {
		v := o.Value
		switch o.Kind {
		case history.OpRead:
			if j := writeIndex(d.wbuf[start:], o.Key); j >= 0 {
				d.ownRead(ti, t, o, d.wbuf[start+j].Value)
				continue
			}
			d.rbuf = append(d.rbuf, int32(len(d.Reads)))
			d.Reads = append(d.Reads, Read{Txn: ti, Op: int32(i), Key: o.Key, Value: o.Value, Src: o.Src})
			continue
		case history.OpDelete:
			v = history.Nil
		}
		if j := writeIndex(d.wbuf[start:], o.Key); j >= 0 {
			d.wbuf[start+j].Value, d.wbuf[start+j].Op = v, int32(i)
		} else {
			d.wbuf = append(d.wbuf, Write{Key: o.Key, Value: v, Op: int32(i)})
		}
	}
	if len(d.rbuf) > rstart {
		d.ReadsOf[ti] = d.rbuf[rstart:len(d.rbuf):len(d.rbuf)]
	}
	ws := d.wbuf[start:len(d.wbuf):len(d.wbuf)]
	if len(ws) == 0 {
		return
	}
	for i := 1; i < len(ws); i++ { // insertion sort by key: a handful of writes
		for j := i; j > 0 && ws[j].Key < ws[j-1].Key; j-- {
			ws[j], ws[j-1] = ws[j-1], ws[j]
		}
	}
	d.Writes[ti] = ws
}

// single returns the candidate list {w}, carved from a shared buffer (one allocation per
// 4,096 reads instead of one per read); its capacity is 1, so an append copies it.
func (d *Deps) single(w int32) []int32 {
	if len(d.cbuf) == cap(d.cbuf) {
		d.cbuf = make([]int32, 0, 4096)
	}
	d.cbuf = append(d.cbuf, w)
	return d.cbuf[len(d.cbuf)-1 : len(d.cbuf) : len(d.cbuf)]
}

func writeIndex(ws []Write, k history.Key) int {
	for j := range ws {
		if ws[j].Key == k {
			return j
		}
	}
	return -1
}

func (d *Deps) valueList(l []history.Value) string {
	var b []byte
	b = append(b, '[')
	for i, v := range l {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, d.H.Value(v).String()...)
	}
	return string(append(b, ']'))
}

// listOrder resolves the elements of list reads to the transactions that appended them:
// every appender but the last is needed (it committed if the reader did), an element nobody
// appended or only an aborted transaction appended is a finding, and consecutive distinct
// appenders are ordered (their versions follow each other).
func (d *Deps) resolveLists() error {
	appender, err := d.appenders()
	if err != nil {
		return err
	}
	d.appender = func(k history.Key, v history.Value) (int32, bool) {
		w, ok := appender[element{k, v}]
		return w, ok
	}
	for ri := range d.Reads {
		r := &d.Reads[ri]
		if len(r.Prefix) < 2 {
			continue
		}
		for _, e := range r.Prefix[:len(r.Prefix)-1] {
			w, ok := appender[element{r.Key, e}]
			switch {
			case !ok || w == r.Txn:
				r.Needs = append(r.Needs, -1) // nobody else appended it
			case len(r.Needs) == 0 || r.Needs[len(r.Needs)-1] != w:
				r.Needs = append(r.Needs, w)
			}
		}
	}
	return nil
}

// element is a list element appended to a key.
type element struct {
	k history.Key
	v history.Value
}

// appenders returns the transaction that appended each element (a committed one, if
// several did). Two appends of one element that may both have taken effect are refused:
// a list holding it does not say whose it is (Elle assumes unique appends).
func (d *Deps) appenders() (map[element]int32, error) {
	h := d.H
	appender := make(map[element]int32)
	for i := range h.Txns {
		for _, o := range h.Txns[i].Ops {
			if o.Kind != history.OpAppend {
				continue
			}
			w, ok := appender[element{o.Key, o.Value}]
			if ok && h.Txns[i].Outcome != history.OutcomeAborted && h.Txns[w].Outcome != history.OutcomeAborted {
				return nil, fmt.Errorf("%w: list element %v is appended to %v more than once (by %s and %s): list-append checking needs each key's appended elements to be unique", ErrUnsupported, h.Value(o.Value), h.Key(o.Key), h.Name(history.TxnID(w)), h.Name(history.TxnID(i)))
			}
			if !ok || h.Txns[i].Outcome == history.OutcomeCommitted {
				appender[element{o.Key, o.Value}] = int32(i)
			}
		}
	}
	return appender, nil
}

// explainList builds the finding for a committed list read showing an element that no
// counted transaction appended (w < 0: nobody else appended it).
func (d *Deps) explainList(r *Read, w int32) report.Anomaly {
	h := d.H
	a := report.Anomaly{Txns: []history.TxnID{history.TxnID(r.Txn)}, Key: r.Key}
	if w < 0 {
		a.Kind = anomaly.ThinAirRead
		a.Message = fmt.Sprintf("%s read list %v=%v, which holds an element no other transaction appended", h.Name(history.TxnID(r.Txn)), h.Key(r.Key), d.valueList(r.Prefix))
		return a
	}
	a.Txns = append(a.Txns, history.TxnID(w))
	a.Kind = anomaly.AbortedRead
	a.Message = fmt.Sprintf("%s read list %v=%v, which holds an element appended by %s, which did not commit", h.Name(history.TxnID(r.Txn)), h.Key(r.Key), d.valueList(r.Prefix), h.Name(history.TxnID(w)))
	return a
}

// syntheticReads turns what committed list reads show into reads: a list is the appends of
// a sequence of transactions, each run the complete appends of one transaction to the key,
// and each of them directly follows the previous one in the version order (the first follows
// the initial state), exactly as if it had read that version before appending. So each gets
// a certain read of its predecessor's version, which the rest of the pipeline (chains,
// pruning) treats like any read-modify-write. A run that is not a transaction's complete
// appends is a finding.
func (d *Deps) syntheticReads() {
	done := make(map[writerKey]int32) // source already given
	nr := len(d.Reads)
	for ri := 0; ri < nr; ri++ {
		r := &d.Reads[ri]
		if d.Status[r.Txn] != Committed || r.Op < 0 || len(r.Prefix) == 0 {
			continue
		}
		d.prefixReads(int32(ri), done)
	}
}

// writerKey is a writer and a key it wrote.
type writerKey struct {
	w int32
	k history.Key
}

// prefixReads makes the synthetic reads of list read ri: each appender of the list it read
// reads the version of the one before it (the initial state for the first), once per such
// source (done). A run of an appender's elements that is not all its appends to the key is
// a finding, which ends the list's reads.
func (d *Deps) prefixReads(ri int32, done map[writerKey]int32) {
	r := &d.Reads[ri]
	prefix, key, reader := r.Prefix, r.Key, r.Txn
	prev, prevV := d.Init, history.Nil
	for i := 0; i < len(prefix); {
		w, ok := d.appender(key, prefix[i])
		if !ok || w == reader || d.Status[w] == Excluded {
			break // a finding already
		}
		j := d.runEnd(key, prefix, i, w)
		run, all := prefix[i:j], d.appendsOf(w, key)
		if !slices.Equal(run, all) {
			d.partialRun(reader, w, key, prefix, run, all)
			break
		}
		if src, ok := done[writerKey{w, key}]; !ok || src != prev {
			done[writerKey{w, key}] = prev
			d.ReadsOf[w] = append(d.ReadsOf[w], int32(len(d.Reads)))
			d.Reads = append(d.Reads, Read{Txn: w, Op: -1, Key: key, Value: prevV, Cands: []int32{prev}, Via: ri})
		}
		prev, prevV = w, run[len(run)-1]
		i = j
	}
}

// runEnd returns the end of the run of prefix's elements from i that w appended to key.
func (d *Deps) runEnd(key history.Key, prefix []history.Value, i int, w int32) int {
	j := i
	for j < len(prefix) {
		x, ok := d.appender(key, prefix[j])
		if !ok || x != w {
			break
		}
		j++
	}
	return j
}

// appendsOf returns w's appends to k, in order.
func (d *Deps) appendsOf(w int32, k history.Key) []history.Value {
	var l []history.Value
	for _, o := range d.H.Txns[w].Ops {
		if o.Kind == history.OpAppend && o.Key == k {
			l = append(l, o.Value)
		}
	}
	return l
}

// partialRun records that reader's list read of k (prefix) shows run of w's appends, which
// are all: an intermediate read when run is a prefix of them, else an incompatible order.
func (d *Deps) partialRun(reader, w int32, key history.Key, prefix, run, all []history.Value) {
	h := d.H
	kind := anomaly.IncompatibleOrder
	if len(run) < len(all) && slices.Equal(run, all[:len(run)]) {
		kind = anomaly.IntermediateRead
	}
	d.Findings = append(d.Findings, report.Anomaly{
		Kind: kind, Txns: []history.TxnID{history.TxnID(reader), history.TxnID(w)}, Key: key,
		Message: fmt.Sprintf("%s read list %v=%v, which shows %v of %s's appends, but %s appended %v", h.Name(history.TxnID(reader)), h.Key(key), d.valueList(prefix), d.valueList(run), h.Name(history.TxnID(w)), h.Name(history.TxnID(w)), d.valueList(all)),
	})
}

// buildLists adds the version order list reads show: consecutive distinct appenders of the
// elements of a counted list read are ordered (ww), guarded by the reader and the appenders
// when their outcome is unknown.
func (d *Deps) buildLists() {
	for ri := range d.Reads {
		if r := &d.Reads[ri]; d.Status[r.Txn] == Maybe && len(r.Prefix) >= 2 {
			d.guardedListOrder(r)
		}
	}
}

// guardedListOrder adds the write orders list read r of a Maybe reader shows between
// consecutive distinct appenders, guarded by the reader and both appenders.
func (d *Deps) guardedListOrder(r *Read) {
	prevW, prevV := int32(-1), history.Nil
	for i, e := range r.Prefix {
		var w int32
		if i == len(r.Prefix)-1 {
			if len(r.Cands) != 1 || r.Cands[0] == d.Init {
				break
			}
			w = r.Cands[0]
		} else {
			var ok bool
			w, ok = d.appender(r.Key, e)
			if !ok || w == r.Txn || d.Status[w] == Excluded {
				prevW = -1
				continue
			}
		}
		if prevW >= 0 && w != prevW {
			d.add(Edge{From: prevW, To: w, Rel: report.WW, Key: r.Key, Value: prevV, Value2: e, Via: -1, Guards: [3]int32{d.guard(r.Txn), d.guard(prevW), d.guard(w)}})
		}
		prevW, prevV = w, e
	}
}

// isFinal reports whether op index op of w is w's last write of k, writing v.
func (d *Deps) isFinal(w int32, k history.Key, op int32, v history.Value) bool {
	wr, ok := d.WriteOf(w, k)
	return ok && wr.Op == op && wr.Value == v
}

// WriteOf returns t's last write of k.
func (d *Deps) WriteOf(t int32, k history.Key) (Write, bool) {
	ws := d.Writes[t]
	// Binary search by hand, and a scan for the last few: the generic search's comparison
	// calls were most of the lookups' cost (and deps resolves one per read).
	lo, hi := 0, len(ws)
	for hi-lo > 8 {
		h := int(uint(lo+hi) >> 1)
		if ws[h].Key < k {
			lo = h + 1
		} else {
			hi = h
		}
	}
	for ; lo < len(ws); lo++ { // stops by hi: ws[hi].Key >= k
		if ws[lo].Key >= k {
			if ws[lo].Key == k {
				return ws[lo], true
			}
			break
		}
	}
	return Write{}, false
}

// rmwSource returns the writer whose version of k transaction t read before writing k (a
// read-modify-write), Init for the initial state, or -1 if t did not read k first or the
// read has several candidates. via is -1 for a read t issued, or, for a list that t did not
// read but a later list read shows t's appends directly after that version, that read's
// index in Reads.
func (d *Deps) rmwSource(t int32, k history.Key) (src, via int32) {
	if t < 0 || t >= int32(d.N) {
		return -1, -1
	}
	if _, ok := d.WriteOf(t, k); !ok {
		return -1, -1
	}
	for _, ri := range d.ReadsOf[t] {
		// Reads after the transaction's own write are not external reads, so an external
		// read of a key it writes came first.
		if r := &d.Reads[ri]; r.Key == k && r.Kind == ReadItem && len(r.Cands) == 1 {
			if r.Op < 0 {
				return r.Cands[0], r.Via
			}
			return r.Cands[0], -1
		}
	}
	return -1, -1
}

// AppendStep rewrites a wr or rw step of a witness that rests on a read the history does not
// hold: a transaction's appends that a later list read shows directly after version src of
// the key (src is the writer, or Init). Such a "read" only places the transaction's version
// in the list's order, so the step is a write dependency: a wr step src → t becomes t
// overwrote src's version, and an rw step t → b (b overwrote src's version, which t's
// directly follows) becomes b overwrote t's. Classifying it as a read or anti-dependency
// would name a write cycle (G0) a write skew. It returns the step unchanged and false for
// any other step. via is the edge's Via (the version an rw step's reader saw); forced
// marks a step pruning chose, which the sentence then says ([RuledOut]).
func (d *Deps) AppendStep(st report.Step, via int32, forced bool) (report.Step, bool) {
	var t, b, src int32
	switch st.Rel {
	case report.WR:
		t, b, src = int32(st.To), -1, int32(st.From)
	case report.RW:
		t, b, src = int32(st.From), int32(st.To), via
	default:
		return st, false
	}
	s, shown := d.rmwSource(t, st.Key)
	if shown < 0 || s != src {
		return st, false
	}
	name := func(t int32) string { return d.H.Name(history.TxnID(t)) }
	kv := func(v history.Value) string { return d.H.KV(st.Key, v) }
	lister := name(d.Reads[shown].Txn)
	mine, _ := d.WriteOf(t, st.Key)
	st.Rel = report.WW
	ruled := ""
	if forced {
		ruled = RuledOut
	}
	if b < 0 { // wr: t's appends directly follow src's
		st.Value2 = mine.Value
		st.Why = fmt.Sprintf("%s overwrote %s's %s with %s (%s's read of %v shows %s's appends directly after %s's)%s", name(t), name(src), kv(st.Value), kv(mine.Value), lister, d.H.Key(st.Key), name(t), name(src), ruled)
		return st, true
	}
	st.Value = mine.Value
	why := d.OrderWhy(t, b, st.Key)
	if why == "" {
		why = d.shownAfter(d.Reads[shown].Txn, st.Key, t, src, b)
	}
	st.Why = fmt.Sprintf("%s overwrote %s's %s with %s%s%s", name(b), name(t), kv(mine.Value), kv(st.Value2), why, ruled)
	return st, true
}

// RuledOut ends a witness step that pruning chose because its alternative closes a cycle.
const RuledOut = " (the opposite order was ruled out: it closes a cycle)"

// ReadPhrase says how reader came to see version src of k (holding value; src is Init for
// the initial state): "T3 read x=1 (written by T1)" or "T3 read the initial x=nil".
func (d *Deps) ReadPhrase(reader, src int32, k history.Key, value history.Value) string {
	kv := d.H.KV(k, value)
	if src >= 0 && src < int32(d.N) {
		return fmt.Sprintf("%s read %s (written by %s)", d.H.Name(history.TxnID(reader)), kv, d.H.Name(history.TxnID(src)))
	}
	return fmt.Sprintf("%s read the initial %s", d.H.Name(history.TxnID(reader)), kv)
}

// shownAfter says, as a parenthesis, that lister's read of k shows t's appends directly
// after src's (or the empty list), which b also overwrote.
func (d *Deps) shownAfter(lister int32, k history.Key, t, src, b int32) string {
	name := func(t int32) string { return d.H.Name(history.TxnID(t)) }
	after := "the empty list"
	if src >= 0 && src < int32(d.N) {
		after = name(src) + "'s"
	}
	return fmt.Sprintf(" (%s's read of %v shows %s's appends directly after %s, which %s also overwrote)", name(lister), d.H.Key(k), name(t), after, name(b))
}

// OrderWhy says, as a parenthesis to append, why a's version of k comes before b's when the
// history shows it without a choice: b read a's version before overwriting it (or a list
// read shows b's appends directly after a's), a chain of such versions leads from the
// initial state to a (so no writer outside the chain comes between them), or a ended
// before b began (with Options.Realtime). It returns "" when none of these applies: the
// order was then chosen, and the step or the alternative says so. The checkers' witnesses
// use it.
func (d *Deps) OrderWhy(a, b int32, k history.Key) string {
	if a < 0 || b < 0 || a >= int32(d.N) || b >= int32(d.N) {
		return ""
	}
	name := func(t int32) string { return d.H.Name(history.TxnID(t)) }
	key := d.H.Key(k)
	if src, via := d.rmwSource(b, k); src == a {
		if via >= 0 {
			return fmt.Sprintf(" (%s's read of %v shows %s's appends directly after %s's)", name(d.Reads[via].Txn), key, name(b), name(a))
		}
		return fmt.Sprintf(" (%s read %s's version before writing its own)", name(b), name(a))
	}
	if why := d.chainWhy(a, b, k); why != "" {
		return why
	}
	if d.Before(a, b) {
		return fmt.Sprintf(" (%s ended before %s began)", name(a), name(b))
	}
	return ""
}

// chainWhy is OrderWhy's chain case: a chain of versions, each read by the next writer
// (or shown after it by a list read), leads from the initial state to a without passing
// b. It returns "" when there is none.
func (d *Deps) chainWhy(a, b int32, k history.Key) string {
	var chain []string
	shown := false // some link is shown by a later list read, not read by the writer
	for t, n := a, 0; n <= d.N; n++ {
		if t == b {
			break // b's version comes before a's: not an order this explains
		}
		chain = append(chain, d.H.Name(history.TxnID(t)))
		src, via := d.rmwSource(t, k)
		shown = shown || via >= 0
		if src == d.Init {
			slices.Reverse(chain)
			return firstWhy(chain, d.H.Key(k), shown)
		}
		if src < 0 || src >= int32(d.N) {
			break
		}
		t = src
	}
	return ""
}

// firstWhy says why the writers of chain (in version order from the initial state) came
// first among the writers of key: each read the previous one's version (the first the
// initial state) before writing its own, or list reads show them so (shown).
func firstWhy(chain []string, key history.Datum, shown bool) string {
	switch {
	case shown:
		return fmt.Sprintf(" (%s came first: list reads of %v show them in that order from the empty list, so every other writer of %v came after them)", strings.Join(chain, ", "), key, key)
	case len(chain) == 1:
		return fmt.Sprintf(" (%s came first: it read the initial %v before writing it, so every other writer of %v came after it)", chain[0], key, key)
	case len(chain) == 2:
		return fmt.Sprintf(" (%s and %s came first: %s read the initial %v before writing it and %s read %s's version before writing its own, so every other writer of %v came after them)", chain[0], chain[1], chain[0], key, chain[1], chain[0], key)
	}
	return fmt.Sprintf(" (%s came first: %s read the initial %v before writing it and each of the others read the previous one's version before writing its own, so every other writer of %v came after them)", strings.Join(chain, ", "), chain[0], key, key)
}

// decideStatus settles which transactions count: committed ones; unknown-outcome ones that
// some counted read may read from (Maybe), promoted to Committed when they are the only
// candidate of a committed read; the rest are excluded. Unknown-outcome transactions start
// in play and are dropped when unused or when one of their own reads has no source.
func (d *Deps) decideStatus() {
	h := d.H
	for i := range h.Txns {
		switch h.Txns[i].Outcome {
		case history.OutcomeCommitted:
			d.Status[i] = Committed
		case history.OutcomeUnknown:
			if !d.intBad[i] {
				d.Status[i] = Maybe
			}
		}
	}
	used := make([]bool, d.N)
	for d.statusRound(used) {
	}
	excluded := 0
	for t := range d.N {
		if h.Txns[t].Outcome == history.OutcomeUnknown && d.Status[t] == Excluded {
			excluded++
		}
	}
	if excluded > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%d transactions of unknown outcome were treated as aborted: no committed read can have read from them", excluded))
	}
}

// statusRound is one round of decideStatus over every read, marking in used the Maybe
// transactions some read may read from and excluding the others at its end. It reports
// whether a status changed (then another round is due).
func (d *Deps) statusRound(used []bool) bool {
	changed := false
	clear(used)
	for ri := range d.Reads {
		r := &d.Reads[ri]
		st := d.Status[r.Txn]
		if st == Excluded {
			continue
		}
		only, nc := d.liveCands(r, used)
		switch {
		case st == Committed && nc == 1 && only != d.Init && d.Status[only] == Maybe:
			d.Status[only] = Committed
			changed = true
		case st == Maybe && nc == 0:
			d.Status[r.Txn] = Excluded
			changed = true
		}
		if len(r.Needs) > 0 && d.settleNeeds(r, st, used) {
			changed = true
		}
	}
	for t := range d.N {
		if d.Status[t] == Maybe && !used[t] {
			d.Status[t] = Excluded
			changed = true
		}
	}
	return changed
}

// liveCands returns the last of r's candidates not excluded and their number, marking the
// Maybe ones in used.
func (d *Deps) liveCands(r *Read, used []bool) (only int32, n int) {
	only = -1
	for _, w := range r.Cands {
		if w == d.Init || d.Status[w] != Excluded {
			n++
			only = w
			if w != d.Init && d.Status[w] == Maybe {
				used[w] = true
			}
		}
	}
	return only, n
}

// settleNeeds applies list read r (whose reader has status st) to the appenders it shows:
// committed if the reader is, and the reader excluded if one of them is. It reports whether
// a status changed.
func (d *Deps) settleNeeds(r *Read, st Status, used []bool) bool {
	changed := false
	for _, w := range r.Needs {
		switch {
		case w < 0 || d.Status[w] == Excluded:
			if st == Maybe {
				d.Status[r.Txn] = Excluded
				changed = true
			}
		case d.Status[w] == Maybe && st == Committed:
			d.Status[w] = Committed
			changed = true
		case d.Status[w] == Maybe:
			used[w] = true
		}
	}
	return changed
}

// explainNoSource builds the finding for a committed read nobody counted could have
// written.
func (d *Deps) explainNoSource(r *Read) report.Anomaly {
	if r.Kind == ReadPredMiss || r.Kind == ReadPredMatch {
		return d.predNoSource(r)
	}
	h := d.H
	name := h.Name(history.TxnID(r.Txn))
	a := report.Anomaly{Txns: []history.TxnID{history.TxnID(r.Txn)}, Key: r.Key}
	kv := h.KV(r.Key, r.Value)
	if src := r.Src; src.Kind == history.SrcTxn && int(src.Txn) < len(h.Txns) && h.Txns[src.Txn].Outcome != history.OutcomeCommitted && src.Txn != history.TxnID(r.Txn) {
		w := src.Txn
		a.Txns = append(a.Txns, w)
		a.Kind = anomaly.AbortedRead
		a.Message = fmt.Sprintf("%s read %s, which %s wrote, and %s did not commit", name, kv, h.Name(w), h.Name(w))
		return a
	}
	t := d.otherWriter(r)
	if t == nil {
		a.Kind = anomaly.ThinAirRead
		a.Message = fmt.Sprintf("%s read %s, which no transaction wrote", name, kv)
		return a
	}
	a.Txns = append(a.Txns, t.ID)
	switch {
	case t.Outcome == history.OutcomeAborted:
		a.Kind = anomaly.AbortedRead
		a.Message = fmt.Sprintf("%s read %s, which only %s wrote, and %s aborted", name, kv, h.Name(t.ID), h.Name(t.ID))
	case t.Outcome == history.OutcomeUnknown:
		a.Kind = anomaly.AbortedRead
		a.Message = fmt.Sprintf("%s read %s, which only %s wrote, and %s cannot have committed", name, kv, h.Name(t.ID), h.Name(t.ID))
	default:
		a.Kind = anomaly.IntermediateRead
		a.Message = fmt.Sprintf("%s read %s, which %s wrote and then overwrote in the same transaction", name, kv, h.Name(t.ID))
	}
	return a
}

// otherWriter returns the first transaction other than r's reader with a write of r's key
// and value (the write r's explicit source names, if it has one), or nil.
func (d *Deps) otherWriter(r *Read) *history.Txn {
	h := d.H
	explicit := r.Src.Kind == history.SrcTxn
	for i := range h.Txns {
		t := &h.Txns[i]
		if int32(i) == r.Txn || explicit && history.TxnID(i) != r.Src.Txn {
			continue
		}
		for j, w := range t.Ops {
			if !w.Kind.IsWrite() || w.Key != r.Key || w.Value != r.Value {
				continue
			}
			if explicit && int32(j) != r.Src.Op {
				continue
			}
			return t
		}
	}
	return nil
}

// AddVersionNode appends a version node ν(w,k) and returns it. Only the polygraph calls it,
// while it builds (before anything reads Deps concurrently).
func (d *Deps) AddVersionNode(w int32, k history.Key) int32 {
	return d.newNode(Node{Kind: NodeVersion, Key: k, Txn: w})
}

// NewNode appends a graph node.
func (d *Deps) newNode(n Node) int32 {
	d.Nodes = append(d.Nodes, n)
	return int32(len(d.Nodes) - 1)
}

func (d *Deps) add(e Edge) {
	if e.From == e.To {
		return
	}
	if e.Guards[0] >= 0 || e.Guards[1] >= 0 || e.Guards[2] >= 0 {
		d.Guarded = append(d.Guarded, e)
		return
	}
	d.Known = append(d.Known, e)
}

// guard returns t if it is Maybe, else -1.
func (d *Deps) guard(t int32) int32 {
	if t < int32(d.N) && d.Status[t] == Maybe {
		return t
	}
	return -1
}

func noGuard() [3]int32 { return [3]int32{-1, -1, -1} }

// buildSession adds session order among counted transactions.
func (d *Deps) buildSession(tick func(int) error) error {
	for _, s := range d.H.Sessions {
		if err := tick(1); err != nil {
			return err
		}
		if err := d.sessionOrder(s, tick); err != nil {
			return err
		}
	}
	return nil
}

// sessionOrder adds session s's order among its counted transactions: from each committed
// one to the next committed one, and, guarded, from a Maybe one to each later one up to the
// next committed one (and to it from the committed one before).
func (d *Deps) sessionOrder(s history.Session, tick func(int) error) error {
	var l []int32
	for _, t := range s.Txns {
		if d.Status[t] != Excluded {
			l = append(l, int32(t))
		}
	}
	prevC := int32(-1)
	for i, t := range l {
		if d.Status[t] == Committed {
			if prevC >= 0 {
				d.add(Edge{From: prevC, To: t, Rel: report.SO, Key: -1, Via: -1, Guards: noGuard()})
			}
			prevC = t
			continue
		}
		if prevC >= 0 {
			d.add(Edge{From: prevC, To: t, Rel: report.SO, Key: -1, Via: -1, Guards: [3]int32{t, -1, -1}})
		}
		for _, u := range l[i+1:] {
			d.add(Edge{From: t, To: u, Rel: report.SO, Key: -1, Via: -1, Guards: [3]int32{t, d.guard(u), -1}})
			if err := tick(1); err != nil {
				return err
			}
			if d.Status[u] == Committed {
				break
			}
		}
	}
	return nil
}

// Unbounded ends of the real-time intervals (see "Client time").
const (
	timeNegInf = math.MinInt64
	timePosInf = math.MaxInt64
)

// timeIntervals returns the intervals real time uses (see [Deps.Iv]).
func (d *Deps) timeIntervals() []history.Interval {
	iv := make([]history.Interval, d.N)
	for t := range d.N {
		iv[t] = d.TimeInterval(t)
	}
	return iv
}

// UntimedNote explains why a check at a level with real time that found no violation cannot
// pass when n counted transactions have no client interval ([Deps.Untimed]).
func UntimedNote(n int) string {
	what := fmt.Sprintf("%d transactions have", n)
	if n == 1 {
		what = "1 transaction has"
	}
	return what + " no client interval and took no part in the real-time order; no violation was found without it, but their real times might have closed a cycle, so the history cannot be passed"
}

// TimeInterval is transaction t's interval as real time reads it ([Deps.Iv] holds them all
// once the edges are built): widened for clock skew, ending at +inf when t's outcome is
// unknown (it may have committed after the client gave up) unless the source saw it end
// (history.Txn.Ended), and [-inf, +inf] without a
// client interval.
func (d *Deps) TimeInterval(t int) history.Interval {
	x := &d.H.Txns[t]
	if !x.HasTime {
		return history.Interval{Begin: timeNegInf, End: timePosInf}
	}
	iv := x.Time.Widen(d.Opts.Skew)
	if x.Outcome == history.OutcomeUnknown && !x.Ended {
		iv.End = timePosInf
	}
	return iv
}

// timed reports whether t has a client interval.
func (d *Deps) timed(t int32) bool { return d.H.Txns[t].HasTime }

// buildTime adds the real-time chain and indexes writers by begin time. Transactions
// without a client interval stay off the chain; those of unknown outcome get no edge out
// of it (see "Client time").
func (d *Deps) buildTime() {
	d.Iv = d.timeIntervals()
	begins := d.timeChain()
	for t := range d.N {
		if d.Status[t] != Excluded && d.timed(int32(t)) {
			d.timeEdges(int32(t), begins)
		}
	}
	d.writersByBegin()
}

// timeChain adds a time node per distinct Begin of the counted timed transactions, in a
// chain of real-time edges, and returns those Begins, ascending.
func (d *Deps) timeChain() []int64 {
	var begins []int64
	for t := range d.N {
		if d.Status[t] != Excluded && d.timed(int32(t)) {
			begins = append(begins, d.Iv[t].Begin)
		}
	}
	slices.Sort(begins)
	begins = slices.Compact(begins)
	d.timeNode = make([]int32, len(begins))
	for i, b := range begins {
		d.timeNode[i] = d.newNode(Node{Kind: NodeTime, Time: b})
		if i > 0 {
			d.add(Edge{From: d.timeNode[i-1], To: d.timeNode[i], Rel: report.RT, Key: -1, Via: -1, Guards: noGuard()})
		}
	}
	return begins
}

// timeEdges adds t's real-time edges: from the time node of its Begin, and to the time
// node of the first Begin strictly after its End (none for an End unknown).
func (d *Deps) timeEdges(t int32, begins []int64) {
	iv := d.Iv[t]
	bi, _ := slices.BinarySearch(begins, iv.Begin)
	g := [3]int32{d.guard(t), -1, -1}
	d.add(Edge{From: d.timeNode[bi], To: t, Rel: report.RT, Key: -1, Via: -1, Guards: g})
	if iv.End == timePosInf {
		return // unknown outcome: it may have ended at any time
	}
	ei, found := slices.BinarySearch(begins, iv.End)
	if found {
		ei++
	}
	if ei < len(begins) {
		d.add(Edge{From: t, To: d.timeNode[ei], Rel: report.RT, Key: -1, Via: -1, Guards: g})
	}
}

// writersByBegin indexes, per key, its committed timed writers by Begin (d.byBegin), with
// the least End of each suffix (d.sufMin).
func (d *Deps) writersByBegin() {
	nk := len(d.H.Keys)
	d.byBegin = make([][]int32, nk)
	d.sufMin = make([][]int64, nk)
	for k, ws := range d.Writers {
		var l []int32
		for _, w := range ws {
			if d.Status[w] == Committed && d.timed(w) {
				l = append(l, w)
			}
		}
		slices.SortFunc(l, func(a, b int32) int { return cmp.Compare(d.Iv[a].Begin, d.Iv[b].Begin) })
		sm := make([]int64, len(l)+1)
		sm[len(l)] = timePosInf
		for i := len(l) - 1; i >= 0; i-- {
			sm[i] = min(sm[i+1], d.Iv[l[i]].End)
		}
		d.byBegin[k] = l
		d.sufMin[k] = sm
	}
}

// Before reports whether a and b are both committed and a ended before b began (Realtime
// only): then a precedes b in every serialization the level allows. It is false when a's
// outcome is unknown or either has no client interval (see "Client time").
func (d *Deps) Before(a, b int32) bool {
	if !d.Opts.Realtime || a >= int32(d.N) || b >= int32(d.N) {
		return false
	}
	return d.Status[a] == Committed && d.Status[b] == Committed && d.Iv[a].End < d.Iv[b].Begin
}

// TimeSuccs returns the committed writers of k that began after w ended and are minimal in
// real-time order: every other committed writer of k that began after w ended is
// real-time-after one of them (Realtime only; else nil). Writers without a client interval
// are never among them, and w of unknown outcome or without one has none.
func (d *Deps) TimeSuccs(w int32, k history.Key) []int32 {
	if !d.Opts.Realtime || w >= int32(d.N) {
		return nil
	}
	l := d.byBegin[k]
	end := d.Iv[w].End
	i, _ := slices.BinarySearchFunc(l, end, func(t int32, e int64) int {
		if d.Iv[t].Begin <= e {
			return -1
		}
		return 1
	})
	if i >= len(l) {
		return nil
	}
	lim := d.sufMin[k][i]
	j := i
	for j < len(l) && d.Iv[l[j]].Begin <= lim {
		j++
	}
	return l[i:j]
}

// InitVersionNode returns ρ(k), creating it with its edges to the writers of k.
func (d *Deps) initVersionNode(k history.Key) int32 {
	if d.InitVersion[k] >= 0 {
		return d.InitVersion[k]
	}
	p := d.newNode(Node{Kind: NodeInitVersion, Key: k})
	d.InitVersion[k] = p
	iv := d.H.InitialValue(k)
	for _, b := range d.Writers[k] {
		wb, _ := d.WriteOf(b, k)
		d.add(Edge{From: p, To: b, Rel: report.WW, Key: k, Value: iv, Value2: wb.Value, Via: d.Init, Guards: [3]int32{d.guard(b), -1, -1}})
	}
	return p
}

// RWFromInit returns the anti-dependency edges of reader r having read the initial value of
// k: r→ρ(k), or, if r writes k itself, r→b for every other writer b of k.
func (d *Deps) RWFromInit(r int32, k history.Key, v history.Value) []Edge {
	if _, ok := d.WriteOf(r, k); !ok {
		p := d.initVersionNode(k)
		return []Edge{{From: r, To: p, Rel: report.RW, Key: k, Value: v, Via: d.Init, Guards: noGuard()}}
	}
	var es []Edge
	for _, b := range d.Writers[k] {
		if b == r {
			continue
		}
		wb, _ := d.WriteOf(b, k)
		es = append(es, Edge{From: r, To: b, Rel: report.RW, Key: k, Value: v, Value2: wb.Value, Via: d.Init, Guards: [3]int32{d.guard(b), -1, -1}})
	}
	return es
}

// RWByTime returns the anti-dependency edges r→b for a reader r of w's version of k and the
// writers b that w precedes by time (minimal ones suffice; see [Deps.TimeSuccs]).
func (d *Deps) RWByTime(r, w int32, k history.Key, v history.Value) []Edge {
	var es []Edge
	for _, b := range d.TimeSuccs(w, k) {
		if b == r {
			continue
		}
		wb, _ := d.WriteOf(b, k)
		es = append(es, Edge{From: r, To: b, Rel: report.RW, Key: k, Value: v, Value2: wb.Value, Via: w, Guards: noGuard()})
	}
	return es
}

// initVersionNodes creates the init-version nodes every read of the initial state may
// need, so the node set is final after Build.
func (d *Deps) initVersionNodes(tick func(int) error) error {
	for ri := range d.Reads {
		if err := tick(1); err != nil {
			return err
		}
		r := &d.Reads[ri]
		if d.Status[r.Txn] != Excluded && slices.Contains(r.Cands, d.Init) {
			d.initVersionNode(r.Key)
		}
	}
	return nil
}

// buildCertain adds certain write-read edges and the anti-dependencies they imply with the
// initial state and with time-fixed write orders.
func (d *Deps) buildCertain(tick func(int) error) error {
	if err := d.initVersionNodes(tick); err != nil {
		return err
	}
	for ri := range d.Reads {
		r := &d.Reads[ri]
		if d.Status[r.Txn] != Committed || len(r.Cands) != 1 {
			continue
		}
		w := r.Cands[0]
		if w != d.Init && d.Status[w] != Committed {
			continue
		}
		es := d.CertainRead(ri)
		for _, e := range es {
			d.add(e)
		}
		if err := tick(1 + len(es)); err != nil {
			return err
		}
	}
	return nil
}

// CertainRead returns the edges implied once read ri is known to read from its candidate
// w: w→r (wr), and the anti-dependencies with the initial state or time-fixed successors.
// Writes ordered after w by pruning are the polygraph's business.
func (d *Deps) CertainRead(ri int) []Edge {
	return d.ReadFrom(ri, d.Reads[ri].Cands[0])
}

// ReadFrom returns the edges implied if read ri reads from w (see [Deps.CertainRead]).
func (d *Deps) ReadFrom(ri int, w int32) []Edge {
	r := &d.Reads[ri]
	var es []Edge
	if w == d.Init {
		return d.RWFromInit(r.Txn, r.Key, r.Value)
	}
	es = append(es, Edge{From: w, To: r.Txn, Rel: report.WR, Key: r.Key, Value: r.Value, Via: -1, Guards: noGuard()})
	return append(es, d.RWByTime(r.Txn, w, r.Key, r.Value)...)
}
