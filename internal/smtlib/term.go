package smtlib

import (
	"strconv"
	"strings"
)

// Term is an SMT-LIB S-expression: an atom (symbol, numeral or keyword) or a
// parenthesised list. The zero Term is the empty atom and is invalid.
// Terms are immutable values; constructors never alias their argument slices
// with the caller's.
type Term struct {
	atom string
	list []Term
	isL  bool
}

// Sym returns the atom s (a symbol, numeral or keyword) printed verbatim.
func Sym(s string) Term { return Term{atom: s} }

// Int returns the integer literal n; negative numbers print as (- n).
func Int(n int64) Term {
	if n < 0 {
		return List(Sym("-"), Sym(strconv.FormatUint(uint64(-(n+1))+1, 10)))
	}
	return Sym(strconv.FormatInt(n, 10))
}

// List returns the list (ts...).
func List(ts ...Term) Term { return Term{list: append([]Term(nil), ts...), isL: true} }

// App returns the application (head args...), or the bare symbol head when
// there are no arguments.
func App(head string, args ...Term) Term {
	if len(args) == 0 {
		return Sym(head)
	}
	return Term{list: append([]Term{Sym(head)}, args...), isL: true}
}

// True and False are the Boolean constants.
var (
	True  = Sym("true")
	False = Sym("false")
)

// Bool is the Boolean constant b.
func Bool(b bool) Term {
	if b {
		return True
	}
	return False
}

// IsList reports whether t is a list.
func (t Term) IsList() bool { return t.isL }

// Atom returns the text of an atom, or "" for a list.
func (t Term) Atom() string { return t.atom }

// Elems returns the elements of a list (nil for an atom). The caller must not
// modify the returned slice.
func (t Term) Elems() []Term { return t.list }

// Head returns the atom at the head of a list, or "".
func (t Term) Head() string {
	if t.isL && len(t.list) > 0 && !t.list[0].isL {
		return t.list[0].atom
	}
	return ""
}

func (t Term) isTrue() bool  { return !t.isL && t.atom == "true" }
func (t Term) isFalse() bool { return !t.isL && t.atom == "false" }

// And returns the conjunction of ts, dropping true, collapsing to false when a
// conjunct is false, and returning the single conjunct or true when fewer than
// two remain. Nested conjunctions are flattened.
func And(ts ...Term) Term {
	var out []Term
	for _, t := range ts {
		switch {
		case t.isTrue():
		case t.isFalse():
			return False
		case t.Head() == "and":
			out = append(out, t.list[1:]...)
		default:
			out = append(out, t)
		}
	}
	switch len(out) {
	case 0:
		return True
	case 1:
		return out[0]
	}
	return App("and", out...)
}

// Or returns the disjunction of ts, simplified as [And] does dually.
func Or(ts ...Term) Term {
	var out []Term
	for _, t := range ts {
		switch {
		case t.isFalse():
		case t.isTrue():
			return True
		case t.Head() == "or":
			out = append(out, t.list[1:]...)
		default:
			out = append(out, t)
		}
	}
	switch len(out) {
	case 0:
		return False
	case 1:
		return out[0]
	}
	return App("or", out...)
}

// Not returns the negation of t, folding constants and double negation.
func Not(t Term) Term {
	switch {
	case t.isTrue():
		return False
	case t.isFalse():
		return True
	case t.Head() == "not":
		return t.list[1]
	}
	return App("not", t)
}

// Implies returns (=> a b), simplified when either side is constant.
func Implies(a, b Term) Term {
	switch {
	case a.isTrue():
		return b
	case a.isFalse(), b.isTrue():
		return True
	case b.isFalse():
		return Not(a)
	}
	return App("=>", a, b)
}

// Eq returns (= a b).
func Eq(a, b Term) Term { return App("=", a, b) }

// Var is a sorted variable of a binder.
type Var struct{ Name, Sort string }

// Ref returns the variable as a term.
func (v Var) Ref() Term { return Sym(v.Name) }

// isAnnotated reports whether t is (! body attributes...).
func (t Term) isAnnotated() bool { return t.Head() == "!" && len(t.list) >= 2 }

func binder(q string, vs []Var, body Term) Term {
	if len(vs) == 0 && body.isAnnotated() {
		return body.list[1] // patterns belong to quantifiers only
	}
	if len(vs) == 0 || body.isTrue() || body.isFalse() {
		return body
	}
	decls := make([]Term, len(vs))
	for i, v := range vs {
		decls[i] = List(Sym(v.Name), Sym(v.Sort))
	}
	return App(q, List(decls...), body)
}

// Forall returns (forall ((v S)...) body), or body when vs is empty or body is
// constant.
func Forall(vs []Var, body Term) Term { return binder("forall", vs, body) }

// Exists returns (exists ((v S)...) body), or body when vs is empty or body is
// constant.
func Exists(vs []Var, body Term) Term { return binder("exists", vs, body) }

// Pattern returns body annotated with one multi-pattern, (! body :pattern
// (p...)): a hint to the solver's E-matching to instantiate the enclosing
// quantifier only for ground terms matching all of ps. It changes no
// meaning, so it can make a solver slower or incomplete, never unsound.
func Pattern(body Term, ps ...Term) Term {
	return App("!", body, Sym(":pattern"), List(ps...))
}

// String returns t on one line.
func (t Term) String() string {
	var b strings.Builder
	t.flat(&b)
	return b.String()
}

func (t Term) flat(b *strings.Builder) {
	if !t.isL {
		b.WriteString(t.atom)
		return
	}
	b.WriteByte('(')
	for i, e := range t.list {
		if i > 0 {
			b.WriteByte(' ')
		}
		e.flat(b)
	}
	b.WriteByte(')')
}

func (t Term) width() int {
	if !t.isL {
		return len(t.atom)
	}
	w := 1 + len(t.list)
	for _, e := range t.list {
		w += e.width()
	}
	return w
}

// Cmd returns the command (name args...), always as a list even without
// arguments, e.g. Cmd("check-sat").
func Cmd(name string, args ...Term) Term {
	return Term{list: append([]Term{Sym(name)}, args...), isL: true}
}
