package si_test

import (
	"context"
	"os"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/check/si"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// TestFixtures checks testdata/histories/si at strong-session SI; each fixture's verdict
// must also be the brute-force oracle's.
func TestFixtures(t *testing.T) {
	t.Parallel()
	histtest.RunDir(t, os.DirFS("../../../testdata/histories/si"), func(t *testing.T, h *history.History) *report.Report {
		rep, err := si.Check(context.Background(), h, anomaly.StrongSessionSI, si.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if want := oracle(h, anomaly.StrongSessionSI); want != (rep.Verdict == report.Pass) {
			t.Errorf("oracle says pass=%v, checker %v", want, rep.Verdict)
		}
		for _, a := range rep.Anomalies {
			t.Logf("%s (also %v): %s", a.Kind, a.Also, a.Message)
		}
		return rep
	})
}

// TestLevelsSeparate: write skew passes both SI levels and fails both SER levels; a lost
// update fails all four (through the public check.Check).
func TestLevelsSeparate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name, src string
		si        report.Verdict
	}{
		{"write-skew", "init 0; s1: T1 r(x,0) r(y,0) w(x,1); s2: T2 r(x,0) r(y,0) w(y,1)", report.Pass},
		{"lost-update", "init 0; s1: T1 r(x,0) w(x,1); s2: T2 r(x,0) w(x,2)", report.Fail},
	} {
		h := histtest.MustParse(tc.src)
		for _, l := range []anomaly.Level{anomaly.SnapshotIsolation, anomaly.StrongSessionSI, anomaly.Serializable, anomaly.StrongSessionSerializable} {
			want := report.Fail
			if l == anomaly.SnapshotIsolation || l == anomaly.StrongSessionSI {
				want = tc.si
			}
			rep, err := check.Check(ctx, h, l, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != want {
				t.Errorf("%s: check.Check(%s) = %v, want %v", tc.name, l, rep.Verdict, want)
			}
			if tc.name == "lost-update" && (l == anomaly.SnapshotIsolation) && rep.Anomalies[0].Kind != anomaly.LostUpdate {
				t.Errorf("%s: kind %v, want lost-update", tc.name, rep.Anomalies[0].Kind)
			}
		}
	}
}
