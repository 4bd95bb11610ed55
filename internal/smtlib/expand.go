package smtlib

// Subst replaces free occurrences of the symbols in m by their terms.
func Subst(t Term, m map[string]Term) Term {
	if len(m) == 0 {
		return t
	}
	if !t.isL {
		if r, ok := m[t.atom]; ok {
			return r
		}
		return t
	}
	if t.isQuantifier() {
		inner := unbind(m, t.list[1])
		return Term{list: []Term{t.list[0], t.list[1], Subst(t.list[2], inner)}, isL: true}
	}
	out := make([]Term, len(t.list))
	for i, e := range t.list {
		out[i] = Subst(e, m)
	}
	return Term{list: out, isL: true}
}

// unbind returns m without the variables the list decls binds (a copy when
// it drops any).
func unbind(m map[string]Term, decls Term) map[string]Term {
	for _, d := range decls.list {
		if len(d.list) != 2 {
			continue
		}
		if _, ok := m[d.list[0].atom]; ok {
			m = copyMap(m)
			delete(m, d.list[0].atom)
		}
	}
	return m
}

func copyMap(m map[string]Term) map[string]Term {
	c := make(map[string]Term, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Expand rewrites every quantifier over the given sort into a conjunction
// (forall) or disjunction (exists) over domain. It is an equivalence only
// when the sort's universe is exactly the domain (assert that separately).
// Variables of other sorts stay quantified.
func Expand(t Term, sort string, domain []Term) Term {
	if !t.isL {
		return t
	}
	if t.isQuantifier() {
		return expandQuantifier(t, sort, domain)
	}
	out := make([]Term, len(t.list))
	for i, e := range t.list {
		out[i] = Expand(e, sort, domain)
	}
	return Term{list: out, isL: true}
}

// isQuantifier reports whether t is (forall (vars) body) or (exists (vars)
// body).
func (t Term) isQuantifier() bool {
	h := t.Head()
	return (h == "forall" || h == "exists") && len(t.list) == 3
}

// expandQuantifier is Expand of a quantifier: the variables of sort it binds
// become a conjunction (forall) or disjunction (exists) of the body's
// instances, the others stay bound.
func expandQuantifier(t Term, sort string, domain []Term) Term {
	h := t.Head()
	var keep []Var
	var expand []string
	for _, d := range t.list[1].list {
		if len(d.list) != 2 {
			continue
		}
		if d.list[1].atom == sort {
			expand = append(expand, d.list[0].atom)
		} else {
			keep = append(keep, Var{Name: d.list[0].atom, Sort: d.list[1].String()})
		}
	}
	body := Expand(t.list[2], sort, domain)
	if len(expand) == 0 {
		return binder(h, keep, body)
	}
	parts := instances(body, expand, domain, len(keep) == 0)
	if h == "forall" {
		return binder(h, keep, And(parts...))
	}
	return binder(h, keep, Or(parts...))
}

// instances returns body with every combination of domain elements
// substituted for names (the last name varying fastest). With unbound set
// no quantifier is left around an instance, so an annotated body loses its
// patterns.
func instances(body Term, names []string, domain []Term, unbound bool) []Term {
	var parts []Term
	var rec func(i int, m map[string]Term)
	rec = func(i int, m map[string]Term) {
		if i == len(names) {
			part := Subst(body, m)
			if unbound && part.isAnnotated() {
				part = part.list[1] // no quantifier left for the patterns
			}
			parts = append(parts, part)
			return
		}
		for _, c := range domain {
			m2 := copyMap(m)
			m2[names[i]] = c
			rec(i+1, m2)
		}
	}
	rec(0, map[string]Term{})
	return parts
}

// MapAsserts returns a copy of s with f applied to the formula of every
// (assert φ) command; an assertion f maps to true is dropped.
func (s *Script) MapAsserts(f func(Term) Term) *Script {
	out := &Script{items: make([]item, 0, len(s.items))}
	for _, it := range s.items {
		if it.cmd.Head() == "assert" && len(it.cmd.list) == 2 {
			t := f(it.cmd.list[1])
			if t.isTrue() {
				continue
			}
			it.cmd = Cmd("assert", t)
		}
		out.items = append(out.items, it)
	}
	return out
}

// InsertBeforeAsserts returns a copy of s with cmds inserted before its first
// (assert ...) command (at the end when there is none).
func (s *Script) InsertBeforeAsserts(cmds ...Term) *Script {
	out := &Script{}
	done := false
	for _, it := range s.items {
		if !done && it.cmd.Head() == "assert" {
			out.Add(cmds...)
			done = true
		}
		out.items = append(out.items, it)
	}
	if !done {
		out.Add(cmds...)
	}
	return out
}
