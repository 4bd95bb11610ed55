// Package runnertest holds test helpers shared by the runner and its drivers' tests.
package runnertest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/workload"
)

// Image parses a recorded row image "v1=1,v2=2,w=3" into its columns.
func Image(t testing.TB, h *history.History, v history.Value, cols []string) []int64 {
	t.Helper()
	s, ok := h.Value(v).Str()
	if !ok {
		t.Fatalf("row image %v is not a string", h.Value(v))
	}
	parts := strings.Split(s, ",")
	if len(parts) != len(cols) {
		t.Fatalf("row image %q does not list the %d columns %v", s, len(cols), cols)
	}
	out := make([]int64, len(cols))
	for i, p := range parts {
		name, num, ok := strings.Cut(p, "=")
		x, err := strconv.ParseInt(num, 10, 64)
		if !ok || name != cols[i] || err != nil {
			t.Fatalf("row image %q: column %d is %q, want %s=<int>", s, i, p, cols[i])
		}
		out[i] = x
	}
	return out
}

// CheckRowHistory asserts the shape the predicate checker relies on: loader transactions
// first, in their own session, inserting every row of the table; every row a predicate read
// returned matches the predicate, and its image is one some transaction wrote; every image
// lists every column; no (key, image) is written twice; rows are int keys and the initial
// value is nil. It returns the number of predicate reads and writes, and rows they listed.
func CheckRowHistory(t testing.TB, h *history.History, w *workload.Workload) (preds, rows int) {
	t.Helper()
	preds, rows, _ = checkRowHistory(t, h, w, false)
	return preds, rows
}

// CheckRowHistoryDirty is [CheckRowHistory] for read uncommitted, where a predicate read
// may return a row image that no recorded operation wrote: that of a predicate write that
// failed after it had changed some rows, seen before its transaction rolled back (a failed
// predicate write is recorded with no rows, since the driver cannot say which it changed).
// Such images must still be well-formed and match the predicate; it returns how many there
// were as dirty.
func CheckRowHistoryDirty(t testing.TB, h *history.History, w *workload.Workload) (preds, rows, dirty int) {
	t.Helper()
	return checkRowHistory(t, h, w, true)
}

func checkRowHistory(t testing.TB, h *history.History, w *workload.Workload, dirtyOK bool) (preds, rows, dirty int) {
	t.Helper()
	c := &rowChecker{t: t, h: h, w: w, dirtyOK: dirtyOK, written: map[rowImage]history.TxnID{}}
	c.cols = append(slices.Clone(w.Table.Cols), w.Table.TagCol)
	if h.Initial != history.Nil {
		t.Fatalf("initial value %v, want nil (rows do not exist before they are inserted)", h.Value(h.Initial))
	}
	c.checkWrites()
	for id, tx := range h.All() {
		for _, o := range tx.Ops {
			if o.Kind == history.OpPredRead {
				c.checkPredRead(id, h.Pred(o))
			}
		}
	}
	return c.preds, c.rows, c.dirty
}

// rowImage is a row key and the image written to it.
type rowImage struct {
	k history.Key
	v history.Value
}

// rowChecker holds what checkRowHistory has seen.
type rowChecker struct {
	t       testing.TB
	h       *history.History
	w       *workload.Workload
	cols    []string
	dirtyOK bool
	written map[rowImage]history.TxnID // the images written, by whom

	preds, rows, dirty int
}

// checkWrites checks the loader and every write, and notes the images written.
func (c *rowChecker) checkWrites() {
	t, h := c.t, c.h
	t.Helper()
	loaded, loadEnd := 0, int64(0)
	for id, tx := range h.All() {
		sess := h.Sessions[tx.Session].Source
		if sess == history.Str("load") {
			if int(id) != loaded/1000 || !tx.Committed() {
				t.Fatalf("loader transaction %s: id %d, outcome %v; want the first transactions, committed", h.Name(id), id, tx.Outcome)
			}
			loaded += len(tx.Ops)
			loadEnd = max(loadEnd, tx.Time.End)
		} else if tx.Time.Begin < loadEnd {
			t.Fatalf("%s began at %d, before the loader ended at %d", h.Name(id), tx.Time.Begin, loadEnd)
		}
		for _, o := range tx.Ops {
			c.checkOp(id, o)
		}
	}
	w := c.w
	if want := len(w.Load[0].Ops)*(len(w.Load)-1) + len(w.Load[len(w.Load)-1].Ops); loaded != want {
		t.Fatalf("the loader inserted %d rows, want %d", loaded, want)
	}
}

// checkOp checks op o of transaction id is one a row workload records, and notes what it
// wrote.
func (c *rowChecker) checkOp(id history.TxnID, o history.Op) {
	t, h := c.t, c.h
	t.Helper()
	switch o.Kind {
	case history.OpInsert:
		c.write(id, o.Key, o.Value)
	case history.OpDelete:
		if o.Value != history.Nil {
			t.Fatalf("delete with a value")
		}
	case history.OpPredWrite:
		c.preds++
		p := h.Pred(o)
		for ri, r := range p.Rows {
			c.rows++
			if !r.Match || p.Src(ri).Kind != history.SrcByValue {
				t.Fatalf("predicate write row %+v: want Match and no explicit source", r)
			}
			c.write(id, r.Key, r.Value)
		}
	case history.OpPredRead:
		c.preds++
	default:
		t.Fatalf("%s: unexpected %v in a row workload", h.Name(id), o.Kind)
	}
}

// write notes that id wrote image v to row k, which must be well-formed and new.
func (c *rowChecker) write(id history.TxnID, k history.Key, v history.Value) {
	t, h := c.t, c.h
	t.Helper()
	if _, ok := h.Key(k).Int(); !ok {
		t.Fatalf("row key %v is not an int", h.Key(k))
	}
	if v != history.Nil {
		Image(t, h, v, c.cols)
	}
	if prev, dup := c.written[rowImage{k, v}]; dup && v != history.Nil {
		t.Fatalf("%s and %s both wrote row %v = %v", h.Name(prev), h.Name(id), h.Key(k), h.Value(v))
	}
	c.written[rowImage{k, v}] = id
}

// checkPredRead checks a predicate read of id: its predicate is a range over a column of
// the table, and its rows come in key order, match it, and were written by someone.
func (c *rowChecker) checkPredRead(id history.TxnID, p *history.PredOp) {
	t, h := c.t, c.h
	t.Helper()
	f, _ := p.Pred.Field.Str()
	col := slices.Index(c.cols, f)
	if !p.Pred.IsRange || p.Pred.Relation != c.w.Table.Name || col < 0 || p.Pred.Expr != fmt.Sprintf("%s BETWEEN %d AND %d", f, p.Pred.Lo, p.Pred.Hi) {
		t.Fatalf("%s: predicate %+v", h.Name(id), p.Pred)
	}
	for i, r := range p.Rows {
		c.rows++
		if k0, _ := h.Key(p.Rows[max(i-1, 0)].Key).Int(); i > 0 && k0 >= intKey(h, r.Key) {
			t.Fatalf("%s: rows not in key order", h.Name(id))
		}
		vals := Image(t, h, r.Value, c.cols)
		if !r.Match || vals[col] < p.Pred.Lo || vals[col] > p.Pred.Hi {
			t.Fatalf("%s read row %v = %v through %s, which it does not match", h.Name(id), h.Key(r.Key), h.Value(r.Value), p.Pred.Expr)
		}
		if _, ok := c.written[rowImage{r.Key, r.Value}]; !ok {
			if !c.dirtyOK {
				t.Fatalf("%s read row %v = %v, which nobody wrote", h.Name(id), h.Key(r.Key), h.Value(r.Value))
			}
			c.dirty++
		}
	}
}

func intKey(h *history.History, k history.Key) int64 {
	i, _ := h.Key(k).Int()
	return i
}
