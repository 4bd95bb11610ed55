package invariant

import "testing"

func TestAssertf(t *testing.T) {
	Assertf(true, "never fires")
	defer func() {
		r := recover()
		if Enabled && r == nil {
			t.Errorf("Assertf(false) did not panic with invariants enabled")
		}
		if !Enabled && r != nil {
			t.Errorf("Assertf(false) panicked without invariants: %v", r)
		}
	}()
	Assertf(false, "fires: %d", 1)
}
