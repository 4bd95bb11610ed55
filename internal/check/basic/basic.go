package basic

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

// Options tune the basic checks. The zero value is usable.
type Options struct {
	// MaxAnomalies caps how many findings of each kind are listed (0: 20), among the
	// recorded transactions and, apart, through placeholders ([history.PlaceholderSession]).
	// Every finding is still counted.
	MaxAnomalies int
	_            struct{}
}

// Findings is what the basic checks found.
type Findings struct {
	// Anomalies lists findings, at most Options.MaxAnomalies per kind (and as many again
	// through placeholders), in the order of the transactions that reveal them (incompatible
	// list orders last, by key).
	Anomalies []report.Anomaly
	// Counts holds the number of findings of each kind, listed or not.
	Counts map[anomaly.Kind]int
	// Notes are caveats: failed ops, unknown outcomes, duplicate values, unlisted findings.
	Notes []string
	Stats report.Stats
}

// checker holds the state of one run.
type checker struct {
	h   *history.History
	max int
	ix  *index
	f   *Findings
	// ph marks the placeholder transactions; listed counts the findings listed per kind.
	ph     report.Placeholders
	listed map[listKey]int

	// Per-key scratch, stamped with the current transaction so it never needs clearing.
	stamp []uint32
	gen   uint32
	lastW []int32 // op index of the txn's last write of the key before the current op
	// Per-op scratch of the current transaction: the previous own append of the same key.
	prevAppend []int32
	// failedKey marks keys the current txn wrote with a failed op (stamped by failStamp).
	failStamp []uint32

	// Per-value scratch for duplicate list elements.
	seen    []uint32
	seenGen uint32

	// List reads of committed transactions, for the order check: per key the longest read.
	longest   []opRef
	longPart  [][]history.Value // othersPart of each key's longest read
	listReads []opRef
	// idOrdered: every session lists its transactions in increasing id order (as Builder
	// makes them), so a writer with a smaller id is never later in the reader's session.
	idOrdered bool
	// futureElem is the list element being checked, for future-read messages.
	futureElem history.Value
}

type opRef struct {
	t  history.TxnID
	op int32
}

var noRef = opRef{t: -1}

// Check runs every basic check over h. It polls ctx and returns context.Cause(ctx) with
// what it found so far when cancelled (also when ctx is done by the time it ends).
func Check(ctx context.Context, h *history.History, o Options) (*Findings, error) {
	c := &checker{h: h, max: o.MaxAnomalies, f: &Findings{Counts: make(map[anomaly.Kind]int)}, ph: report.PlaceholdersOf(h), listed: make(map[listKey]int)}
	if c.max <= 0 {
		c.max = 20
	}
	nk := len(h.Keys)
	c.stamp = make([]uint32, nk)
	c.failStamp = make([]uint32, nk)
	c.lastW = make([]int32, nk)

	writes := c.countStats()
	c.idOrdered = idOrdered(h)
	c.ix = newIndex(h.Values.Len(), writes)
	if err := c.indexWrites(ctx); err != nil {
		return c.f, err
	}
	if err := c.checkReads(ctx); err != nil {
		return c.f, err
	}
	c.checkOrders()
	c.notes()
	if ctx.Err() != nil {
		// Stopped while finishing: nothing was skipped, but a caller that cancelled gets
		// no pass it could mistake for one decided in time.
		return c.f, context.Cause(ctx)
	}
	return c.f, nil
}

// countStats fills the findings' counts of transactions, outcomes and ops, and returns an
// upper bound of the writes (for the index).
func (c *checker) countStats() (writes int) {
	h := c.h
	st := &c.f.Stats
	st.Txns, st.Sessions, st.Keys = len(h.Txns), len(h.Sessions), len(h.Keys)
	for i := range h.Txns {
		t := &h.Txns[i]
		switch t.Outcome {
		case history.OutcomeCommitted:
			st.Committed++
		case history.OutcomeAborted:
			st.Aborted++
		default:
			st.Unknown++
		}
		st.Ops += len(t.Ops)
		for _, o := range t.Ops {
			switch {
			case o.Kind == history.OpPredWrite:
				writes += len(h.Pred(o).Rows) // an upper bound of the rows it changed
			case o.Kind.IsWrite():
				writes++
			}
		}
	}
	return writes
}

// idOrdered reports whether every session of h lists its transactions in increasing ID
// order.
func idOrdered(h *history.History) bool {
	for _, s := range h.Sessions {
		for i := 1; i < len(s.Txns); i++ {
			if s.Txns[i] <= s.Txns[i-1] {
				return false
			}
		}
	}
	return true
}

func (c *checker) nextGen() {
	c.gen++
	if c.gen == 0 { // wrapped: clear stamps
		clear(c.stamp)
		clear(c.failStamp)
		c.gen = 1
	}
}

// indexWrites records every write with whether it was its transaction's last write of the
// key.
func (c *checker) indexWrites(ctx context.Context) error {
	h := c.h
	for i := range h.Txns {
		if i&1023 == 0 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		t := &h.Txns[i]
		c.nextGen()
		aborted := t.Outcome == history.OutcomeAborted
		for j := len(t.Ops) - 1; j >= 0; j-- {
			o := t.Ops[j]
			if o.Kind == history.OpPredWrite {
				// The rows an UPDATE ... WHERE matched are writes too.
				rows := h.Pred(o).Rows
				for r := len(rows) - 1; r >= 0; r-- {
					if rows[r].Match {
						c.indexWrite(t, int32(j), o.Flags, rows[r].Key, rows[r].Value, aborted)
					}
				}
				continue
			}
			if !o.Kind.IsWrite() {
				continue
			}
			c.indexWrite(t, int32(j), o.Flags, o.Key, o.Value, aborted)
		}
	}
	return nil
}

// indexWrite records t's write of k = v at op j, walking t's ops backwards.
func (c *checker) indexWrite(t *history.Txn, j int32, flags history.OpFlags, k history.Key, v history.Value, aborted bool) {
	var fl uint8
	switch {
	case aborted:
		fl = wAborted
	case c.stamp[k] != c.gen:
		fl = wFinal
	default:
		fl = wInter
	}
	if flags&history.OpFailed != 0 {
		fl |= wFailed
	}
	c.stamp[k] = c.gen
	c.ix.add(k, v, t.ID, j, fl)
}

// written returns the value op j of t wrote to k: the op's own value, or for a predicate
// write the value of its row for k.
func (c *checker) written(t *history.Txn, j int32, k history.Key) history.Value {
	o := t.Ops[j]
	if o.Kind != history.OpPredWrite {
		return o.Value
	}
	v := history.Value(history.Nil)
	for _, r := range c.h.Pred(o).Rows {
		if r.Match && r.Key == k {
			v = r.Value
		}
	}
	return v
}

// add records a finding; msg is called only if the finding is listed.
func (c *checker) add(kind anomaly.Kind, txns []history.TxnID, k history.Key, msg func() string, cycle ...report.Step) {
	c.f.Counts[kind]++
	a := report.Anomaly{Kind: kind, Txns: txns, Key: k, Cycle: cycle}
	// Findings through placeholders are capped apart, so that they never crowd out those
	// among the recorded transactions.
	lk := listKey{kind, c.ph.Involves(&a)}
	if c.listed[lk] >= c.max {
		return
	}
	c.listed[lk]++
	a.Message = msg()
	c.f.Anomalies = append(c.f.Anomalies, a)
}

// listKey counts the findings listed of one kind, through placeholders or not.
type listKey struct {
	kind    anomaly.Kind
	through bool
}

func (c *checker) checkReads(ctx context.Context) error {
	h := c.h
	c.longest = make([]opRef, len(h.Keys))
	c.longPart = make([][]history.Value, len(h.Keys))
	for i := range c.longest {
		c.longest[i] = noRef
	}
	for i := range h.Txns {
		if i&1023 == 0 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if t := &h.Txns[i]; t.Outcome == history.OutcomeCommitted {
			c.txnReads(t)
		}
	}
	return nil
}

// txnReads checks the reads of committed transaction t, keeping track of its own writes
// so far.
func (c *checker) txnReads(t *history.Txn) {
	h := c.h
	c.nextGen()
	if cap(c.prevAppend) < len(t.Ops) {
		c.prevAppend = make([]int32, len(t.Ops))
	}
	c.prevAppend = c.prevAppend[:len(t.Ops)]
	for j, o := range t.Ops {
		switch o.Kind {
		case history.OpRead:
			if !o.Failed() {
				c.read(t, int32(j), o)
			}
		case history.OpListRead:
			if !o.Failed() {
				c.listRead(t, int32(j), o)
			}
		case history.OpPredWrite:
			for _, r := range h.Pred(o).Rows {
				if r.Match {
					c.stamp[r.Key] = c.gen
					c.lastW[r.Key] = int32(j)
				}
			}
		case history.OpWrite, history.OpAppend, history.OpInsert, history.OpDelete:
			c.ownWriteOf(int32(j), o)
		}
	}
}

// ownWriteOf records write o, op j of the current transaction, as its last write of the
// key (linked to the one before, for appends), and whether it failed.
func (c *checker) ownWriteOf(j int32, o history.Op) {
	c.prevAppend[j] = -1
	if c.stamp[o.Key] == c.gen {
		c.prevAppend[j] = c.lastW[o.Key]
	}
	c.stamp[o.Key] = c.gen
	c.lastW[o.Key] = j
	if o.Failed() {
		c.failStamp[o.Key] = c.gen
	}
}

// ownWrite returns the op index of t's last write of k before the current op, or -1, and
// whether t wrote k with a failed op so far.
func (c *checker) ownWrite(k history.Key) (int32, bool) {
	if c.stamp[k] != c.gen {
		return -1, false
	}
	return c.lastW[k], c.failStamp[k] == c.gen
}

func (c *checker) read(t *history.Txn, j int32, o history.Op) {
	h := c.h
	k, v := o.Key, o.Value
	if w, failed := c.ownWrite(k); w >= 0 {
		if !failed {
			c.ownRead(t, o, w)
		}
		return
	}
	switch o.Src.Kind {
	case history.SrcInit, history.SrcNone:
		return
	case history.SrcTxn:
		c.readFrom(t, j, o)
		return
	}
	r := c.ix.find(k, v)
	if r == nil {
		if v != h.InitialValue(k) {
			c.add(anomaly.ThinAirRead, []history.TxnID{t.ID}, k, func() string {
				return fmt.Sprintf("%s read %s, which no transaction wrote and which is not %v's initial value (%v)", h.Name(t.ID), h.KV(k, v), h.Key(k), h.Value(h.InitialValue(k)))
			})
		}
		return
	}
	if v == h.InitialValue(k) {
		return // it may be the initial version
	}
	c.external(t, o, r, false)
}

// abortedMsg says that t read (k, v) of r (an element of list read o, if list), which
// only aborted transactions wrote.
func (c *checker) abortedMsg(t *history.Txn, o history.Op, r *wrec, list bool) string {
	h := c.h
	k, v := r.k, r.v
	if r.n > 1 {
		who := fmt.Sprintf("%d transactions, all of which aborted (the first is %s)", r.n, h.Name(r.txn))
		if list {
			return fmt.Sprintf("%s read %v=%s, whose element %v was appended only by %s", h.Name(t.ID), h.Key(k), c.list(o), h.Value(v), who)
		}
		return fmt.Sprintf("%s read %s, which was written only by %s", h.Name(t.ID), h.KV(k, v), who)
	}
	if list {
		return fmt.Sprintf("%s read %v=%s, whose element %v was appended only by %s, which aborted", h.Name(t.ID), h.Key(k), c.list(o), h.Value(v), h.Name(r.txn))
	}
	return fmt.Sprintf("%s read %s, which only %s wrote, and it aborted", h.Name(t.ID), h.KV(k, v), h.Name(r.txn))
}

// ownRead checks read o of t after t's own write of the key (op w): it must read what
// that wrote, and name no other source (INT).
func (c *checker) ownRead(t *history.Txn, o history.Op, w int32) {
	h := c.h
	k, v := o.Key, o.Value
	if t.Ops[w].Kind == history.OpAppend {
		return // an item read of a list key: nothing to compare
	}
	own := c.written(t, w, k)
	if own != v || (o.Src.Kind == history.SrcTxn && o.Src.Txn != t.ID) || o.Src.Kind == history.SrcInit || o.Src.Kind == history.SrcNone {
		c.add(anomaly.Internal, []history.TxnID{t.ID}, k, func() string {
			return fmt.Sprintf("%s read %s after writing %s itself", h.Name(t.ID), h.KV(k, v), h.KV(k, own))
		})
	}
}

// external checks a read of (k, v) by t, which did not write k earlier, against the writers
// of that pair. list says whether it is an element of a list read.
func (c *checker) external(t *history.Txn, o history.Op, r *wrec, list bool) {
	h := c.h
	k, v := r.k, r.v
	if r.n == 1 && r.txn == t.ID {
		// Only t wrote it, and only later.
		c.add(anomaly.Internal, []history.TxnID{t.ID}, k, func() string {
			if list {
				return fmt.Sprintf("%s read %v=%s, holding %v before appending it itself", h.Name(t.ID), h.Key(k), c.list(o), h.Value(v))
			}
			return fmt.Sprintf("%s read %s before writing it itself", h.Name(t.ID), h.KV(k, v))
		})
		return
	}
	switch {
	case r.flags&(wFinal|wInter) == 0:
		// Every writer aborted.
		c.add(anomaly.AbortedRead, []history.TxnID{r.txn, t.ID}, k, func() string { return c.abortedMsg(t, o, r, list) }, c.wrStep(r.txn, t.ID, o, v))
		return
	case r.flags&wFinal == 0 && !list && r.txn != t.ID:
		// Every committed or unknown writer overwrote it in the same transaction.
		c.intermediate(t, o, r.txn, r.op, false)
	}
	if r.n == 1 && r.flags&wAborted == 0 {
		c.future(t, o, r.txn)
	}
}

// readFrom checks a read whose source names the writing op.
func (c *checker) readFrom(t *history.Txn, j int32, o history.Op) {
	h := c.h
	k, v := o.Key, o.Value
	w := o.Src.Txn
	if w == t.ID {
		if o.Src.Op > j {
			c.add(anomaly.Internal, []history.TxnID{t.ID}, k, func() string {
				return fmt.Sprintf("%s read %s from its own later write", h.Name(t.ID), h.KV(k, v))
			})
		}
		return
	}
	wt := h.Txn(w)
	if wt.Outcome == history.OutcomeAborted {
		c.add(anomaly.AbortedRead, []history.TxnID{w, t.ID}, k, func() string {
			return fmt.Sprintf("%s read %s from %s (the source names it), which aborted", h.Name(t.ID), h.KV(k, v), h.Name(w))
		}, report.Step{From: w, To: t.ID, Rel: report.WR, Key: k, Value: v})
		return
	}
	if overwrite(wt, o.Src.Op) >= 0 {
		c.intermediate(t, o, w, o.Src.Op, true)
	}
	c.future(t, o, w)
}

// overwrite returns the index of wt's last write of the key written at op i, if it comes
// after i, else -1.
func overwrite(wt *history.Txn, i int32) int32 {
	k := wt.Ops[i].Key
	last := int32(-1)
	for j := i + 1; j < int32(len(wt.Ops)); j++ {
		if o := wt.Ops[j]; o.Kind.IsWrite() && o.Key == k {
			last = j
		}
	}
	return last
}

func (c *checker) intermediate(t *history.Txn, o history.Op, w history.TxnID, wop int32, explicit bool) {
	h := c.h
	k, v := o.Key, o.Value
	c.add(anomaly.IntermediateRead, []history.TxnID{w, t.ID}, k, func() string {
		wt := h.Txn(w)
		over := overwrite(wt, wop)
		if over < 0 {
			// Duplicates: w's write was final but w aborted; the committed writers overwrote it.
			return fmt.Sprintf("%s read %s, which every committed or unknown-outcome writer overwrote in the same transaction, and the others aborted", h.Name(t.ID), h.KV(k, v))
		}
		final := wt.Ops[over]
		src := ""
		if explicit {
			src = " (the source names it)"
		}
		return fmt.Sprintf("%s read %s, which %s wrote%s and then overwrote with %s in the same transaction", h.Name(t.ID), h.KV(k, v), h.Name(w), src, h.KV(k, final.Value))
	}, report.Step{From: w, To: t.ID, Rel: report.WR, Key: k, Value: v})
}

// future reports t reading from w when w comes later in t's session.
func (c *checker) future(t *history.Txn, o history.Op, w history.TxnID) {
	if c.idOrdered && w < t.ID {
		return
	}
	h := c.h
	wt := h.Txn(w)
	if wt.Session != t.Session || wt.Seq <= t.Seq {
		return
	}
	k, v := o.Key, o.Value
	if o.Kind == history.OpListRead {
		v = c.futureElem
	}
	c.add(anomaly.FutureRead, []history.TxnID{t.ID, w}, k, func() string {
		sess := h.Sessions[t.Session].Source
		what := h.KV(k, v)
		if o.Kind == history.OpListRead {
			what = fmt.Sprintf("%v=%s, holding %v", h.Key(k), c.list(o), h.Value(v))
		}
		return fmt.Sprintf("%s read %s, which %s wrote later in the same session %v", h.Name(t.ID), what, h.Name(w), sess)
	},
		report.Step{From: t.ID, To: w, Rel: report.SO, Key: -1},
		c.wrStep(w, t.ID, o, v))
}

// wrStep is the write-read edge from w to the reader t for value v of read o. For a list
// element it says why in words, since "read l=3" would misstate what was read.
func (c *checker) wrStep(w, t history.TxnID, o history.Op, v history.Value) report.Step {
	s := report.Step{From: w, To: t, Rel: report.WR, Key: o.Key, Value: v}
	if o.Kind == history.OpListRead {
		h := c.h
		s.Why = fmt.Sprintf("%s read %v=%s, holding %v, which %s appended", h.Name(t), h.Key(o.Key), c.list(o), h.Value(v), h.Name(w))
	}
	return s
}

// listRead checks list read o (op j of t) and keeps it for the order check.
func (c *checker) listRead(t *history.Txn, j int32, o history.Op) {
	c.listOwnTail(t, o)
	c.listDuplicates(t, o)
	c.listElements(t, j, o)
	c.listIntermediate(t, o)

	// Remember for the order check.
	k := o.Key
	ref := opRef{t.ID, j}
	c.listReads = append(c.listReads, ref)
	if part := c.othersPart(ref); c.longest[k] == noRef || len(c.longPart[k]) < len(part) {
		c.longest[k], c.longPart[k] = ref, part
	}
}

// listOwnTail checks list read o of t internally: the list must end with the transaction's
// own appends, in order.
func (c *checker) listOwnTail(t *history.Txn, o history.Op) {
	h, k, l := c.h, o.Key, c.h.List(o)
	w, failed := c.ownWrite(k)
	if w < 0 || failed {
		return
	}
	n := len(l)
	ok := true
	for a := w; a >= 0; a = c.prevAppend[a] {
		if t.Ops[a].Kind != history.OpAppend {
			break
		}
		n--
		if n < 0 || l[n] != t.Ops[a].Value {
			ok = false
			break
		}
	}
	if !ok {
		c.add(anomaly.Internal, []history.TxnID{t.ID}, k, func() string {
			var own []history.Value
			for a := w; a >= 0 && t.Ops[a].Kind == history.OpAppend; a = c.prevAppend[a] {
				own = append(own, t.Ops[a].Value)
			}
			slices.Reverse(own)
			return fmt.Sprintf("%s read %v=%s after appending %s itself, but the list does not end with them", h.Name(t.ID), h.Key(k), c.list(o), c.values(own))
		})
	}
}

// listDuplicates reports the first element list read o of t holds more than once (more
// often than it was appended).
func (c *checker) listDuplicates(t *history.Txn, o history.Op) {
	h, k, l := c.h, o.Key, c.h.List(o)
	if c.seen == nil {
		c.seen = make([]uint32, h.Values.Len())
	}
	c.seenGen++
	if c.seenGen == 0 {
		clear(c.seen)
		c.seenGen = 1
	}
	dupReported := false
	for _, e := range l {
		if c.seen[e] == c.seenGen && !dupReported && c.overAppended(k, e, l) {
			dupReported = true
			c.add(anomaly.DuplicateElements, []history.TxnID{t.ID}, k, func() string {
				return fmt.Sprintf("%s read %v=%s, which holds %v more than once", h.Name(t.ID), h.Key(k), c.list(o), h.Value(e))
			})
		}
		c.seen[e] = c.seenGen
	}
}

// listElements checks that each element of list read o (op j of t) was appended, by
// someone who did not abort: reads of another's appends are external reads.
func (c *checker) listElements(t *history.Txn, j int32, o history.Op) {
	h, k := c.h, o.Key
	for _, e := range h.List(o) {
		r := c.ix.find(k, e)
		if r == nil {
			c.add(anomaly.ThinAirRead, []history.TxnID{t.ID}, k, func() string {
				return fmt.Sprintf("%s read %v=%s, whose element %v no transaction appended", h.Name(t.ID), h.Key(k), c.list(o), h.Value(e))
			})
			continue
		}
		if r.txn == t.ID && r.n == 1 && (r.op < j || appendedBefore(t, j, k, e)) {
			continue // its own earlier append (r.op is its last append of e, if it made two)
		}
		c.futureElem = e
		c.external(t, o, r, true)
	}
}

// listIntermediate reports G1b: list read o of t ends with an element whose writer appended
// to the key again.
func (c *checker) listIntermediate(t *history.Txn, o history.Op) {
	h, k, l := c.h, o.Key, c.h.List(o)
	n := len(l)
	if n == 0 {
		return
	}
	r := c.ix.find(k, l[n-1])
	if r == nil || r.n != 1 || r.txn == t.ID || r.flags&wInter == 0 || r.flags&wFinal != 0 {
		return
	}
	e := l[n-1]
	c.add(anomaly.IntermediateRead, []history.TxnID{r.txn, t.ID}, k, func() string {
		wt := h.Txn(r.txn)
		next := wt.Ops[overwrite(wt, r.op)]
		return fmt.Sprintf("%s read %v=%s, which ends with %v; %s appended %v and then %v to %v in the same transaction", h.Name(t.ID), h.Key(k), c.list(o), h.Value(e), h.Name(r.txn), h.Value(e), h.Value(next.Value), h.Key(k))
	}, c.wrStep(r.txn, t.ID, o, e))
}

// othersPart returns the part of list read ref that other transactions' appends made: the
// list without the reader's own earlier appends, which end it when they are consistent
// (internal consistency is checked apart). Only that part is a version of the key: a
// transaction that read [] and appended 5 sees [5], while the version order may put
// another's 4 before its 5 (read committed allows it).
func (c *checker) othersPart(ref opRef) []history.Value {
	t := c.h.Txn(ref.t)
	o := t.Ops[ref.op]
	l := c.h.List(o)
	own := 0
	for _, p := range t.Ops[:ref.op] {
		if p.Kind == history.OpAppend && p.Key == o.Key {
			own++
		}
	}
	if own > len(l) {
		return l[:0]
	}
	return l[:len(l)-own]
}

// checkOrders compares every list read with the longest read of its key.
func (c *checker) checkOrders() {
	h := c.h
	reported := make(map[history.Key]bool)
	for _, ref := range c.listReads {
		o := h.Txn(ref.t).Ops[ref.op]
		lg := c.longest[o.Key]
		if lg == ref || reported[o.Key] {
			continue
		}
		lo := h.Txn(lg.t).Ops[lg.op]
		l, long := c.othersPart(ref), c.longPart[o.Key]
		if slices.Equal(l, long[:len(l)]) {
			continue
		}
		reported[o.Key] = true
		k := o.Key
		c.add(anomaly.IncompatibleOrder, []history.TxnID{ref.t, lg.t}, k, func() string {
			i := 0
			for l[i] == long[i] {
				i++
			}
			return fmt.Sprintf("%s read %v=%s and %s read %v=%s: neither is a prefix of the other (they differ at position %d: %v vs %v)%s",
				h.Name(ref.t), h.Key(k), c.list(o), h.Name(lg.t), h.Key(k), c.list(lo), i, h.Value(l[i]), h.Value(long[i]), ownNote(len(h.List(o))-len(l)+len(h.List(lo))-len(long)))
		})
	}
	// Order the findings by key, for stable output independent of transaction order.
	slices.SortStableFunc(c.f.Anomalies, func(a, b report.Anomaly) int {
		if a.Kind == anomaly.IncompatibleOrder && b.Kind == anomaly.IncompatibleOrder {
			return int(a.Key) - int(b.Key)
		}
		return 0
	})
}

// ownNote says, when the lists compared end with their readers' own appends, that those were
// left out.
func ownNote(own int) string {
	if own == 0 {
		return ""
	}
	return " (each without its reader's own earlier appends)"
}

// appendedBefore reports whether t appended e to k before op j.
func appendedBefore(t *history.Txn, j int32, k history.Key, e history.Value) bool {
	return countAppends(t.Ops[:j], k, e) > 0
}

// countAppends counts the appends of e to k among ops.
func countAppends(ops []history.Op, k history.Key, e history.Value) int {
	n := 0
	for _, o := range ops {
		if o.Kind == history.OpAppend && o.Key == k && o.Value == e {
			n++
		}
	}
	return n
}

// overAppended reports whether list l of key k holds element e more often than e was
// appended to k. A duplicate the appends may explain (the history itself appended e twice)
// is no anomaly: when two transactions appended e, any count is given the benefit of the
// doubt (notes() reports such elements as ambiguous, and the black-box checkers decline
// the history).
func (c *checker) overAppended(k history.Key, e history.Value, l []history.Value) bool {
	r := c.ix.find(k, e)
	if r == nil {
		return true
	}
	if r.n > 1 {
		return false
	}
	held := 0
	for _, x := range l {
		if x == e {
			held++
		}
	}
	return held > countAppends(c.h.Txns[r.txn].Ops, k, e)
}

// notes adds the findings' notes: failed operations, transactions of unknown outcome,
// duplicate writes, and kinds with more findings than listed.
func (c *checker) notes() {
	f := c.f
	c.failedNote()
	if f.Stats.Unknown > 0 {
		f.Notes = append(f.Notes, fmt.Sprintf("%d transactions have an unknown outcome: their writes count as possibly committed, and their own reads were not checked", f.Stats.Unknown))
	}
	c.duplicateNotes()
	kinds := make([]anomaly.Kind, 0, len(f.Counts))
	for k := range f.Counts {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		if n, listed := f.Counts[k], c.listed[listKey{k, false}]+c.listed[listKey{k, true}]; n > listed {
			f.Notes = append(f.Notes, fmt.Sprintf("%d %s findings; only the first %d are listed", n, k.Info().Title, listed))
		}
	}
}

// failedNote says how failed reads and writes were taken, if there are any.
func (c *checker) failedNote() {
	h := c.h
	var failedR, failedW int
	for i := range h.Txns {
		for _, o := range h.Txns[i].Ops {
			if o.Failed() {
				if o.Kind.IsWrite() {
					failedW++
				} else {
					failedR++
				}
			}
		}
	}
	var failed []string
	if failedR > 0 {
		failed = append(failed, fmt.Sprintf("%d failed reads were not checked", failedR))
	}
	if failedW > 0 {
		failed = append(failed, fmt.Sprintf("%d failed writes were treated as possibly done: their values count as written, and their transactions' later reads of those keys were not checked", failedW))
	}
	if len(failed) > 0 {
		c.f.Notes = append(c.f.Notes, strings.Join(failed, "; "))
	}
}

// duplicateNotes says how many (key, value) pairs and list elements more than one
// transaction wrote, if any did.
func (c *checker) duplicateNotes() {
	h, f := c.h, c.f
	var dupPairs, dupLists int
	var dupExample *wrec
	for i := range c.ix.recs {
		r := &c.ix.recs[i]
		if r.n > 1 {
			if h.Txn(r.txn).Ops[r.op].Kind == history.OpAppend {
				dupLists++
			} else {
				dupPairs++
			}
			if dupExample == nil {
				dupExample = r
			}
		}
	}
	if dupPairs > 0 {
		f.Notes = append(f.Notes, fmt.Sprintf("%d (key, value) pairs were written by more than one transaction (e.g. %s by %s and others); reads of them are ambiguous, and a finding is reported only if every possible writer agrees", dupPairs, h.KV(dupExample.k, dupExample.v), h.Name(dupExample.txn)))
	}
	if dupLists > 0 {
		f.Notes = append(f.Notes, fmt.Sprintf("%d list elements were appended to the same key by more than one transaction; list reads holding them are ambiguous", dupLists))
	}
}

// maxList is how many elements a rendered list shows before eliding the middle.
const maxList = 8

// list renders a list read, eliding the middle of long lists.
func (c *checker) list(o history.Op) string { return c.values(c.h.List(o)) }

func (c *checker) values(vs []history.Value) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range vs {
		if len(vs) > maxList && i == maxList/2 {
			fmt.Fprintf(&b, " ... (%d more) ...", len(vs)-maxList)
		}
		if len(vs) > maxList && i >= maxList/2 && i < len(vs)-maxList/2 {
			continue
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.h.Value(v).String())
	}
	b.WriteByte(']')
	return b.String()
}
