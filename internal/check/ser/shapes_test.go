package ser

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/certify"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// shapeHistory builds a small history of the shapes that made the checker's cost quadratic
// (issue #26), mixed: read-modify-writes of a tiny value domain (mostly x=1 read and
// written again, so that reads have many candidate writers and closed sets of readers
// form), keys that are only written (blind writes no read may read), and a few aborted
// or unknown outcomes. nt transactions, intervals serial per session.
func shapeHistory(seed uint64, nt int) *history.History {
	r := rand.New(rand.NewPCG(seed, 26))
	b := history.NewBuilder()
	b.SetInitial(b.IntValue(0))
	read := []history.Key{b.IntKey(0), b.IntKey(1)}[:1+r.IntN(2)]
	blind := []history.Key{b.IntKey(10), b.IntKey(11)}
	ns := 1 + r.IntN(nt)
	sess := make([]history.SessionID, ns)
	for i := range sess {
		sess[i] = b.Session(history.Int(int64(i)))
	}
	val := func() history.Value { return b.IntValue([]int64{1, 1, 1, 2, 0}[r.IntN(5)]) }
	clock := make([]int64, ns)
	for i := range nt {
		out := history.OutcomeCommitted
		switch r.IntN(12) {
		case 0:
			out = history.OutcomeAborted
		case 1:
			out = history.OutcomeUnknown
		}
		s := r.IntN(ns)
		b.BeginTxn(sess[s], history.Int(int64(i+1)), out)
		begin := clock[s] + int64(r.IntN(5))
		end := begin + int64(r.IntN(8))
		clock[s] = end + 1
		b.Current().Time = history.Interval{Begin: begin, End: end}
		b.Current().HasTime = true
		k := read[r.IntN(len(read))]
		if r.IntN(6) != 0 {
			b.Read(k, val())
		}
		if r.IntN(6) != 0 {
			b.Write(k, val())
		}
		if r.IntN(2) == 0 {
			b.Write(blind[r.IntN(len(blind))], val())
		}
		if r.IntN(4) == 0 {
			b.Read(read[r.IntN(len(read))], val())
		}
		b.EndTxn()
	}
	h, err := b.Build()
	if err != nil {
		panic(err)
	}
	return h
}

// TestCheckShapesOracle pins the shortcuts for these shapes (closed sets of reads decided
// in deps, no write-order constraints for keys no read may read) to the brute-force
// oracle at the three levels, with and without the basic checks, on histories of 6 to 8
// transactions (closed sets are reported from 6 members on, smaller ones are left to the
// pipeline). It also counts the closed-set findings, so that the test is known to reach
// them.
func TestCheckShapesOracle(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 400
	}
	disagree, closed := 0, 0
	for seed := uint64(1); seed <= uint64(n); seed++ {
		h := shapeHistory(seed, 6+int(seed%3))
		for li, level := range allLevels {
			rep, err := Check(context.Background(), h, level, Options{Shortcuts: skipIf((seed+uint64(li))%2 == 0, certify.SkipBasic)})
			if err != nil {
				t.Fatalf("seed %d: Check(%s): %v", seed, level, err)
			}
			for _, a := range rep.Anomalies {
				if strings.Contains(a.Message, "each read a value that only others among them wrote") {
					closed++
				}
			}
			want := oracle(h, level, 0)
			if got := rep.Verdict == report.Pass; got != want || rep.Verdict == report.Unknown {
				disagree++
				if disagree <= 5 {
					t.Errorf("seed %d, %s: Check = %v, oracle = %v\n%s\n%v", seed, level, rep.Verdict, want, histtest.Format(h), rep.Anomalies)
				}
			}
		}
	}
	t.Logf("closed-set findings: %d", closed)
	if closed == 0 {
		t.Errorf("no history reached a closed set of reads: the generator no longer tests that shortcut")
	}
	if disagree > 0 {
		t.Errorf("%d disagreements", disagree)
	}
}
