package polygraph

import (
	"context"
	"slices"
	"testing"

	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/sat"
)

func build(t *testing.T, src string, o deps.Options) *Polygraph {
	t.Helper()
	h := histtest.MustParse(src)
	d, err := deps.Build(h, o)
	if err != nil {
		t.Fatal(err)
	}
	return Build(d)
}

// VeriStrong Example 5.1 (Fig. 6): T2 reads x from T1 or T3, T1 and T3 both write x, T2 → T3
// in session order. Pruning removes T3 as T2's source (T3→T2→T3) and then the order T3 before
// T1 (T1→T2→T3→T1): nothing is left for the solver.
func TestVeriStrongExample51(t *testing.T) {
	p := build(t, "s1: T1 w(x,1)\ns2: T2 r(x,1)\ns2: T3 w(x,1)", deps.Options{Session: true})
	if len(p.WW) != 1 || len(p.WR) != 1 {
		t.Fatalf("constraints WW %d WR %d, want 1 and 1", len(p.WW), len(p.WR))
	}
	v, err := p.Prune(context.Background())
	if err != nil || v != nil {
		t.Fatalf("Prune = %v, %v; want no violation", v, err)
	}
	if ww, wr := p.Remaining(); ww != 0 || wr != 0 {
		t.Fatalf("remaining %d/%d, want 0/0", ww, wr)
	}
	if c := p.WW[0]; c.Fixed != 1 { // A=T1 (0) before B=T3 (2)
		t.Errorf("WW fixed %d, want 1 (T1 before T3)", c.Fixed)
	}
	if got := p.WR[0].Cands; len(got) != 1 || got[0] != 0 {
		t.Errorf("WR candidates %v, want [T1]", got)
	}
}

// A lost update is found by pruning: both write orders close a cycle.
func TestPruneLostUpdate(t *testing.T) {
	p := build(t, "init 0\ns1: T1 r(x,0) w(x,1)\ns2: T2 r(x,0) w(x,2)", deps.Options{})
	v, err := p.Prune(context.Background())
	if err != nil || v == nil {
		t.Fatalf("Prune = %v, %v; want a violation", v, err)
	}
	for i, c := range v.Cycles {
		if len(c) == 0 || c[0].From != c[len(c)-1].To {
			t.Errorf("cycle %d is not closed: %+v", i, c)
		}
	}
}

// Read-modify-write chains are blocks: three increments in a row need no constraint.
func TestChains(t *testing.T) {
	p := build(t, "init 0\ns1: T1 r(x,0) w(x,1)\ns2: T2 r(x,1) w(x,2)\ns3: T3 r(x,2) w(x,3)\ns4: T4 w(x,9)", deps.Options{})
	// T1..T3 form one block that read the initial version, so it comes first; T4 is after.
	if len(p.WW) != 0 {
		t.Fatalf("WW constraints %+v, want none (blocks fixed)", p.WW)
	}
	v, err := p.Prune(context.Background())
	if err != nil || v != nil {
		t.Fatalf("Prune = %v, %v", v, err)
	}
}

// The solver decides what pruning cannot; with selectors, an unsatisfiable core explains it.
func TestEncodeAndCore(t *testing.T) {
	// T2 read x=0 and x=2; x=2's only writer T4 is of unknown outcome, so the choice is left
	// to the solver, which finds every option cyclic (found by the differential test).
	src := "init 0\n1: 1 w(0,0) w(0,2) c @[2,7]\n1: 2 r(0,0) r(0,0) r(0,2) r(0,0) c @[12,14]\n0: 3 w(0,1) r(0,1) info @[4,5]\n0: 4 w(0,0) w(0,1) w(0,2) r(0,2) info @[10,14]\n0: 5 r(0,2)<-4 w(0,1) w(0,2) w(0,0) abort @[19,24]"
	p := build(t, src, deps.Options{})
	if v, err := p.Prune(context.Background()); err != nil || v != nil {
		t.Skipf("decided by pruning (%v)", v)
	}
	en, err := p.Encode(context.Background(), EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := en.Solve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st != sat.Unsat {
		t.Fatalf("Solve = %v, want UNSAT", st)
	}
	ens, err := p.Encode(context.Background(), EncodeOptions{Selectors: true})
	if err != nil {
		t.Fatal(err)
	}
	core, err := ens.MinimalCore(context.Background(), 100)
	if err != nil || len(core) == 0 {
		t.Fatalf("core %v, %v", core, err)
	}
	for _, alt := range p.Explain(core) {
		if alt.Cycle == nil {
			t.Errorf("alternative %+v closes no cycle", alt.Options)
		}
	}
}

// TestPruneWorkGraph: pruning with the reduced working graph of later passes decides exactly
// what pruning on the whole known graph decides, on random histories with duplicate values,
// with and without session order and real time.
func TestPruneWorkGraph(t *testing.T) {
	used := 0
	for seed := range uint64(400) {
		o := histtest.GenOptions{Txns: 12 + int(seed%30), Sessions: 2 + int(seed%4), Keys: 2 + int(seed%5), Concurrency: int(seed % 4), DupRatio: 0.3}
		h := histtest.Gen(seed, o)
		do := deps.Options{Session: seed%3 != 0, Realtime: seed%3 == 2 && h.HasTime()}
		run := func(limit int) (*Polygraph, *Violation, int) {
			saved := maxWorkTerminals
			maxWorkTerminals = limit
			defer func() { maxWorkTerminals = saved }()
			d, err := deps.Build(h, do)
			if err != nil {
				t.Fatal(err)
			}
			p := Build(d)
			works := 0
			v, err := p.Prune(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			works = p.workBuilds
			return p, v, works
		}
		pw, vw, w := run(1 << 20)
		pf, vf, _ := run(0)
		used += w
		if (vw == nil) != (vf == nil) {
			t.Fatalf("seed %d: violation with working graph %v, without %v", seed, vw != nil, vf != nil)
		}
		if vw != nil {
			continue
		}
		for i := range pw.WW {
			if pw.WW[i].Fixed != pf.WW[i].Fixed {
				t.Fatalf("seed %d: WW %d fixed %d with working graph, %d without", seed, i, pw.WW[i].Fixed, pf.WW[i].Fixed)
			}
		}
		for i := range pw.WR {
			if !slices.Equal(pw.WR[i].Cands, pf.WR[i].Cands) {
				t.Fatalf("seed %d: WR %d candidates %v with working graph, %v without", seed, i, pw.WR[i].Cands, pf.WR[i].Cands)
			}
		}
	}
	if used < 20 {
		t.Errorf("the working graph was built only %d times", used)
	}
}

// TestCheckUnreadKeys: a key no read may read gets no write-order constraint, whoever its
// writers are; once one of its versions may be read, its writers' pairs are back. (The
// argument is in unread's comment; ser's TestCheckShapesOracle pins it to the oracle.)
func TestCheckUnreadKeys(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		ww        int
	}{
		{"blind writes", "s1: T1 w(x,1)\ns2: T2 w(x,2)\ns3: T3 w(x,3) r(y,0)", 0},
		{"blind writes of one value", "s1: T1 w(x,1)\ns2: T2 w(x,1)\ns3: T3 w(x,1)", 0},
		{"the initial version read", "init 0\ns1: T1 w(x,1)\ns2: T2 w(x,2)\ns3: T3 r(x,0)", 0},
		{"a version read", "s1: T1 w(x,1)\ns2: T2 w(x,2)\ns3: T3 w(x,3)\ns4: T4 r(x,2)", 3},
	} {
		p := build(t, tc.src, deps.Options{})
		if len(p.WW) != tc.ww {
			t.Errorf("%s: %d write-order constraints, want %d", tc.name, len(p.WW), tc.ww)
		}
	}
}
