// Package invariant provides assertions for internal consistency checks
// that are compiled in only under the build tag "invariants".
//
// A failed assertion is a bug in isovet, never a property of the input, so
// it panics rather than returning an error. Without the tag, [Assertf] is an
// empty function that the compiler inlines away, and [Enabled] is false so
// that callers can skip building expensive check data:
//
//	if invariant.Enabled {
//		invariant.Assertf(modelSatisfies(m), "model violates a clause")
//	}
//
// Tests run with and without the tag: go test -tags invariants ./...
package invariant
