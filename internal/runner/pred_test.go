package runner

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/memdb"
	"github.com/isovet/isovet/internal/runner/runnertest"
	"github.com/isovet/isovet/internal/workload"
)

func TestRowWorkloadsRecordMemDB(t *testing.T) {
	t.Parallel()
	for _, mode := range []memdb.Mode{memdb.Serializable, memdb.SnapshotIsolation, memdb.ReadCommitted, memdb.ReadUncommitted} {
		for _, wl := range []string{"blindw-pred", "pred-write-skew"} {
			t.Run(mode.String()+"/"+wl, func(t *testing.T) {
				t.Parallel()
				o := workload.Options{Seed: 2, Sessions: 4, TxnsPerSess: 50}
				if wl == "blindw-pred" {
					o.Keys, o.RangeMax = 300, 30
				}
				w := gen(t, wl, o)
				h := runMem(t, memdb.Options{Mode: mode, Seed: 2}, w)
				var preds, rows, dirty int
				if mode == memdb.ReadUncommitted {
					// Rows a failed predicate write changed are seen before its rollback, and
					// not recorded (memdb, like the SQL drivers, does not say which they were).
					preds, rows, dirty = runnertest.CheckRowHistoryDirty(t, h, w)
				} else {
					preds, rows = runnertest.CheckRowHistory(t, h, w)
				}
				if preds < 200 || rows == 0 {
					t.Fatalf("%d predicate operations listing %d rows, want at least 200 and some rows", preds, rows)
				}
				t.Logf("%d txns, %d predicate ops, %d rows (%d of them images of failed writes)", len(h.Txns), preds, rows, dirty)
			})
		}
	}
}

// snapshotState replays the committed transactions of a memdb history by their logical
// timestamps and checks that every predicate operation that comes first in its
// transaction saw exactly the rows its snapshot held (snapshot isolation and serializable
// modes read a snapshot). It returns the pairs of concurrent committed transactions that
// read one range and both inserted into it, each missing the other's insert: phantoms.
func snapshotState(t *testing.T, h *history.History, w *workload.Workload) (phantoms int) {
	t.Helper()
	cols := append(slices.Clone(w.Table.Cols), w.Table.TagCol)
	type version struct {
		ts int64
		v  history.Value
	}
	vs := map[history.Key][]version{}
	var committed []history.TxnID
	for id, tx := range h.All() {
		if !tx.Committed() {
			continue
		}
		if !tx.HasTimestamps {
			t.Fatalf("%s has no memdb timestamps", h.Name(id))
		}
		committed = append(committed, id)
		for _, o := range tx.Ops {
			switch o.Kind {
			case history.OpInsert, history.OpDelete:
				vs[o.Key] = append(vs[o.Key], version{tx.Commit.Physical, o.Value})
			case history.OpPredWrite:
				for _, r := range h.Pred(o).Rows {
					vs[r.Key] = append(vs[r.Key], version{tx.Commit.Physical, r.Value})
				}
			}
		}
	}
	for k := range vs {
		slices.SortFunc(vs[k], func(a, b version) int { return int(a.ts - b.ts) })
	}
	at := func(k history.Key, ts int64) history.Value {
		v := history.Nil
		for _, x := range vs[k] {
			if x.ts < ts {
				v = x.v
			}
		}
		return v
	}
	type ins struct {
		id     history.TxnID
		lo, hi int64
		k      history.Key
		v      history.Value
	}
	var inserters []ins
	for _, id := range committed {
		tx := h.Txn(id)
		if len(tx.Ops) == 0 || (tx.Ops[0].Kind != history.OpPredRead && tx.Ops[0].Kind != history.OpPredWrite) {
			continue
		}
		p := h.Pred(tx.Ops[0])
		f, _ := p.Pred.Field.Str()
		col := slices.Index(cols, f)
		want := map[history.Key]history.Value{}
		for k := range vs {
			if v := at(k, tx.Start.Physical); v != history.Nil {
				if x := runnertest.Image(t, h, v, cols)[col]; x >= p.Pred.Lo && x <= p.Pred.Hi {
					want[k] = v
				}
			}
		}
		if len(want) != len(p.Rows) {
			t.Fatalf("%s's %s %s found %d rows, its snapshot holds %d", h.Name(id), tx.Ops[0].Kind, p.Pred.Expr, len(p.Rows), len(want))
		}
		for _, r := range p.Rows {
			v, ok := want[r.Key]
			if !ok || (tx.Ops[0].Kind == history.OpPredRead && v != r.Value) {
				t.Fatalf("%s's %s %s found row %v = %v, its snapshot holds %v", h.Name(id), tx.Ops[0].Kind, p.Pred.Expr, h.Key(r.Key), h.Value(r.Value), h.Value(v))
			}
		}
		for _, o := range tx.Ops[1:] {
			if o.Kind == history.OpInsert {
				if x := runnertest.Image(t, h, o.Value, cols)[col]; x >= p.Pred.Lo && x <= p.Pred.Hi {
					inserters = append(inserters, ins{id, p.Pred.Lo, p.Pred.Hi, o.Key, o.Value})
				}
			}
		}
	}
	for i, a := range inserters {
		for _, b := range inserters[i+1:] {
			ta, tb := h.Txn(a.id), h.Txn(b.id)
			// Each committed while the other's row was there and missed by its read: no
			// serial order has both reads (a row deleted in between would allow one).
			if a.lo == b.lo && a.hi == b.hi && ta.Start.Physical < tb.Commit.Physical && tb.Start.Physical < ta.Commit.Physical &&
				(ta.Commit.Physical > tb.Commit.Physical || at(a.k, tb.Commit.Physical+1) == a.v) &&
				(tb.Commit.Physical > ta.Commit.Physical || at(b.k, ta.Commit.Physical+1) == b.v) {
				phantoms++
				if testing.Verbose() {
					t.Logf("phantom: %s [%d,%d] %v and %s [%d,%d] %v", h.Name(a.id), ta.Start.Physical, ta.Commit.Physical, ta.Ops, h.Name(b.id), tb.Start.Physical, tb.Commit.Physical, tb.Ops)
				}
			}
		}
	}
	return phantoms
}

// TestRowWorkloadsSnapshots: in memdb's snapshot modes every predicate operation sees its
// snapshot; snapshot isolation and serializable with the phantom fault let concurrent
// pred-write-skew transactions both insert into the range they read (phantoms), clean
// serializable never does.
func TestRowWorkloadsSnapshots(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode     memdb.Mode
		fault    memdb.Fault
		phantoms bool
	}{
		{memdb.Serializable, 0, false},
		{memdb.SnapshotIsolation, 0, true},
		{memdb.Serializable, memdb.Phantom, true},
	} {
		t.Run(tc.mode.String()+"/"+tc.fault.String(), func(t *testing.T) {
			t.Parallel()
			total := 0
			for seed := uint64(1); seed <= 3; seed++ {
				w := gen(t, "blindw-pred", workload.Options{Seed: seed, Sessions: 4, TxnsPerSess: 50, Keys: 300, RangeMax: 30})
				h := runMem(t, memdb.Options{Mode: tc.mode, Faults: tc.fault, Seed: seed}, w)
				snapshotState(t, h, w)
				w = gen(t, "pred-write-skew", workload.Options{Seed: seed, Sessions: 6, TxnsPerSess: 50})
				h = runMem(t, memdb.Options{Mode: tc.mode, Faults: tc.fault, Seed: seed}, w)
				total += snapshotState(t, h, w)
			}
			if tc.phantoms != (total > 0) {
				t.Fatalf("%d phantoms in 3 seeds of pred-write-skew; want some: %v", total, tc.phantoms)
			}
			t.Logf("%d phantoms", total)
		})
	}
}

// TestRowWorkloadsVerdicts: memdb's serializable mode passes serializability on both row
// workloads; with the phantom fault, and at snapshot isolation, pred-write-skew fails it
// with an anti-dependency cycle through a predicate read (a phantom).
func TestRowWorkloadsVerdicts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode  memdb.Mode
		fault memdb.Fault
		wl    string
		fail  bool
	}{
		{memdb.Serializable, 0, "blindw-pred", false},
		{memdb.Serializable, 0, "pred-write-skew", false},
		{memdb.Serializable, memdb.Phantom, "pred-write-skew", true},
		{memdb.SnapshotIsolation, 0, "pred-write-skew", true},
	} {
		t.Run(tc.mode.String()+"/"+tc.fault.String()+"/"+tc.wl, func(t *testing.T) {
			t.Parallel()
			found := false
			for seed := uint64(1); seed <= 4 && !found; seed++ {
				o := workload.Options{Seed: seed, Sessions: 6, TxnsPerSess: 50}
				if tc.wl == "blindw-pred" {
					o.Keys, o.RangeMax, o.Sessions = 300, 30, 4
				}
				h := runMem(t, memdb.Options{Mode: tc.mode, Faults: tc.fault, Seed: seed}, gen(t, tc.wl, o))
				rep := mustCheck(t, h, check.Serializable, check.MethodAuto)
				if !tc.fail {
					if rep.Verdict != check.Pass {
						t.Fatalf("seed %d: Check(serializable) = %v (%s), want pass; anomalies: %s; notes: %v", seed, rep.Verdict, rep.Checker, kindNames(kinds(rep)), rep.Notes)
					}
					continue
				}
				switch rep.Verdict {
				case check.Pass:
					continue
				case check.Unknown:
					t.Fatalf("seed %d: Check(serializable) = unknown (%s): %v", seed, rep.Checker, rep.Notes)
				}
				for _, a := range rep.Anomalies {
					if (a.Kind == anomaly.G2 || a.Kind == anomaly.GSingle || a.Kind == anomaly.G2Item) && slices.Contains(a.Also, anomaly.Phantom) {
						found = true
						t.Logf("seed %d: %s, also %s", seed, a.Kind.Info().Name, kindNames(a.Also))
					}
				}
				if !found {
					t.Fatalf("seed %d: serializability fails, but not with a phantom: %s", seed, kindNames(kinds(rep)))
				}
				// Both keep snapshot isolation: the phantom is all that goes wrong.
				if si := mustCheck(t, h, check.SnapshotIsolation, check.MethodAuto); si.Verdict != check.Pass {
					t.Fatalf("seed %d: Check(snapshot-isolation) = %v (%s), want pass: %s %v", seed, si.Verdict, si.Checker, kindNames(kinds(si)), si.Notes)
				}
			}
			if tc.fail && !found {
				t.Fatalf("no phantom in 4 seeds")
			}
		})
	}
}

func TestTablesStatements(t *testing.T) {
	t.Parallel()
	rt, err := NewTables("isovet_kv", &TableSchema{Name: "t", Cols: []string{"v1", "v2", "w"}, TagCol: 2}, "bigint")
	if err != nil {
		t.Fatal(err)
	}
	dollar := func(i int) string { return "$" + strconv.Itoa(i) }
	q, err := rt.Select(Range{Col: 1, Lo: 3, Hi: 9}, dollar)
	if want := "SELECT k, v1, v2, w FROM isovet_kv_t WHERE v2 BETWEEN $1 AND $2"; err != nil || q != want {
		t.Errorf("Select = %q, %v; want %q", q, err, want)
	}
	set := []Assign{{Mul: 7, Add: 3, Mod: 100}, {Mul: 0, Add: 5, Mod: 100}, {Add: 42}}
	q, args, err := rt.Update(Range{Col: 0, Lo: 1, Hi: 2}, set, dollar)
	want := "UPDATE isovet_kv_t SET v1 = (k * $1 + $2) % $3, v2 = (k * $4 + $5) % $6, w = $7 WHERE v1 BETWEEN $8 AND $9"
	if err != nil || q != want || len(args) != 9 || args[6] != int64(42) || args[7] != int64(1) || args[8] != int64(2) {
		t.Errorf("Update = %q %v, %v; want %q", q, args, err, want)
	}
	if got := (Assign{Mul: 7, Add: 3, Mod: 100}).Value(15); got != 8 {
		t.Errorf("Assign.Value = %d, want (15*7+3) %% 100 = 8", got)
	}
	if got := Image(rt.Cols, []int64{1, -2, 3}); got != "v1=1,v2=-2,w=3" {
		t.Errorf("Image = %q", got)
	}
	for _, bad := range []*TableSchema{{Name: "T", Cols: []string{"v"}}, {Name: "t", Cols: []string{"k"}}, {Name: "t", Cols: []string{"v; drop"}}, {Name: "t", Cols: []string{"v"}, TagCol: 1}} {
		if _, err := NewTables("isovet_kv", bad, "bigint"); err == nil {
			t.Errorf("NewTables(%+v) accepted it", bad)
		}
	}
	if c := rt.Create(true, " ENGINE=InnoDB"); len(c) != 1 || !strings.Contains(c[0], "INDEX isovet_kv_t_w (w)") {
		t.Errorf("Create(inline) = %v", c)
	}
	if c := rt.Create(false, ""); len(c) != 4 || c[3] != "CREATE INDEX IF NOT EXISTS isovet_kv_t_w ON isovet_kv_t (w)" {
		t.Errorf("Create = %v", c)
	}
}
