package cobra

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/corpus"
	"github.com/isovet/isovet/internal/parse"
)

// logw builds Cobra records.
type logw struct {
	bytes.Buffer
	ts bool
}

func (w *logw) i64(vs ...int64) {
	for _, v := range vs {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(v))
		w.Write(b[:])
	}
}
func (w *logw) S(id, ts int64) *logw {
	w.WriteByte('S')
	w.i64(id)
	if w.ts {
		w.i64(ts)
	}
	return w
}
func (w *logw) C(id, ts int64) *logw {
	w.WriteByte('C')
	w.i64(id)
	if w.ts {
		w.i64(ts)
	}
	return w
}
func (w *logw) W(wid, k, v int64) *logw      { w.WriteByte('W'); w.i64(wid, k, v); return w }
func (w *logw) R(txn, wid, k, v int64) *logw { w.WriteByte('R'); w.i64(txn, wid, k, v); return w }

// decodeFiles decodes named in-memory files in order.
func decodeFiles(d *Decoder, files map[string][]byte) (*history.History, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	b := history.NewBuilder()
	for _, n := range names {
		if err := d.Decode(bytes.NewReader(files[n]), n, b); err != nil {
			return nil, err
		}
	}
	if err := d.Finish(b); err != nil {
		return nil, err
	}
	return b.Build()
}

// txnView is a compact rendering of a history for comparisons.
func render(h *history.History) []string {
	var out []string
	for _, t := range h.Txns {
		var sb strings.Builder
		fmt.Fprintf(&sb, "s%v %v %v", h.Sessions[t.Session].Source, t.Source, t.Outcome)
		if t.HasTime {
			fmt.Fprintf(&sb, " [%d,%d]", t.Time.Begin, t.Time.End)
		}
		for _, o := range t.Ops {
			switch o.Kind {
			case history.OpWrite:
				fmt.Fprintf(&sb, " w(%v,%v)", h.Key(o.Key), h.Value(o.Value))
			case history.OpRead:
				fmt.Fprintf(&sb, " r(%v,%v)", h.Key(o.Key), h.Value(o.Value))
				switch o.Src.Kind {
				case history.SrcInit:
					sb.WriteString("<init")
				case history.SrcNone:
					sb.WriteString("<none")
				case history.SrcTxn:
					fmt.Fprintf(&sb, "<%v.%d", h.Txns[o.Src.Txn].Source, o.Src.Op)
				}
			}
		}
		out = append(out, sb.String())
	}
	return out
}

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string][]byte
		want  []string
		init  map[int64]int64
		notes int
	}{
		{
			name: "resolve-across-files",
			files: map[string][]byte{
				"T1.log": new(logw).S(10, 0).W(100, 1, 7).C(10, 0).S(11, 0).R(20, 200, 2, 9).C(11, 0).Bytes(),
				"T2.log": new(logw).S(20, 0).R(10, 100, 1, 7).W(200, 2, 9).C(20, 0).Bytes(),
			},
			want: []string{
				"s1 10 committed w(1,7)",
				"s1 11 committed r(2,9)<20.1",
				"s2 20 committed r(1,7)<10.0 w(2,9)",
			},
		},
		{
			name: "init-null-universal-and-unfinished",
			files: map[string][]byte{
				"T0.log": new(logw).S(1, 0).R(InitID, InitID, 5, 55).R(NullID, NullID, 6, 0).
					R(UniversalID, UniversalID, 7, 77).W(UniversalID, 7, 78).C(1, 0).S(2, 0).W(3, 8, 8).S(4, 0).C(4, 0).Bytes(),
			},
			want: []string{
				"s0 1 committed r(5,55)<init r(6,nil)<none r(7,77) w(7,78)",
				"s0 2 unknown w(8,8)",
				"s0 4 committed",
			},
			init: map[int64]int64{5: 55},
		},
		{
			name: "timestamps",
			files: map[string][]byte{
				"T3.log": (&logw{ts: true}).S(1, 1000).W(1, 1, 1).C(1, 2000).S(2, 3000).C(2, 4000).Bytes(),
			},
			want: []string{"s3 1 committed [1000,2000] w(1,1)", "s3 2 committed [3000,4000]"},
		},
		{
			name: "future-read-of-own-write",
			files: map[string][]byte{
				"T0.log": new(logw).S(0, 0).R(0, 5, 1, 5).W(5, 1, 5).C(0, 0).Bytes(),
			},
			want: []string{"s0 0 committed r(1,5)<0.1 w(1,5)"},
		},
		{
			name: "polysi-initial-transaction",
			files: map[string][]byte{
				"T-1.log": new(logw).S(-1, 0).W(1000, 1, 0).W(1001, 2, 0).C(-1, 0).Bytes(),
				"T0.log":  new(logw).S(1, 0).R(-1, 1000, 1, 0).W(5, 2, 9).C(1, 0).Bytes(),
			},
			want:  []string{"s0 1 committed r(1,0)<init w(2,9)"},
			init:  map[int64]int64{1: 0, 2: 0},
			notes: 1,
		},
		{
			name: "init-writer-logged",
			files: map[string][]byte{
				"T0.log": new(logw).S(1, 0).R(InitID, 77, 5, 55).R(InitID, InitID, 6, 66).C(1, 0).Bytes(),
				"T9.log": new(logw).S(InitID, 0).W(77, 5, 55).C(InitID, 0).Bytes(),
			},
			want:  []string{"s0 1 committed r(5,55)<init r(6,66)<init"},
			init:  map[int64]int64{5: 55, 6: 66},
			notes: 1,
		},
		{
			name: "not-initial-reads",
			files: map[string][]byte{
				"T-1.log": new(logw).S(-1, 0).W(1000, 1, 0).R(-1, 1000, 1, 0).C(-1, 0).Bytes(),
			},
			want: []string{"s-1 -1 committed w(1,0) r(1,0)<-1.0"},
		},
		{
			name: "not-initial-two-transactions",
			files: map[string][]byte{
				"T-1.log": new(logw).S(-1, 0).W(1000, 1, 0).C(-1, 0).S(2, 0).W(1001, 2, 0).C(2, 0).Bytes(),
			},
			want: []string{"s-1 -1 committed w(1,0)", "s-1 2 committed w(2,0)"},
		},
		{
			name: "not-initial-other-session",
			files: map[string][]byte{
				"T4.log": new(logw).S(-1, 0).W(1000, 1, 0).C(-1, 0).Bytes(),
			},
			want: []string{"s4 -1 committed w(1,0)"},
		},
		{
			name: "not-initial-key-twice",
			files: map[string][]byte{
				"T-1.log": new(logw).S(-1, 0).W(1000, 1, 0).W(1001, 1, 3).C(-1, 0).Bytes(),
			},
			want: []string{"s-1 -1 committed w(1,0) w(1,3)"},
		},
		{
			name: "not-initial-uncommitted",
			files: map[string][]byte{
				// Unfinished mid-log (a log that ends inside one is cut, an error).
				"T-1.log": new(logw).S(-1, 0).W(1000, 1, 0).S(2, 0).W(1001, 2, 0).C(2, 0).Bytes(),
			},
			want: []string{"s-1 -1 unknown w(1,0)", "s-1 2 committed w(2,0)"},
		},
		{
			name: "placeholder-for-missing-writer",
			files: map[string][]byte{
				"T0.log": new(logw).S(1, 0).R(99, 990, 4, 44).R(99, 991, 5, 55).C(1, 0).Bytes(),
			},
			want: []string{
				"s0 1 committed r(4,44)<99.0 r(5,55)<99.1",
				"smissing-writers 99 aborted w(4,44) w(5,55)",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := decodeFiles(NewDecoder(), tt.files)
			if err != nil {
				t.Fatalf("Decode = %v", err)
			}
			if diff := cmp.Diff(tt.want, render(h)); diff != "" {
				t.Errorf("Decode mismatch (-want +got):\n%s", diff)
			}
			if len(h.Notes) != tt.notes {
				t.Errorf("notes %q, want %d", h.Notes, tt.notes)
			}
			for k, v := range tt.init {
				kk := slices.Index(h.Keys, history.Int(k))
				if got := h.Value(h.InitialValue(history.Key(kk))); got != history.Int(v) {
					t.Errorf("initial value of %d = %v, want %d", k, got, v)
				}
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	full := new(logw).S(1, 0).W(100, 1, 7).C(1, 0).Bytes()
	tests := []struct {
		name   string
		files  map[string][]byte
		strict bool
		want   string // substring of the error
		trunc  bool
		dup    bool
	}{
		{name: "bad-tag", files: map[string][]byte{"T0.log": append(slices.Clone(full), 'X')}, want: "T0.log (byte 43): cobra: expected a record tag 'S', 'W', 'R' or 'C', found byte 0x58"},
		{name: "truncated-write", files: map[string][]byte{"T0.log": full[:20]}, want: "T0.log (byte 9): cobra: unexpected end of input: 'W' record needs 24 bytes after its tag, 10 left", trunc: true},
		{name: "truncated-start", files: map[string][]byte{"T0.log": full[:5]}, want: "T0.log (byte 0): cobra: unexpected end of input: 'S' record needs 8 bytes after its tag, 4 left", trunc: true},
		{name: "write-outside-txn", files: map[string][]byte{"T0.log": new(logw).W(1, 1, 1).Bytes()}, want: "(byte 0): cobra: expected 'S' before 'W' record"},
		{name: "commit-mismatch", files: map[string][]byte{"T0.log": new(logw).S(1, 0).C(2, 0).Bytes()}, want: "(byte 9): cobra: expected 'C' of txn 1, found 'C' of txn 2"},
		{name: "missing-write", files: map[string][]byte{"T0.log": new(logw).S(1, 0).C(1, 0).S(2, 0).R(1, 5, 1, 1).C(2, 0).Bytes()}, want: "T0.log (byte 27): cobra: cobra: read names a writer that is not in the history: read of key 1 names txn 1, write id 5, but no write has that id"},
		{name: "wrong-writer-txn", files: map[string][]byte{"T0.log": new(logw).S(1, 0).W(5, 1, 1).C(1, 0).S(2, 0).C(2, 0).S(3, 0).R(2, 5, 1, 1).C(3, 0).Bytes()}, want: "names txn 2, write id 5, but that write belongs to txn 1"},
		{name: "wrong-key", files: map[string][]byte{"T0.log": new(logw).S(1, 0).W(5, 1, 1).C(1, 0).S(3, 0).R(1, 5, 2, 1).C(3, 0).Bytes()}, want: "read of key 2 names write id 5 of txn 1, which writes a different key"},
		{name: "cut-inside-txn", files: map[string][]byte{"T0.log": new(logw).S(1, 0).W(100, 1, 7).C(1, 0).S(2, 0).R(1, 100, 1, 7).Bytes()}, want: "T0.log (byte 85): cobra: unexpected end of input: expected the 'C' record of txn 2 (begun at byte 43) before the end of the log: the log is cut", trunc: true},
		{name: "same-client", files: map[string][]byte{"T20.log": full, "T020.log": full}, want: "T20.log (byte 0): cobra: duplicate log: T020.log and T20.log both hold the log of client 20 (a copy?)", dup: true},
		{name: "same-txn", files: map[string][]byte{"T1.log": full, "T2.log": new(logw).S(2, 0).C(2, 0).S(1, 0).C(1, 0).Bytes()}, want: "T2.log (byte 18): cobra: duplicate log: txn 1 is in both T1.log and T2.log", dup: true},
		{name: "strict-missing-txn", strict: true, files: map[string][]byte{"T0.log": new(logw).S(1, 0).R(9, 5, 1, 1).C(1, 0).Bytes()}, want: "T0.log (byte 9): cobra: cobra: read names a writer that is not in the history: read of key 1 names txn 9, which no log file holds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := decodeFiles(&Decoder{Strict: tt.strict}, tt.files)
			if err == nil {
				t.Fatalf("Decode = nil error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Decode = %q, want it to contain %q", err, tt.want)
			}
			var pe *parse.Error
			if !errors.As(err, &pe) {
				t.Errorf("Decode error %T is not a *parse.Error", err)
			}
			if tt.trunc != errors.Is(err, parse.ErrTruncated) {
				t.Errorf("errors.Is(%v, ErrTruncated) = %v, want %v", err, !tt.trunc, tt.trunc)
			}
			if tt.dup != errors.Is(err, parse.ErrDuplicate) {
				t.Errorf("errors.Is(%v, ErrDuplicate) = %v, want %v", err, !tt.dup, tt.dup)
			}
		})
	}
}

func TestSniff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		head []byte
		want bool
	}{
		{"plain", new(logw).S(1, 0).W(1, 2, 3).C(1, 0).Bytes(), true},
		{"timestamps", (&logw{ts: true}).S(1, 5).W(1, 2, 3).C(1, 6).Bytes(), true},
		{"cut-mid-record", new(logw).S(1, 0).W(1, 2, 3).Bytes()[:20], true},
		{"vbox", append([]byte{'T', 1, 0, 0, 0}, make([]byte, 16)...), false},
		{"text", []byte("S(1,2,3)\n"), false},
		{"empty", nil, false},
		{"bad-second-record", append(new(logw).S(1, 0).Bytes(), 'Z'), false},
	}
	for _, tt := range tests {
		if got := Sniff("T0.log", tt.head); got != tt.want {
			t.Errorf("Sniff(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// readDir decodes every T*.log of dir in natural order.
func readDir(tb testing.TB, dir string, d *Decoder) (*history.History, error) {
	tb.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "T*.log"))
	if err != nil || len(names) == 0 {
		tb.Skipf("no Cobra logs in %s (%v)", dir, err)
	}
	slices.SortFunc(names, func(a, b string) int { return fileNum(a) - fileNum(b) })
	bld := history.NewBuilder()
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			tb.Fatal(err)
		}
		if err := d.Decode(bytes.NewReader(data), n, bld); err != nil {
			return nil, err
		}
	}
	if err := d.Finish(bld); err != nil {
		return nil, err
	}
	return bld.Build()
}

func fileNum(p string) int {
	s := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "T"), ".log")
	n, _ := strconv.Atoi(s)
	return n
}

type counts struct {
	Files, Txns, Committed, Unknown, Writes, Reads int
	Init, None, ByValue, Explicit, Placeholders    int
}

func count(h *history.History) counts {
	var c counts
	for _, s := range h.Sessions {
		if s.Source != history.Str(history.PlaceholderSession) {
			c.Files++
		}
	}
	for _, t := range h.Txns {
		if h.Sessions[t.Session].Source == history.Str(history.PlaceholderSession) {
			c.Placeholders++
			continue
		}
		c.Txns++
		switch t.Outcome {
		case history.OutcomeCommitted:
			c.Committed++
		case history.OutcomeUnknown:
			c.Unknown++
		}
		for _, o := range t.Ops {
			switch o.Kind {
			case history.OpWrite:
				c.Writes++
			case history.OpRead:
				c.Reads++
				switch o.Src.Kind {
				case history.SrcInit:
					c.Init++
				case history.SrcNone:
					c.None++
				case history.SrcByValue:
					c.ByValue++
				case history.SrcTxn:
					c.Explicit++
				}
			}
		}
	}
	return c
}

// TestSharedFiles reads every shared Cobra history. The expected counts were taken
// independently with a Python script counting records per tag and classifying each 'R'
// by its writer id (see the package's test notes in docs/formats.md).
func TestSharedFiles(t *testing.T) {
	t.Parallel()
	sharedData := corpus.Dir(t)
	tests := []struct {
		dir  string
		want counts
	}{
		{"cobra/ser-violation/cock-G2", counts{Files: 10, Txns: 446, Committed: 446, Writes: 446, Reads: 892, Init: 892}},
		{"cobra/ser-violation/cock-blog", counts{Files: 13, Txns: 21, Committed: 21, Writes: 3, Reads: 18, Explicit: 18, Placeholders: 8}},
		{"cobra/ser-violation/fauna-page", counts{Files: 36, Txns: 8156, Committed: 8156, Writes: 26044, Reads: 1334860, Init: 837612, Explicit: 497248}},
		{"cobra/ser-violation/yuga-G2-a", counts{Files: 15, Txns: 37190, Committed: 37190, Writes: 25409, Reads: 61383, Init: 14875, Explicit: 46508}},
		{"cobra/ser-violation/yuga-G2-b", counts{Files: 15, Txns: 26994, Committed: 26994, Writes: 27776, Reads: 58847, Init: 136, Explicit: 58711}},
		{"cobra/ser-violation/yuga-G2-c", counts{Files: 15, Txns: 29419, Committed: 29419, Writes: 24264, Reads: 59352, Init: 141, Explicit: 59211}},
		{"bench/veristrong-10k/tpcc-10k", counts{Files: 8, Txns: 10364, Committed: 10364, Writes: 1033, Reads: 10364, Init: 5250, None: 1, ByValue: 5113}},
		{"bench/veristrong-10k/twitter-10k", counts{Files: 8, Txns: 10444, Committed: 10444, Writes: 15940, Reads: 35713, Init: 12354, None: 60, ByValue: 23299}},
		{"bench/veristrong-10k/rubis-10k", counts{Files: 8, Txns: 10289, Committed: 10289, Writes: 11441, Reads: 39306, Init: 30752, None: 1949, ByValue: 6605}},
		// Plume's T-1.log (PolySI's initial transaction, one write per key) is the initial
		// state: one file and one transaction fewer than the records show.
		{"plume/testcase/cobra/tap-c", counts{Files: 1, Txns: 1, Committed: 1, Writes: 1, Reads: 1, Explicit: 1}},
		{"plume/testcase/cobra/tap-n", counts{Files: 4, Txns: 7, Committed: 7, Writes: 3, Reads: 5, Explicit: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			t.Parallel()
			h, err := readDir(t, corpus.Path(t, tt.dir), NewDecoder())
			if err != nil {
				t.Fatalf("reading %s: %v", tt.dir, err)
			}
			if diff := cmp.Diff(tt.want, count(h)); diff != "" {
				t.Errorf("counts of %s (-want +got):\n%s", tt.dir, diff)
			}
		})
	}
	// Every Plume test case reads.
	dirs, _ := filepath.Glob(filepath.Join(sharedData, "plume/testcase/cobra/tap-*"))
	for _, dir := range dirs {
		h, err := readDir(t, dir, NewDecoder())
		if err != nil {
			t.Errorf("reading %s: %v", dir, err)
			continue
		}
		if len(h.Notes) != 1 || !strings.Contains(h.Notes[0], "T-1.log holds only transaction -1") || len(h.InitialByKey) == 0 {
			t.Errorf("%s: notes %q: want T-1.log read as the initial state", dir, h.Notes)
		}
	}
}

func TestStrictRejectsMissingWriters(t *testing.T) {
	t.Parallel()
	_, err := readDir(t, corpus.Path(t, "cobra/ser-violation/cock-blog"), &Decoder{Strict: true})
	if !errors.Is(err, ErrUnknownWriter) {
		t.Fatalf("strict read of cock-blog = %v, want ErrUnknownWriter", err)
	}
}
