package vbox_test

import (
	"path/filepath"
	"testing"

	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/internal/corpus"
)

// TestOpenSniffs checks that format.Open tells the binary formats apart by content.
func TestOpenSniffs(t *testing.T) {
	t.Parallel()
	data := corpus.Dir(t)
	tests := []struct{ path, want string }{
		{"vbox/coo/rat_sda_dirty_read", "vbox"},
		{"bench/vbox/blindw_pred_100", "vbox"},
		{"cobra/ser-violation/cock-G2", "cobra"},
		{"plume/testcase/cobra/tap-c", "cobra"},
		{"bench/veristrong-10k/tpcc-10k", "cobra"},
		{"polysi/violations/dgraph/history.bincode", "dbcop"},
		{"plume/testcase/dbcop/tap-a/history.bincode", "dbcop"},
	}
	for _, tt := range tests {
		p := filepath.Join(data, tt.path)
		h, f, err := format.Open(p, format.Auto, format.Options{})
		if err != nil {
			t.Errorf("Open(%s) = %v", tt.path, err)
			continue
		}
		if f.Name != tt.want || len(h.Txns) == 0 {
			t.Errorf("Open(%s) = %s with %d txns, want %s", tt.path, f.Name, len(h.Txns), tt.want)
		}
	}
}
