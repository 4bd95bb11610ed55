package static

import "testing"

func TestReplay(t *testing.T) {
	t.Parallel()
	p := mustParse(t, withdrawSrc)
	ins := []Instance{
		{Name: "t1", Txn: "withdraw", Params: []Param{{"ID", 1}, {"Amount", 50}}},
		{Name: "t2", Txn: "withdraw", Params: []Param{{"ID", 1}, {"Amount", 60}}},
	}
	initial := map[string][]Row{"Account": {{Key: []int64{1}, Values: map[string]int64{"Balance": 100}}}}
	for _, tc := range []struct {
		name  string
		vis   [][2]int
		cycle int // length of the shortest cycle
		edges int
	}{
		{"lost-update", nil, 2, 3},         // t1 RW t2, t1 WW t2, t2 RW t1
		{"serial", [][2]int{{0, 1}}, 0, 1}, // t2 reads 50 from t1 and does not withdraw
	} {
		r, err := Replay(p, &Execution{Instances: ins, Order: []int{0, 1}, Vis: tc.vis, Initial: initial})
		if err != nil {
			t.Fatalf("%s: Replay: %v", tc.name, err)
		}
		if len(r.Cycle) != tc.cycle {
			t.Errorf("%s: cycle %v, want length %d", tc.name, r.Cycle, tc.cycle)
		}
		if len(r.Edges) != tc.edges {
			t.Errorf("%s: %d edges, want %d: %v", tc.name, len(r.Edges), tc.edges, r.Edges)
		}
	}
}

// TestReplayPhantom: a COUNT reads the liveness of rows inserted later, and a
// predicate DELETE overwrites rows it never saw.
func TestReplayPhantom(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `TABLE E (s KEY, c KEY);
TXN enroll(s, c) {
  SELECT COUNT(*) AS n FROM E WHERE c = c;
  IF n < 1 { INSERT INTO E VALUES (s = s, c = c); }
}
TXN drop(c) { DELETE FROM E WHERE c = c; }
`)
	ins := []Instance{
		{Name: "t1", Txn: "enroll", Params: []Param{{"s", 1}, {"c", 7}}},
		{Name: "t2", Txn: "enroll", Params: []Param{{"s", 2}, {"c", 7}}},
		{Name: "t3", Txn: "drop", Params: []Param{{"c", 7}}},
	}
	r, err := Replay(p, &Execution{Instances: ins, Order: []int{2, 0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"0-RW-1", "1-RW-0", "2-WW-0", "2-WW-1"} {
		found := false
		for _, e := range r.Edges {
			if fmtEdge(e) == k {
				found = true
			}
		}
		if !found {
			t.Errorf("edge %s missing from %v", k, r.Edges)
		}
	}
	if r.Cycle == nil {
		t.Errorf("no cycle, want t1 <-RW-> t2")
	}
}

func fmtEdge(e Edge) string {
	return string(rune('0'+e.From)) + "-" + e.Rel + "-" + string(rune('0'+e.To))
}
