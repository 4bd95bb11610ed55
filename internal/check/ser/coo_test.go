package ser

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/internal/report"
)

// TestCoo runs the 29 Coo/3TS anomaly histories Vbox recorded on MySQL READ COMMITTED
// (vbox/coo). Vbox rejects all 29: it always adds time dependencies, i.e. it checks
// strict serializability, and so does the strict level here, naming each anomaly. Without
// real time (serializable), ten of them are serializable histories: their anomaly shows
// only because a transaction that began after others ended read an older state (a stale
// read), which plain serializability allows.
func TestCoo(t *testing.T) {
	dir := sharedPath(t, "vbox/coo")
	// The ten cases that plain serializability accepts; every other one it rejects.
	serializable := []string{
		"iat_dda_read_skew_committed_pred", "iat_sda_lost_update_committed",
		"rat_dda_double_write_skew1", "rat_dda_double_write_skew1_committed",
		"rat_dda_double_write_skew1_committed_pred", "rat_dda_double_write_skew2",
		"wat_dda_double_write_skew2_committed", "wat_dda_double_write_skew2_committed_pred",
		"wat_sda_lost_update_c1", "wat_sda_lost_update_c2",
	}
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 29 {
		t.Fatalf("%s holds %d cases, want 29", dir, len(es))
	}
	for _, e := range es {
		t.Run(e.Name(), func(t *testing.T) {
			path := filepath.Join(dir, e.Name())
			rep := runFile(t, path, anomaly.StrictSerializable)
			if rep.Verdict != report.Fail || len(rep.Anomalies) == 0 || rep.Anomalies[0].Kind == anomaly.KindInvalid {
				t.Fatalf("strict-serializable: verdict %s, want fail with a named anomaly; notes %v", rep.Verdict, rep.Notes)
			}
			rep = runFile(t, path, anomaly.Serializable)
			want := report.Fail
			if slices.Contains(serializable, e.Name()) {
				want = report.Pass
			}
			if rep.Verdict != want {
				t.Fatalf("serializable: verdict %s, want %s; %v", rep.Verdict, want, rep.Anomalies)
			}
		})
	}
}
