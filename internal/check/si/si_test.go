package si

import (
	"context"
	"slices"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/internal/certify"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// TestExamples covers the PolySI digest's test histories (paper P1–P7, semantic M1–M7 and
// the artifact's unit tests) at both SI levels, with and without the basic checks.
func TestExamples(t *testing.T) {
	t.Parallel()
	type want struct {
		si, session report.Verdict
		kind        anomaly.Kind // for the session level; 0: any
	}
	P, F := report.Pass, report.Fail
	tests := []struct {
		name, src string
		want      want
	}{
		{"P1-fig2b", "s1: w(x,1); s2: w(x,2); s3: r(x,1); s4: r(x,2)", want{P, P, 0}},
		{"P2-long-fork-fig3", "s0: T0 w(x,0) w(y,0); T5 w(x,2); s1: T1 w(x,1); s2: T2 w(y,1); s3: T3 r(x,1) r(y,0); s4: T4 r(x,0) r(y,1)", want{F, F, anomaly.LongFork}},
		{"P3-long-fork", "s0: T0 w(x,0) w(y,0); s1: T1 w(x,1); s2: T2 w(y,1); s3: T3 r(x,1) r(y,0); s4: T4 r(x,0) r(y,1)", want{F, F, anomaly.LongFork}},
		{"P4-causality", "s0: I w(post,0) w(comment,0); s1: A w(post,1); s2: B r(post,1) w(comment,1); s3: C r(comment,1) r(post,0)", want{F, F, 0}},
		{"P5-lost-update", "s0: T0 w(bal,10); s1: T1 r(bal,10) w(bal,60); s2: T2 r(bal,10) w(bal,61)", want{F, F, anomaly.LostUpdate}},
		{"P6-galera-core", "s1: T14 w(0,4); T15 r(0,4) w(0,5); s2: T213 r(0,4) w(0,13)", want{F, F, anomaly.LostUpdate}},
		{"P7-yugabyte-core", "s0: T6 r(13,21); T7 w(10,3); T9 r(10,26); s1: T15 w(10,26) w(13,21)", want{P, F, anomaly.CausalityViolation}},
		{"M1-write-skew", "s0: T0 w(x,0) w(y,0); s1: T1 r(x,0) r(y,0) w(x,1); s2: T2 r(x,0) r(y,0) w(y,1)", want{P, P, 0}},
		{"M2-aborted-or-thin-air", "s0: w(x,1); s1: r(x,2)", want{F, F, 0}},
		{"M3-intermediate", "s0: w(x,1) w(x,2); s1: r(x,1)", want{F, F, anomaly.IntermediateRead}},
		{"M4-int", "s0: w(x,1) r(x,2); s1: w(x,2)", want{F, F, anomaly.Internal}},
		{"M5-session-stale", "s1: w(x,0); s2: r(x,0) w(x,1); r(x,0)", want{P, F, 0}},
		{"M6-ww-order-explains", "s1: w(x,0); s2: w(x,1); r(x,0)", want{P, P, 0}},
		{"M7-init-first", "init 0; s1: w(x,1); r(x,0)", want{P, F, 0}},
		{"readCommitted", "s0: w(x,1); w(x,2) w(y,2); s1: r(y,2) r(x,1)", want{P, F, 0}},
		{"repeatableRead", "s0: w(x,1); w(x,2); s1: r(x,1) r(x,2)", want{F, F, 0}},
		{"readMyWrites", "s0: w(x,1) w(y,1); s1: r(x,1) w(y,2); r(x,1) r(y,1)", want{P, F, 0}},
		{"repeatableRead2", "s0: w(x,1) w(y,1); s1: w(x,2) w(y,2); s2: r(x,1) r(y,2)", want{F, F, 0}},
		{"causal", "s0: w(x,1); s1: r(x,2) w(y,1); s2: r(x,1) w(x,2); s3: r(x,1) r(y,1)", want{F, F, 0}},
		{"prefix", "s0: w(x,1) w(y,1); s1: r(x,1) w(x,2); s2: r(x,2) r(y,1); s3: r(y,1) w(y,2); s4: r(y,2) r(x,1)", want{F, F, 0}},
		{"conflict", "s0: w(x,1); s1: r(x,1) w(x,2); s2: r(x,1) w(x,3)", want{F, F, anomaly.LostUpdate}},
		{"tidb1", "s0: w(x,0) w(y,0) w(z,0); s1: r(x,0) w(y,1) w(z,1); s2: r(y,0) w(x,1) w(z,2)", want{F, F, 0}},
		{"testBP_D", "s0: w(x,0); s1: w(x,1) r(x,0)", want{F, F, 0}},
		{"rmw-no-self-loop", "init 0; s0: r(x,0) w(x,1); s1: r(x,1) w(x,2)", want{P, P, 0}},
		{"duplicate-values", "s1: T1 w(x,1); s2: T2 w(x,1); T3 r(x,1)", want{P, P, 0}},
		{"unknown-outcome-read", "init 0; s1: T1 w(x,1) info; s2: T2 r(x,1)", want{P, P, 0}},
		{"unknown-outcome-lost-update", "init 0; s1: T1 r(x,0) w(x,1) info; s2: T2 r(x,0) w(x,2); s3: T3 r(x,1)", want{F, F, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := histtest.MustParse(tc.src)
			for _, lv := range []struct {
				l    anomaly.Level
				want report.Verdict
			}{{anomaly.SnapshotIsolation, tc.want.si}, {anomaly.StrongSessionSI, tc.want.session}} {
				for _, skip := range []bool{false, true} {
					var o Options
					if skip {
						o.Shortcuts = certify.SkipBasic
					}
					rep, err := Check(context.Background(), h, lv.l, o)
					if err != nil {
						t.Fatalf("Check(%s, skip=%v): %v", lv.l, skip, err)
					}
					if rep.Verdict != lv.want {
						t.Fatalf("Check(%s, skip=%v) = %v, want %v; %+v", lv.l, skip, rep.Verdict, lv.want, rep.Anomalies)
					}
					if rep.Verdict == report.Fail && (len(rep.Anomalies) == 0 || rep.Anomalies[0].Message == "") {
						t.Fatalf("Check(%s): fail without an explained anomaly", lv.l)
					}
					if lv.l == anomaly.StrongSessionSI && tc.want.kind != 0 && !skip {
						a := rep.Anomalies[0]
						if a.Kind != tc.want.kind && !slices.Contains(a.Also, tc.want.kind) {
							t.Errorf("Check(%s) kind = %v (also %v), want %v; %s", lv.l, a.Kind, a.Also, tc.want.kind, a.Message)
						}
					}
				}
			}
		})
	}
}

// TestCancel: a cancelled check is Unknown with the context's cause, never a verdict.
func TestCancel(t *testing.T) {
	t.Parallel()
	h := histtest.Gen(3, histtest.GenOptions{Txns: 300, Sessions: 6, Keys: 5, Concurrency: 4, DupRatio: 0.3})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := Check(ctx, h, anomaly.SnapshotIsolation, Options{})
	if err == nil || rep == nil || rep.Verdict != report.Unknown {
		t.Fatalf("Check(cancelled) = %v, %v; want Unknown and an error", rep, err)
	}
}
