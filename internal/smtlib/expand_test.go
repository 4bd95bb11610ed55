package smtlib

import "testing"

func TestExpand(t *testing.T) {
	t.Parallel()
	dom := []Term{Sym("e1"), Sym("e2")}
	ts, err := Parse(`(forall ((a T) (r R)) (=> (p a r) (exists ((b T)) (q a b))))`)
	if err != nil {
		t.Fatal(err)
	}
	got := Expand(ts[0], "T", dom).String()
	// Binders over other sorts stay, around the expanded conjunction.
	want := "(forall ((r R)) (and (=> (p e1 r) (or (q e1 e1) (q e1 e2))) (=> (p e2 r) (or (q e2 e1) (q e2 e2)))))"
	if got != want {
		t.Errorf("Expand = %s\nwant %s", got, want)
	}
	// Shadowing: an inner binder of the same name is not substituted.
	ts, _ = Parse(`(forall ((a T)) (and (p a) (forall ((a R)) (q a))))`)
	got = Expand(ts[0], "T", dom).String()
	want = "(and (p e1) (forall ((a R)) (q a)) (p e2) (forall ((a R)) (q a)))"
	if got != want {
		t.Errorf("Expand(shadow) = %s\nwant %s", got, want)
	}
}
