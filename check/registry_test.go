package check_test

import (
	"testing"

	"github.com/isovet/isovet/check"
)

// TestCheckersIsACopy: what Checkers returns is the caller's; changing it changes neither
// the registry nor which checker a check routes to.
func TestCheckersIsACopy(t *testing.T) {
	before := check.Checkers()
	got := check.Checkers()
	got[0].Name = "changed"
	got[0].Levels[0] = check.StrictSerializable
	got[1].Run = nil
	_ = append(got[:1], check.Checker{Name: "appended"})
	after := check.Checkers()
	for i := range before {
		if after[i].Name != before[i].Name || after[i].Run == nil || after[i].Levels[0] != before[i].Levels[0] {
			t.Errorf("Checkers()[%d] = %s %v after a caller changed its copy, want %s %v", i, after[i].Name, after[i].Levels, before[i].Name, before[i].Levels)
		}
	}
	if c, err := check.Supported(nil, check.Serializable, check.MethodBlackBox); err != nil || c.Name != "ser" {
		t.Errorf("Supported(serializable, black-box) = %v, %v after a caller changed its copy, want ser", c, err)
	}
}
