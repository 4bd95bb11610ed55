package ser

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/internal/certify"
	"github.com/isovet/isovet/internal/report"
)

const timeCertNote = "also respects the client intervals"

func hasTimeCert(rep *report.Report) bool {
	return slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, timeCertNote) })
}

// TestTimeCertificate: the weaker levels pass Vbox's blind-write histories through the
// strict fast path's replayed serial order (the general pipeline needs about a minute of CPU
// on blindw_wr_10000 at serializable: a write-order choice per pair of blind writers). The
// row certificate, tried first, is switched off: TestRowCertificateFiles tests it.
func TestTimeCertificate(t *testing.T) {
	for _, name := range []string{"blindw_wr_10000", "blindw_wh_10000"} {
		for _, level := range []anomaly.Level{anomaly.Serializable, anomaly.StrongSessionSerializable} {
			rep := runFileWith(t, sharedPath(t, "bench/vbox", name), level, Options{Shortcuts: certify.SkipRows})
			if rep.Verdict != report.Pass || !hasTimeCert(rep) {
				t.Errorf("%s at %s: verdict %s, notes %q; want a pass through the time certificate", name, level, rep.Verdict, rep.Notes)
			}
		}
	}
}

// TestTimeCertificateFallsBack: a history that is serializable but not strict-serializable
// (Coo's lost update on MySQL READ COMMITTED: the reader of the final value began after the
// overwritten writer ended) gets no certificate, and the general pipeline passes it; one that
// is not serializable still fails.
func TestTimeCertificateFallsBack(t *testing.T) {
	rep := runFile(t, sharedPath(t, "vbox/coo/wat_sda_lost_update_c1"), anomaly.Serializable)
	if rep.Verdict != report.Pass || hasTimeCert(rep) {
		t.Errorf("wat_sda_lost_update_c1: verdict %s, notes %q; want a pass by the general pipeline", rep.Verdict, rep.Notes)
	}
	rep = runFile(t, sharedPath(t, "vbox/coo/iat_dda_write_skew"), anomaly.Serializable)
	if rep.Verdict != report.Fail {
		t.Errorf("iat_dda_write_skew: verdict %s, want fail", rep.Verdict)
	}
}

// TestTimeCertificateSameVerdict: with the certificate switched off, the general pipeline
// reaches the same verdict on a file it decides quickly.
func TestTimeCertificateSameVerdict(t *testing.T) {
	h, _, err := format.Open(sharedPath(t, "bench/vbox/blindw_rh_10000"), format.Auto, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, level := range []anomaly.Level{anomaly.Serializable, anomaly.StrongSessionSerializable} {
		on, err := Check(context.Background(), h, level, Options{Shortcuts: certify.SkipRows})
		if err != nil {
			t.Fatal(err)
		}
		off, err := Check(context.Background(), h, level, Options{Shortcuts: certify.SkipShortcuts})
		if err != nil {
			t.Fatal(err)
		}
		if on.Verdict != report.Pass || off.Verdict != report.Pass || !hasTimeCert(on) || hasTimeCert(off) {
			t.Errorf("%s: with certificate %s (%v), without %s (%v); want both pass, only the first through the certificate", level, on.Verdict, hasTimeCert(on), off.Verdict, hasTimeCert(off))
		}
	}
}

const rowCertNote = "replayed on whole rows"

// TestRowCertificateFiles: the row certificate proves Vbox's PostgreSQL histories strict
// serializable at every level (its search repairs the order the client times give), and
// the pipelines without it agree.
func TestRowCertificateFiles(t *testing.T) {
	for _, name := range []string{"blindw_wr_10000", "blindw_wh_10000", "blindw_rh_10000"} {
		for _, level := range Levels {
			rep := runFile(t, sharedPath(t, "bench/vbox", name), level)
			if rep.Verdict != report.Pass || !slices.ContainsFunc(rep.Notes, func(n string) bool {
				return strings.Contains(n, rowCertNote) && strings.Contains(n, "strict-serializable too")
			}) {
				t.Errorf("%s at %s: verdict %s, notes %q; want a strict pass through the row certificate", name, level, rep.Verdict, rep.Notes)
			}
		}
	}
	h, _, err := format.Open(sharedPath(t, "bench/vbox/blindw_rh_10000"), format.Auto, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, level := range Levels {
		off, err := Check(context.Background(), h, level, Options{Shortcuts: certify.SkipShortcuts})
		if err != nil {
			t.Fatal(err)
		}
		if off.Verdict != report.Pass || slices.ContainsFunc(off.Notes, func(n string) bool { return strings.Contains(n, rowCertNote) }) {
			t.Errorf("blindw_rh_10000 at %s without the fast paths: %s, notes %q", level, off.Verdict, off.Notes)
		}
	}
}
