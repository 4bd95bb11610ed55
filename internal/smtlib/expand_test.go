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

func TestSimplifyTerm(t *testing.T) {
	t.Parallel()
	// eval knows e1 ≠ e2 and that (ar e1 e2) holds and (ar e2 e1) does not.
	eval := func(u Term) (bool, bool) {
		switch u.String() {
		case "(= e1 e2)", "(= e2 e1)", "(ar e2 e1)":
			return false, true
		case "(ar e1 e2)":
			return true, true
		}
		return false, false
	}
	for _, tc := range []struct{ in, want string }{
		{"(=> (ar e1 e2) (p e1))", "(p e1)"},
		{"(=> (ar e2 e1) (p e1))", "true"},
		{"(or (= e1 e2) (not (ar e2 e1)))", "true"},
		{"(and (q) (not (= e1 e2)) (=> (p e1) (ar e2 e1)))", "(and (q) (not (p e1)))"},
		{"(= e1 e1)", "true"},
		{"(= (p e1) false)", "(not (p e1))"},
		{"(ite (ar e1 e2) (f a) (f b))", "(f a)"},
		// A universal over a conjunction is split, each part keeping only
		// the variables it uses; an existential over a disjunction is not.
		{"(forall ((r R) (s R)) (and (p r) (q r s) (ar e1 e2)))", "(and (forall ((r R)) (p r)) (forall ((r R) (s R)) (q r s)))"},
		{"(exists ((r R) (s R)) (or (p r) (q r)))", "(exists ((r R)) (or (p r) (q r)))"},
		{"(forall ((r R)) (=> (p r) (ar e2 e1)))", "(forall ((r R)) (not (p r)))"},
	} {
		ts, err := Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := Simplify(ts[0], eval).String(); got != tc.want {
			t.Errorf("Simplify(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestMapAssertsDropsTrue(t *testing.T) {
	t.Parallel()
	var s Script
	s.Add(Cmd("declare-const", Sym("x"), Sym("Bool")))
	s.Assert(Sym("x"))
	s.Assert(App("not", Sym("y")))
	got := s.MapAsserts(func(u Term) Term {
		if u.String() == "x" {
			return True
		}
		return u
	}).String()
	want := "(declare-const x Bool)\n(assert (not y))\n"
	if got != want {
		t.Errorf("MapAsserts = %q, want %q", got, want)
	}
}
