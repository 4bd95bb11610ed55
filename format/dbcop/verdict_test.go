package dbcop_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/format/dbcop"
	"github.com/isovet/isovet/history"
)

// TestDBCopVerdicts checks dbcop's own JSON test histories (testdata/json, see its README)
// against the verdicts dbcop's tests give them: reads of version 0 of a variable nobody
// writes 0 to read the initial state.
func TestDBCopVerdicts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file  string
		level check.Level
		want  check.Verdict
		kind  anomaly.Kind // the first anomaly's kind when want is Fail (0: any)
	}{
		{"lost-update.json", check.SnapshotIsolation, check.Fail, anomaly.LostUpdate},
		{"lost-update.json", check.Serializable, check.Fail, 0},
		{"lost-update.json", check.ReadCommitted, check.Pass, 0},
		{"lost-update.json", check.Causal, check.Pass, 0},
		{"causal-violation.json", check.Causal, check.Fail, 0},
		{"write-read.json", check.Serializable, check.Pass, 0},
		{"write-read.json", check.SnapshotIsolation, check.Pass, 0},
		{"serializable.json", check.Serializable, check.Pass, 0},
		{"serializable.json", check.SnapshotIsolation, check.Pass, 0},
		{"lost-update-written-zero.json", check.Causal, check.Pass, 0},
		{"lost-update-written-zero.json", check.SnapshotIsolation, check.Fail, anomaly.LostUpdate},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.level.String(), func(t *testing.T) {
			t.Parallel()
			h := readJSON(t, filepath.Join("testdata", "json", tt.file))
			rep, err := check.Check(context.Background(), h, tt.level, check.Options{})
			if err != nil {
				t.Fatalf("Check(%s) error: %v", tt.level, err)
			}
			if rep.Verdict != tt.want {
				t.Fatalf("Check(%s) = %v, want %v (anomalies %+v, notes %q)", tt.level, rep.Verdict, tt.want, rep.Anomalies, rep.Notes)
			}
			kinds := make([]anomaly.Kind, 0, len(rep.Anomalies))
			for _, a := range rep.Anomalies {
				kinds = append(kinds, a.Kind)
				if a.Kind == anomaly.ThinAirRead {
					t.Errorf("Check(%s) reports a thin-air read: %s", tt.level, a.Message)
				}
			}
			if tt.kind != 0 && !slices.Contains(kinds, tt.kind) {
				t.Errorf("Check(%s) anomalies %v, want %v", tt.level, kinds, tt.kind)
			}
		})
	}
}

// TestJSONVersionZero checks how reads of version 0 are read: from the initial state when
// nobody writes 0 to the variable, from the writer otherwise.
func TestJSONVersionZero(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		src      history.SrcKind // of the first read
		initial  history.Datum   // of variable 0
	}{
		{"initial", `[[{"events":[{"Read":{"variable":0,"version":0}}],"committed":true}]]`, history.SrcInit, history.Int(0)},
		{"written by an aborted txn", `[[{"events":[{"Read":{"variable":0,"version":0}}],"committed":true}],[{"events":[{"Write":{"variable":0,"version":0}}],"committed":false}]]`, history.SrcByValue, history.NilDatum},
		{"written", `[[{"events":[{"Write":{"variable":0,"version":0}}],"committed":true},{"events":[{"Read":{"variable":0,"version":0}}],"committed":true}]]`, history.SrcByValue, history.NilDatum},
		{"also read as null", `[[{"events":[{"Read":{"variable":0,"version":0}},{"Read":{"variable":0,"version":null}}],"committed":true}]]`, history.SrcInit, history.NilDatum},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := decode(t, tt.in)
			var first *history.Op
			for i := range h.Txns {
				for j, o := range h.Txns[i].Ops {
					if o.Kind == history.OpRead {
						first = &h.Txns[i].Ops[j]
						break
					}
				}
				if first != nil {
					break
				}
			}
			if first == nil || first.Src.Kind != tt.src {
				t.Errorf("Decode(%s): first read %+v, want source kind %v", tt.in, first, tt.src)
			}
			if got := h.Value(h.InitialValue(0)); got != tt.initial {
				t.Errorf("Decode(%s): initial value of variable 0 = %v, want %v", tt.in, got, tt.initial)
			}
		})
	}
}

func readJSON(t *testing.T, path string) *history.History {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, string(raw))
}

func decode(t *testing.T, in string) *history.History {
	t.Helper()
	b := history.NewBuilder()
	if err := dbcop.NewJSONDecoder().Decode(strings.NewReader(in), "history.json", b); err != nil {
		t.Fatal(err)
	}
	h, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
