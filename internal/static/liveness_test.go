package static

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/isovet/isovet/internal/smtlib"
	"github.com/isovet/isovet/internal/smtlib/solve"
)

const queueSizeSrc = `
TABLE Counter (cq KEY, next);
TABLE Item (iq KEY, id KEY);
TXN Push(q) {
  SELECT next AS n FROM Counter WHERE cq = q;
  UPDATE Counter SET next = n + 1 WHERE cq = q;
  INSERT INTO Item VALUES (iq = q, id = n);
}
TXN Size(q) { SELECT COUNT(*) AS c FROM Item WHERE iq = q; }
TXN Pop(q) {
  SELECT MIN(id) AS m FROM Item WHERE iq = q;
  IF m IS NOT NULL {
    DELETE FROM Item WHERE iq = q AND id = m;
  }
}
ASSUME INITIALLY FORALL c IN Counter, i IN Item WHERE i.iq = c.cq: i.id < c.next;
`

// TestCounterInvariantShape checks which programs and models get a counter
// invariant: only the exact shape whose proof docs/static.md gives, under
// the built-in models with WW ⊆ vis and transitive visibility.
func TestCounterInvariantShape(t *testing.T) {
	t.Parallel()
	tpcc := string(mustRead(t, examplesDir+"/tpcc.txn"))
	si := model(t, "si")
	fakeSI, err := ParseModel("si", []byte("(assert (forall ((a T) (b T)) (=> (WW a b) (vis a b))))"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, src string
		model     Model
		ignore    bool
		want      int // assumptions used
	}{
		{"tpcc-si", tpcc, si, false, 1}, // NewOrders only: Orders rows are never deleted
		{"tpcc-psi", tpcc, model(t, "psi"), false, 1},
		{"tpcc-ser", tpcc, model(t, "ser"), false, 1},
		{"tpcc-pc", tpcc, model(t, "pc"), false, 0},
		{"tpcc-psi-paper", tpcc, model(t, "psi-paper"), false, 0},
		{"tpcc-model-file-named-si", tpcc, fakeSI, false, 0},
		{"tpcc-ignore-assumptions", tpcc, si, true, 0},
		{"queue", queueSizeSrc, si, false, 1},
		{"queue-step-2", strings.Replace(queueSizeSrc, "next = n + 1", "next = n + 2", 1), si, false, 0},
		{"queue-step-0", strings.Replace(queueSizeSrc, "next = n + 1", "next = n", 1), si, false, 0},
		{"queue-id-above", strings.Replace(queueSizeSrc, "id = n)", "id = n + 1)", 1), si, false, 0},
		{"queue-other-queue", strings.Replace(queueSizeSrc, "(iq = q, id = n)", "(iq = q + 1, id = n)", 1), si, false, 0},
		{"queue-conditional-insert", strings.Replace(queueSizeSrc, "INSERT INTO Item VALUES (iq = q, id = n);",
			"IF n > 0 { INSERT INTO Item VALUES (iq = q, id = n); } ELSE { SKIP; }", 1), si, false, 0},
		{"queue-reset", queueSizeSrc + "TXN Reset(q) { UPDATE Counter SET next = 0 WHERE cq = q; }", si, false, 0},
		{"queue-free-insert", queueSizeSrc + "TXN Put(q, i) { INSERT INTO Item VALUES (iq = q, id = i); }", si, false, 0},
		{"queue-counter-deleted", queueSizeSrc + "TXN Drop(q) { DELETE FROM Counter WHERE cq = q; }", si, false, 0},
		{"tpcc-key-linked-twice", strings.Replace(tpcc, "WHERE n.no_w_id = d.d_w_id AND", "WHERE n.no_w_id = d.d_w_id AND n.no_d_id = d.d_w_id AND", 1), si, false, 0},
		{"queue-weak-conclusion", strings.Replace(queueSizeSrc, "i.id < c.next", "i.id <= c.next", 1), si, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Encode(mustParse(t, tc.src), EncodeOptions{Model: tc.model, IgnoreAssumptions: tc.ignore})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(e.counterAssumes); got != tc.want {
				t.Errorf("counter invariants rest on %d assumptions, want %d", got, tc.want)
			}
		})
	}
}

// TestLivenessFactsKeepRealDependencies asks queries whose answer must stay
// sat with the unbounded liveness facts, because real executions satisfy
// them: a Pop that finds the queue empty depends (RW) on a Pop that deletes
// an item pushed after the first Pop's snapshot, ar-before it (inductive-1
// for Pop); and without the initial-database condition the queue has a real
// SI anomaly (three transactions), so neither inductive query may be unsat
// (the counter invariant is absent then; the liveness facts remain).
func TestLivenessFactsKeepRealDependencies(t *testing.T) {
	for _, solver := range []string{"z3", "cvc5"} {
		t.Run(solver, func(t *testing.T) {
			t.Parallel()
			needSolver(t, solver)
			for _, tc := range []struct {
				name   string
				ignore bool
				query  func(*Encoding) smtlib.Query
				z3     bool // z3 answers it (cvc5 answers all)
			}{
				{"inductive-1-pop", false, func(e *Encoding) smtlib.Query { return e.Inductive1("Pop") }, true},
				{"inductive-2-noassume", true, func(e *Encoding) smtlib.Query { return e.Inductive2() }, false},
			} {
				if solver == "z3" && !tc.z3 {
					continue
				}
				e, err := Encode(mustParse(t, queueSizeSrc), EncodeOptions{Model: model(t, "si"), IgnoreAssumptions: tc.ignore})
				if err != nil {
					t.Fatal(err)
				}
				if len(e.unbounded) == 0 {
					t.Fatalf("%s: the queue got no liveness facts", tc.name)
				}
				a, err := solve.Exec{}.Solve(context.Background(), solver, tc.query(e), 2*time.Minute)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if a.Status != smtlib.Sat {
					t.Errorf("%s on %s = %v (%s), want sat", tc.name, solver, a.Status, a.Reason)
				}
			}
		})
	}
}

// TestFactsKeepBoundedAnomalies adds the unbounded facts to the bounded
// query (closed over its instances) and checks that the real anomalies the
// examples' bounded queries find are still found and confirmed by replay:
// a fact that excluded a replayed execution would be unsound. The counter
// invariant is present where the assumptions allow it (TPC-C PSI with the
// assumptions has no anomaly to check it against, but the queue's and
// TPC-C's anomalies without them exercise the liveness facts, and
// Courseware's under EC those of a table with inserts and deletes by
// different programs).
func TestFactsKeepBoundedAnomalies(t *testing.T) {
	if testing.Short() {
		t.Skip("solver runs skipped in -short mode")
	}
	needSolver(t, "z3")
	// The queue with a Size over two queues has a PSI long fork (two Pushes
	// into different queues, two Size2 seeing one each) from a database
	// satisfying the assumption, so the counter invariant is present too.
	longFork := "inline:" + queueSizeSrc + "TXN Size2(q, p) { SELECT COUNT(*) AS c FROM Item WHERE iq = q; SELECT COUNT(*) AS d FROM Item WHERE iq = p; }"
	for _, tc := range []struct {
		file, model string
		k           int
		ignore      bool
		txns        []string
	}{
		{longFork, "psi", 4, false, []string{"Push", "Pop", "Size2"}},
		{"queue.txn", "si", 3, true, nil},
		{"queue.txn", "ec", 2, false, nil},
		{"courseware.txn", "ec", 2, false, []string{"Enroll", "RemStudent"}},
		{"courseware.txn", "ec", 2, false, []string{"AddStudent", "RemStudent"}},
		{"tpcc.txn", "psi", 3, true, nil},
		{"tpcc.txn", "ec", 2, false, []string{"NewOrder", "Delivery"}},
	} {
		t.Run(fmt.Sprintf("%s/%s/k=%d/%v", strings.SplitN(tc.file, "\n", 2)[0], tc.model, tc.k, tc.txns), func(t *testing.T) {
			t.Parallel()
			var prog *Program
			if src, ok := strings.CutPrefix(tc.file, "inline:"); ok {
				prog = mustParse(t, src)
			} else {
				prog = mustParse(t, string(mustRead(t, examplesDir+"/"+tc.file)))
			}
			opts := Options{Model: model(t, tc.model), Bound: tc.k, Solver: "z3", Backend: solve.Exec{},
				Timeout: 5 * time.Minute, Txns: tc.txns, IgnoreAssumptions: tc.ignore, NoUnbounded: true}
			a := &analysis{ctx: context.Background(), prog: prog, opts: opts, res: &Result{}}
			enc, err := a.encode(nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(enc.unbounded) == 0 {
				t.Fatalf("no facts to check")
			}
			if strings.HasPrefix(tc.file, "inline:") && len(enc.counterAssumes) == 0 {
				t.Fatalf("no counter invariant to check")
			}
			enc.factsInBounded = true
			ans, err := a.solve(enc.Execution(tc.k))
			if err != nil {
				t.Fatal(err)
			}
			if ans.Status != smtlib.Sat {
				t.Fatalf("execution k=%d with the facts: %v (%s), want sat", tc.k, ans.Status, ans.Reason)
			}
			w, err := a.witness(enc, tc.k, ans)
			if err != nil {
				t.Fatal(err)
			}
			if !w.Confirmed {
				t.Errorf("the model with the facts was not confirmed by replay: %s", w.ReplayNote)
			}
		})
	}
}
