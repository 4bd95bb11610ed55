package cobra

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/history/historytest"
	"github.com/isovet/isovet/internal/corpus"
	"github.com/isovet/isovet/internal/histtest"
)

// writeFiles writes h with WriteDir into memory, checking that each name is created once.
func writeFiles(t *testing.T, h *history.History) map[string][]byte {
	t.Helper()
	files := make(map[string]*bytes.Buffer)
	err := WriteDir(h, func(name string) (io.Writer, error) {
		if files[name] != nil {
			t.Errorf("WriteDir created %s twice", name)
		}
		files[name] = &bytes.Buffer{}
		return files[name], nil
	})
	if err != nil {
		t.Fatalf("WriteDir: %v", err)
	}
	out := make(map[string][]byte, len(files))
	for n, b := range files {
		out[n] = b.Bytes()
	}
	return out
}

// canonical renders what h says, independent of ids, file names and how a read's writer
// is known: each session's transactions (sessions sorted), each with its outcome, client
// interval and ops, each read with the writer it reads from: the one it names, or the one
// value matching finds alone (computed here by brute force), or "?" when value matching
// finds several or none. A writer is shown by its transaction's content and op index.
// Then every used key's initial value.
func canonical(h *history.History) string {
	body := make([]string, len(h.Txns))
	for id, t := range h.All() {
		var b strings.Builder
		fmt.Fprintf(&b, "%v", t.Outcome)
		if t.HasTime {
			fmt.Fprintf(&b, "@[%d,%d]", t.Time.Begin, t.Time.End)
		}
		for _, o := range t.Ops {
			fmt.Fprintf(&b, " %v(%s,%s)", o.Kind, history.ShowValue(h.Key(o.Key)), history.ShowValue(h.Value(o.Value)))
		}
		body[id] = b.String()
	}
	var blocks []string
	for _, s := range h.Sessions {
		var b strings.Builder
		for _, id := range s.Txns {
			t := h.Txn(id)
			b.WriteString(body[id])
			for i, o := range t.Ops {
				if o.Kind == history.OpRead {
					fmt.Fprintf(&b, " [%d<-%s]", i, effectiveSource(h, id, i, body))
				}
			}
			b.WriteString("\n")
		}
		if b.Len() > 0 {
			blocks = append(blocks, b.String())
		}
	}
	slices.Sort(blocks)
	var init []string
	used := map[history.Key]bool{}
	for _, t := range h.Txns {
		for _, o := range t.Ops {
			used[o.Key] = true
		}
	}
	for k := range used {
		init = append(init, history.ShowValue(h.Key(k))+"="+history.ShowValue(h.Value(h.InitialValue(k))))
	}
	slices.Sort(init)
	return strings.Join(blocks, "--\n") + "init " + strings.Join(init, " ")
}

// effectiveSource names the writer read i of transaction id reads from (see canonical).
func effectiveSource(h *history.History, id history.TxnID, i int, body []string) string {
	t := h.Txn(id)
	o := t.Ops[i]
	switch o.Src.Kind {
	case history.SrcInit:
		return "init"
	case history.SrcNone:
		return "none"
	case history.SrcTxn:
		return fmt.Sprintf("{%s}.%d", body[o.Src.Txn], o.Src.Op)
	}
	for j := i - 1; j >= 0; j-- {
		if w := t.Ops[j]; w.Kind == history.OpWrite && w.Key == o.Key {
			if w.Value == o.Value {
				return fmt.Sprintf("{%s}.%d", body[id], j)
			}
			return "?"
		}
	}
	var found []string
	for wid, w := range h.All() {
		if wid == id {
			continue
		}
		for j, wo := range w.Ops {
			if wo.Kind == history.OpWrite && wo.Key == o.Key && wo.Value == o.Value {
				found = append(found, fmt.Sprintf("{%s}.%d", body[wid], j))
				if w.Outcome != history.OutcomeCommitted || slices.ContainsFunc(w.Ops[j+1:], func(x history.Op) bool { return x.Kind == history.OpWrite && x.Key == o.Key }) {
					found = append(found, "not final") // value matching by deps would not take it alone
				}
			}
		}
	}
	if h.InitialValue(o.Key) == o.Value {
		found = append(found, "init")
	}
	if len(found) == 1 {
		return found[0]
	}
	return "?"
}

// decodeNatural decodes in-memory logs in the order format.Open reads a directory: by the
// number in the name (T-1.log, T2.log, T10.log).
func decodeNatural(files map[string][]byte) (*history.History, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return fileNum(a) - fileNum(b) })
	d, bld := NewDecoder(), history.NewBuilder()
	for _, n := range names {
		if err := d.Decode(bytes.NewReader(files[n]), n, bld); err != nil {
			return nil, err
		}
	}
	if err := d.Finish(bld); err != nil {
		return nil, err
	}
	return bld.Build()
}

// genCommitted is a generated history as Cobra can log it: its committed transactions,
// every key starting at 0 (the generator's keys start at nil, which Cobra logs cannot
// write).
func genCommitted(t *testing.T, seed uint64, o histtest.GenOptions) *history.History {
	t.Helper()
	var b strings.Builder
	b.WriteString("init 0\n")
	for ln := range strings.Lines(historytest.Format(histtest.Gen(seed, o))) {
		if !strings.Contains(ln, " abort") {
			b.WriteString(strings.ReplaceAll(ln, ",nil)", ",0)"))
		}
	}
	h, err := historytest.Parse(b.String())
	if err != nil {
		t.Fatalf("seed %d: %v\n%s", seed, err, b.String())
	}
	return h
}

// TestWriteDirRoundTrip: the repository's Cobra fixture and generated histories read back
// as what they say (canonical), and writing what was read back gives the same files.
func TestWriteDirRoundTrip(t *testing.T) {
	t.Parallel()
	h, err := readDir(t, filepath.Join("..", "..", "testdata", "readers", "cobra-lost-update"), NewDecoder())
	if err != nil {
		t.Fatal(err)
	}
	hs := map[string]*history.History{"cobra-lost-update": h}
	for seed := uint64(1); seed <= 6; seed++ {
		hs[fmt.Sprintf("gen-%d", seed)] = genCommitted(t, seed, histtest.GenOptions{Concurrency: 3, DupRatio: 0.2})
		hs[fmt.Sprintf("gen-timed-%d", seed)] = genCommitted(t, seed, histtest.GenOptions{Concurrency: 2, Intervals: true, Txns: 40})
		hs[fmt.Sprintf("gen-perturbed-%d", seed)] = genCommitted(t, seed, histtest.GenOptions{Concurrency: 3, DupRatio: 0.3, Perturb: 0.2})
	}
	for name, h := range hs {
		files := writeFiles(t, h)
		back, err := decodeNatural(files)
		if err != nil {
			t.Errorf("%s: reading back: %v", name, err)
			continue
		}
		if diff := cmp.Diff(canonical(h), canonical(back)); diff != "" {
			t.Errorf("%s: read back differs (-want +got):\n%s", name, diff)
		}
		if diff := cmp.Diff(files, writeFiles(t, back)); diff != "" {
			t.Errorf("%s: writing what was read back gives other files (-first +second):\n%s", name, diff)
		}
	}
}

// TestWriteDirRoundTripInitialState: initial values that reads carry are written as reads naming
// INIT (Cobra's convention); one that no read carries puts every initial value in
// T-1.log, which reads of the initial state name (PolySI's convention).
func TestWriteDirRoundTripInitialState(t *testing.T) {
	t.Parallel()
	var w1, w2 logw
	w1.S(1, 0).R(InitID, InitID, 100, 7).W(1, 100, 1).C(1, 0) // write id = value, as WriteDir picks
	w2.S(2, 0).R(1, 1, 100, 1).C(2, 0)
	h, err := decodeFiles(NewDecoder(), map[string][]byte{"T1.log": w1.Bytes(), "T2.log": w2.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	files := writeFiles(t, h)
	if _, ok := files[InitialLog]; ok || !bytes.Equal(files["T1.log"], w1.Bytes()) || !bytes.Equal(files["T2.log"], w2.Bytes()) {
		t.Errorf("reads carry the initial state, yet the files differ from the originals: %q", files)
	}
	b := history.NewBuilder()
	b.SetInitial(b.IntValue(0))
	b.BeginTxn(b.Session(history.Int(1)), history.Int(1), history.OutcomeCommitted)
	b.Write(b.IntKey(100), b.IntValue(1))
	b.Read(b.IntKey(200), b.IntValue(0))
	h, err = b.Build()
	if err != nil {
		t.Fatal(err)
	}
	files = writeFiles(t, h)
	var init, t1 logw
	init.S(-1, 0).W(1, 100, 0).W(2, 200, 0).C(-1, 0) // write ids count: the values repeat
	t1.S(1, 0).W(3, 100, 1).R(-1, 2, 200, 0).C(1, 0)
	if diff := cmp.Diff(map[string][]byte{InitialLog: init.Bytes(), "T1.log": t1.Bytes()}, files); diff != "" {
		t.Errorf("key 100 starts at 0 and no read says so: files (-want +got):\n%s", diff)
	}
	back, err := decodeNatural(files)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(canonical(h), canonical(back)); diff != "" {
		t.Errorf("read back differs (-want +got):\n%s", diff)
	}
	if r := back.Txns[0].Ops[1]; r.Src.Kind != history.SrcInit {
		t.Errorf("the read of 200=0 reads back as %+v, want the initial state", r.Src)
	}
}

// TestWriteDirRefuses: what Cobra logs cannot hold is an error wrapping
// ErrUnrepresentable, and no file is created.
func TestWriteDirRefuses(t *testing.T) {
	t.Parallel()
	tests := map[string]func(b *history.Builder){
		"aborted": func(b *history.Builder) {
			b.BeginTxn(b.Session(history.Int(0)), history.NilDatum, history.OutcomeAborted)
			b.Write(b.IntKey(1), b.IntValue(1))
		},
		"unknown": func(b *history.Builder) {
			b.BeginTxn(b.Session(history.Int(0)), history.NilDatum, history.OutcomeUnknown)
			b.Write(b.IntKey(1), b.IntValue(1))
		},
		"failed op": func(b *history.Builder) {
			b.BeginTxn(b.Session(history.Int(0)), history.NilDatum, history.OutcomeCommitted)
			b.SetOpFlags(b.Write(b.IntKey(1), b.IntValue(1)), history.OpFailed)
		},
		"string value": func(b *history.Builder) {
			b.BeginTxn(b.Session(history.Int(0)), history.NilDatum, history.OutcomeCommitted)
			b.Write(b.IntKey(1), b.Value(history.Str("a")))
		},
		"append": func(b *history.Builder) {
			b.BeginTxn(b.Session(history.Int(0)), history.NilDatum, history.OutcomeCommitted)
			b.Append(b.IntKey(1), b.IntValue(1))
		},
		"some timed": func(b *history.Builder) {
			s := b.Session(history.Int(0))
			b.BeginTxn(s, history.NilDatum, history.OutcomeCommitted)
			b.Current().Time, b.Current().HasTime = history.Interval{Begin: 1, End: 2}, true
			b.BeginTxn(s, history.NilDatum, history.OutcomeCommitted)
		},
	}
	for name, build := range tests {
		b := history.NewBuilder()
		build(b)
		h, err := b.Build()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		created := 0
		err = WriteDir(h, func(string) (io.Writer, error) { created++; return io.Discard, nil })
		if !errors.Is(err, ErrUnrepresentable) || created > 0 {
			t.Errorf("%s: WriteDir = %v after creating %d files; want ErrUnrepresentable and none", name, err, created)
		}
	}
}

// TestWriteDirRoundTripShared: the public Cobra logs read and written again: Plume's
// fixtures (written by PolySI's converter, write ids equal to values) byte for byte; the
// others, whose write ids Cobra drew from a counter isovet cannot know, as the same history.
func TestWriteDirRoundTripShared(t *testing.T) {
	t.Parallel()
	plume, err := filepath.Glob(filepath.Join(corpus.Path(t, "plume/testcase/cobra"), "tap-*"))
	if err != nil || len(plume) == 0 {
		t.Fatalf("no Plume Cobra cases: %v", err)
	}
	for _, dir := range plume {
		h, err := readDir(t, dir, NewDecoder())
		if err != nil {
			t.Fatal(err)
		}
		got := writeFiles(t, h)
		want := make(map[string][]byte)
		names, _ := filepath.Glob(filepath.Join(dir, "T*.log"))
		for _, n := range names {
			if want[filepath.Base(n)], err = os.ReadFile(n); err != nil {
				t.Fatal(err)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: written files differ (-original +written):\n%s", filepath.Base(dir), diff)
		}
	}
	for _, rel := range []string{"cobra/ser-violation/cock-G2", "cobra/ser-violation/cock-blog", "bench/veristrong-10k/tpcc-10k"} {
		h, err := readDir(t, corpus.Path(t, rel), NewDecoder())
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeNatural(writeFiles(t, h))
		if err != nil {
			t.Errorf("%s: reading back: %v", rel, err)
			continue
		}
		if canonical(h) != canonical(back) {
			t.Errorf("%s: read back differs", rel)
		}
	}
}
