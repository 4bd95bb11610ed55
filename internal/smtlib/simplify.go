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
	decide := func(u Term) Term {
		if eval != nil {
			if v, ok := eval(u); ok {
				if v {
					return True
				}
				return False
			}
		}
		return u
	}
	if !t.isL {
		if t.isTrue() || t.isFalse() {
			return t
		}
		return decide(t)
	}
	h := t.Head()
	if h == "!" && len(t.list) >= 2 {
		// An annotated body: simplify the body, keep the attributes.
		body := Simplify(t.list[1], eval)
		if body.isTrue() || body.isFalse() {
			return body
		}
		return Term{list: append([]Term{t.list[0], body}, t.list[2:]...), isL: true}
	}
	if (h == "forall" || h == "exists") && len(t.list) == 3 {
		var vs []Var
		for _, d := range t.list[1].list {
			if len(d.list) == 2 {
				vs = append(vs, Var{Name: d.list[0].atom, Sort: d.list[1].String()})
			}
		}
		body := Simplify(t.list[2], eval)
		parts := []Term{body}
		if h == "forall" && body.Head() == "and" {
			parts = body.list[1:]
		}
		out := make([]Term, len(parts))
		for i, p := range parts {
			var keep []Var
			for _, v := range vs {
				if occurs(p, v.Name) {
					keep = append(keep, v)
				}
			}
			out[i] = binder(h, keep, p)
		}
		if h == "forall" {
			return And(out...)
		}
		return Or(out...)
	}
	args := make([]Term, len(t.list))
	for i, e := range t.list {
		if i == 0 && !e.isL {
			args[i] = e
			continue
		}
		args[i] = Simplify(e, eval)
	}
	switch h {
	case "not":
		if len(args) == 2 {
			return Not(args[1])
		}
	case "and":
		return And(args[1:]...)
	case "or":
		return Or(args[1:]...)
	case "=>":
		if len(args) == 3 {
			return Implies(args[1], args[2])
		}
	case "ite":
		if len(args) == 4 {
			switch {
			case args[1].isTrue():
				return args[2]
			case args[1].isFalse():
				return args[3]
			}
		}
	case "=":
		if len(args) == 3 {
			a, b := args[1], args[2]
			if a.String() == b.String() {
				return True
			}
			switch {
			case a.isTrue():
				return b
			case b.isTrue():
				return a
			case a.isFalse():
				return Not(b)
			case b.isFalse():
				return Not(a)
			}
		}
	}
	return decide(Term{list: args, isL: true})
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
