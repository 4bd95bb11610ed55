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
	if h := t.Head(); (h == "forall" || h == "exists") && len(t.list) == 3 {
		inner := m
		for _, d := range t.list[1].list {
			if len(d.list) == 2 {
				if _, ok := inner[d.list[0].atom]; ok {
					inner = copyMap(inner)
					delete(inner, d.list[0].atom)
				}
			}
		}
		return Term{list: []Term{t.list[0], t.list[1], Subst(t.list[2], inner)}, isL: true}
	}
	out := make([]Term, len(t.list))
	for i, e := range t.list {
		out[i] = Subst(e, m)
	}
	return Term{list: out, isL: true}
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
	h := t.Head()
	if (h == "forall" || h == "exists") && len(t.list) == 3 {
		var keep []Var
		var expand []string
		for _, d := range t.list[1].list {
			if len(d.list) == 2 && d.list[1].atom == sort {
				expand = append(expand, d.list[0].atom)
			} else if len(d.list) == 2 {
				keep = append(keep, Var{Name: d.list[0].atom, Sort: d.list[1].String()})
			}
		}
		body := Expand(t.list[2], sort, domain)
		if len(expand) == 0 {
			return binder(h, keep, body)
		}
		var parts []Term
		var rec func(i int, m map[string]Term)
		rec = func(i int, m map[string]Term) {
			if i == len(expand) {
				part := Subst(body, m)
				if len(keep) == 0 && part.Head() == "!" && len(part.list) >= 2 {
					part = part.list[1] // no quantifier left for the patterns
				}
				parts = append(parts, part)
				return
			}
			for _, c := range domain {
				m2 := copyMap(m)
				m2[expand[i]] = c
				rec(i+1, m2)
			}
		}
		rec(0, map[string]Term{})
		if h == "forall" {
			return binder(h, keep, And(parts...))
		}
		return binder(h, keep, Or(parts...))
	}
	out := make([]Term, len(t.list))
	for i, e := range t.list {
		out[i] = Expand(e, sort, domain)
	}
	return Term{list: out, isL: true}
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
