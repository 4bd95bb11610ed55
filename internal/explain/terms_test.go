package explain_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/internal/explain"
)

// TestReaderTermsGolden checks the text explanation of three recorded histories
// (testdata/histories, described in its README) against goldens, and, whatever the goldens
// say, that each reads in the reader's terms: the anomaly opens with its plain sentence,
// transactions are T-names, list reads show the list with the element that makes the edge
// marked, a read that prints like its overwrite names its writer, and client times are
// durations since the history's start.
func TestReaderTermsGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path string
		level      anomaly.Level
		kind       anomaly.Kind // the anomaly's kind or one of its other names
		// must are lines, or parts of lines, the text must hold.
		must []string
	}{
		{
			name: "terms-gsingle-append", path: "gsingle-append.edn", level: anomaly.Serializable, kind: anomaly.GSingle,
			must: []string{
				"    T5 observed some of T4's writes but not others: it read :x=[1 2 *3*], yet did not observe T4's append of 3 to :y.\n",
				"T4 < T5, because T5 read :x=[1 2 *3*], which ends with T4's append of 3;",
				"T5 < T4, because T5 read :y=[1 2] and did not observe T4's append of 3 ",
				"T5 = {r(:x,[1 2 3]), r(:y,[1 2])} (session 1, committed, time [+4.1ms, +5.4ms])",
			},
		},
		{
			name: "terms-vbox-stale-read", path: "vbox-stale-read", level: anomaly.StrictSerializable, kind: anomaly.StaleRead,
			must: []string{
				"    T3 began after T2 committed (T2 ended at +3ms, T3 began at +4ms), yet did not observe T2's write of key 1.\n",
				"T2 < T3, because T2 ended (at +3ms) before T3 began (at +4ms);",
				"T3 read 1=(0000000000000007=1) written by T1, which T2 overwrote with 1=(0000000000000007=1)",
			},
		},
		{
			name: "terms-pg-write-skew", path: "pg-write-skew.jsonl", level: anomaly.Serializable, kind: anomaly.WriteSkew,
			must: []string{
				"    T1051 read y1 and T1053 read x1, then each overwrote what the other had read, so neither saw the other's write and no serial order explains both.\n",
				"T1051 < T1053, because T1051 read the initial y1=0, which T1053 overwrote with y1=2;",
				"T1053 = {r(x1,0), r(y1,0), w(y1,2)} (session 0, committed, time [+0s, +19.673815ms]",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, _, err := format.Open(filepath.Join("testdata", "histories", tt.path), format.Auto, format.Options{})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := check.Check(context.Background(), h, tt.level, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != check.Fail || len(rep.Anomalies) == 0 || !rep.Anomalies[0].Is(tt.kind) {
				t.Fatalf("%s at %s: %s with %d anomalies, want a failure with %s first", tt.path, tt.level, rep.Verdict, len(rep.Anomalies), tt.kind)
			}
			var b bytes.Buffer
			if err := explain.Text(&b, rep); err != nil {
				t.Fatal(err)
			}
			got := b.String()
			for _, m := range tt.must {
				if !strings.Contains(got, m) {
					t.Errorf("the text lacks %q:\n%s", m, got)
				}
			}
			golden := filepath.Join("testdata", tt.name+".txt")
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", golden, diff)
			}
		})
	}
}
