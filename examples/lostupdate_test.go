package examples_test

import (
	"context"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/record"
)

// TestRecordedLostUpdate records two clients that read the same balance and both write it
// back, and checks that isovet names the lost update: as the anomaly's kind at snapshot
// isolation, and among its names (a G2-item cycle, also known as lost-update) at
// serializability. It imports only isovet's public packages, so it runs as it stands in any
// module that requires github.com/isovet/isovet.
func TestRecordedLostUpdate(t *testing.T) {
	rec := record.New(record.Options{})
	rec.Init("x", 0)
	t1, t2 := rec.Begin("c1"), rec.Begin("c2")
	t1.Read("x", 0)
	t2.Read("x", 0)
	t1.Write("x", 1)
	t1.Commit()
	t2.Write("x", 10)
	t2.Commit()
	h, err := rec.History()
	if err != nil {
		t.Fatal(err)
	}

	rep, err := check.Check(context.Background(), h, check.SnapshotIsolation, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != check.Fail || rep.Anomalies[0].Kind != anomaly.LostUpdate {
		t.Fatalf("Check(snapshot-isolation) = %v %v, want fail with a lost update", rep.Verdict, rep.Anomalies)
	}

	rep, err = check.Check(context.Background(), h, check.Serializable, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != check.Fail || !rep.Anomalies[0].Is(anomaly.LostUpdate) {
		t.Fatalf("Check(serializable) = %v %v, want fail with a lost update", rep.Verdict, rep.Anomalies)
	}
}
