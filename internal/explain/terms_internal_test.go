package explain

import (
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// values returns the dense values of h for the integers is.
func values(t *testing.T, h *history.History, is ...int64) []history.Value {
	t.Helper()
	var out []history.Value
	for _, i := range is {
		found := false
		for v, d := range h.Values.All() {
			if d == history.Int(i) {
				out, found = append(out, history.Value(v)), true
				break
			}
		}
		if !found {
			t.Fatalf("no value %d", i)
		}
	}
	return out
}

// TestMarkedList: a short list shows every element, the marked one between asterisks; a long
// one keeps its ends and the marked element with its neighbours, eliding the rest.
func TestMarkedList(t *testing.T) {
	h := histtest.MustParse("s1: T1 a(l,1) a(l,2) a(l,3) a(l,4) a(l,5) a(l,6) a(l,7) a(l,8) a(l,9) a(l,10) a(l,11) a(l,12) c")
	all := values(t, h, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
	tests := []struct {
		vs   []history.Value
		mark int
		want string
	}{
		{all[:3], 2, "[1 2 *3*]"},
		{all[:3], -1, "[1 2 3]"},
		{nil, -1, "[]"},
		{all, 11, "[1 2 3 4 ... (4 more) ... 9 10 11 *12*]"},
		{all, -1, "[1 2 3 4 ... (4 more) ... 9 10 11 12]"},
		{all, 6, "[1 2 ... (3 more) ... 6 *7* 8 ... (2 more) ... 11 12]"},
	}
	for _, tt := range tests {
		if got := markedList(h, tt.vs, tt.mark); got != tt.want {
			t.Errorf("markedList(%d elements, mark %d) = %q, want %q", len(tt.vs), tt.mark, got, tt.want)
		}
	}
}

// TestStepsInReaderTerms: the sentences explain makes itself (a step with no reason from its
// checker) say list reads as lists and name the writers of a read that prints like its
// overwrite; a checker's register-style reason is restated the same way, keeping what
// follows its opening clause, and a reason it does not recognise is kept.
func TestStepsInReaderTerms(t *testing.T) {
	lists := histtest.MustParse(`
		s1: T1 a(l,1) a(l,2) c; T2 a(l,3) c
		s2: T3 r(l,[1,2]) c; T4 r(l,[1,2,3]) c
	`)
	dup := histtest.MustParse(`
		s1: T1 w(x,1) c; T2 r(x,1)<-T1 w(x,1) c
		s2: T3 r(x,1)<-T1 c
	`)
	l := lists.Txn(0).Ops[0].Key
	lv := values(t, lists, 2, 3)
	x := dup.Txn(0).Ops[0].Key
	one := dup.Txn(0).Ops[0].Value
	tests := []struct {
		h    *history.History
		s    report.Step
		want string
	}{
		{lists, report.Step{From: 1, To: 3, Rel: report.WR, Key: l, Value: lv[1]},
			"T2 < T4, because T4 read l=[1 2 *3*], which ends with T2's append of 3"},
		{lists, report.Step{From: 0, To: 3, Rel: report.WR, Key: l, Value: lv[0]},
			"T1 < T4, because T4 read l=[1 *2* 3], which holds T1's append of 2"},
		{lists, report.Step{From: 2, To: 1, Rel: report.RW, Key: l, Value: lv[0], Value2: lv[1]},
			"T3 < T2, because T3 read l=[1 2] and did not observe T2's append of 3"},
		{lists, report.Step{From: 0, To: 1, Rel: report.WW, Key: l, Value: lv[0], Value2: lv[1]},
			"T1 < T2, because T2 appended 3 to l after T1's append of 2"},
		{lists, report.Step{From: 2, To: 1, Rel: report.RW, Key: l, Value: lv[0], Value2: lv[1],
			Why: "T3 read l=2 (written by T1), which T2 overwrote with l=3 (T4's read of l shows T2's appends directly after T1's)"},
			"T3 < T2, because T3 read l=[1 2] and did not observe T2's append of 3 (T4's read of l shows T2's appends directly after T1's)"},
		{lists, report.Step{From: 1, To: 3, Rel: report.WR, Key: l, Value: lv[1], Why: "T4 read l=3, which T2 wrote"},
			"T2 < T4, because T4 read l=[1 2 *3*], which ends with T2's append of 3"},
		{dup, report.Step{From: 2, To: 1, Rel: report.RW, Key: x, Value: one, Value2: one},
			"T3 < T2, because T3 read x=1 written by T1, which T2 overwrote with x=1"},
		{dup, report.Step{From: 2, To: 1, Rel: report.RW, Key: x, Value: one, Value2: one,
			Why: "T3 read x=1 (written by T1), which T2 overwrote with x=1 (T2 read T1's version before writing its own)"},
			"T3 < T2, because T3 read x=1 written by T1, which T2 overwrote with x=1 (T2 read T1's version before writing its own)"},
		{dup, report.Step{From: 2, To: 1, Rel: report.RW, Key: x, Value: one, Value2: one,
			Why: "T3 read x=1, which T2 overwrote with x=1"},
			"T3 < T2, because T3 read x=1 written by T1, which T2 overwrote with x=1"},
		{dup, report.Step{From: 1, To: 2, Rel: report.RT, Key: -1, Why: "T2 ended before T3 began (real time)"},
			"T2 < T3, because T2 ended before T3 began (real time)"},
		{dup, report.Step{From: 2, To: 1, Rel: report.RW, Key: x, Value: one, Value2: one, Why: "a reason of its own"},
			"T3 < T2, because a reason of its own"},
	}
	for _, tt := range tests {
		if got := Pair(tt.h, tt.s).Sentence; got != tt.want {
			t.Errorf("Pair(%+v)\n got %q\nwant %q", tt.s, got, tt.want)
		}
	}
}

// TestLeads: each anomaly opens with the first template of its most specific name whose
// facts its evidence gives, and with the meaning when it gives none.
func TestLeads(t *testing.T) {
	h := histtest.MustParse(`
		init 0
		s1: T1 r(x,0) w(x,1) c
		s2: T2 r(x,0) w(x,2) c
		s3: T3 w(y,1) c
		s4: T4 r(y,1) r(z,0) c
		s5: T5 w(z,1) c
		s6: T6 r(z,1) r(y,0) c
	`)
	key := func(name string) history.Key {
		for k, d := range h.Keys {
			if d.String() == name {
				return history.Key(k)
			}
		}
		t.Fatalf("no key %s", name)
		return -1
	}
	x, y, z := key("x"), key("y"), key("z")
	v := values(t, h, 0, 1, 2)
	tests := []struct {
		name string
		a    report.Anomaly
		want string
	}{
		{"lost update, both read", report.Anomaly{Kind: anomaly.G2Item, Also: []anomaly.Kind{anomaly.LostUpdate}, Key: -1, Txns: []history.TxnID{0, 1},
			Cycle: []report.Step{
				{From: 0, To: 1, Rel: report.RW, Key: x, Value: v[0], Value2: v[2]},
				{From: 1, To: 0, Rel: report.RW, Key: x, Value: v[0], Value2: v[1]},
			}},
			"T1 and T2 both read x=0 and both overwrote it, so one of the updates is lost."},
		{"lost update, overwritten", report.Anomaly{Kind: anomaly.G2Item, Also: []anomaly.Kind{anomaly.LostUpdate}, Key: -1, Txns: []history.TxnID{0, 1},
			Cycle: []report.Step{
				{From: 0, To: 1, Rel: report.RW, Key: x, Value: v[0], Value2: v[2]},
				{From: 1, To: 0, Rel: report.WW, Key: x, Value: v[2], Value2: v[1]},
			}},
			"T1 read x=0 and overwrote it after T2 did, without seeing T2's write, so T2's update is lost."},
		{"lost update, no proof", report.Anomaly{Kind: anomaly.LostUpdate, Key: x, Txns: []history.TxnID{0, 1}},
			"T1 and T2 both overwrote x after reading the same version of it, so one of the updates is lost."},
		{"long fork", report.Anomaly{Kind: anomaly.G2Item, Also: []anomaly.Kind{anomaly.LongFork}, Key: -1, Txns: []history.TxnID{2, 3, 4, 5},
			Cycle: []report.Step{
				{From: 2, To: 3, Rel: report.WR, Key: y, Value: v[1]},
				{From: 3, To: 4, Rel: report.RW, Key: z, Value: v[0], Value2: v[1]},
				{From: 4, To: 5, Rel: report.WR, Key: z, Value: v[1]},
				{From: 5, To: 2, Rel: report.RW, Key: y, Value: v[0], Value2: v[1]},
			}},
			"T4 and T6 observed two independent writes in opposite orders: T4 saw T3's write but not T5's, and T6 saw T5's but not T3's."},
		{"no facts", report.Anomaly{Kind: anomaly.ThinAirRead, Key: x, Txns: []history.TxnID{0}, Message: "T1 read x=7"},
			"A transaction read a value that no transaction wrote."},
	}
	for _, tt := range tests {
		e := Explain(h, tt.a)
		if e.Lead != tt.want {
			t.Errorf("%s: lead\n got %q\nwant %q", tt.name, e.Lead, tt.want)
		}
	}
}
