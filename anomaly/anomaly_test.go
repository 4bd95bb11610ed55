package anomaly

import "testing"

// TestImpliesIsTransitive: the implication table is closed under transitivity, each
// level's real-time counterpart implies it, and every level forbids at least the anomalies
// of each level it implies.
func TestImpliesIsTransitive(t *testing.T) {
	for _, a := range Levels() {
		if !a.Implies(a) {
			t.Errorf("%s does not imply itself", a)
		}
		if rt, ok := a.RealtimeCounterpart(); ok && !rt.Implies(a) {
			t.Errorf("%s does not imply %s", rt, a)
		}
		for _, b := range Levels() {
			if !a.Implies(b) {
				continue
			}
			for _, k := range b.Info().Forbids {
				if !a.Forbids(k) {
					t.Errorf("%s implies %s but allows %s, which %s forbids", a, b, k, b)
				}
			}
			for _, c := range Levels() {
				if b.Implies(c) && !a.Implies(c) {
					t.Errorf("%s implies %s implies %s, but not %s", a, b, c, c)
				}
			}
		}
	}
}
