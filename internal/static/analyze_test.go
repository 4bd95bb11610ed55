package static

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/isovet/isovet/internal/smtlib"
)

// scriptedBackend answers each query by the first rule whose key is in the
// query's name ("execution k=3", "cycle k=4", ...); otherwise sat for the
// serial check (the model admits serial executions) and unsat for the rest.
type scriptedBackend map[string]smtlib.Status

func (b scriptedBackend) Solve(_ context.Context, _ string, q smtlib.Query, _ time.Duration) (smtlib.Answer, error) {
	name := queryName(q)
	for key, st := range b {
		if strings.Contains(name, key) {
			return smtlib.Answer{Status: st, Reason: "scripted", Solver: "scripted"}, nil
		}
	}
	if strings.HasPrefix(name, "serial ") {
		return smtlib.Answer{Status: smtlib.Sat, Solver: "scripted"}, nil
	}
	return smtlib.Answer{Status: smtlib.Unsat, Solver: "scripted"}, nil
}

// TestAnalyzeBoundNeedsEveryK: each bounded query covers executions of
// exactly k instances, so an unknown at one k must keep every larger bound
// from being claimed, even when the larger k's are unsat; and an unbounded
// proof still settles the question.
func TestAnalyzeBoundNeedsEveryK(t *testing.T) {
	t.Parallel()
	prog := mustParse(t, withdrawSrc)
	for _, tc := range []struct {
		name    string
		backend scriptedBackend
		bounded bool
		want    Verdict
	}{
		{"all-unsat", scriptedBackend{}, true, NoneUpToBound},
		{"unknown-at-3", scriptedBackend{"execution k=3": smtlib.Unknown}, true, Inconclusive},
		{"unknown-at-2", scriptedBackend{"execution k=2": smtlib.Unknown}, true, Inconclusive},
		// Theorem 10's two queries are unsat: serializable whatever the
		// bounded queries said.
		{"unknown-then-proof", scriptedBackend{"execution k=3": smtlib.Unknown}, false, Serializable},
		{"unknown-no-proof", scriptedBackend{"execution k=3": smtlib.Unknown, "shortest-path": smtlib.Unknown, "inductive": smtlib.Unknown, "any-dependency": smtlib.Sat}, false, Inconclusive},
		// A model the solver cannot show to admit serial executions might
		// be vacuous: no proof and no bound may stand.
		{"serial-unknown-proof", scriptedBackend{"serial": smtlib.Unknown}, false, Inconclusive},
		{"serial-unknown-bound", scriptedBackend{"serial": smtlib.Unknown}, true, Inconclusive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := Analyze(context.Background(), prog, Options{Model: model(t, "psi"), Bound: 4, Backend: tc.backend, NoUnbounded: tc.bounded})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tc.want {
				t.Errorf("Analyze(%s) = %s (%s), want %s", tc.name, res.Verdict, res.Reason, tc.want)
			}
		})
	}
}
