package histtest

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

// FuzzSeeds returns seed histories, in the DSL, for fuzzing a checker against its oracle:
// hand-written ones (lost update, write skew, real time, predicates, lists, unknown
// outcomes) and generated item and predicate histories.
func FuzzSeeds() []string {
	seeds := []string{
		"init 0\ns1: T1 r(x,0) w(x,1)\ns2: T2 r(x,0) w(x,2)",
		"init 0\ns1: T1 r(x,0) r(y,0) w(x,1)\ns2: T2 r(x,0) r(y,0) w(y,1)",
		"init 0\ns1: T1 @[0,10] w(x,1)\ns2: T2 @[20,30] r(x,0)",
		"init 0\ns1: T1 w(x,1) w(y,1)\ns2: T2 w(x,1) w(y,2)\ns3: T3 r(x,1) r(y,1)\ns4: T4 r(x,1) r(y,2)",
		`s1: T1 ins(x,3) c; s2: T2 pr("v > 2", [x=3<-T1]) pw(r, "v<2", [y=0], [x=3]) c`,
		"s1: T1 a(x,1) c; s2: T2 a(x,2) r(x,[1,2]); s3: T3 r(x,[2]) info",
		"init 0\ns1: T1 w(x,1) info\ns2: T2 r(x,1)",
	}
	for seed := range uint64(8) {
		seeds = append(seeds,
			Format(Gen(seed, GenOptions{Txns: 5, Sessions: 3, Keys: 2, OpsPerTxn: 3, Concurrency: 2, Intervals: seed%2 == 0, AbortRatio: 0.1})),
			Format(GenPred(rand.New(rand.NewPCG(seed, 99)))))
	}
	return seeds
}

// ParseSmall parses src as [Parse] does and returns the history when it parses and has at
// most maxTxns transactions and maxOps operations in all, and a brute-force oracle's search
// (every order of the transactions that may have committed, for every subset of those of
// unknown outcome) stays under 20,160 orders (7! × 4): small enough for the oracles.
func ParseSmall(src string, maxTxns, maxOps int) (*history.History, bool) {
	h, err := Parse(src)
	if err != nil || len(h.Txns) > maxTxns {
		return nil, false
	}
	ops, orders, counted := 0, 1, 0
	for i := range h.Txns {
		t := &h.Txns[i]
		ops += len(t.Ops)
		if t.Outcome == history.OutcomeAborted {
			continue
		}
		counted++
		orders *= counted
		if t.Outcome == history.OutcomeUnknown {
			orders *= 2
		}
	}
	return h, ops <= maxOps && orders <= 20160
}

// AgreeWithOracle checks h at each level with check and fails t when a verdict disagrees
// with oracle (a pass must be a pass there, a violation a violation). Unknown verdicts and
// errors declined reports as expected (unsupported histories, levels the history lacks
// the data for) are skipped; any other error fails t, including a check that does not
// finish in 20 s (its context expires). It is the body of the checkers' fuzz targets.
func AgreeWithOracle(t testing.TB, h *history.History, levels []anomaly.Level, check func(context.Context, anomaly.Level) (*report.Report, error), oracle func(anomaly.Level) bool, declined func(error) bool) {
	t.Helper()
	for _, level := range levels {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		rep, err := check(ctx, level)
		cancel()
		if err != nil {
			if declined(err) {
				continue
			}
			t.Fatalf("%s: %v\n%s", level, err, Format(h))
		}
		if rep.Verdict == report.Unknown {
			continue
		}
		if want := oracle(level); (rep.Verdict == report.Pass) != want {
			t.Fatalf("%s: checker %s, oracle %v\n%s\n%v", level, rep.Verdict, want, Format(h), rep.Anomalies)
		}
	}
}

// Explanation joins everything a report says about its anomalies: messages, the reasons of
// their cycles' steps and the alternatives ruled out, one per line.
func Explanation(rep *report.Report) string {
	var all []string
	for _, a := range rep.Anomalies {
		all = append(all, a.Message)
		for _, s := range a.Cycle {
			all = append(all, s.Why)
		}
		all = append(all, a.RuledOut...)
	}
	return strings.Join(all, "\n")
}

// ThroughRealtime is the test of the route a checker takes when its dependency analysis
// refuses a predicate history at level (deps.Refused): on n GenPred histories (seeds from
// stream), check must agree with oracle wherever it decides, a pass through the real-time
// level rt must hold there too, and the route must be taken both ways at least once (at
// least ten passes through rt, and some unknown verdict naming rt's failure). check runs
// the level with the bound that makes the analysis refuse.
func ThroughRealtime(t *testing.T, n int, stream uint64, level, rt anomaly.Level, check func(*history.History) *report.Report, oracle func(*history.History, anomaly.Level) bool) {
	t.Helper()
	through, unknown, noted := 0, 0, 0
	has := func(notes []string, s string) bool {
		return slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, s) })
	}
	for seed := range uint64(n) {
		h := GenPred(rand.New(rand.NewPCG(seed, stream)))
		want := oracle(h, level)
		rep := check(h)
		switch {
		case rep.Verdict == report.Unknown:
			unknown++
			if has(rep.Notes, "which real time decides here, does not hold") {
				noted++
			}
		case (rep.Verdict == report.Pass) != want:
			t.Fatalf("seed %d: %s, oracle says pass=%v\n%s\n%v", seed, rep.Verdict, want, Format(h), rep.Notes)
		case has(rep.Notes, "passed by passing "+rt.String()):
			if !oracle(h, rt) {
				t.Fatalf("seed %d: passed through %s, which the oracle says does not hold\n%s", seed, rt, Format(h))
			}
			through++
		}
	}
	t.Logf("%d passed through %s, %d unknown (%d of them failing there)", through, rt, unknown, noted)
	if noted == 0 {
		t.Error("no unknown verdict says the real-time level failed: that branch is not exercised")
	}
	if through < 10 {
		t.Errorf("only %d histories passed through %s: the route is not exercised", through, rt)
	}
}
