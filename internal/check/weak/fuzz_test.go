package weak_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/internal/check/weak"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// refused reports whether rep is Unknown for a reason the search has no part in: deps
// refused the history, or its predicates could only partly be modelled.
func refused(rep *report.Report) bool {
	return slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "cannot decide this history") }) ||
		slices.ContainsFunc(rep.Applied(), func(c report.Caveat) bool { return c.Kind == report.CaveatPartial })
}

// FuzzCheck checks read committed, read atomic and causal consistency against the
// brute-force oracles on small histories in the test DSL, with the guess and with the search
// alone; neither may leave a history Unknown unless deps refuses it (an element appended
// twice, say) or its predicates are only partly modelled.
func FuzzCheck(f *testing.F) {
	for _, s := range histtest.FuzzSeeds() {
		f.Add(s)
	}
	f.Add("s1: T1 a(x,1) a(y,1) c\ns2: T2 r(y,[1]) a(x,2) c\ns3: T3 r(x,[2]) c")
	f.Add("init 0\ns1: T1 w(x,1) r(y,2) c\ns2: T2 w(y,2) r(x,1) c")
	f.Add("init 0\ns1: T1 w(x,1) w(y,1) c\ns2: T2 r(x,1) r(y,0) c")
	f.Add("init 0\ns1: T1 w(x,1) c\ns2: T2 r(x,1) w(y,1) c\ns3: T3 r(y,1) r(x,0) c")
	f.Add("init 0\ns1: T1 w(x,1) r(y,1) c\ns2: T2 w(x,1) r(y,1) c\ns3: T3 r(x,1) w(y,1) c")
	f.Add("init 0\ns1: T1 w(x,12) w(y,1) c\ns2: T2 w(x,12) w(y,2) info\ns3: T3 r(x,12) r(y,0) c")
	f.Fuzz(func(t *testing.T, src string) {
		h, ok := histtest.ParseSmall(src, 6, 30)
		if !ok {
			return
		}
		for _, o := range []weak.Options{{}, {SearchOnly: true}} {
			histtest.AgreeWithOracle(t, h, weak.Levels,
				func(ctx context.Context, l anomaly.Level) (*report.Report, error) {
					rep, err := weak.Check(ctx, h, l, o)
					if err == nil && rep.Verdict == report.Unknown && ctx.Err() == nil && !refused(rep) {
						t.Fatalf("%s: unknown (%+v): %v\n%s", l, o, rep.Notes, histtest.Format(h))
					}
					return rep, err
				},
				func(l anomaly.Level) bool { return oracleAt(h, l) },
				func(error) bool { return false })
		}
	})
}
