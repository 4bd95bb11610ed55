package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/history"
)

// Limits of TestConvertRoundTripKeepsVerdicts, to keep its runtime modest on our 2-core
// machines: each check gets roundTripTimeout; histories larger than roundTripLarge bytes
// on disk (the 10,000-transaction benchmarks and up) are checked at read committed and
// read atomic only, and those larger than roundTripHuge (Cobra's fauna-page, Vbox's
// 100,000-transaction BlindW) at read committed only. Every conversion is still written,
// read back and compared at those levels.
const (
	roundTripTimeout = 10 * time.Second
	roundTripLarge   = 1 << 20
	roundTripHuge    = 16 << 20
)

// TestConvertRoundTripKeepsVerdicts converts every public history to every writable
// format. Each conversion either refuses (format.Losses names something the format cannot
// hold) or, written and read back, gives the same verdict as the original at every level
// where the original's verdict is Pass or Fail.
func TestConvertRoundTripKeepsVerdicts(t *testing.T) {
	dir := sharedData(t)
	var writable []format.Format
	for _, f := range format.Formats() {
		if f.Writable() {
			writable = append(writable, f)
		}
	}
	compared, refusals := 0, 0
	for _, rel := range sharedHistories(t, dir) {
		if refused(rel) {
			continue
		}
		p := filepath.Join(dir, rel)
		t.Run(rel, func(t *testing.T) {
			h, _, err := format.Open(p, format.Auto, format.Options{})
			if err != nil {
				t.Logf("not read (%v): nothing to convert", err)
				return
			}
			levels := check.Levels()
			switch size := diskSize(t, p); {
			case size > roundTripHuge:
				levels = []check.Level{check.ReadCommitted}
				t.Logf("%d bytes: checked at %v only", size, levels)
			case size > roundTripLarge:
				levels = []check.Level{check.ReadCommitted, check.ReadAtomic}
				t.Logf("%d bytes: checked at %v only", size, levels)
			}
			orig := verdicts{h: h, levels: levels}
			for _, f := range writable {
				if ls := format.Losses(h, f); len(ls) > 0 {
					refusals++
					t.Logf("%s: refuses (%d kinds of loss, first %v)", f.Name, len(ls), ls[0].Feature)
					continue
				}
				back := writeAndRead(t, f, h)
				if back == nil {
					continue
				}
				got := verdicts{h: back, levels: levels}
				for _, l := range levels {
					want, why := orig.get(t, l)
					if why != "" {
						t.Logf("%s at %v: skipped, the original is %s", f.Name, l, why)
						continue
					}
					v, why := got.get(t, l)
					switch {
					case strings.Contains(why, "over "+roundTripTimeout.String()):
						// The machine is shared: a check near the limit may cross it.
						t.Logf("%s at %v: the converted history's check ran %s; the original is %v", f.Name, l, why, want)
					case why != "":
						t.Errorf("%s at %v: the converted history gives %s, the original %v", f.Name, l, why, want)
					case v != want:
						t.Errorf("%s at %v: the converted history gives %v, the original %v", f.Name, l, v, want)
					default:
						compared++
					}
				}
			}
		})
	}
	t.Logf("%d verdicts compared, %d conversions refused", compared, refusals)
	if compared == 0 {
		t.Error("no verdict was compared")
	}
}

// verdicts checks a history at each level once, on demand.
type verdicts struct {
	h      *history.History
	levels []check.Level
	got    map[check.Level]check.Verdict
	why    map[check.Level]string
}

// get returns h's verdict at l, or why there is none to compare ("unknown", an error).
func (v *verdicts) get(t *testing.T, l check.Level) (check.Verdict, string) {
	t.Helper()
	if v.got == nil {
		v.got, v.why = make(map[check.Level]check.Verdict), make(map[check.Level]string)
	}
	if verdict, ok := v.got[l]; ok {
		return verdict, v.why[l]
	}
	ctx, cancel := context.WithTimeout(context.Background(), roundTripTimeout)
	defer cancel()
	rep, err := check.Check(ctx, v.h, l, check.Options{})
	var verdict check.Verdict
	why := ""
	switch {
	case rep != nil && rep.Verdict != check.Unknown:
		verdict = rep.Verdict
	case errors.Is(err, context.DeadlineExceeded):
		why = "unknown (over " + roundTripTimeout.String() + ")"
	case err != nil:
		why = "an error: " + err.Error()
	default:
		why = "unknown"
	}
	v.got[l], v.why[l] = verdict, why
	return verdict, why
}

// writeAndRead writes h in f to a temporary file and reads it back.
func writeAndRead(t *testing.T, f format.Format, h *history.History) *history.History {
	t.Helper()
	p := filepath.Join(t.TempDir(), "h")
	write := func() error { return writeOutput(nil, p, func(w io.Writer) error { return f.Write(w, h) }) }
	if f.WriteDir != nil {
		write = func() error {
			return writeDirOutput(p, func(create func(string) (io.Writer, error)) error { return f.WriteDir(h, create) })
		}
	}
	if err := write(); err != nil {
		t.Errorf("%s: writing: %v", f.Name, err)
		return nil
	}
	back, _, err := format.Open(p, f.Name, format.Options{})
	if err != nil {
		t.Errorf("%s: reading back: %v", f.Name, err)
		return nil
	}
	return back
}

// diskSize is the size of the file at p, or of the files in the directory p.
func diskSize(t *testing.T, p string) int64 {
	t.Helper()
	var n int64
	err := filepath.Walk(p, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestConvertReaderFixturesToDBCopAndCobra converts every reader fixture of the repository
// to dbcop and to Cobra logs. Each conversion either refuses (format.Losses names what the
// format cannot hold), or, written and read back, gives the original's verdict at every
// level where that is Pass or Fail.
func TestConvertReaderFixturesToDBCopAndCobra(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "testdata", "readers")
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, e := range es {
		if e.Name() == "README.md" {
			continue
		}
		h, _, err := format.Open(filepath.Join(dir, e.Name()), format.Auto, format.Options{})
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		orig := verdicts{h: h, levels: check.Levels()}
		for _, name := range []string{"dbcop", "cobra"} {
			f, _ := format.Lookup(name)
			if ls := format.Losses(h, f); len(ls) > 0 {
				t.Logf("%s to %s: refused (%v)", e.Name(), name, ls[0])
				continue
			}
			back := writeAndRead(t, f, h)
			if back == nil {
				continue
			}
			got := verdicts{h: back, levels: check.Levels()}
			for _, l := range check.Levels() {
				want, why := orig.get(t, l)
				if why != "" {
					continue
				}
				if v, why := got.get(t, l); why != "" || v != want {
					t.Errorf("%s to %s at %v: the copy gives %v%s, the original %v", e.Name(), name, l, v, why, want)
				}
				compared++
			}
		}
	}
	if compared == 0 {
		t.Error("no verdict was compared")
	}
	t.Logf("%d verdicts compared", compared)
}
