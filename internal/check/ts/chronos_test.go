package ts

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

const (
	si     = anomaly.SnapshotIsolation
	ssi    = anomaly.StrongSessionSI
	ser    = anomaly.Serializable
	sser   = anomaly.StrongSessionSerializable
	noViol = ""
)

func TestChronos(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		level anomaly.Level
		init  string
		txs   []tx
		want  []string
	}{
		{name: "empty reads initial", level: si, init: "0", txs: []tx{{"A", 1, 1, 2, "r x 0"}}},
		{name: "null initial", level: si, init: "nil", txs: []tx{{"A", 1, 1, 2, "r x 0"}}, want: []string{"EXT|A||\"x\""}},
		{name: "read committed write", level: si, init: "0", txs: []tx{{"W", 1, 1, 2, "w x 1"}, {"R", 2, 3, 4, "r x 1"}}},
		{name: "commit at start is visible", level: si, init: "0", txs: []tx{{"W", 1, 1, 3, "w x 1"}, {"R", 2, 3, 4, "r x 1"}}},
		{name: "stale read", level: si, init: "0", txs: []tx{{"W", 1, 1, 2, "w x 1"}, {"R", 2, 3, 4, "r x 0"}}, want: []string{"EXT|R||\"x\""}},
		{name: "future read", level: si, init: "0", txs: []tx{{"W", 1, 3, 5, "w x 1"}, {"R", 2, 1, 4, "r x 1"}}, want: []string{"EXT|R||\"x\""}},
		{name: "int", level: si, init: "0", txs: []tx{{"A", 1, 1, 2, "w x 1; r x 2"}}, want: []string{"internal|A||\"x\""}},
		{name: "int after read", level: si, init: "0", txs: []tx{{"A", 1, 1, 2, "r x 0; r x 2"}}, want: []string{"internal|A||\"x\""}},
		{name: "own write not external", level: si, init: "0", txs: []tx{{"A", 1, 1, 2, "w x 1; r x 1"}}},
		{name: "noconflict", level: si, init: "0", txs: []tx{{"A", 1, 1, 3, "w x 1"}, {"B", 2, 2, 4, "w x 2"}}, want: []string{"NOCONFLICT|A|B|\"x\""}},
		{name: "noconflict not under ser", level: ser, init: "0", txs: []tx{{"A", 1, 1, 3, "w x 1"}, {"B", 2, 2, 4, "w x 2"}}},
		{name: "adjacent writers", level: si, init: "0", txs: []tx{{"A", 1, 1, 3, "w x 1"}, {"B", 2, 3, 4, "w x 2"}}},
		{name: "session", level: ssi, init: "0", txs: []tx{{"A", 1, 1, 3, ""}, {"B", 1, 2, 4, ""}}, want: []string{"session|B|A|"}},
		{name: "session off for plain si", level: si, init: "0", txs: []tx{{"A", 1, 1, 3, ""}, {"B", 1, 2, 4, ""}}},
		{name: "write skew is si", level: si, init: "0", txs: []tx{{"A", 1, 1, 3, "r x 0; r y 0; w x 1"}, {"B", 2, 2, 4, "r x 0; r y 0; w y 1"}}},
		{name: "write skew not ser", level: ser, init: "0", txs: []tx{{"A", 1, 1, 3, "r x 0; r y 0; w x 1"}, {"B", 2, 2, 4, "r x 0; r y 0; w y 1"}}, want: []string{"EXT|B||\"x\""}},
		{name: "equal commit ts", level: si, init: "0", txs: []tx{{"A", 1, 1, 3, "w x 1"}, {"B", 2, 3, 3, "w x 2"}}, want: []string{"timestamp-order|B|A|\"x\""}},
		{name: "point reader sees commit at its ts", level: si, init: "0", txs: []tx{{"A", 1, 1, 3, "w x 1"}, {"B", 2, 3, 3, "r x 1"}}},
		{name: "point txn reads before it writes", level: si, init: "0", txs: []tx{{"A", 1, 3, 3, "r x 0; w x 1"}, {"B", 2, 3, 4, "r x 1"}}},
		{name: "per key ext", level: si, init: "0", txs: []tx{{"W", 1, 1, 2, "w x 1; w y 1"}, {"R", 2, 3, 4, "r x 0; r y 0"}}, want: []string{"EXT|R||\"x\"", "EXT|R||\"y\""}},
		{name: "list ok", level: si, init: "0", txs: []tx{{"A", 1, 1, 2, "a l 1"}, {"B", 2, 3, 4, "a l 2; rl l 1 2"}, {"C", 3, 5, 6, "rl l 1 2"}}},
		{name: "list missing prefix", level: si, init: "0", txs: []tx{{"A", 1, 1, 2, "a l 1"}, {"B", 2, 3, 4, "a l 2"}, {"C", 3, 5, 6, "rl l 2"}}, want: []string{"EXT|C||\"l\""}},
		{name: "list own append missing", level: si, init: "0", txs: []tx{{"A", 1, 1, 2, "a l 1; rl l"}}, want: []string{"internal|A||\"l\""}},
		{name: "list internal", level: si, init: "0", txs: []tx{{"A", 1, 1, 2, "rl l; a l 1; rl l 1; rl l 1 1"}}, want: []string{"internal|A||\"l\""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := build(t, tc.init, tc.txs...)
			got := runIDs(t, h, tc.level)
			if len(got) == 0 {
				got = nil
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Run(%s) violations (-want +got):\n%s", tc.name, diff)
			}
		})
	}
}

func TestExtKinds(t *testing.T) {
	t.Parallel()
	h := build(t, "0",
		tx{"W1", 1, 1, 2, "w x 1"},
		tx{"W2", 1, 3, 4, "w x 2"},
		tx{"W3", 2, 4, 9, "w x 3"},
		tx{"Rstale", 3, 5, 6, "r x 1"},
		tx{"Runc", 4, 5, 6, "r x 3"},
		tx{"W4", 5, 7, 8, "w x 4"},
		tx{"Rafter", 6, 5, 6, "r x 4"},
		tx{"Rnever", 7, 5, 6, "r x 99"},
		tx{"Rinit", 8, 5, 6, "r x 0"},
	)
	res, err := Run(context.Background(), h, si, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range res.Violations {
		if v.Kind == anomaly.ExtViolation {
			got[v.Txn] = v.Ext.String() + " " + v.Other
		}
	}
	want := map[string]string{"Rstale": "BEFORE W1", "Runc": "UNCOMMITTED W3", "Rafter": "AFTER W4", "Rnever": "NEVER ", "Rinit": "BEFORE ⊥"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EXT kinds (-want +got):\n%s", diff)
	}
}

func TestCheckReport(t *testing.T) {
	t.Parallel()
	h := build(t, "0", tx{"W", 1, 1, 2, "w x 1"}, tx{"R", 2, 3, 4, "r x 0"})
	rep, err := Check(context.Background(), h, si, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != report.Fail || len(rep.Anomalies) != 1 {
		t.Fatalf("Check = %v with %d anomalies, want fail with 1", rep.Verdict, len(rep.Anomalies))
	}
	a := rep.Anomalies[0]
	if a.Kind != anomaly.ExtViolation || h.Name(a.Txns[0]) != "R" || h.Key(a.Key).String() != "x" {
		t.Errorf("anomaly = %+v", a)
	}
	if _, err := Check(context.Background(), h, anomaly.ReadCommitted, Options{}); !errors.Is(err, ErrLevel) {
		t.Errorf("Check(read-committed) error = %v, want ErrLevel", err)
	}
	b := history.NewBuilder()
	s := b.Session(history.Int(1))
	b.BeginTxn(s, history.NilDatum, history.OutcomeCommitted)
	hn, _ := b.Build()
	if _, err := Check(context.Background(), hn, si, Options{}); !errors.Is(err, ErrNoTimestamps) {
		t.Errorf("Check(no timestamps) error = %v, want ErrNoTimestamps", err)
	}
}

// TestOracle compares Chronos with the axioms evaluated by definition (every pair of
// transactions, unique timestamps) and with a brute-force serializability search.
func TestOracle(t *testing.T) {
	t.Parallel()
	failing := map[anomaly.Level]int{}
	defer func() {
		if failing[si] < 50 || failing[ser] < 100 || failing[si] > 350 {
			t.Errorf("violating histories per level = %v: the generator does not exercise both verdicts", failing)
		}
	}()
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 2))
		h := gen(rng, genOpts{sessions: 3, txns: 6, keys: 3, ops: 3, faults: 0.15, overlap: 0.2, list: seed%4 == 0})
		for _, l := range []anomaly.Level{si, ser} {
			got := runIDs(t, h, l)
			if len(got) > 0 {
				failing[l]++
			}
			want := definitional(h, l == ser)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("seed %d %s: Chronos vs definition (-want +got):\n%s", seed, l, diff)
			}
			if l == ser && len(got) == 0 && !serializable(h) {
				t.Fatalf("seed %d: Chronos-SER passes but no serial order explains the history", seed)
			}
		}
	}
}

// definitional evaluates Int, Ext and NoConflict straight from Defs 5 and 6 with unique
// timestamps: W is visible to T iff W.commit <= T.start (SER: W.commit < T.commit).
func definitional(h *history.History, serMode bool) []string {
	var out []Violation
	var x xtxn
	for i := range h.Txns {
		t := &h.Txns[i]
		ints := compile(h, t, &x, nil)
		for _, f := range ints {
			out = append(out, Violation{Kind: anomaly.Internal, Txn: h.Name(t.ID), Key: h.Key(f.k), HasKey: true})
		}
		for _, r := range x.reads {
			// last visible writer of r.k
			var kv = h.InitialValue(r.k)
			var list []history.Value
			// Lists need every visible writer in commit order; registers the last.
			var ws []*history.Txn
			for j := range h.Txns {
				w := &h.Txns[j]
				vis := w.Commit.Compare(t.Start) <= 0
				if serMode {
					vis = w.Commit.Less(t.Commit)
				}
				if w.ID != t.ID && vis {
					ws = append(ws, w)
				}
			}
			sortByCommit(ws)
			for _, w := range ws {
				var y xtxn
				compile(h, w, &y, nil)
				for _, ww := range y.writes {
					if ww.k == r.k {
						if ww.isL {
							list = append(list, ww.app...)
						} else {
							kv = ww.v
						}
					}
				}
			}
			ok := r.v == kv
			if r.isL {
				ok = equalValues(r.list, list)
			}
			if !ok {
				out = append(out, Violation{Kind: anomaly.ExtViolation, Txn: h.Name(t.ID), Key: h.Key(r.k), HasKey: true})
			}
		}
	}
	if !serMode {
		for i := range h.Txns {
			for j := range h.Txns {
				a, b := &h.Txns[i], &h.Txns[j]
				if a.ID == b.ID || !a.Commit.Less(b.Commit) {
					continue
				}
				if a.Commit.Compare(b.Start) <= 0 || b.Commit.Compare(a.Start) <= 0 {
					continue
				}
				var xa, xb xtxn
				compile(h, a, &xa, nil)
				compile(h, b, &xb, nil)
				for _, wa := range xa.writes {
					for _, wb := range xb.writes {
						if wa.k == wb.k {
							out = append(out, Violation{Kind: anomaly.NoConflict, Txn: h.Name(a.ID), Other: h.Name(b.ID), Key: h.Key(wa.k), HasKey: true})
						}
					}
				}
			}
		}
	}
	got := ids(out)
	if len(got) == 0 {
		return nil
	}
	return got
}

func sortByCommit(ws []*history.Txn) {
	for i := 1; i < len(ws); i++ {
		for j := i; j > 0 && ws[j].Commit.Less(ws[j-1].Commit); j-- {
			ws[j], ws[j-1] = ws[j-1], ws[j]
		}
	}
}

func equalValues(a, b []history.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// serializable searches every order of the committed transactions for one in which each
// external read returns the last write before it (registers and lists).
func serializable(h *history.History) bool {
	n := len(h.Txns)
	xs := make([]xtxn, n)
	for i := range h.Txns {
		if len(compile(h, &h.Txns[i], &xs[i], nil)) > 0 {
			return false
		}
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	var try func(k int) bool
	try = func(k int) bool {
		if k == n {
			kv := map[history.Key]history.Value{}
			ls := map[history.Key][]history.Value{}
			for _, i := range perm {
				for _, r := range xs[i].reads {
					if r.isL {
						if !equalValues(r.list, ls[r.k]) {
							return false
						}
					} else {
						v, ok := kv[r.k]
						if !ok {
							v = h.InitialValue(r.k)
						}
						if v != r.v {
							return false
						}
					}
				}
				for _, w := range xs[i].writes {
					if w.isL {
						ls[w.k] = append(append([]history.Value{}, ls[w.k]...), w.app...)
					} else {
						kv[w.k] = w.v
					}
				}
			}
			return true
		}
		for i := k; i < n; i++ {
			perm[k], perm[i] = perm[i], perm[k]
			if try(k + 1) {
				return true
			}
			perm[k], perm[i] = perm[i], perm[k]
		}
		return false
	}
	return try(0)
}

// TestPredicatesUnchecked: Chronos replays item operations only, so a history with a
// predicate read it cannot evaluate is never a pass: a phantom would go unseen.
func TestPredicatesUnchecked(t *testing.T) {
	t.Parallel()
	for _, withViolation := range []bool{false, true} {
		b := history.NewBuilder()
		s := b.Session(history.Int(1))
		x := b.StrKey("x")
		b.BeginTxn(s, history.NilDatum, history.OutcomeCommitted)
		b.Write(x, b.IntValue(1))
		cur := b.Current()
		cur.Start, cur.Commit, cur.HasTimestamps = history.Timestamp{Physical: 1}, history.Timestamp{Physical: 2}, true
		b.BeginTxn(s, history.NilDatum, history.OutcomeCommitted)
		// A range read that saw no row although x=1 was committed before its snapshot.
		b.PredRead(history.PredOp{Pred: history.Predicate{Expr: "v = 1", Field: history.Str("v"), Lo: 1, Hi: 1, IsRange: true}})
		if withViolation {
			b.Read(x, history.Nil) // an item read missing the same write: a violation Chronos sees
		}
		cur = b.Current()
		cur.Start, cur.Commit, cur.HasTimestamps = history.Timestamp{Physical: 3}, history.Timestamp{Physical: 4}, true
		h, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Check(context.Background(), h, ser, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := report.Unknown
		if withViolation {
			want = report.Fail
		}
		if rep.Verdict != want || len(rep.Notes) == 0 {
			t.Errorf("violation %v: verdict %s, notes %q; want %s with a note on the unchecked predicate", withViolation, rep.Verdict, rep.Notes, want)
		}
	}
}

// TestDerivedTimestamps: timestamps derived from snapshots decide snapshot isolation, and a
// pass of serializability, but a serializability failure in the commit order isovet chose
// for concurrent transactions is not reported as one.
func TestDerivedTimestamps(t *testing.T) {
	t.Parallel()
	// build returns a history of two transactions with ids 10 and 11: the first reads x
	// and writes y, the second reads y and writes x; snaps are their snapshots.
	build := func(readX, readY int64, snaps ...string) *history.History {
		t.Helper()
		b := history.NewBuilder()
		b.SetInitial(b.IntValue(0))
		x, y := b.StrKey("x"), b.StrKey("y")
		t1 := b.BeginTxn(b.Session(history.Int(1)), history.Int(10), history.OutcomeCommitted)
		b.Read(x, b.IntValue(readX))
		b.Write(y, b.IntValue(1))
		t2 := b.BeginTxn(b.Session(history.Int(2)), history.Int(11), history.OutcomeCommitted)
		b.Read(y, b.IntValue(readY))
		b.Write(x, b.IntValue(2))
		for i, tid := range []history.TxnID{t1, t2} {
			sn, err := history.ParseSnapshot(snaps[i])
			if err != nil {
				t.Fatal(err)
			}
			b.SetSnapshot(tid, sn)
		}
		h, err := b.Build()
		if err != nil || !h.DerivedTimestamps() {
			t.Fatalf("Build: %v; snapshots: %v", err, h.SnapshotErr)
		}
		return h
	}
	tests := []struct {
		name  string
		h     *history.History
		level anomaly.Level
		want  report.Verdict
	}{
		// Concurrent (neither sees the other): a write skew, SI but not serializable.
		{"write skew at SI", build(0, 0, "10:10:", "10:10:"), si, report.Pass},
		{"write skew at SER", build(0, 0, "10:10:", "10:10:"), ser, report.Unknown},
		// 11 saw 10 commit and read its y: serial, in the derived order too.
		{"serial at SER", build(0, 1, "10:10:", "11:11:"), ser, report.Pass},
		// 11 saw 10 commit but read the old y: a violation of SI in any order.
		{"stale at SI", build(0, 0, "10:10:", "11:11:"), si, report.Fail},
	}
	for _, tt := range tests {
		rep, err := Check(context.Background(), tt.h, tt.level, Options{})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if rep.Verdict != tt.want {
			t.Errorf("%s: verdict %v, want %v; notes %v", tt.name, rep.Verdict, tt.want, rep.Notes)
		}
		if tt.want == report.Unknown && (len(rep.Anomalies) > 0 || len(rep.Notes) == 0) {
			t.Errorf("%s: anomalies %v, notes %v: want none shown and a note", tt.name, rep.Anomalies, rep.Notes)
		}
	}
}
