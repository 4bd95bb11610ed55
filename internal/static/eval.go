package static

import (
	"fmt"

	"isovet/internal/smtlib"
)

// finite is a finite abstract execution over instances 0..n-1, against which
// model axioms are evaluated.
type finite struct {
	n     int
	types []string // ty.<txn> per instance
	rels  map[string]map[[2]int]bool
}

// holds evaluates a closed axiom whose quantifiers range over sort T. It
// returns an error for vocabulary it cannot evaluate (other sorts,
// arithmetic), so a user axiom that is not checkable is reported, not
// assumed to hold.
func (f *finite) holds(ax smtlib.Term) (bool, error) {
	v, err := f.eval(ax, map[string]int{})
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("axiom %s is not Boolean", ax)
	}
	return b, nil
}

// eval returns a bool, an instance (int) or a type constructor (string).
func (f *finite) eval(t smtlib.Term, env map[string]int) (any, error) {
	if !t.IsList() {
		switch a := t.Atom(); a {
		case "true":
			return true, nil
		case "false":
			return false, nil
		default:
			if i, ok := env[a]; ok {
				return i, nil
			}
			if len(a) > 3 && a[:3] == "ty." {
				return a, nil
			}
			return nil, fmt.Errorf("cannot evaluate symbol %s", a)
		}
	}
	args := t.Elems()[1:]
	switch h := t.Head(); h {
	case "forall", "exists":
		decls := args[0].Elems()
		return f.quant(h == "forall", decls, args[1], env)
	case "and", "or":
		for _, a := range args {
			v, err := f.evalBool(a, env)
			if err != nil {
				return nil, err
			}
			if v == (h == "or") {
				return v, nil
			}
		}
		return h == "and", nil
	case "not":
		v, err := f.evalBool(args[0], env)
		return !v, err
	case "=>":
		a, err := f.evalBool(args[0], env)
		if err != nil || !a {
			return true, err
		}
		return f.evalBool(args[1], env)
	case "=", "distinct":
		var vs []any
		for _, a := range args {
			v, err := f.eval(a, env)
			if err != nil {
				return nil, err
			}
			vs = append(vs, v)
		}
		if h == "=" {
			for _, v := range vs[1:] {
				if v != vs[0] {
					return false, nil
				}
			}
			return true, nil
		}
		for i := range vs {
			for j := i + 1; j < len(vs); j++ {
				if vs[i] == vs[j] {
					return false, nil
				}
			}
		}
		return true, nil
	case "typ":
		v, err := f.eval(args[0], env)
		if err != nil {
			return nil, err
		}
		i, ok := v.(int)
		if !ok {
			return nil, fmt.Errorf("typ of a non-instance in %s", t)
		}
		return f.types[i], nil
	case "vis", "ar", "WR", "WW", "RW", "D":
		if len(args) != 2 {
			return nil, fmt.Errorf("%s takes two arguments", h)
		}
		a, err := f.eval(args[0], env)
		if err != nil {
			return nil, err
		}
		b, err := f.eval(args[1], env)
		if err != nil {
			return nil, err
		}
		ai, ok1 := a.(int)
		bi, ok2 := b.(int)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%s of non-instances", h)
		}
		if h == "D" {
			return ai == bi || f.rels["WR"][[2]int{ai, bi}] || f.rels["WW"][[2]int{ai, bi}] || f.rels["RW"][[2]int{ai, bi}], nil
		}
		return f.rels[h][[2]int{ai, bi}], nil
	}
	return nil, fmt.Errorf("cannot evaluate %s", t.Head())
}

func (f *finite) evalBool(t smtlib.Term, env map[string]int) (bool, error) {
	v, err := f.eval(t, env)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%s is not Boolean", t)
	}
	return b, nil
}

func (f *finite) quant(all bool, decls []smtlib.Term, body smtlib.Term, env map[string]int) (any, error) {
	if len(decls) == 0 {
		return f.evalBool(body, env)
	}
	d := decls[0].Elems()
	if len(d) != 2 || d[1].Atom() != "T" {
		return nil, fmt.Errorf("cannot evaluate a quantifier over sort %s", d[1])
	}
	name := d[0].Atom()
	old, had := env[name]
	defer func() {
		if had {
			env[name] = old
		} else {
			delete(env, name)
		}
	}()
	for i := range f.n {
		env[name] = i
		v, err := f.quant(all, decls[1:], body, env)
		if err != nil {
			return nil, err
		}
		if v.(bool) != all {
			return !all, nil
		}
	}
	return all, nil
}
