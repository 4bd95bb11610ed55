package text_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/history"
)

// TestInitialTxn checks when the first transaction is read as the initial state: only when
// it commits, reads nothing, writes 0 once to every key, and nobody else writes 0.
func TestInitialTxn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		dropped  bool
	}{
		{"initial state", "w(1,0,0,0)\nw(2,0,0,0)\nw(1,1,1,1)\nr(2,0,1,1)\n", true},
		{"initial state in a busy session", "w(1,0,0,0)\nw(2,0,0,0)\nw(1,1,0,1)\nr(2,0,1,2)\n", true},
		{"writes 1s (Plume's tap-i)", "w(1,1,0,0)\nw(2,1,0,0)\nw(1,2,1,1)\nw(2,2,1,1)\nr(2,2,2,2)\nr(1,1,2,2)\n", false},
		{"misses a key", "w(1,0,0,0)\nw(1,1,1,1)\nr(2,0,1,1)\n", false},
		{"reads", "w(1,0,0,0)\nr(2,0,0,0)\nw(2,0,0,0)\nw(1,1,1,1)\n", false},
		{"writes a key twice", "w(1,0,0,0)\nw(1,0,0,0)\nw(1,1,1,1)\n", false},
		{"interleaved with another", "w(1,0,0,0)\nw(1,1,1,1)\nw(2,0,0,0)\nr(2,0,1,1)\n", true},
		{"not first", "w(1,1,1,1)\nw(1,0,0,0)\nw(2,0,0,0)\nr(2,0,1,1)\n", false},
		{"another writes 0", "w(1,0,0,0)\nw(2,0,0,0)\nw(1,0,1,1)\nr(2,0,1,1)\n", false},
		{"aborted", "w(1,0,0,-1)\nw(1,1,1,1)\n", false},
		{"alone", "w(1,0,0,0)\nw(2,0,0,0)\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := read(t, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Count(tt.in, "\n")
			ops := 0
			for _, x := range h.Txns {
				ops += len(x.Ops)
			}
			if got := ops < lines; got != tt.dropped {
				t.Errorf("read(%q): first transaction dropped = %v, want %v (%d of %d ops kept)", tt.in, got, tt.dropped, ops, lines)
			}
			if got := len(h.Notes) == 1; got != tt.dropped {
				t.Errorf("read(%q): notes %q, want one note = %v", tt.in, h.Notes, tt.dropped)
			}
			if tt.dropped && (h.Name(0) == "0" || h.Initial != h.InitialValue(0) || h.Value(h.Initial) != history.Int(0)) {
				t.Errorf("read(%q): first txn %s, initial %v: want txn 0 gone and every key 0", tt.in, h.Name(0), h.Value(h.Initial))
			}
		})
	}
}

// TestIsoVistaPGSerBug checks IsoVista's PostgreSQL serializability bug: with transaction 0
// read as the initial state, the write skew between transactions 11 and 17 is found without
// any flag, and the report says how the file was read.
func TestIsoVistaPGSerBug(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/pg_ser_bug.txt")
	if err != nil {
		t.Fatal(err)
	}
	h, err := read(t, string(raw))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := check.Check(context.Background(), h, check.Serializable, check.Options{})
	if err != nil {
		t.Fatalf("Check(serializable) error: %v", err)
	}
	if rep.Verdict != check.Fail {
		t.Fatalf("Check(serializable) = %v, want fail (notes %q)", rep.Verdict, rep.Notes)
	}
	found := false
	for _, a := range rep.Anomalies {
		var names []string
		for _, x := range a.Txns {
			names = append(names, h.Name(x))
		}
		slices.Sort(names)
		if a.Kind == anomaly.G2Item && slices.Equal(names, []string{"T11", "T17"}) {
			found = true
		}
	}
	if !found {
		t.Errorf("Check(serializable) anomalies = %+v, want a G2-item between transactions 11 and 17", rep.Anomalies)
	}
	if len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], "transaction 0 (session 0)") || !strings.Contains(rep.Notes[0], "initial state") {
		t.Errorf("report notes = %q, want first the reader's decision on transaction 0", rep.Notes)
	}

	// An override of every key's initial value (--initial-value null) leaves what the file
	// states alone: the write skew is still found, and no read is thin air.
	null := history.NilDatum
	h, _, err = format.Open("testdata/pg_ser_bug.txt", format.Auto, format.Options{Initial: &null})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = check.Check(context.Background(), h, check.Serializable, check.Options{})
	if err != nil || rep.Verdict != check.Fail || !slices.ContainsFunc(rep.Anomalies, func(a check.Anomaly) bool { return a.Kind == anomaly.G2Item }) {
		t.Errorf("Check(serializable) with initial null = %v, %v, %+v; want a G2-item", rep.Verdict, err, rep.Anomalies)
	}
}
