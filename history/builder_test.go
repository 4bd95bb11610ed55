package history_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/isovet/isovet/history"
)

func TestBuilderBuildsWhatItWasGiven(t *testing.T) {
	t.Parallel()
	b := history.NewBuilder()
	s1 := b.Session(history.Int(1))
	s2 := b.Session(history.Str("client-b"))
	if again := b.Session(history.Int(1)); again != s1 {
		t.Fatalf("Session(1) twice = %d, %d", s1, again)
	}
	kx, ky := b.StrKey("x"), b.IntKey(7)
	t1 := b.BeginTxn(s1, history.Int(100), history.OutcomeCommitted)
	w := b.Write(kx, b.IntValue(1))
	b.Append(ky, b.IntValue(2))
	b.Current().Time, b.Current().HasTime = history.Interval{Begin: 1, End: 5}, true
	t2 := b.BeginTxn(s2, history.NilDatum, history.OutcomeUnknown)
	b.ReadFrom(kx, b.IntValue(1), history.Src{Kind: history.SrcTxn, Txn: t1, Op: w})
	b.ReadList(ky, []history.Value{b.IntValue(2)})
	b.SetOpTime(1, history.Interval{Begin: 6, End: 7})
	h, err := b.Build()
	if err != nil {
		t.Fatalf("Build() = %v", err)
	}
	if got := len(h.Txns); got != 2 {
		t.Fatalf("len(Txns) = %d, want 2", got)
	}
	if got := h.Name(t1); got != "T100" {
		t.Errorf("Name(t1) = %q, want T100", got)
	}
	if got := h.Name(t2); got != "T1" {
		t.Errorf("Name(t2) = %q, want T1", got)
	}
	r := h.Txn(t2).Ops[1]
	if r.Kind != history.OpListRead || len(h.List(r)) != 1 || h.Value(h.List(r)[0]) != history.Int(2) {
		t.Errorf("list read = %+v (%v)", r, h.List(r))
	}
	if h.Txn(t2).OpTimes == nil || h.Txn(t2).OpTimes[1].End != 7 || h.Txn(t1).OpTimes != nil {
		t.Errorf("op times: t1 %v, t2 %v", h.Txn(t1).OpTimes, h.Txn(t2).OpTimes)
	}
	if h.Txn(t2).Outcome != history.OutcomeUnknown || !h.Txn(t1).Committed() {
		t.Errorf("outcomes %v %v", h.Txn(t1).Outcome, h.Txn(t2).Outcome)
	}
	if got := h.Sessions[s1].Txns; len(got) != 1 || got[0] != t1 {
		t.Errorf("session 1 txns = %v", got)
	}
	if h.HasTime() {
		t.Errorf("HasTime() = true with one untimed txn")
	}
}

func TestValidateReportsBadSources(t *testing.T) {
	t.Parallel()
	b := history.NewBuilder()
	s := b.Session(history.Int(0))
	kx, ky := b.IntKey(1), b.IntKey(2)
	t1 := b.BeginTxn(s, history.NilDatum, history.OutcomeCommitted)
	b.Write(kx, b.IntValue(1))
	b.BeginTxn(s, history.NilDatum, history.OutcomeCommitted)
	b.ReadFrom(ky, b.IntValue(1), history.Src{Kind: history.SrcTxn, Txn: t1, Op: 0}) // wrong key
	b.ReadFrom(kx, b.IntValue(1), history.Src{Kind: history.SrcTxn, Txn: t1, Op: 5}) // no such op
	_, err := b.Build()
	if !errors.Is(err, history.ErrBadSrc) {
		t.Fatalf("Build() = %v, want ErrBadSrc", err)
	}
	if got := len(err.(interface{ Unwrap() []error }).Unwrap()); got != 2 {
		t.Errorf("Build() reported %d problems, want 2: %v", got, err)
	}
}

// TestValidateReportsBadRowSources: a predicate row's explicit source is checked as an item
// read's is, and the sources must be as many as the rows.
func TestValidateReportsBadRowSources(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		srcs func(t1 history.TxnID) []history.Src
		want string
	}{
		{"named writer", func(t1 history.TxnID) []history.Src {
			return []history.Src{{}, {Kind: history.SrcTxn, Txn: t1, Op: 0}}
		}, ""},
		{"no such txn", func(history.TxnID) []history.Src { return []history.Src{{}, {Kind: history.SrcTxn, Txn: 9}} }, "txn 9"},
		{"no such op", func(t1 history.TxnID) []history.Src { return []history.Src{{}, {Kind: history.SrcTxn, Txn: t1, Op: 3}} }, "op 3"},
		{"wrong key", func(t1 history.TxnID) []history.Src { return []history.Src{{Kind: history.SrcTxn, Txn: t1, Op: 0}, {}} }, "writes key"},
		{"bad kind", func(history.TxnID) []history.Src { return []history.Src{{Kind: 7}, {}} }, "source kind 7"},
		{"too few", func(history.TxnID) []history.Src { return []history.Src{{}} }, "1 row sources for 2 predicate rows"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := history.NewBuilder()
			s := b.Session(history.Int(0))
			kx, ky := b.IntKey(1), b.IntKey(2)
			t1 := b.BeginTxn(s, history.NilDatum, history.OutcomeCommitted)
			b.Write(ky, b.IntValue(5))
			b.BeginTxn(s, history.NilDatum, history.OutcomeCommitted)
			b.PredRead(history.PredOp{
				Pred: history.Predicate{Expr: "true"},
				Rows: []history.Row{{Key: kx, Value: history.Nil, Match: true}, {Key: ky, Value: b.IntValue(5), Match: true}},
				Srcs: c.srcs(t1),
			})
			_, err := b.Build()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("Build() = %v, want no error", err)
			case c.want != "" && (!errors.Is(err, history.ErrBadSrc) || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("Build() = %v, want ErrBadSrc naming %q", err, c.want)
			}
		})
	}
}

// TestPredOpSrc: rows without sources read as found by value; SetSrc allocates the sources
// only for a source that is named.
func TestPredOpSrc(t *testing.T) {
	t.Parallel()
	p := history.PredOp{Rows: make([]history.Row, 3)}
	p.SetSrc(0, history.Src{})
	if p.Srcs != nil || p.Src(2) != (history.Src{}) {
		t.Fatalf("after naming no source: Srcs %v, Src(2) %+v", p.Srcs, p.Src(2))
	}
	p.SetSrc(1, history.Src{Kind: history.SrcInit})
	if len(p.Srcs) != 3 || p.Src(1).Kind != history.SrcInit || p.Src(0) != (history.Src{}) {
		t.Fatalf("after naming row 1's source: Srcs %v", p.Srcs)
	}
}

func TestDatumCompare(t *testing.T) {
	t.Parallel()
	ds := []history.Datum{history.NilDatum, history.Int(-3), history.Int(2), history.Str(""), history.Str("a")}
	for i := range ds {
		for j := range ds {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := ds[i].Compare(ds[j]); got != want {
				t.Errorf("Compare(%#v, %#v) = %d, want %d", ds[i], ds[j], got, want)
			}
		}
	}
}

func TestSummarizeCounts(t *testing.T) {
	t.Parallel()
	b := history.NewBuilder()
	s := b.Session(history.Int(1))
	k := b.IntKey(1)
	b.BeginTxn(s, history.NilDatum, history.OutcomeCommitted)
	b.Write(k, b.IntValue(1))
	b.BeginTxn(s, history.NilDatum, history.OutcomeAborted)
	b.Write(k, b.IntValue(1))
	b.Read(k, history.Nil)
	b.BeginTxn(s, history.NilDatum, history.OutcomeUnknown)
	h, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	got := history.Summarize(h)
	if got.Txns != 3 || got.Committed != 1 || got.Aborted != 1 || got.Unknown != 1 || got.Ops != 3 ||
		got.OpsByKind[history.OpWrite] != 2 || got.UniqueWrites || got.DuplicateWrites != 1 || got.Keys != 1 || got.Values != 1 {
		t.Errorf("Summarize() = %+v", got)
	}
}

// TestValidateListKeys: a key that is appended to or read as a list is used as a list
// everywhere: a plain write, insert, delete, a read of a single value or a predicate row
// with a value on it is an input error naming the op; a read of nil (no list yet) is not.
// List elements are never null (null is the empty list's version).
func TestValidateListKeys(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		use  func(b *history.Builder, k history.Key)
		want string // "" for no error
	}{
		{"read of nil", func(b *history.Builder, k history.Key) { b.Read(k, history.Nil) }, ""},
		{"nil row", func(b *history.Builder, k history.Key) {
			b.PredRead(history.PredOp{Pred: history.Predicate{Expr: "true"}, Rows: []history.Row{{Key: k, Value: history.Nil}}})
		}, ""},
		{"list read", func(b *history.Builder, k history.Key) { b.ReadList(k, []history.Value{b.IntValue(1)}) }, ""},
		{"write", func(b *history.Builder, k history.Key) { b.Write(k, b.IntValue(3)) }, "op 0: history: malformed operation: key 1 is a list elsewhere (appended to or read as a list), but this op writes a single value"},
		{"insert", func(b *history.Builder, k history.Key) { b.Insert(k, b.IntValue(3)) }, "inserts a row"},
		{"delete", func(b *history.Builder, k history.Key) { b.Delete(k) }, "deletes a row"},
		{"read", func(b *history.Builder, k history.Key) { b.Read(k, b.IntValue(1)) }, "reads a single value (1), not a list"},
		{"append of null", func(b *history.Builder, k history.Key) { b.Append(k, history.Nil) }, "an append of null to key 1: list elements must be values"},
		{"null element", func(b *history.Builder, k history.Key) { b.ReadList(k, []history.Value{b.IntValue(1), history.Nil}) }, "a list read of key 1 holds null: list elements must be values"},
		{"row", func(b *history.Builder, k history.Key) {
			b.PredRead(history.PredOp{Pred: history.Predicate{Expr: "true"}, Rows: []history.Row{{Key: k, Value: b.IntValue(1), Match: true}}})
		}, "has it as a predicate's row with value 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := history.NewBuilder()
			s := b.Session(history.Int(0))
			k := b.IntKey(1)
			b.BeginTxn(s, history.NilDatum, history.OutcomeCommitted)
			b.Append(k, b.IntValue(1))
			b.BeginTxn(s, history.NilDatum, history.OutcomeCommitted)
			c.use(b, k)
			_, err := b.Build()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("Build() = %v, want no error", err)
			case c.want != "" && (!errors.Is(err, history.ErrBadOp) || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("Build() = %v, want ErrBadOp naming %q", err, c.want)
			}
		})
	}
}

// TestListsStartEmpty: a list key starts empty whatever the history's initial value for
// keys; an initial value given for the list key itself must be nil.
func TestListsStartEmpty(t *testing.T) {
	t.Parallel()
	build := func(perKey bool) (*history.History, error) {
		b := history.NewBuilder()
		s := b.Session(history.Int(0))
		k, r := b.IntKey(1), b.IntKey(2)
		b.SetInitial(b.IntValue(0))
		if perKey {
			b.SetInitialKey(k, b.IntValue(7))
		}
		b.BeginTxn(s, history.NilDatum, history.OutcomeCommitted)
		b.ReadList(k, nil)
		b.Read(r, b.IntValue(0))
		return b.Build()
	}
	h, err := build(false)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.InitialValue(0); got != history.Nil {
		t.Errorf("initial value of the list key = %v, want nil", h.Value(got))
	}
	if got := h.Value(h.InitialValue(1)); got != history.Int(0) {
		t.Errorf("initial value of the register key = %v, want 0", got)
	}
	if _, err := build(true); !errors.Is(err, history.ErrBadOp) || !strings.Contains(err.Error(), "key 1 is a list (appended to or read as a list), but its initial value is 7: a list starts empty") {
		t.Errorf("Build() with a list key starting at 7 = %v, want ErrBadOp", err)
	}
}

// TestValidatePredicateRows: a predicate operation may list a row twice alike, but not
// with two values or outcomes (two things about one evaluation).
func TestValidatePredicateRows(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		rows func(b *history.Builder, k history.Key) []history.Row
		bad  bool
	}{
		{"alike", func(b *history.Builder, k history.Key) []history.Row {
			return []history.Row{{Key: k, Value: b.IntValue(1), Match: true}, {Key: k, Value: b.IntValue(1), Match: true}}
		}, false},
		{"two values", func(b *history.Builder, k history.Key) []history.Row {
			return []history.Row{{Key: k, Value: b.IntValue(1), Match: true}, {Key: k, Value: b.IntValue(2), Match: true}}
		}, true},
		{"returned and not", func(b *history.Builder, k history.Key) []history.Row {
			return []history.Row{{Key: k, Value: b.IntValue(1), Match: true}, {Key: k, Value: b.IntValue(1), Match: false}}
		}, true},
	} {
		b := history.NewBuilder()
		k := b.StrKey("x")
		b.BeginTxn(b.Session(history.Int(1)), history.NilDatum, history.OutcomeCommitted)
		b.PredRead(history.PredOp{Pred: history.Predicate{Expr: "v in [0, 9]", Lo: 0, Hi: 9, IsRange: true}, Rows: tt.rows(b, k)})
		_, err := b.Build()
		if bad := err != nil && errors.Is(err, history.ErrBadOp) && strings.Contains(err.Error(), "lists row x twice, differently"); bad != tt.bad {
			t.Errorf("%s: Build() = %v, want an error: %v", tt.name, err, tt.bad)
		}
	}
}
