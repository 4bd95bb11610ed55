package runner

import (
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/check"
)

func TestParseList(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []int64
		err  string
	}{
		{"", nil, ""},
		{",1,22,-3", []int64{1, 22, -3}, ""},
		{",5", []int64{5}, ""},
		{",x", nil, `list element "x"`},
		{",1,,2", []int64{1, 2}, ""},
	} {
		got, err := ParseList(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseList(%q) error = %v, want one naming %s", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseList(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestSQLIsolation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		iso, stmt string
		claim     check.Level
	}{
		{"", "SERIALIZABLE", check.Serializable},
		{"serializable", "SERIALIZABLE", check.Serializable},
		{"repeatable-read", "REPEATABLE READ", check.SnapshotIsolation},
		{"snapshot-isolation", "REPEATABLE READ", check.SnapshotIsolation},
		{"read-committed", "READ COMMITTED", check.ReadCommitted},
		{"read-uncommitted", "READ UNCOMMITTED", 0},
	} {
		stmt, claim, err := SQLIsolation(tc.iso)
		if err != nil || stmt != tc.stmt || claim != tc.claim {
			t.Errorf("SQLIsolation(%q) = %q, %v, %v; want %q, %v", tc.iso, stmt, claim, err, tc.stmt, tc.claim)
		}
	}
	if _, _, err := SQLIsolation("chaos"); err == nil || !strings.Contains(err.Error(), `"chaos" not known`) {
		t.Errorf("SQLIsolation(chaos) error = %v, want it not known", err)
	}
}

func TestTableName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want, err string }{
		{"", "isovet_kv", ""},
		{"isovet_t1", "isovet_t1", ""},
		{"Bad", "", `table name "Bad"`},
		{"x; DROP TABLE y", "", "want lower-case letters"},
		{"1abc", "", "want lower-case letters"},
	} {
		got, err := OpenOptions{Table: tc.in}.TableName()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("TableName(%q) error = %v, want one with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("TableName(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
