package si_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"isovet/internal/anomaly"
	"isovet/internal/check/si"
	"isovet/internal/deps"
	"isovet/internal/histtest"
	"isovet/internal/report"
)

// FuzzCheck: on any small history the test DSL accepts, the snapshot isolation checker never
// panics, and every verdict it gives at each level agrees with the brute-force oracle.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		"init 0\ns1: T1 r(x,0) w(x,1)\ns2: T2 r(x,0) w(x,2)",
		"init 0\ns1: T1 r(x,0) r(y,0) w(x,1)\ns2: T2 r(x,0) r(y,0) w(y,1)",
		"init 0\ns1: T1 @[0,10] w(x,1)\ns2: T2 @[20,30] r(x,0)",
		`s1: T1 ins(x,3) c; s2: T2 pr("v > 2", [x=3<-T1]) pw(r, "v<2", [y=0], [x=3]) c`,
		"s1: T1 a(x,1) c; s2: T2 a(x,2) r(x,[1,2]); s3: T3 r(x,[2]) info",
	} {
		f.Add(s)
	}
	for seed := range uint64(8) {
		f.Add(histtest.Format(histtest.Gen(seed, histtest.GenOptions{Txns: 5, Sessions: 3, Keys: 2, OpsPerTxn: 3, Concurrency: 2, Intervals: seed%2 == 0, AbortRatio: 0.1})))
		f.Add(histtest.Format(histtest.GenPred(rand.New(rand.NewPCG(seed, 99)))))
	}
	f.Fuzz(func(t *testing.T, src string) {
		h, err := histtest.Parse(src)
		if err != nil || len(h.Txns) > 6 {
			return
		}
		ops := 0
		for i := range h.Txns {
			ops += len(h.Txns[i].Ops)
		}
		if ops > 30 {
			return
		}
		for _, level := range []anomaly.Level{anomaly.SnapshotIsolation, anomaly.StrongSessionSI, anomaly.StrongSI} {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			rep, err := si.Check(ctx, h, level, si.Options{})
			cancel()
			if err != nil {
				if errors.Is(err, deps.ErrUnsupported) || errors.Is(err, si.ErrNeedsTime) {
					continue
				}
				t.Fatalf("%s: %v\n%s", level, err, src)
			}
			if rep.Verdict == report.Unknown {
				continue
			}
			if want := oracle(h, level); (rep.Verdict == report.Pass) != want {
				t.Fatalf("%s: checker %s, oracle %v\n%s\n%v", level, rep.Verdict, want, histtest.Format(h), rep.Anomalies)
			}
		}
	})
}
