//go:build !invariants

package invariant

// Enabled reports whether assertions are compiled in (build tag "invariants").
const Enabled = false

// Assertf panics with the formatted message if cond is false. Without the
// build tag "invariants" it does nothing.
func Assertf(cond bool, format string, args ...any) {}
