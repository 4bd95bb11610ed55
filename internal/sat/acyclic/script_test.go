package acyclic

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/isovet/isovet/internal/sat"
)

// TestScript runs the datadriven scripts in testdata. Commands:
//
//	new nodes=N vars=V [propagate]   fresh solver with V variables and theory
//	edge lit=L from=U to=V           L justifies U→V
//	composite a=L b=L from=U to=V    L∧L justifies U→V
//	fixed from=U to=V                U→V is known
//	clause                           input: one clause per line, DIMACS ints
//	assign lit=L level=K             tell the theory directly (no solver)
//	propagate                        the theory's implied literals
//	reason lit=L                     the reason clause of a propagated literal
//	backtrack level=K
//	phase var=V
//	graph                            present edges and the topological order
//	solve [assume=L,...]             solve with the solver; status, model
//	                                 edges and order
//
// assign/propagate/reason/backtrack drive the theory by hand and must not be
// mixed with solve in one instance.
func TestScript(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var s *sat.Solver
		var g *Theory
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			intArg := func(key string) int {
				var x int
				d.ScanArgs(t, key, &x)
				return x
			}
			switch d.Cmd {
			case "new":
				s = sat.New(sat.Options{})
				for range intArg("vars") {
					s.NewVar()
				}
				g = New(s, intArg("nodes"), Options{Propagate: d.HasArg("propagate")})
				return ""
			case "edge":
				return errString(g.AddEdge(sat.LitOf(intArg("lit")), intArg("from"), intArg("to")))
			case "composite":
				return errString(g.AddComposite(sat.LitOf(intArg("a")), sat.LitOf(intArg("b")), intArg("from"), intArg("to")))
			case "fixed":
				return errString(g.AddFixed(intArg("from"), intArg("to")))
			case "clause":
				for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
					var c []sat.Lit
					for _, f := range strings.Fields(line) {
						x, err := strconv.Atoi(f)
						if err != nil {
							t.Fatal(err)
						}
						c = append(c, sat.LitOf(x))
					}
					if err := s.AddClause(c...); err != nil {
						return err.Error()
					}
				}
				return ""
			case "assign":
				if c := g.Assign(sat.LitOf(intArg("lit")), intArg("level")); c != nil {
					return fmt.Sprintf("conflict %v", c)
				}
				return "ok"
			case "propagate":
				return fmt.Sprint(g.Propagate(nil))
			case "reason":
				return fmt.Sprint(g.Reason(sat.LitOf(intArg("lit")), nil))
			case "backtrack":
				g.Backtrack(intArg("level"))
				return g.describe()
			case "phase":
				return fmt.Sprint(g.Phase(sat.Var(intArg("var"))))
			case "graph":
				return g.describe()
			case "solve":
				var assume []sat.Lit
				if d.HasArg("assume") {
					arg, _ := d.Arg("assume")
					for _, v := range arg.Vals {
						x, _ := strconv.Atoi(v)
						assume = append(assume, sat.LitOf(x))
					}
				}
				st, err := s.Solve(context.Background(), assume...)
				if err != nil {
					return err.Error()
				}
				switch st {
				case sat.Sat:
					var model []int
					for v := 1; v <= s.NumVars(); v++ {
						model = append(model, sat.Var(v).Pos().Dimacs()*map[bool]int{true: 1, false: -1}[s.Value(sat.Var(v).Pos())])
					}
					return fmt.Sprintf("%v\nmodel %v\norder %v", st, model, g.Order())
				case sat.Unsat:
					return fmt.Sprintf("%v\nfailed %v", st, s.Failed())
				}
				return st.String()
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

func errString(err error) string {
	if err != nil {
		return err.Error()
	}
	return ""
}

// describe prints the present edges (u→v ×count) and the order.
func (g *Theory) describe() string {
	var edges []string
	for u := range g.n {
		for _, e := range g.out[u] {
			edges = append(edges, fmt.Sprintf("%d→%d×%d", u, g.to[e], g.cnt[e]))
		}
	}
	slices.Sort(edges)
	var b strings.Builder
	fmt.Fprintf(&b, "edges %v\norder %v", edges, g.at)
	return b.String()
}
