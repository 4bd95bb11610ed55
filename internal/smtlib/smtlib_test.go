package smtlib

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "update golden files")

func TestSimplify(t *testing.T) {
	t.Parallel()
	a, b := Sym("a"), Sym("b")
	for _, tc := range []struct {
		name string
		got  Term
		want string
	}{
		{"and-empty", And(), "true"},
		{"and-one", And(True, a), "a"},
		{"and-false", And(a, False), "false"},
		{"and-flatten", And(And(a, b), a), "(and a b a)"},
		{"or-true", Or(a, True), "true"},
		{"or-empty", Or(False), "false"},
		{"not-not", Not(Not(a)), "a"},
		{"implies-true", Implies(True, a), "a"},
		{"implies-false", Implies(a, False), "(not a)"},
		{"int-neg", Int(-7), "(- 7)"},
		{"forall-empty", Forall(nil, a), "a"},
		{"forall", Forall([]Var{{"t", "T"}}, App("p", Sym("t"))), "(forall ((t T)) (p t))"},
	} {
		if got := tc.got.String(); got != tc.want {
			t.Errorf("%s = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestPrintGolden(t *testing.T) {
	t.Parallel()
	var s Script
	s.Comment("golden printer test\nsecond line")
	s.Add(Cmd("set-logic", Sym("ALL")), Cmd("declare-sort", Sym("T"), Sym("0")))
	vs := []Var{{"t1", "T"}, {"t2", "T"}, {"t3", "T"}}
	var conj []Term
	for i := range 6 {
		conj = append(conj, App("rel", Sym(vs[i%3].Name), Sym(vs[(i+1)%3].Name), Int(int64(i-3))))
	}
	s.Assert(Forall(vs, Implies(And(conj...), Or(Eq(Sym("t1"), Sym("t2")), Not(App("p", Sym("t3")))))))
	s.Add(Cmd("check-sat"))
	got := s.String()
	path := filepath.Join("testdata", "print.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("Script.String() mismatch (-want +got):\n%s", d)
	}
	// The printed script parses back to the same terms.
	terms, err := Parse(got)
	if err != nil {
		t.Fatalf("Parse(printed) = %v", err)
	}
	if len(terms) != 4 || terms[2].String() != s.items[3].cmd.String() {
		t.Errorf("Parse(printed) round trip mismatch: %v", terms)
	}
}

func TestParseError(t *testing.T) {
	t.Parallel()
	for _, src := range []string{"(a b", ")", "(a |b"} {
		if _, err := Parse(src); err == nil {
			t.Errorf("Parse(%q) succeeded, want error", src)
		}
	}
	ts, err := Parse("; c\n(a (- 3) |x y|) b")
	if err != nil || len(ts) != 2 || ts[0].String() != "(a (- 3) |x y|)" {
		t.Fatalf("Parse = %v, %v", ts, err)
	}
	if n, err := IntValue(ts[0].Elems()[1]); err != nil || n != -3 {
		t.Errorf("IntValue = %d, %v", n, err)
	}
}
