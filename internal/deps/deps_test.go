package deps

import (
	"context"
	"errors"
	"testing"

	"isovet/history"
	"isovet/internal/histtest"
	"isovet/internal/report"
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
