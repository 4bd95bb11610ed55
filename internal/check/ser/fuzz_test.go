package ser

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"isovet/internal/deps"
	"isovet/internal/histtest"
	"isovet/internal/report"
)

// FuzzCheck: on any small history the test DSL accepts (items, lists, predicates, inserts
// and deletes, unknown outcomes, intervals), the checker never panics, and every verdict it
// gives at each level agrees with the brute-force oracle. Seeds: the example histories and
// generated ones, item and predicate.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		"init 0\ns1: T1 r(x,0) w(x,1)\ns2: T2 r(x,0) w(x,2)",
		"init 0\ns1: T1 @[0,10] w(x,1)\ns2: T2 @[20,30] r(x,0)",
		"init 0\ns1: T1 w(x,1) w(y,1)\ns2: T2 w(x,1) w(y,2)\ns3: T3 r(x,1) r(y,1)\ns4: T4 r(x,1) r(y,2)",
		`s1: T1 ins(x,3) c; s2: T2 pr("v > 2", [x=3<-T1]) pw(r, "v<2", [y=0], [x=3]) c`,
		"s1: T1 a(x,1) c; s2: T2 a(x,2) r(x,[1,2]); s3: T3 r(x,[2]) info",
		"init 0\ns1: T1 w(x,1) info\ns2: T2 r(x,1)",
	} {
		f.Add(s)
	}
	for seed := range uint64(8) {
		f.Add(histtest.Format(histtest.Gen(seed, histtest.GenOptions{Txns: 5, Sessions: 3, Keys: 2, OpsPerTxn: 3, Concurrency: 2, Intervals: seed%2 == 0, AbortRatio: 0.1})))
		f.Add(histtest.Format(histtest.GenPred(rand.New(rand.NewPCG(seed, 99)))))
	}
	f.Fuzz(func(t *testing.T, src string) {
		h, err := histtest.Parse(src)
		if err != nil || len(h.Txns) > 7 {
			return
		}
		ops := 0
		for i := range h.Txns {
			ops += len(h.Txns[i].Ops)
		}
		if ops > 40 {
			return
		}
		for _, level := range allLevels {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			rep, err := Check(ctx, h, level, Options{})
			cancel()
			if err != nil {
				if errors.Is(err, deps.ErrUnsupported) || errors.Is(err, ErrNeedsTime) {
					continue
				}
				t.Fatalf("%s: %v\n%s", level, err, src)
			}
			if rep.Verdict == report.Unknown {
				continue
			}
			if want := oracle(h, level, 0); (rep.Verdict == report.Pass) != want {
				t.Fatalf("%s: checker %s, oracle %v\n%s\n%v", level, rep.Verdict, want, histtest.Format(h), rep.Anomalies)
			}
		}
	})
}
