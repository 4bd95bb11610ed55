package report

import (
	"context"
	"errors"
	"testing"

	"github.com/isovet/isovet/anomaly"
)

// TestByStronger: a stronger level's pass is the weaker level's pass with the note first; its
// violation decides nothing; its Unknown under an ended context is the answer.
func TestByStronger(t *testing.T) {
	bg := context.Background()
	sub := func(v Verdict, err error) func() (*Report, error) {
		return func() (*Report, error) {
			return &Report{Level: anomaly.StrongSessionSerializable, Verdict: v, Notes: []string{"sub"}}, err
		}
	}
	rep, ok, err := ByStronger(bg, anomaly.Serializable, "via", sub(Pass, nil))
	if !ok || err != nil || rep.Level != anomaly.Serializable || rep.Verdict != Pass || len(rep.Notes) != 2 || rep.Notes[0] != "via" {
		t.Errorf("pass: %+v, %v, %v", rep, ok, err)
	}
	if rep, ok, err := ByStronger(bg, anomaly.Serializable, "via", sub(Fail, nil)); ok || rep != nil || err != nil {
		t.Errorf("fail decided the weaker level: %+v, %v, %v", rep, ok, err)
	}
	if rep, ok, _ := ByStronger(bg, anomaly.Serializable, "via", sub(Pass, errors.New("bad input"))); ok || rep != nil {
		t.Errorf("an error decided the weaker level: %+v", rep)
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	rep, ok, err = ByStronger(ctx, anomaly.Serializable, "via", sub(Unknown, context.Canceled))
	if !ok || rep.Verdict != Unknown || rep.Level != anomaly.Serializable || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %+v, %v, %v", rep, ok, err)
	}
}

// TestFinishPolicy: every caveat kind against every verdict. A caveat that undermines the
// verdict makes it Unknown, drops what the verdict claimed (a pass's follow-up, a failure's
// anomalies) and shows its sentence once, also when Finish runs again; one that does not
// changes nothing.
func TestFinishPolicy(t *testing.T) {
	undermines := map[CaveatKind][3]bool{ // pass, fail, unknown
		CaveatBasicOnly:        {true, false, false},
		CaveatPartial:          {true, false, false},
		CaveatUntimed:          {true, false, false},
		CaveatPlaceholders:     {true, false, false},
		CaveatStopped:          {true, true, true},
		CaveatChosenOrder:      {false, true, false},
		CaveatUncertainOutcome: {false, true, false},
		CaveatUnloggedWriters:  {true, true, false},
	}
	if len(undermines) != len(caveatSpecs)-1 {
		t.Fatalf("the test covers %d kinds, the policy has %d", len(undermines), len(caveatSpecs)-1)
	}
	for k, row := range undermines {
		for i, v := range []Verdict{Pass, Fail, Unknown} {
			r := &Report{Verdict: v, Anomalies: []Anomaly{{Kind: anomaly.G0}}, Followup: &Followup{Verdict: Pass}, Notes: []string{"n"}}
			r.AddCaveat(k, "why")
			if got := r.Undermined(); got != row[i] {
				t.Errorf("%s on %s: Undermined = %v, want %v", k, v, got, row[i])
			}
			Finish(r)
			Finish(r)
			wantNotes := 1
			if row[i] {
				wantNotes = 2
			}
			switch {
			case row[i] && r.Verdict != Unknown:
				t.Errorf("%s on %s: verdict %s, want unknown", k, v, r.Verdict)
			case !row[i] && r.Verdict != v:
				t.Errorf("%s on %s: verdict %s, want it unchanged", k, v, r.Verdict)
			case len(r.Notes) != wantNotes:
				t.Errorf("%s on %s: notes %q, want %d", k, v, r.Notes, wantNotes)
			case row[i] && v == Pass && r.Followup != nil:
				t.Errorf("%s on %s: the follow-up survived", k, v)
			case row[i] && v == Fail && len(r.Anomalies) != 0:
				t.Errorf("%s on %s: the anomalies survived", k, v)
			case len(r.Applied()) != wantNotes-1:
				t.Errorf("%s on %s: applied %v", k, v, r.Applied())
			case r.Proved() != (v == Pass && !row[i]):
				t.Errorf("%s on %s: Proved = %v", k, v, r.Proved())
			}
		}
	}
	r := &Report{Verdict: Pass}
	Finish(r)
	if !r.Proved() || r.Verdict != Pass {
		t.Errorf("a pass without caveats: %+v", r)
	}
	r.AddCaveat(CaveatChosenOrder, "why")
	if !r.Proved() {
		t.Errorf("a caveat on failures undermined a pass")
	}
}

// TestCaveatKindNames: every kind has its own name, as JSON reports write it.
func TestCaveatKindNames(t *testing.T) {
	seen := map[string]bool{}
	for k := CaveatKind(1); int(k) < len(caveatSpecs); k++ {
		b, err := k.MarshalText()
		if err != nil || len(b) == 0 || string(b) == "invalid" || seen[string(b)] {
			t.Errorf("kind %d: name %q, %v", k, b, err)
		}
		seen[string(b)] = true
	}
}
