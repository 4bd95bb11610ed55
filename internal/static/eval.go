package static

import (
	"fmt"

	"github.com/isovet/isovet/internal/smtlib"
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
		return f.atom(t.Atom(), env)
	}
	args := t.Elems()[1:]
	switch h := t.Head(); h {
	case "forall", "exists":
		return f.quant(h == "forall", args[0].Elems(), args[1], env)
	case "and", "or":
		return f.connective(h == "and", args, env)
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
		return f.equality(h == "=", args, env)
	case "typ":
		return f.typ(t, args[0], env)
	case "vis", "ar", "WR", "WW", "RW", "D":
		return f.relation(h, args, env)
	}
	return nil, fmt.Errorf("cannot evaluate %s", t.Head())
}

// atom is a Boolean constant, a bound instance variable or a type
// constructor.
func (f *finite) atom(a string, env map[string]int) (any, error) {
	switch a {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	if i, ok := env[a]; ok {
		return i, nil
	}
	if len(a) > 3 && a[:3] == "ty." {
		return a, nil
	}
	return nil, fmt.Errorf("cannot evaluate symbol %s", a)
}

// connective evaluates and (all) or or, left to right, stopping at the
// first argument that decides it.
func (f *finite) connective(all bool, args []smtlib.Term, env map[string]int) (any, error) {
	for _, a := range args {
		v, err := f.evalBool(a, env)
		if err != nil {
			return nil, err
		}
		if v != all {
			return v, nil
		}
	}
	return all, nil
}

// equality evaluates = (eq) or distinct over the arguments' values.
func (f *finite) equality(eq bool, args []smtlib.Term, env map[string]int) (any, error) {
	var vs []any
	for _, a := range args {
		v, err := f.eval(a, env)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	if eq {
		return allEqual(vs), nil
	}
	return allDistinct(vs), nil
}

func allEqual(vs []any) bool {
	for _, v := range vs[1:] {
		if v != vs[0] {
			return false
		}
	}
	return true
}

func allDistinct(vs []any) bool {
	for i := range vs {
		for j := i + 1; j < len(vs); j++ {
			if vs[i] == vs[j] {
				return false
			}
		}
	}
	return true
}

// typ is the type constructor of the instance arg evaluates to.
func (f *finite) typ(t, arg smtlib.Term, env map[string]int) (any, error) {
	v, err := f.eval(arg, env)
	if err != nil {
		return nil, err
	}
	i, ok := v.(int)
	if !ok {
		return nil, fmt.Errorf("typ of a non-instance in %s", t)
	}
	return f.types[i], nil
}

// relation evaluates vis, ar, WR, WW, RW or D (the reflexive union of the
// dependencies) between two instances.
func (f *finite) relation(h string, args []smtlib.Term, env map[string]int) (any, error) {
	p, err := f.pair(h, args, env)
	if err != nil {
		return nil, err
	}
	if h == "D" {
		return p[0] == p[1] || f.rels["WR"][p] || f.rels["WW"][p] || f.rels["RW"][p], nil
	}
	return f.rels[h][p], nil
}

// pair evaluates the two arguments of the relation h to instances.
func (f *finite) pair(h string, args []smtlib.Term, env map[string]int) ([2]int, error) {
	if len(args) != 2 {
		return [2]int{}, fmt.Errorf("%s takes two arguments", h)
	}
	a, err := f.eval(args[0], env)
	if err != nil {
		return [2]int{}, err
	}
	b, err := f.eval(args[1], env)
	if err != nil {
		return [2]int{}, err
	}
	ai, ok1 := a.(int)
	bi, ok2 := b.(int)
	if !ok1 || !ok2 {
		return [2]int{}, fmt.Errorf("%s of non-instances", h)
	}
	return [2]int{ai, bi}, nil
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
