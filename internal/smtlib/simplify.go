package smtlib

// Simplify rewrites t into an equivalent term, bottom up:
//
//   - Boolean connectives (not, and, or, =>, ite on a constant condition) fold
//     constants, as [And], [Or], [Not] and [Implies] do;
//   - an equation between two syntactically equal terms is true;
//   - every other application, and every atom, is offered to eval, which may
//     decide it (ok set) from facts the caller knows, for example that two
//     constants are distinct or that ar(e1, e2) holds;
//   - a universal quantifier over a conjunction is distributed over it, and
//     every quantifier keeps only the bound variables that occur in its body,
//     so every quantifier is small and has its own triggers. (Existentials
//     are not distributed over disjunctions: that would multiply the
//     witnesses a ground encoding must name, see [Ground].)
//
// The result is equivalent to t under the facts eval uses; eval may be nil.
func Simplify(t Term, eval func(Term) (val, ok bool)) Term {
	return simplifier{eval}.term(t)
}

// simplifier is one Simplify run: the caller's facts.
type simplifier struct {
	eval func(Term) (val, ok bool)
}

func (s simplifier) term(t Term) Term {
	if !t.isL {
		if t.isTrue() || t.isFalse() {
			return t
		}
		return s.decide(t)
	}
	switch h := t.Head(); {
	case t.isAnnotated():
		return s.annotated(t)
	case t.isQuantifier():
		return s.quantifier(h, t)
	}
	args := s.args(t)
	if u, ok := fold(args); ok {
		return u
	}
	return s.decide(Term{list: args, isL: true})
}

// decide replaces u by true or false when eval knows its value.
func (s simplifier) decide(u Term) Term {
	if s.eval == nil {
		return u
	}
	v, ok := s.eval(u)
	switch {
	case !ok:
		return u
	case v:
		return True
	}
	return False
}

// annotated simplifies the body of (! body attributes...) and keeps the
// attributes, unless the body is a constant.
func (s simplifier) annotated(t Term) Term {
	body := s.term(t.list[1])
	if body.isTrue() || body.isFalse() {
		return body
	}
	return Term{list: append([]Term{t.list[0], body}, t.list[2:]...), isL: true}
}

// quantifier simplifies the body of a forall or exists, distributes a forall
// over a conjunction and keeps, in each part, only the bound variables that
// occur in it.
func (s simplifier) quantifier(q string, t Term) Term {
	var vs []Var
	for _, d := range t.list[1].list {
		if len(d.list) == 2 {
			vs = append(vs, Var{Name: d.list[0].atom, Sort: d.list[1].String()})
		}
	}
	body := s.term(t.list[2])
	parts := []Term{body}
	if q == "forall" && body.Head() == "and" {
		parts = body.list[1:]
	}
	out := make([]Term, len(parts))
	for i, p := range parts {
		out[i] = binder(q, occurring(vs, p), p)
	}
	if q == "forall" {
		return And(out...)
	}
	return Or(out...)
}

// occurring returns the variables of vs that occur in t.
func occurring(vs []Var, t Term) []Var {
	var keep []Var
	for _, v := range vs {
		if occurs(t, v.Name) {
			keep = append(keep, v)
		}
	}
	return keep
}

// args simplifies the elements of an application; an atomic head is kept.
func (s simplifier) args(t Term) []Term {
	args := make([]Term, len(t.list))
	for i, e := range t.list {
		if i == 0 && !e.isL {
			args[i] = e
			continue
		}
		args[i] = s.term(e)
	}
	return args
}

// folder folds one connective applied to simplified arguments; arity < 0
// accepts any number of them.
type folder struct {
	arity int
	fold  func(args []Term) (Term, bool)
}

var folders = map[string]folder{
	"not": {1, func(a []Term) (Term, bool) { return Not(a[0]), true }},
	"and": {-1, func(a []Term) (Term, bool) { return And(a...), true }},
	"or":  {-1, func(a []Term) (Term, bool) { return Or(a...), true }},
	"=>":  {2, func(a []Term) (Term, bool) { return Implies(a[0], a[1]), true }},
	"ite": {3, foldIte},
	"=":   {2, foldEq},
}

// fold applies the folder of the application's head, if it has one for this
// many arguments.
func fold(app []Term) (Term, bool) {
	if len(app) == 0 || app[0].isL {
		return Term{}, false
	}
	f, ok := folders[app[0].atom]
	if !ok || (f.arity >= 0 && len(app)-1 != f.arity) {
		return Term{}, false
	}
	return f.fold(app[1:])
}

// foldIte picks the branch of an ite on a constant condition.
func foldIte(a []Term) (Term, bool) {
	switch {
	case a[0].isTrue():
		return a[1], true
	case a[0].isFalse():
		return a[2], true
	}
	return Term{}, false
}

// foldEq decides an equation between syntactically equal terms and removes a
// Boolean constant side.
func foldEq(a []Term) (Term, bool) {
	l, r := a[0], a[1]
	switch {
	case l.String() == r.String():
		return True, true
	case l.isTrue():
		return r, true
	case r.isTrue():
		return l, true
	case l.isFalse():
		return Not(r), true
	case r.isFalse():
		return Not(l), true
	}
	return Term{}, false
}

// occurs reports whether the symbol name occurs anywhere in t (bound
// occurrences included, which only makes the caller keep a variable it could
// have dropped).
func occurs(t Term, name string) bool {
	if !t.isL {
		return t.atom == name
	}
	for _, e := range t.list {
		if occurs(e, name) {
			return true
		}
	}
	return false
}
