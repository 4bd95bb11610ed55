package static

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/internal/smtlib"
	"github.com/isovet/isovet/internal/smtlib/solve"
)

var update = flag.Bool("update", false, "update golden files")

const withdrawSrc = `TABLE Account (AccID KEY, Balance);
TXN withdraw(ID, Amount) {
  SELECT Balance AS bal FROM Account WHERE AccID = ID;
  IF bal > Amount {
    UPDATE Account SET Balance = bal - Amount WHERE AccID = ID;
  }
}
`

// longForkSrc is the digest's second golden program (§5.9).
const longForkSrc = `TABLE Kv (k KEY, val);
TXN Wr(x) { UPDATE Kv SET val = 1 WHERE k = x; }
TXN Rd(a, b) {
  SELECT val AS va FROM Kv WHERE k = a;
  SELECT val AS vb FROM Kv WHERE k = b;
}
`

func model(t testing.TB, name string) Model {
	m, ok := LookupModel(name)
	if !ok {
		t.Fatalf("LookupModel(%s) failed", name)
	}
	return m
}

// TestGolden pins the emitted SMT-LIB byte for byte.
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src, model string
		query            func(*Encoding) smtlib.Query
		opts             EncodeOptions
	}{
		{"withdraw-psi-cycle2", withdrawSrc, "psi", func(e *Encoding) smtlib.Query { return e.Cycle(2) }, EncodeOptions{}},
		{"withdraw-ec-execution2", withdrawSrc, "ec", func(e *Encoding) smtlib.Query { return e.Execution(2) }, EncodeOptions{}},
		{"withdraw-ser-path3", withdrawSrc, "ser", func(e *Encoding) smtlib.Query { return e.ShortestPath(3) }, EncodeOptions{}},
		{"longfork-si-inductive", longForkSrc, "si", func(e *Encoding) smtlib.Query { return e.Inductive1("Wr") }, EncodeOptions{}},
		{"longfork-emptydb-cycle2", longForkSrc, "ec", func(e *Encoding) smtlib.Query { return e.Cycle(2) }, EncodeOptions{EmptyInitialDB: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := tc.opts
			opts.Model = model(t, tc.model)
			e, err := Encode(mustParse(t, tc.src), opts)
			if err != nil {
				t.Fatal(err)
			}
			got := tc.query(e).Script.String()
			path := filepath.Join("testdata", tc.name+".smt2")
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
				t.Errorf("%s mismatch (-want +got):\n%s", path, d)
			}
			if _, err := smtlib.Parse(got); err != nil {
				t.Errorf("emitted script does not parse: %v", err)
			}
		})
	}
}

// TestQueries checks the digest's verified results (§5.9) on both solvers.
func TestQueries(t *testing.T) {
	for _, solver := range []string{"z3", "cvc5"} {
		t.Run(solver, func(t *testing.T) {
			t.Parallel()
			needSolver(t, solver)
			for _, tc := range []struct {
				name, src, model string
				query            func(*Encoding) smtlib.Query
				want             smtlib.Status
			}{
				{"withdraw-ec-cycle2", withdrawSrc, "ec", func(e *Encoding) smtlib.Query { return e.Cycle(2) }, smtlib.Sat},
				{"withdraw-psi-cycle2", withdrawSrc, "psi", func(e *Encoding) smtlib.Query { return e.Cycle(2) }, smtlib.Unsat},
				{"withdraw-psi-cycle4", withdrawSrc, "psi", func(e *Encoding) smtlib.Query { return e.Cycle(4) }, smtlib.Unsat},
				{"withdraw-psi-path4", withdrawSrc, "psi", func(e *Encoding) smtlib.Query { return e.ShortestPath(4) }, smtlib.Unsat},
				{"withdraw-psi-path3", withdrawSrc, "psi", func(e *Encoding) smtlib.Query { return e.ShortestPath(3) }, smtlib.Sat},
				{"withdraw-ser-inductive", withdrawSrc, "ser", func(e *Encoding) smtlib.Query { return e.Inductive1("withdraw") }, smtlib.Unsat},
				{"longfork-ec-cycle3", longForkSrc, "ec", func(e *Encoding) smtlib.Query { return e.Cycle(3) }, smtlib.Unsat},
				{"longfork-ec-cycle4", longForkSrc, "ec", func(e *Encoding) smtlib.Query { return e.Cycle(4) }, smtlib.Sat},
				{"longfork-si-cycle4", longForkSrc, "si", func(e *Encoding) smtlib.Query { return e.Cycle(4) }, smtlib.Unsat},
				{"longfork-si-inductive-wr", longForkSrc, "si", func(e *Encoding) smtlib.Query { return e.Inductive1("Wr") }, smtlib.Unsat},
				{"longfork-si-inductive-2", longForkSrc, "si", func(e *Encoding) smtlib.Query { return e.Inductive2() }, smtlib.Unsat},
			} {
				e, err := Encode(mustParse(t, tc.src), EncodeOptions{Model: model(t, tc.model)})
				if err != nil {
					t.Fatal(err)
				}
				a, err := solve.Exec{}.Solve(context.Background(), solver, tc.query(e), 2*time.Minute)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if a.Status != tc.want {
					t.Errorf("%s on %s = %v (%s), want %v", tc.name, solver, a.Status, a.Reason, tc.want)
				}
			}
		})
	}
}
