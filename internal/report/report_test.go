package report

import (
	"context"
	"errors"
	"testing"

	"isovet/internal/anomaly"
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
