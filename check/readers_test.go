package check_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/format"
)

// TestReaderFixtures reads the small hand-written histories of testdata/readers (one or more
// in every format isovet reads; testdata/readers/README.md says what each holds) and checks
// each at every level its data allows, so that a clone without the public corpora still
// tests every reader and every level end to end. want lists, per level, "pass" or "fail"
// and the first anomaly's kind; a level left out is one the history cannot be checked at
// (the strict levels need client intervals).
func TestReaderFixtures(t *testing.T) {
	t.Parallel()
	const (
		weakPass   = "read-committed=pass read-atomic=pass causal=pass "
		lostUpdate = weakPass + "snapshot-isolation=fail:lost-update strong-session-snapshot-isolation=fail:lost-update " +
			"serializable=fail:G2-item strong-session-serializable=fail:G2-item"
		writeSkew = weakPass + "snapshot-isolation=pass strong-session-snapshot-isolation=pass " +
			"serializable=fail:G2-item strong-session-serializable=fail:G2-item"
	)
	tests := []struct {
		path, format string
		want         string
	}{
		{"lost-update.jsonl", "native", lostUpdate + " strong-snapshot-isolation=fail:lost-update strict-serializable=fail:G2-item"},
		{"stale-read.jsonl", "native", weakPass + "snapshot-isolation=pass strong-session-snapshot-isolation=pass " +
			"serializable=pass strong-session-serializable=pass " +
			"strong-snapshot-isolation=fail:causality-violation strict-serializable=fail:G-single"},
		{"write-skew.edn", "elle-edn", writeSkew + " strong-snapshot-isolation=pass strict-serializable=fail:G2-item"},
		{"../examples/aborted-read.edn", "elle-edn", "read-committed=fail:G1a read-atomic=fail:G1a causal=fail:G1a " +
			"snapshot-isolation=fail:G1a serializable=fail:G1a strict-serializable=fail:G1a"},
		{"fractured-read.json", "elle-json", "read-committed=pass read-atomic=fail:fractured-read causal=fail:fractured-read " +
			"snapshot-isolation=fail:read-skew serializable=fail:G-single strict-serializable=fail:G-single"},
		{"causal-violation.txt", "text", "read-committed=pass read-atomic=pass causal=fail:causality-violation " +
			"snapshot-isolation=fail:causality-violation strong-session-snapshot-isolation=fail:causality-violation " +
			"serializable=fail:G-single strong-session-serializable=fail:G-single"},
		{"lost-update-chronos.json", "chronos", lostUpdate},
		{"write-skew-veristrong.txt", "veristrong", writeSkew},
		{"viper-lost-update", "viper", lostUpdate},
		{"cobra-lost-update", "cobra", lostUpdate},
		{"vbox-write-skew", "vbox", writeSkew + " strong-snapshot-isolation=pass strict-serializable=fail:G2-item"},
		{"dbcop-write-skew", "dbcop", writeSkew},
		{"write-skew-dbcop.json", "dbcop-json", writeSkew},
	}
	levels := map[string]bool{}
	formats := map[string]bool{}
	for _, tt := range tests {
		formats[tt.format] = true
		for _, w := range strings.Fields(tt.want) {
			level, _, _ := strings.Cut(w, "=")
			levels[level] = true
		}
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			h, f, err := format.Open(filepath.Join("..", "testdata", "readers", tt.path), format.Auto, format.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if f.Name != tt.format {
				t.Errorf("read as %s, want %s", f.Name, tt.format)
			}
			for _, w := range strings.Fields(tt.want) {
				name, want, _ := strings.Cut(w, "=")
				level, err := check.ParseLevel(name)
				if err != nil {
					t.Fatal(err)
				}
				rep, err := check.Check(context.Background(), h, level, check.Options{})
				if err != nil {
					t.Fatalf("Check(%s): %v", name, err)
				}
				got := rep.Verdict.String()
				if rep.Verdict == check.Fail && len(rep.Anomalies) > 0 {
					got += ":" + rep.Anomalies[0].Kind.String()
				}
				if got != want {
					t.Errorf("Check(%s) = %s, want %s", name, got, want)
				}
			}
		})
	}
	for _, l := range check.Levels() {
		if !levels[l.String()] {
			t.Errorf("no fixture is checked at %s", l)
		}
	}
	for _, f := range format.Formats() {
		if !formats[f.Name] {
			t.Errorf("no fixture in format %s", f.Name)
		}
	}
}
