package deps

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

func mustBuild(t *testing.T, src string, o Options) *Deps {
	t.Helper()
	d, err := Build(histtest.MustParse(src), o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func hasEdge(es []Edge, from, to int32, rel report.Rel) bool {
	for _, e := range es {
		if e.From == from && e.To == to && e.Rel == rel {
			return true
		}
	}
	return false
}

func TestCandidatesAndFindings(t *testing.T) {
	d := mustBuild(t, "init 0\ns1: T1 w(x,1)\ns2: T2 w(x,1)\ns3: T3 r(x,1) r(y,0) r(z,7)\ns4: T4 w(w,5) abort\ns5: T5 r(w,5)", Options{})
	got := map[history.Key][]int32{}
	for _, r := range d.Reads {
		if r.Txn == 2 {
			got[r.Key] = r.Cands
		}
	}
	h := d.H
	key := func(s string) history.Key {
		for i, k := range h.Keys {
			if k.String() == s {
				return history.Key(i)
			}
		}
		t.Fatalf("no key %s", s)
		return 0
	}
	if c := got[key("x")]; len(c) != 2 {
		t.Errorf("x candidates %v, want T1 and T2", c)
	}
	if c := got[key("y")]; len(c) != 1 || c[0] != d.Init {
		t.Errorf("y candidates %v, want Init", c)
	}
	kinds := map[string]bool{}
	for _, f := range d.Findings {
		kinds[f.Kind.String()] = true
	}
	if !kinds["thin-air-read"] || !kinds["G1a"] {
		t.Errorf("findings %v, want thin-air-read and G1a", d.Findings)
	}
}

func TestUnknownOutcome(t *testing.T) {
	// T1 is read (only writer): committed. T2 is read by nobody: excluded. T3 may be read.
	d := mustBuild(t, "init 0\ns1: T1 w(x,1) info\ns2: T2 w(y,1) info\ns3: T3 w(z,1) info\ns4: T4 w(z,1)\ns5: T5 r(x,1) r(z,1)", Options{})
	if d.Status[0] != Committed || d.Status[1] != Excluded || d.Status[2] != Maybe {
		t.Errorf("statuses %v, want committed, excluded, maybe", d.Status[:3])
	}
}

func TestInitVersionNoSelfLoop(t *testing.T) {
	// T1 reads the initial x and overwrites it: rw edges to the other writer only.
	d := mustBuild(t, "init 0\ns1: T1 r(x,0) w(x,1)\ns2: T2 w(x,2)", Options{})
	for _, e := range d.Known {
		if e.From == e.To {
			t.Fatalf("self-loop %+v", e)
		}
	}
	if !hasEdge(d.Known, 0, 1, report.RW) {
		t.Errorf("missing T1 -rw-> T2 in %+v", d.Known)
	}
}

func TestTimeSuccs(t *testing.T) {
	// T1 ends at 10; T2 [20,30] and T3 [25,40] begin after and overlap; T4 begins after T2
	// ended: only T2 and T3 are minimal.
	d := mustBuild(t, "init 0\ns1: T1 @[0,10] w(x,1)\ns2: T2 @[20,30] w(x,2)\ns3: T3 @[25,40] w(x,3)\ns4: T4 @[50,60] w(x,4)\ns5: T5 @[11,12] r(x,1)", Options{Realtime: true, Session: true})
	got := d.TimeSuccs(0, d.Reads[0].Key)
	if len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("TimeSuccs = %v, want [T2 T3]", got)
	}
	if !hasEdge(d.Known, 4, 1, report.RW) || !hasEdge(d.Known, 4, 2, report.RW) {
		t.Errorf("missing rw edges from the reader of T1's x to T2 and T3")
	}
}

func TestListAppend(t *testing.T) {
	// T3 read [1 2 3]: T1's appends, then T2's; T2 directly follows T1.
	d := mustBuild(t, "s1: T1 a(x,1) a(x,2)\ns2: T2 a(x,3)\ns3: T3 r(x,[1,2,3])", Options{})
	synth := 0
	for _, r := range d.Reads {
		if r.Op < 0 {
			synth++
		}
	}
	if synth != 2 || len(d.Findings) != 0 {
		t.Errorf("synthetic reads %d (want 2: T1 after init, T2 after T1), findings %v", synth, d.Findings)
	}
	d = mustBuild(t, "s1: T1 a(x,1) a(x,2)\ns3: T3 r(x,[1])", Options{})
	if len(d.Findings) == 0 {
		t.Errorf("no findings, want G1b")
	}
	for _, f := range d.Findings {
		if f.Kind.String() != "G1b" {
			t.Errorf("finding %v, want G1b", f)
		}
	}
}

func TestBuildContextStops(t *testing.T) {
	h := histtest.MustParse(`s1: T1 w(x,1) pr("v in [0, 5]", [x=1])` + "\ns2: T2 pr(\"v in [0, 5]\", [])")
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stopped by the test")
	cancel(stop)
	if _, err := BuildContext(ctx, h, Options{}); !errors.Is(err, stop) {
		t.Fatalf("BuildContext on a cancelled context = %v, want %v", err, stop)
	}
	if _, err := BuildContext(context.Background(), h, Options{}); err != nil {
		t.Fatal(err)
	}
}

// TestWriteOf compares WriteOf with a scan, for transactions of a few to many writes.
func TestWriteOf(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 8, 9, 16, 17, 40} {
		ws := make([]Write, n)
		for i := range ws {
			ws[i] = Write{Key: history.Key(3 * i), Value: history.Value(i), Op: int32(i)}
		}
		d := &Deps{Writes: [][]Write{ws}}
		for k := history.Key(-1); k <= history.Key(3*n+1); k++ {
			got, ok := d.WriteOf(0, k)
			want, wok := Write{}, false
			for _, w := range ws {
				if w.Key == k {
					want, wok = w, true
				}
			}
			if got != want || ok != wok {
				t.Fatalf("n=%d: WriteOf(%d) = %v %v, want %v %v", n, k, got, ok, want, wok)
			}
		}
	}
}

// rtReach reports whether from reaches to through real-time edges, known or guarded (the
// time chain): from ended before to began, as deps reads client time.
func rtReach(d *Deps, from, to int32) bool {
	seen := map[int32]bool{from: true}
	stack := []int32{from}
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, e := range slices.Concat(d.Known, d.Guarded) {
			if e.From == u && e.Rel == report.RT && !seen[e.To] {
				if e.To == to {
					return true
				}
				seen[e.To] = true
				if int(e.To) >= d.N { // only through time nodes
					stack = append(stack, e.To)
				}
			}
		}
	}
	return false
}

// TestTimeUnknownOutcome: a transaction of unknown outcome keeps its real-time in-edges
// and has no out-edges (it may have committed after the client gave up), whether it is a
// choice (Maybe) or certainly committed; writers ordered after it by time are none.
func TestTimeUnknownOutcome(t *testing.T) {
	// T2 (info) is T4's only source of y: committed. T5 (info) may be T6's source of z.
	d := mustBuild(t, "init 0\ns1: T1 @[1,2] w(x,1)\ns2: T2 @[3,4] w(x,2) w(y,2) info\ns3: T3 @[5,6] w(x,3)\ns4: T4 @[7,8] r(y,2)\ns5: T5 @[3,4] w(z,5) info\ns6: T6 @[7,8] r(z,5)\ns7: T7 @[3,4] w(z,5)", Options{Realtime: true, Session: true})
	if d.Status[1] != Committed || d.Status[4] != Maybe {
		t.Fatalf("statuses %v, want T2 committed and T5 maybe", d.Status)
	}
	for _, u := range []int32{1, 4} {
		if !rtReach(d, 0, u) {
			t.Errorf("T1 does not precede T%d in real time; it ended before T%d began", u+1, u+1)
		}
		for v := range int32(d.N) {
			if rtReach(d, u, v) {
				t.Errorf("T%d (unknown outcome) precedes T%d in real time", u+1, v+1)
			}
			if d.Before(u, v) {
				t.Errorf("Before(T%d, T%d) = true for an unknown outcome", u+1, v+1)
			}
		}
		for _, w := range d.Writes[u] {
			if s := d.TimeSuccs(u, w.Key); len(s) != 0 {
				t.Errorf("TimeSuccs(T%d) = %v, want none", u+1, s)
			}
		}
	}
	if !rtReach(d, 0, 2) || !d.Before(0, 2) || !rtReach(d, 6, 3) {
		t.Errorf("real time among committed transactions lost")
	}
	if d.Untimed != 0 {
		t.Errorf("Untimed = %d, want 0", d.Untimed)
	}
}

// TestTimeMissingInterval: a transaction without a client interval has no real-time edge
// in or out and counts in Untimed if it takes part; with no interval at all, Build refuses.
func TestTimeMissingInterval(t *testing.T) {
	d := mustBuild(t, "init 0\ns1: T1 @[1,2] w(x,1)\ns2: T2 w(x,2)\ns3: T3 @[5,6] r(x,1)\ns4: T4 w(y,1) abort", Options{Realtime: true, Skew: 1})
	if d.Untimed != 1 {
		t.Errorf("Untimed = %d, want 1 (T2; T4 aborted)", d.Untimed)
	}
	for v := range int32(3) {
		if rtReach(d, 1, v) || rtReach(d, v, 1) || d.Before(1, v) || d.Before(v, 1) {
			t.Errorf("real-time order between T2 (no interval) and T%d", v+1)
		}
	}
	if s := d.TimeSuccs(0, d.Writes[0][0].Key); len(s) != 0 {
		t.Errorf("TimeSuccs(T1, x) = %v, want none (T2 has no interval)", s)
	}
	if !rtReach(d, 0, 2) {
		t.Errorf("T1 does not precede T3")
	}
	if _, err := Build(histtest.MustParse("s1: T1 w(x,1)\ns2: T2 r(x,1)"), Options{Realtime: true}); !errors.Is(err, ErrNoTime) {
		t.Errorf("Build without intervals: err = %v, want ErrNoTime", err)
	}
}

// TestPredicatesWithListsUnsupported: predicates range over rows, so a history that also
// has lists is declined (ErrUnsupported), not checked as if a list were a row holding its
// last element.
func TestPredicatesWithListsUnsupported(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		`s1: T1 a(x,3) c; s2: T2 pr("v > 2", []) c`,
		`s1: T1 r(x,[]) c; s2: T2 pr("v > 2", []) c`,
	} {
		_, err := Build(histtest.MustParse(src), Options{})
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "predicates are checked over rows only") {
			t.Errorf("Build(%q) = %v, want ErrUnsupported for predicates with lists", src, err)
		}
	}
}

// TestDuplicateAppendsUnsupported: an element appended to a key twice (by two transactions
// that may both have committed, or twice by one) makes the lists holding it ambiguous, so
// the history is declined; a duplicate from an aborted transaction is not.
func TestDuplicateAppendsUnsupported(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		src  string
		want bool // ErrUnsupported
	}{
		{"s0: T0 a(x,0) c; s0: T1 a(x,0) r(x,[0,0]) c", true},
		{"s0: T0 a(x,0) a(x,0) c; s0: T1 r(x,[0,0]) c", true},
		{"s0: T0 a(x,0) info; s1: T1 a(x,0) r(x,[0]) c", true},
		{"s0: T0 a(x,0) abort; s1: T1 a(x,0) r(x,[0]) c", false},
		{"s0: T0 a(x,0) c; s1: T1 a(y,0) r(x,[0]) c", false},
	} {
		_, err := Build(histtest.MustParse(tc.src), Options{})
		if got := errors.Is(err, ErrUnsupported); got != tc.want {
			t.Errorf("Build(%q) = %v, want unsupported %v", tc.src, err, tc.want)
		}
		if tc.want && !strings.Contains(err.Error(), "appended to x more than once") {
			t.Errorf("Build(%q) = %v, want it to name the element and key", tc.src, err)
		}
	}
}
