//go:build invariants

package invariant

import "fmt"

// Enabled reports whether assertions are compiled in (build tag "invariants").
const Enabled = true

// Assertf panics with the formatted message if cond is false.
func Assertf(cond bool, format string, args ...any) {
	if !cond {
		panic("invariant violated: " + fmt.Sprintf(format, args...))
	}
}
