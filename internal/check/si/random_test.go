package si_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/certify"
	"github.com/isovet/isovet/internal/check/si"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// arbitrary builds a small history with no execution behind it: random reads and writes
// over a three-value domain (duplicates everywhere, initial value 0), random outcomes,
// client intervals, and some reads naming their source explicitly. Most are not SI.
func arbitrary(seed uint64) *history.History {
	r := rand.New(rand.NewPCG(seed, 0x5e))
	b := history.NewBuilder()
	b.SetInitial(b.IntValue(0))
	keys := make([]history.Key, 1+r.IntN(3))
	for i := range keys {
		keys[i] = b.IntKey(int64(i))
	}
	sess := make([]history.SessionID, 1+r.IntN(3))
	for i := range sess {
		sess[i] = b.Session(history.Int(int64(i)))
	}
	type write struct {
		t  history.TxnID
		op int32
		k  history.Key
	}
	var writes []write
	clock := make([]int64, len(sess))
	for i := range 2 + r.IntN(5) {
		s := r.IntN(len(sess))
		out := history.OutcomeCommitted
		switch r.IntN(8) {
		case 0:
			out = history.OutcomeAborted
		case 1:
			out = history.OutcomeUnknown
		}
		t := b.BeginTxn(sess[s], history.Int(int64(i+1)), out)
		begin := clock[s] + int64(r.IntN(4))
		end := begin + int64(r.IntN(6))
		clock[s] = end + 1
		b.Current().Time = history.Interval{Begin: begin, End: end}
		b.Current().HasTime = true
		for j := range 1 + r.IntN(4) {
			k := keys[r.IntN(len(keys))]
			v := b.IntValue(int64(r.IntN(3)))
			if r.IntN(2) == 0 {
				writes = append(writes, write{t, int32(j), k})
				b.Write(k, v)
				continue
			}
			if r.IntN(4) == 0 && len(writes) > 0 {
				if w := writes[r.IntN(len(writes))]; w.k == k && w.t != t {
					b.ReadFrom(k, v, history.Src{Kind: history.SrcTxn, Txn: w.t, Op: w.op})
					continue
				}
			}
			b.Read(k, v)
		}
		b.EndTxn()
	}
	h, err := b.Build()
	if err != nil {
		panic(err)
	}
	return h
}

// TestDifferentialArbitrary compares the checker with the oracle on 6,000 arbitrary
// histories at the three SI levels.
func TestDifferentialArbitrary(t *testing.T) {
	t.Parallel()
	n := 6000
	if testing.Short() {
		n = 600
	}
	var pass, fail int
	for seed := uint64(0); seed < uint64(n); seed++ {
		h := arbitrary(seed)
		for li, l := range []anomaly.Level{anomaly.SnapshotIsolation, anomaly.StrongSessionSI, anomaly.StrongSI} {
			rep, err := si.Check(context.Background(), h, l, si.Options{Shortcuts: skipIf((seed+uint64(li))%2 == 0, certify.SkipBasic)})
			if err != nil {
				t.Fatalf("seed %d: Check(%s): %v", seed, l, err)
			}
			want := oracle(h, l)
			if got := rep.Verdict == report.Pass; got != want || rep.Verdict == report.Unknown {
				t.Fatalf("seed %d: Check(%s) = %v, oracle says pass=%v\n%s\nanomalies: %+v", seed, l, rep.Verdict, want, histtest.Format(h), rep.Anomalies)
			}
			if want {
				pass++
			} else {
				fail++
			}
		}
	}
	t.Logf("%d checks: %d pass, %d fail", 3*n, pass, fail)
}

// TestPredicateOracle compares the checker with the brute-force oracle on random histories
// with predicate reads and writes over a small relation.
func TestPredicateOracle(t *testing.T) {
	n := 5000
	if testing.Short() {
		n = 500
	}
	counts := map[bool]int{}
	certified, rowCertified := 0, 0 // passes on the strict serializability and row certificates
	for seed := range n {
		h := histtest.GenPred(rand.New(rand.NewPCG(uint64(seed), 7)))
		for _, level := range []anomaly.Level{anomaly.SnapshotIsolation, anomaly.StrongSessionSI, anomaly.StrongSI} {
			want := oracle(h, level)
			// Every path: the row certificate first (the default), then the strict
			// serializability certificate, and the SI pipeline alone.
			for _, o := range []si.Options{{}, {Shortcuts: certify.SkipRows | certify.SkipSnapshots}, {Shortcuts: certify.SkipShortcuts}} {
				rep, err := si.Check(context.Background(), h, level, o)
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if rep.Verdict == report.Unknown || (rep.Verdict == report.Pass) != want {
					t.Fatalf("seed %d, %s (%+v): checker %s, oracle %v\n%s\n%v", seed, level, o, rep.Verdict, want, histtest.Format(h), rep.Anomalies)
				}
				if slices.ContainsFunc(rep.Notes, func(s string) bool { return strings.Contains(s, "strict-serializable, which implies") }) {
					if o.Shortcuts.Has(certify.SkipTime) {
						t.Fatalf("seed %d: the certificate ran with SkipTime", seed)
					}
					certified++
				}
				if slices.ContainsFunc(rep.Notes, func(s string) bool { return strings.Contains(s, "replayed on whole rows") }) {
					if o.Shortcuts.Has(certify.SkipRows) {
						t.Fatalf("seed %d: the row certificate ran with %+v", seed, o)
					}
					rowCertified++
				}
			}
			counts[want]++
		}
	}
	t.Logf("%d pass (%d on the strict serializability certificate, %d on the row certificate), %d fail", counts[true], certified, rowCertified, counts[false])
	if counts[true] < n/10 || counts[false] < n/10 || certified < counts[true]/4 || rowCertified < counts[true]/2 {
		t.Errorf("generator is lopsided, or a certificate never applies: %v, %d certified, %d by rows", counts, certified, rowCertified)
	}
}
