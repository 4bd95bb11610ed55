package deps

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/histtest"
)

// extracted is a Deps as BuildContext has it just before expanding the predicates.
func extracted(t *testing.T, h *history.History, o Options) *Deps {
	t.Helper()
	n := len(h.Txns)
	d := &Deps{H: h, Opts: o, N: n, Init: int32(n)}
	d.Status = make([]Status, n)
	d.Writes = make([][]Write, n)
	d.ReadsOf = make([][]int32, n)
	d.intBad = make([]bool, n)
	for i := range h.Txns {
		if h.Txns[i].Outcome == history.OutcomeAborted {
			continue
		}
		if err := d.extract(int32(i), &h.Txns[i]); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// expandBoth expands the predicates of h with the scan and with the reach index and returns
// the two results as text.
func expandBoth(t *testing.T, h *history.History, o Options) (scan, reach string, reads int) {
	t.Helper()
	ctx := context.Background()
	ds := extracted(t, h, o)
	vs := ds.newVersions()
	if err := ds.expandWith(ctx, vs, &scanSource{d: ds, vs: vs}); err != nil {
		t.Fatal(err)
	}
	dr := extracted(t, h, o)
	vr := dr.newVersions()
	if err := dr.expandWith(ctx, vr, dr.newReachSource(ctx, vr)); err != nil {
		t.Fatal(err)
	}
	return predText(ds), predText(dr), len(ds.Reads)
}

var undecidedExample = regexp.MustCompile(`e\.g\. .*?: the versions`)

// predText is d's reads (in a canonical order: the two sources may visit the rows of an op
// in different orders), findings and notes.
func predText(d *Deps) string {
	var rs []string
	for _, r := range d.Reads {
		rs = append(rs, fmt.Sprintf("T%03d op%03d k%03d kind%d v%d cands%v\n", r.Txn, r.Op, r.Key, r.Kind, r.Value, r.Cands))
	}
	slices.Sort(rs)
	s := strings.Join(rs, "")
	for t, ri := range d.ReadsOf {
		for _, i := range ri {
			if d.Reads[i].Txn != int32(t) {
				s += fmt.Sprintf("ReadsOf[%d] holds read %d of T%d\n", t, i, d.Reads[i].Txn)
			}
		}
	}
	for _, f := range d.Findings {
		s += fmt.Sprintf("finding %v %v %s\n", f.Kind, f.Txns, f.Message)
	}
	// The example an undecided note gives is the first row met, which depends on the order.
	notes := fmt.Sprintf("%q %q", d.Notes, d.Undecided)
	notes = undecidedExample.ReplaceAllString(notes, "e.g. ...: the versions")
	return s + fmt.Sprintf("partial %v notes %s\n", d.Partial, notes)
}

// genReach makes a random history for the reach index: many overlapping transactions over
// a few rows, integer timestamps from a small range (so ties between begins and ends are
// common), row images with two fields, partial images, absent rows, values that are not
// images, aborted and unknown outcomes, transactions without an interval, times near zero or
// far below it, and rows a predicate returned at random.
func genReach(rng *rand.Rand) *history.History {
	b := history.NewBuilder()
	nk := 2 + rng.IntN(6)
	keys := make([]history.Key, nk)
	for i := range keys {
		keys[i] = b.StrKey(fmt.Sprintf("k%d", i))
	}
	fields := []string{"v1", "v2"}
	image := func() history.Value {
		switch rng.IntN(12) {
		case 0:
			return history.Nil
		case 1:
			return b.StrValue(fmt.Sprintf("%s=%d", fields[rng.IntN(2)], rng.IntN(6))) // partial
		case 2:
			return b.StrValue("not an image")
		}
		return b.StrValue(fmt.Sprintf("v1=%d,v2=%d", rng.IntN(6), rng.IntN(6)))
	}
	switch rng.IntN(3) {
	case 0:
		b.SetInitial(b.StrValue("v1=0,v2=0"))
	case 1:
		b.SetInitial(image())
	}
	span := int64(10 + rng.IntN(60))
	// Times around zero or far below it, too: the unbounded intervals of unknown outcomes
	// and of transactions without one must not overflow the index's arithmetic.
	origin := []int64{0, -span / 2, math.MinInt64 / 2}[rng.IntN(3)]
	nt := 2 + rng.IntN(25)
	for i := range nt {
		s := b.Session(history.Int(int64(rng.IntN(4))))
		outcome := history.OutcomeCommitted
		switch rng.IntN(8) {
		case 0:
			outcome = history.OutcomeAborted
		case 1:
			outcome = history.OutcomeUnknown
		}
		b.BeginTxn(s, history.Str(fmt.Sprintf("T%d", i+1)), outcome)
		begin := origin + rng.Int64N(span)
		end := begin + rng.Int64N(1+span/3)
		if rng.IntN(10) == 0 {
			end = begin + rng.Int64N(span) // a long one
		}
		b.Current().Time, b.Current().HasTime = history.Interval{Begin: begin, End: end}, rng.IntN(12) != 0 // some without an interval
		for range 1 + rng.IntN(4) {
			k := keys[rng.IntN(nk)]
			switch rng.IntN(7) {
			case 0:
				b.Write(k, image())
			case 1:
				b.Delete(k)
			case 2:
				b.Read(k, image())
			default:
				f := fields[rng.IntN(2)]
				lo := int64(rng.IntN(6))
				hi := lo + int64(rng.IntN(3))
				pr := history.Predicate{Expr: fmt.Sprintf("%d <= %s <= %d", lo, f, hi), Field: history.Str(f), Lo: lo, Hi: hi, IsRange: rng.IntN(15) != 0}
				var rows []history.Row
				write := rng.IntN(2) == 0
				for _, k := range keys {
					if rng.IntN(3) != 0 {
						continue
					}
					rows = append(rows, history.Row{Key: k, Value: image(), Match: rng.IntN(6) != 0})
				}
				if write {
					b.PredWrite(history.PredOp{Pred: pr, Rows: rows})
				} else {
					b.PredRead(history.PredOp{Pred: pr, Rows: rows})
				}
			}
		}
		b.EndTxn()
	}
	h, err := b.Build()
	if err != nil {
		panic(err)
	}
	return h
}

// TestReachIndexMatchesScan: with real time, the reach index (pred_reach.go) must give
// exactly the reads, candidates, findings and notes of the scan over every version.
func TestReachIndexMatchesScan(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	reads, withSkew := 0, 0
	for seed := range n {
		rng := rand.New(rand.NewPCG(uint64(seed), 17))
		var h *history.History
		if seed%4 == 0 {
			h = histtest.GenPred(rng)
		} else {
			h = genReach(rng)
		}
		o := Options{Realtime: true, Session: seed%2 == 0}
		if seed%3 == 0 {
			o.Skew = rng.Int64N(5)
			withSkew++
		}
		scan, reach, nr := expandBoth(t, h, o)
		if scan != reach {
			t.Fatalf("seed %d (%+v): the reach index differs from the scan\n%s\nscan:\n%s\nreach:\n%s", seed, o, histtest.Format(h), scan, reach)
		}
		reads += nr
	}
	if reads < n {
		t.Errorf("only %d reads in %d histories: the generator makes too few predicate ops", reads, n)
	}
	t.Logf("%d histories (%d with skew), %d reads", n, withSkew, reads)
}

// TestReachPrunes: the index leaves out versions real time rules out, so a row whose only
// matching version is out of reach gets no read, and one in reach does.
func TestReachPrunes(t *testing.T) {
	b := history.NewBuilder()
	x, y := b.StrKey("x"), b.StrKey("y")
	b.SetInitial(b.StrValue("v1=0"))
	at := func(begin, end int64) {
		b.Current().Time, b.Current().HasTime = history.Interval{Begin: begin, End: end}, true
	}
	s := b.Session(history.Int(1))
	// T1 writes x=5 and y=5 early; T2 overwrites both with 0 before T3 begins; T4 writes
	// y=5 concurrently with T3.
	b.BeginTxn(s, history.Str("T1"), history.OutcomeCommitted)
	at(0, 1)
	b.Write(x, b.StrValue("v1=5"))
	b.Write(y, b.StrValue("v1=5"))
	b.EndTxn()
	b.BeginTxn(s, history.Str("T2"), history.OutcomeCommitted)
	at(2, 3)
	b.Write(x, b.StrValue("v1=0"))
	b.Write(y, b.StrValue("v1=0"))
	b.EndTxn()
	b.BeginTxn(b.Session(history.Int(2)), history.Str("T3"), history.OutcomeCommitted)
	at(10, 20)
	b.PredRead(history.PredOp{Pred: history.Predicate{Expr: "v1 = 5", Field: history.Str("v1"), Lo: 5, Hi: 5, IsRange: true}})
	b.EndTxn()
	b.BeginTxn(b.Session(history.Int(3)), history.Str("T4"), history.OutcomeCommitted)
	at(15, 25)
	b.Write(y, b.StrValue("v1=5"))
	b.EndTxn()
	h, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := Build(h, Options{Realtime: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range d.Reads {
		if r.Kind == ReadPredMiss {
			got = append(got, fmt.Sprintf("%v:%v", h.Key(r.Key), r.Cands))
		}
	}
	// x: T1's x=5 was overwritten by T2 before T3 began: no read. y: T4's y=5 is in reach,
	// so T3 read T2's y=0 (T1's is out of reach, and so is the initial state).
	if want := []string{"y:[1]"}; !slices.Equal(got, want) {
		t.Errorf("miss reads %v, want %v", got, want)
	}
	scan, reach, _ := expandBoth(t, h, Options{Realtime: true})
	if scan != reach {
		t.Errorf("scan and index differ:\n%s\n%s", scan, reach)
	}
}

// TestBuckets checks the bucket set against a plain slice: adds, range visits that drop
// entries, and the two-level search across many empty words.
func TestBuckets(t *testing.T) {
	type step struct {
		add    bool
		r      int
		e      entry
		lo, hi int
		cut    int64
	}
	for seed := range 200 {
		rng := rand.New(rand.NewPCG(uint64(seed), 3))
		n := 1 + rng.IntN(20000)
		// Draw the steps first: a bucket's capacity is the number of adds into it.
		var steps []step
		caps := make([]int32, n)
		for i := range 300 {
			if rng.IntN(2) == 0 {
				r := rng.IntN(n)
				if rng.IntN(3) == 0 {
					r = n - 1 - rng.IntN(min(n, 70))
				}
				steps = append(steps, step{add: true, r: r, e: entry{history.Key(i), int32(r), rng.Int64N(10)}})
				caps[r]++
				continue
			}
			lo := rng.IntN(n)
			steps = append(steps, step{lo: lo, hi: lo + rng.IntN(n-lo+1), cut: rng.Int64N(10)})
		}
		b := newBuckets(caps)
		ref := make([][]entry, n)
		for i, st := range steps {
			if st.add {
				b.add(st.r, st.e)
				ref[st.r] = append(ref[st.r], st.e)
				continue
			}
			var got, want []entry
			b.visit(st.lo, st.hi, func(e entry) bool {
				got = append(got, e)
				return e.sup >= st.cut
			})
			for r := st.lo; r < st.hi; r++ {
				want = append(want, ref[r]...)
				ref[r] = slices.DeleteFunc(ref[r], func(e entry) bool { return e.sup < st.cut })
			}
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d step %d: visit(%d, %d) saw %v, want %v", seed, i, st.lo, st.hi, got, want)
			}
		}
		for r := range n {
			if (b.next(r) == r) != (len(ref[r]) > 0) {
				t.Fatalf("seed %d: bucket %d non-empty %v, next says %d", seed, r, len(ref[r]) > 0, b.next(r))
			}
		}
	}
}

// TestPredBudget: a predicate expansion beyond its memory bound stops with ErrUnsupported
// (the checkers report verdict unknown), and within it builds.
func TestPredBudget(t *testing.T) {
	h := histtest.MustParse(`init 0
s1: T1 w(x,1) w(y,1) w(z,1)
s2: T2 w(x,2) w(y,2) w(z,2)
s3: T3 pr("v in [1, 1]", [])
`)
	if _, err := Build(h, Options{}); err != nil {
		t.Fatalf("within the bound: %v", err)
	}
	// T3 misses x, y and z, each a read with two candidates (the initial state and T2):
	// 3 reads of readWords+2 words. Below 3*readWords the count before the expansion
	// (missFloor) stops it; above, the expansion itself does, at the third read.
	for _, c := range []struct {
		bound int
		says  string
	}{
		{2 * readWords, "at least 3 rows not returned"},
		{3*readWords + 4, "2 rows not returned so far"},
	} {
		_, err := Build(h, Options{PredWords: c.bound})
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), c.says) {
			t.Fatalf("beyond the bound %d: err %v, want ErrUnsupported saying %q", c.bound, err, c.says)
		}
	}
	if _, err := Build(h, Options{PredWords: 3*readWords + 6}); err != nil {
		t.Fatalf("at the bound: %v", err)
	}
}

// cancelAfter is a context whose Err reports cancellation after n calls.
type cancelAfter struct {
	context.Context
	n *int
}

func (c cancelAfter) Err() error {
	if *c.n--; *c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestReachCancelled: when the sweep is cancelled part way, the expansion returns the
// cancellation rather than reads with rows missing.
func TestReachCancelled(t *testing.T) {
	for seed := range 50 {
		h := genReach(rand.New(rand.NewPCG(uint64(seed), 5)))
		for n := 0; n < 4; n++ {
			d := extracted(t, h, Options{Realtime: true})
			if len(d.predOps) == 0 {
				break
			}
			calls := n
			ctx := cancelAfter{context.Background(), &calls}
			vs := d.newVersions()
			if err := d.expandWith(ctx, vs, d.newReachSource(ctx, vs)); err == nil {
				t.Fatalf("seed %d: cancelled after %d checks, the expansion returned no error", seed, n)
			}
		}
	}
}

// TestMissFloor: without real time, the count missFloor stops the expansion on must never
// exceed the reads of rows not returned that the expansion makes (else it could stop a
// history that fits), and it must count something.
func TestMissFloor(t *testing.T) {
	n := 5000
	if testing.Short() {
		n = 500
	}
	sum, exact := 0, 0
	for seed := range n {
		rng := rand.New(rand.NewPCG(uint64(seed), 23))
		var h *history.History
		if seed%4 == 0 {
			h = histtest.GenPred(rng)
		} else {
			h = genReach(rng)
		}
		o := Options{Session: seed%2 == 0}
		d := extracted(t, h, o)
		floor, err := d.missFloor(context.Background(), d.newVersions(), math.MaxInt)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.expandPreds(context.Background()); err != nil {
			t.Fatal(err)
		}
		misses := 0
		for _, r := range d.Reads {
			if r.Kind == ReadPredMiss {
				misses++
			}
		}
		if floor > misses {
			t.Fatalf("seed %d: floor %d > %d reads of rows not returned\n%s", seed, floor, misses, histtest.Format(h))
		}
		sum += floor
		if floor == misses && floor > 0 {
			exact++
		}
	}
	if sum == 0 || exact == 0 {
		t.Errorf("the floor counted %d rows in %d histories, exactly in %d: the test shows nothing", sum, n, exact)
	}
	t.Logf("%d histories: the floor counted %d rows, exactly in %d", n, sum, exact)
}

// TestUnsupportedNotes: the notes for a refused history give the reason, and point at the
// real-time level only when the level ignores the client time the history records.
func TestUnsupportedNotes(t *testing.T) {
	timed := histtest.MustParse("s1: T1 w(x,1) c @[1,2]\ns2: T2 pr(\"v in [1, 1]\", []) c @[3,4]\n")
	untimed := histtest.MustParse("s1: T1 w(x,1)\ns2: T2 pr(\"v in [1, 1]\", [])\n")
	err := fmt.Errorf("%w: too big", ErrUnsupported)
	for _, c := range []struct {
		name  string
		h     *history.History
		o     Options
		hints bool
	}{
		{"timed, level without real time", timed, Options{}, true},
		{"timed, level with real time", timed, Options{Realtime: true}, false},
		{"untimed", untimed, Options{}, false},
	} {
		notes := UnsupportedNotes(err, c.h, c.o, "strict-serializable")
		if len(notes) == 0 || !strings.Contains(notes[0], "too big") {
			t.Errorf("%s: notes %q do not give the reason", c.name, notes)
		}
		if hinted := len(notes) == 2 && strings.Contains(notes[1], "--level strict-serializable"); hinted != c.hints {
			t.Errorf("%s: notes %q, want the real-time hint: %v", c.name, notes, c.hints)
		}
	}
}
