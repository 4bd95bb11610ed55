package runner

import (
	"slices"
	"strings"
	"testing"
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
