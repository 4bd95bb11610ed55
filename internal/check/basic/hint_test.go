package basic_test

import (
	"strings"
	"testing"

	"github.com/isovet/isovet/internal/check/basic"
	"github.com/isovet/isovet/internal/histtest"
)

func TestInitialHint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src, want string // want: a substring of the hint, "" for none
	}{
		{"zeros", "s1: T1 r(x,0) w(y,1)\ns2: T2 r(y,0) w(x,1)", "all 2 thin-air reads read 0, which no transaction wrote: the history probably starts with every key 0; check it with --initial-value 0"},
		{"one zero", "s1: T1 r(x,0) w(y,1)", "the thin-air read read 0"},
		{"nils", "init 0\ns1: T1 r(x,nil) w(y,1)\ns2: T2 r(y,nil)", "all 2 thin-air reads read nil, which no transaction wrote: the history probably starts with every key absent (null); check it with --initial-value null"},
		{"mixed", "s1: T1 r(x,0) r(y,5)", ""},
		{"no thin air", "init 0\ns1: T1 r(x,0) w(y,1)\ns2: T2 r(y,1)", ""},
		{"written zero", "s1: T1 w(x,0)\ns2: T2 r(x,0)", ""},
		{"aborted reader", "s1: T1 r(x,0) abort", ""},
		{"explicit source", "s1: T1 r(x,0)<-init", ""},
		{"own write first", "s1: T1 w(x,0) r(x,0)", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := basic.InitialHint(histtest.MustParse(tt.src))
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("InitialHint(%q) = %q, want %q", tt.src, got, tt.want)
			}
		})
	}
}
