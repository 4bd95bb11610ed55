package ser

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/certify"
	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// fastPasses runs the strict fast path alone (no fallback) on h.
func fastPasses(t *testing.T, h *history.History, skew int64) (bool, certify.Stats) {
	t.Helper()
	d, err := deps.Build(h, deps.Options{Session: true, Realtime: true, Skew: skew, NoEdges: true})
	if err != nil {
		t.Fatal(err)
	}
	p, ok, err := certify.Strict(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return ok, p.Stats
}

// TestStrictFastOracle: on small histories the fast path alone never passes a history the
// brute-force oracle rejects (it may give up; then the general pipeline decides), and it
// does pass most of those the oracle accepts. Clock skew is varied too.
func TestStrictFastOracle(t *testing.T) {
	n := 6000
	if testing.Short() {
		n = 600
	}
	var passed, accepted, rejected int
	for seed := uint64(1); seed <= uint64(n); seed++ {
		o := histtest.GenOptions{
			Txns:        3 + int(seed%6),
			Sessions:    2 + int(seed%3),
			Keys:        1 + int(seed%3),
			OpsPerTxn:   1 + int(seed%4),
			Concurrency: 1 + int(seed%3),
			DupRatio:    []float64{0, 0, 0.3}[seed%3],
			AbortRatio:  []float64{0, 0.15}[seed%2],
			Perturb:     []float64{0, 0.2, 0.5}[(seed/3)%3],
			Intervals:   true,
		}
		h := histtest.Gen(seed, o)
		skew := []int64{0, 0, 1, 3}[(seed/2)%4]
		want := oracle(h, anomaly.StrictSerializable, skew)
		got, fs := fastPasses(t, h, skew)
		if want {
			accepted++
		} else {
			rejected++
		}
		if got {
			passed++
			if !want {
				t.Fatalf("seed %d (skew %d): the fast path passed a history that is not strict serializable (%+v)\n%s", seed, skew, fs, histtest.Format(h))
			}
		}
	}
	t.Logf("oracle: %d accepted, %d rejected; the fast path passed %d", accepted, rejected, passed)
	if rejected == 0 || passed < accepted/2 {
		t.Fatalf("generator too narrow or fast path too timid: %d accepted, %d rejected, %d passed by the fast path", accepted, rejected, passed)
	}
}

// TestStrictFastDifferential compares the strict level with and without the fast path on
// larger random interval histories (snapshot-isolated executions with write skew, aborts,
// perturbed reads, clock skew): the verdicts must agree, and the fast path must decide most
// passes on its own.
func TestStrictFastDifferential(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 150
	}
	var pass, fail, fast, fallbacks int
	why := map[string]int{}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		o := histtest.GenOptions{
			Txns:        20 + int(seed%7)*20,
			Sessions:    2 + int(seed%6),
			Keys:        2 + int(seed%9)*3,
			OpsPerTxn:   1 + int(seed%5),
			Concurrency: 1 + int(seed%4),
			AbortRatio:  []float64{0, 0.1}[seed%2],
			Perturb:     []float64{0, 0, 0.01, 0.05}[(seed/2)%4],
			Intervals:   true,
		}
		if seed%5 == 0 { // hot keys: many overlapping writers of one to three keys
			o.Sessions, o.Keys, o.Concurrency, o.ReadRatio = 8, 1+int(seed%3), 4+int(seed%5), []float64{0.2, 0.5}[seed%2]
		}
		h := histtest.Gen(seed, o)
		skew := []int64{0, 0, 2}[(seed/3)%3]
		opts := Options{ClockSkew: time.Duration(skew)}
		got := check(t, h, anomaly.StrictSerializable, opts)
		opts.Shortcuts = certify.SkipShortcuts
		want := check(t, h, anomaly.StrictSerializable, opts)
		if got.Verdict != want.Verdict {
			t.Fatalf("seed %d (skew %d): with the fast path %v, without %v\n%s", seed, skew, got.Verdict, want.Verdict, histtest.Format(h))
		}
		switch want.Verdict {
		case report.Pass:
			pass++
			ok, fs := fastPasses(t, h, skew)
			if ok {
				fast++
			} else {
				fallbacks++
				why[fs.Why]++
			}
		case report.Fail:
			fail++
		}
	}
	t.Logf("%d pass (%d by the fast path alone; fallbacks: %v), %d fail", pass, fast, why, fail)
	if pass == 0 || fail == 0 || fast < pass*9/10 {
		t.Fatalf("generator too narrow or fast path too timid: %d pass, %d fail, %d by the fast path", pass, fail, fast)
	}
}

// TestStrictFastVbox: Vbox's valid 10k histories are decided by the fast path alone (a
// regression that sent them to the general pipeline would keep the verdict but lose the
// speed of issue #4).
func TestStrictFastVbox(t *testing.T) {
	for _, name := range []string{"blindw_wr_10000", "blindw_rh_10000", "blindw_wh_10000", "ctwitter_10000"} {
		h, _, err := format.Open(sharedPath(t, "bench/vbox", name), format.Auto, format.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ok, fs := fastPasses(t, h, 0)
		if !ok {
			t.Errorf("%s: the fast path gave up: %s (%+v)", name, fs.Why, fs)
		}
		t.Logf("%s: %d explicit edges, %d write-order pairs, %d pruned, %d chosen greedily", name, fs.Edges, fs.Constraints, fs.Pruned, fs.Greedy)
	}
}

// TestStrictFastPredOracle: on random predicate histories (predicate reads and writes,
// inserts, deletes, client intervals) the fast path alone never passes a history the
// brute-force oracle rejects at the strict level, and it decides most of those the oracle
// accepts, including some whose predicate reads have several candidates.
func TestStrictFastPredOracle(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	var accepted, rejected, passed, multi, skipped int
	for seed := range n {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		h := histtest.GenPred(rng)
		d, err := deps.Build(h, deps.Options{Session: true, Realtime: true, NoEdges: true})
		if err != nil {
			t.Fatal(err)
		}
		if d.Partial || len(d.Findings) > 0 {
			skipped++
			continue
		}
		want := oracle(h, anomaly.StrictSerializable, 0)
		p, got, err := certify.Strict(context.Background(), d)
		fs := p.Stats
		if err != nil {
			t.Fatal(err)
		}
		if want {
			accepted++
		} else {
			rejected++
		}
		if got {
			passed++
			if !want {
				t.Fatalf("seed %d: the fast path passed a predicate history that is not strict serializable (%+v)\n%s", seed, fs, histtest.Format(h))
			}
			for _, r := range d.Reads {
				if len(r.Cands) > 1 && d.Status[r.Txn] == deps.Committed {
					multi++
					break
				}
			}
		}
	}
	t.Logf("oracle: %d accepted, %d rejected (%d with findings or partial, not asked); the fast path passed %d, %d of them with a read of several candidates", accepted, rejected, skipped, passed, multi)
	if rejected == 0 || passed < accepted*3/4 || multi == 0 {
		t.Fatalf("generator too narrow or fast path too timid: %d accepted, %d rejected, %d passed (%d with several candidates)", accepted, rejected, passed, multi)
	}
}
