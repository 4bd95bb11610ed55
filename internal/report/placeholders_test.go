package report

import (
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
)

// placeholderHistory is T0 (session a) reading x from placeholder T1 and y from recorded T2
// (session b), and T3 (session a) reading z from T1.
func placeholderHistory(t *testing.T) *history.History {
	t.Helper()
	b := history.NewBuilder()
	sa, sb := b.Session(history.Str("a")), b.Session(history.Str("b"))
	sp := b.NewSession(history.Str(history.PlaceholderSession))
	x, y, z := b.StrKey("x"), b.StrKey("y"), b.StrKey("z")
	t0 := b.BeginTxn(sa, history.Int(10), history.OutcomeCommitted)
	b.EndTxn()
	t1 := b.BeginTxn(sp, history.Int(11), history.OutcomeUnknown)
	wx := b.Write(x, b.IntValue(1))
	wz := b.Write(z, b.IntValue(3))
	b.EndTxn()
	t2 := b.BeginTxn(sb, history.Int(12), history.OutcomeCommitted)
	wy := b.Write(y, b.IntValue(2))
	b.EndTxn()
	b.BeginTxn(sa, history.Int(13), history.OutcomeCommitted)
	b.ReadFrom(z, b.IntValue(3), history.Src{Kind: history.SrcTxn, Txn: t1, Op: wz})
	b.EndTxn()
	// T0's reads, added once their writers exist.
	ops := []history.Op{
		{Kind: history.OpRead, Key: x, Value: b.IntValue(1), Src: history.Src{Kind: history.SrcTxn, Txn: t1, Op: wx}},
		{Kind: history.OpRead, Key: y, Value: b.IntValue(2), Src: history.Src{Kind: history.SrcTxn, Txn: t2, Op: wy}},
	}
	b.Txn(t0).Ops = ops
	h, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestPlaceholdersAddLast: a finding among recorded transactions takes the place of one through a
// placeholder when the list is full, never the other way round, and Last lists recorded
// findings first, keeping each group's order.
func TestPlaceholdersAddLast(t *testing.T) {
	h := placeholderHistory(t)
	p := PlaceholdersOf(h)
	if p.Len() != 1 || !p.Is(1) || p.Is(0) {
		t.Fatalf("placeholders: len %d, is(1) %v, is(0) %v; want only T1", p.Len(), p.Is(1), p.Is(0))
	}
	through := func(msg string) Anomaly {
		return Anomaly{Kind: anomaly.AbortedRead, Txns: []history.TxnID{0, 1}, Message: msg}
	}
	recorded := func(msg string) Anomaly {
		return Anomaly{Kind: anomaly.G2Item, Txns: []history.TxnID{0, 2}, Message: msg}
	}
	cycle := Anomaly{Kind: anomaly.G2Item, Txns: []history.TxnID{0, 2}, Cycle: []Step{{From: 2, To: 1}}, Message: "cycle"}
	if !p.Involves(&cycle) {
		t.Error("an anomaly with an edge from a placeholder does not involve it")
	}
	var list []Anomaly
	for _, a := range []Anomaly{through("p1"), through("p2"), recorded("r1"), through("p3"), recorded("r2"), recorded("r3")} {
		list = p.Add(list, a, 2)
	}
	// r1 took p2's place, p3 found the list full, r2 took p1's place, and r3 found the list
	// full of recorded findings.
	if got := messages(list); got != "r2 r1" {
		t.Errorf("Add kept %q, want r2 r1", got)
	}
	list = []Anomaly{through("p1"), recorded("r1"), through("p2"), recorded("r2")}
	p.Last(list)
	if got := messages(list); got != "r1 r2 p1 p2" {
		t.Errorf("Last ordered %q, want r1 r2 p1 p2", got)
	}
	if got := messages(p.Add(nil, through("p"), 0)); got != "p" {
		t.Errorf("Add with no cap kept %q", got)
	}
}

// TestPlaceholderFinding: the one finding counts every read of a placeholder, names the first
// few by transaction and key, and says nothing for a history without placeholders.
func TestPlaceholderFinding(t *testing.T) {
	h := placeholderHistory(t)
	f := PlaceholderFinding(h)
	for _, want := range []string{"2 reads name a writer that no log holds", "1 placeholder transaction", "T10 read x from T11, T13 read z from T11.", "no violation by itself"} {
		if !strings.Contains(f, want) {
			t.Errorf("finding %q does not say %q", f, want)
		}
	}
	if f := PlaceholderFinding(&history.History{}); f != "" {
		t.Errorf("finding %q for a history without placeholders", f)
	}
}

func messages(as []Anomaly) string {
	var ms []string
	for _, a := range as {
		ms = append(ms, a.Message)
	}
	return strings.Join(ms, " ")
}
