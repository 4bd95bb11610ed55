package static

import (
	"fmt"
	"sort"
	"strings"

	"github.com/isovet/isovet/internal/smtlib"
)

// Model is a consistency model: axioms over vis, ar, WR, WW, RW, D and typ in
// the vocabulary of the encoding (sort T, constructors ty.<txn>).
type Model struct {
	Name   string
	Axioms []smtlib.Term
}

// modelSources is the library of built-in models (App. A, Eqs. 8-12). SI is
// PSI ∧ PC, as the paper defines it; EC adds nothing. psi is the standard,
// causal PSI (Sovran et al.): Eq. 12 plus transitive visibility; psi-paper is
// Eq. 12 alone, which admits non-transitive visibility.
var modelSources = map[string]string{
	"ec": "",
	"cc": "(assert (forall ((a T) (b T) (c T)) (=> (and (vis a b) (vis b c)) (vis a c))))",
	"pc": "(assert (forall ((a T) (b T) (c T)) (=> (and (ar a b) (vis b c)) (vis a c))))",
	"psi": "(assert (forall ((a T) (b T)) (=> (WW a b) (vis a b))))\n" +
		"(assert (forall ((a T) (b T) (c T)) (=> (and (vis a b) (vis b c)) (vis a c))))",
	"psi-paper": "(assert (forall ((a T) (b T)) (=> (WW a b) (vis a b))))",
	"si": "(assert (forall ((a T) (b T)) (=> (WW a b) (vis a b))))\n" +
		"(assert (forall ((a T) (b T) (c T)) (=> (and (ar a b) (vis b c)) (vis a c))))",
	"ser": "(assert (forall ((a T) (b T)) (= (vis a b) (ar a b))))",
}

// ModelNames lists the built-in models.
func ModelNames() []string {
	var out []string
	for n := range modelSources {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// LookupModel returns a built-in model by name (ec, cc, pc, psi, si, ser).
func LookupModel(name string) (Model, bool) {
	src, ok := modelSources[strings.ToLower(name)]
	if !ok {
		return Model{}, false
	}
	m, err := ParseModel(strings.ToLower(name), []byte(src))
	if err != nil {
		panic(err) // the library is fixed text
	}
	return m, true
}

// ParseModel reads a user axiom file: a sequence of (assert φ) commands over
// the vocabulary vis, ar, WR, WW, RW, D (all T×T→Bool), typ (T→Ty) and the
// constructors ty.<txn>. Only universally quantified axioms are re-checked by
// the witness replayer; see [Replay].
func ParseModel(name string, src []byte) (Model, error) {
	terms, err := smtlib.Parse(string(src))
	if err != nil {
		return Model{}, fmt.Errorf("reading model %s: %w", name, err)
	}
	m := Model{Name: name}
	for _, t := range terms {
		if t.Head() != "assert" || len(t.Elems()) != 2 {
			return Model{}, fmt.Errorf("reading model %s: %s: %w: a model file holds only (assert φ) commands", name, t, ErrInvalid)
		}
		m.Axioms = append(m.Axioms, t.Elems()[1])
	}
	return m, nil
}
