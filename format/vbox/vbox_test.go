package vbox

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

// logw builds Vbox records. Every record gets the interval [at, at+1] from a counter.
type logw struct {
	bytes.Buffer
	at uint64
}

func (w *logw) head(tag byte, id uint32) *logw {
	w.WriteByte(tag)
	w.u32(id)
	w.at += 10
	w.u64(w.at, w.at+1)
	return w
}
func (w *logw) u32(vs ...uint32) {
	for _, v := range vs {
		w.Write(binary.LittleEndian.AppendUint32(nil, v))
	}
}
func (w *logw) u64(vs ...uint64) {
	for _, v := range vs {
		w.Write(binary.LittleEndian.AppendUint64(nil, v))
	}
}
func (w *logw) T(tid uint32) *logw { return w.head('T', tid) }
func (w *logw) S(oid uint32) *logw { return w.head('S', oid) }
func (w *logw) C(oid uint32) *logw { return w.head('C', oid) }
func (w *logw) A(oid uint32) *logw { return w.head('A', oid) }
func (w *logw) W(oid uint32, key, field uint64, v uint32) *logw {
	w.head('W', oid)
	w.u64(key, field)
	w.u32(v)
	return w
}
func (w *logw) R(oid uint32, key uint64, tid, from uint32) *logw {
	w.head('R', oid)
	w.u64(key)
	w.u32(tid, from)
	return w
}
func (w *logw) P(oid uint32, field uint64, lo, hi uint32, keys []uint64, tids []uint32) *logw {
	w.head('P', oid)
	w.u64(field)
	w.u32(lo, hi, uint32(len(keys)))
	w.u64(keys...)
	w.u32(tids...)
	w.u32(tids...)
	return w
}

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

func src(h *history.History, s history.Src) string {
	switch s.Kind {
	case history.SrcInit:
		return "<init"
	case history.SrcTxn:
		return fmt.Sprintf("<%v.%d", h.Txns[s.Txn].Source, s.Op)
	}
	return ""
}

func render(h *history.History) []string {
	var out []string
	for _, t := range h.Txns {
		var sb strings.Builder
		fmt.Fprintf(&sb, "s%v %v %v", h.Sessions[t.Session].Source, t.Source, t.Outcome)
		for i, o := range t.Ops {
			switch o.Kind {
			case history.OpWrite:
				fmt.Fprintf(&sb, " w(%v,%v)", h.Key(o.Key), h.Value(o.Value))
			case history.OpRead:
				fmt.Fprintf(&sb, " r(%v,%v)%s", h.Key(o.Key), h.Value(o.Value), src(h, o.Src))
			case history.OpPredRead, history.OpPredWrite:
				p := h.Pred(o)
				fmt.Fprintf(&sb, " %v[%s]{", o.Kind, p.Pred.Expr)
				for j, r := range p.Rows {
					if j > 0 {
						sb.WriteString(" ")
					}
					fmt.Fprintf(&sb, "%v:%v%s", h.Key(r.Key), h.Value(r.Value), src(h, p.Src(j)))
				}
				sb.WriteString("}")
			}
			if t.OpTimes == nil || t.OpTimes[i].End != t.OpTimes[i].Begin+1 {
				sb.WriteString("(no time)")
			}
		}
		out = append(out, sb.String())
	}
	return out
}

func TestDecode(t *testing.T) {
	t.Parallel()
	const f1, f2 = 0x1111, 0x2222
	tests := []struct {
		name  string
		files map[string][]byte
		want  []string
	}{
		{
			name: "items-across-files",
			files: map[string][]byte{
				"1.log": new(logw).T(5).S(1).W(2, 7, f1, 70).W(2, 7, f2, 71).W(3, 8, f1, 80).C(4).Bytes(),
				"2.log": new(logw).T(6).S(9).R(10, 7, 5, 2).R(11, 9, 0, 0).R(12, 8, 5, 3).A(13).T(7).S(14).Bytes(),
			},
			want: []string{
				"s1 5 committed w(7,0000000000001111=70,0000000000002222=71) w(8,0000000000001111=80)",
				"s2 6 aborted r(7,0000000000001111=70,0000000000002222=71)<5.0 r(9,nil)<init r(8,0000000000001111=80)<5.1",
				"s2 7 unknown",
			},
		},
		{
			name: "predicates",
			files: map[string][]byte{
				"0.log": new(logw).T(1).S(1).W(2, 1, f1, 5).W(2, 2, f1, 6).P(2, f1, 0, 9, []uint64{1, 2}, []uint32{1, 1}).C(3).Bytes(),
				"1.log": new(logw).T(2).S(4).R(5, 2, 1, 2).R(5, 3, 0, 0).P(5, f1, 6, 8, []uint64{2, 3}, []uint32{1, 0}).
					P(6, f2, 1, 2, nil, nil).R(7, 1, 1, 2).C(8).Bytes(),
			},
			want: []string{
				"s0 1 committed pred-write[0000000000001111 in [0, 9]]{1:0000000000001111=5 2:0000000000001111=6}",
				"s1 2 committed pred-read[0000000000001111 in [6, 8]]{2:0000000000001111=6<1.0 3:nil<init} pred-read[0000000000002222 in [1, 2]]{} r(1,0000000000001111=5)<1.0",
			},
		},
		{
			// One statement writing rows 9 and 7 with their fields out of order and
			// interleaved: rows in order of first appearance, fields ascending in each.
			name: "rows-interleaved",
			files: map[string][]byte{
				"1.log": new(logw).T(5).S(1).W(2, 9, f2, 92).W(2, 7, f2, 72).W(2, 9, f1, 91).W(2, 7, f1, 71).C(3).Bytes(),
			},
			want: []string{
				"s1 5 committed w(9,0000000000001111=91,0000000000002222=92) w(7,0000000000001111=71,0000000000002222=72)",
			},
		},
		{
			// The same with more than 16 records (rowValues indexes first appearances in a
			// map there): rows 30, 20, 10, each with six fields written from the last.
			name: "rows-interleaved-many",
			files: map[string][]byte{
				"1.log": func() []byte {
					w := new(logw).T(5).S(1)
					for f := uint64(6); f >= 1; f-- {
						for _, k := range []uint64{30, 20, 10} {
							w.W(2, k, f, uint32(k+f))
						}
					}
					return w.C(3).Bytes()
				}(),
			},
			want: []string{
				"s1 5 committed" +
					" w(30,0000000000000001=31,0000000000000002=32,0000000000000003=33,0000000000000004=34,0000000000000005=35,0000000000000006=36)" +
					" w(20,0000000000000001=21,0000000000000002=22,0000000000000003=23,0000000000000004=24,0000000000000005=25,0000000000000006=26)" +
					" w(10,0000000000000001=11,0000000000000002=12,0000000000000003=13,0000000000000004=14,0000000000000005=15,0000000000000006=16)",
			},
		},
		{
			name: "placeholder",
			files: map[string][]byte{
				"0.log": new(logw).T(1).S(1).R(2, 4, 9, 3).C(3).Bytes(),
			},
			want: []string{
				"s0 1 committed r(4,unknown:9/3)<9.0",
				"smissing-writers 9 unknown w(4,unknown:9/3)(no time)",
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
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	full := new(logw).T(1).S(1).W(2, 1, 1, 1).C(3).Bytes() // T 0, S 21, W 42, C 83, end 104
	tests := []struct {
		name   string
		files  map[string][]byte
		strict bool
		want   string
		trunc  bool
	}{
		{name: "bad-tag", files: map[string][]byte{"0.log": append(slices.Clone(full), 'x')}, want: "0.log (byte 104): vbox: expected a record tag 'T', 'S', 'C', 'A', 'W', 'R' or 'P', found byte 0x78"},
		{name: "truncated-write", files: map[string][]byte{"0.log": full[:60]}, want: "0.log (byte 42): vbox: unexpected end of input: 'W' record needs 40 bytes after its tag, 17 left", trunc: true},
		{name: "truncated-pred-rows", files: map[string][]byte{"0.log": new(logw).T(1).P(2, 1, 0, 1, []uint64{5}, []uint32{1}).Bytes()[:70]}, want: "(byte 21): vbox: unexpected end of input: 'P' record with 1 rows needs 56 bytes after its tag, 48 left", trunc: true},
		{name: "op-before-txn", files: map[string][]byte{"0.log": new(logw).W(2, 1, 1, 1).Bytes()}, want: "(byte 0): vbox: expected 'T' before 'W' record"},
		{name: "op-after-commit", files: map[string][]byte{"0.log": new(logw).T(1).C(2).R(3, 1, 0, 0).Bytes()}, want: "(byte 42): vbox: expected 'T' before 'R' record"},
		{name: "interval", files: map[string][]byte{"0.log": append([]byte{'T', 1, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0}, make([]byte, 8)...)}, want: "(byte 0): vbox: 'T' record of 1 ends (0) before it begins (9)"},
		{name: "pred-rows-without-records", files: map[string][]byte{"0.log": new(logw).T(1).P(2, 1, 0, 1, []uint64{5}, []uint32{1}).Bytes()}, want: "(byte 21): vbox: expected the 1 rows of predicate op 2 as 'R' or 'W' records with that oid before its 'P' record"},
		{name: "pred-key-mismatch", files: map[string][]byte{"0.log": new(logw).T(1).R(2, 4, 0, 0).P(2, 1, 0, 1, []uint64{5}, []uint32{0}).Bytes()}, want: "(byte 99): vbox: expected row 0 of predicate op 2 to be key 4 (its 'R' record), found 5"},
		{name: "pred-count-mismatch", files: map[string][]byte{"0.log": new(logw).T(1).R(2, 4, 0, 0).P(2, 1, 0, 1, nil, nil).Bytes()}, want: "(byte 58): vbox: expected predicate op 2 to list the 1 rows of its 'R' records, found 0"},
		{name: "strict-missing", strict: true, files: map[string][]byte{"0.log": new(logw).T(1).R(2, 4, 9, 3).Bytes()}, want: "0.log (byte 21): vbox: vbox: read names a writer that is not in the history: read of key 4 names op 3 of txn 9, and no log holds such a write"},
		{name: "ambiguous", files: map[string][]byte{
			"0.log": new(logw).T(9).W(3, 4, 1, 1).C(4).Bytes(),
			"1.log": (&logw{at: 100}).T(9).W(3, 4, 1, 2).C(4).Bytes(), // another run: another interval
			"2.log": new(logw).T(1).R(2, 4, 9, 3).Bytes(),
		}, want: "2.log (byte 21): vbox: vbox: read names a writer that is not in the history: read of key 4 names op 3 of txn 9, but several transactions with that id wrote the key in such an op"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := decodeFiles(&Decoder{Strict: tt.strict}, tt.files)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Decode = %v, want an error containing %q", err, tt.want)
			}
			var pe *parse.Error
			if !errors.As(err, &pe) {
				t.Errorf("Decode error %T is not a *parse.Error", err)
			}
			if got := errors.Is(err, parse.ErrTruncated); got != tt.trunc {
				t.Errorf("errors.Is(%v, ErrTruncated) = %v, want %v", err, got, tt.trunc)
			}
		})
	}
}

func TestSniff(t *testing.T) {
	t.Parallel()
	good := new(logw).T(1).S(1).C(2).Bytes()
	if !Sniff("0.log", good) || !Sniff("0.log", good[:21]) {
		t.Errorf("Sniff(vbox) = false")
	}
	cobra := append([]byte{'S'}, make([]byte, 40)...)
	for _, head := range [][]byte{nil, cobra, good[:10], append(slices.Clone(good[:21]), 'W'), []byte("T1 some text that is long enough to be read")} {
		if Sniff("0.log", head) {
			t.Errorf("Sniff(%q) = true", head)
		}
	}
}

func readDir(tb testing.TB, dir string, d *Decoder) (*history.History, error) {
	tb.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(names) == 0 {
		tb.Skipf("no Vbox logs in %s (%v)", dir, err)
	}
	num := func(p string) int { n, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(p), ".log")); return n }
	slices.SortFunc(names, func(a, b string) int { return num(a) - num(b) })
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

type counts struct {
	Txns, Committed, Aborted, Writes, Reads, InitReads int
	PredReads, PredReadRows, EmptyPredReads            int
	PredWrites, PredWriteRows, Placeholders            int
}

func count(h *history.History) counts {
	var c counts
	for _, t := range h.Txns {
		if h.Sessions[t.Session].Source == history.Str(history.PlaceholderSession) {
			c.Placeholders++
			continue
		}
		c.Txns++
		switch t.Outcome {
		case history.OutcomeCommitted:
			c.Committed++
		case history.OutcomeAborted:
			c.Aborted++
		}
		for _, o := range t.Ops {
			switch o.Kind {
			case history.OpWrite:
				c.Writes++
			case history.OpRead:
				c.Reads++
				if o.Src.Kind == history.SrcInit {
					c.InitReads++
				}
			case history.OpPredRead:
				c.PredReads++
				n := len(h.Pred(o).Rows)
				c.PredReadRows += n
				if n == 0 {
					c.EmptyPredReads++
				}
			case history.OpPredWrite:
				c.PredWrites++
				c.PredWriteRows += len(h.Pred(o).Rows)
			}
		}
	}
	return c
}

// TestSharedFiles reads every shared Vbox history. The counts were taken independently
// with a Python reader that applies the same statement grouping.
func TestSharedFiles(t *testing.T) {
	t.Parallel()
	data := corpus.Dir(t)
	tests := []struct {
		dir  string
		want counts
	}{
		{"vbox/coo/rat_sda_dirty_read", counts{Txns: 3, Committed: 2, Aborted: 1, Writes: 1, Reads: 2, InitReads: 1}},
		{"vbox/coo/iat_dda_read_skew_committed_pred", counts{Txns: 4, Committed: 4, Writes: 4, Reads: 2, PredReads: 2, EmptyPredReads: 2}},
		{"bench/vbox/blindw_rh_10000", counts{Txns: 10000, Committed: 9819, Aborted: 181, Writes: 16160, Reads: 63629, InitReads: 33961}},
		{"bench/vbox/blindw_wh_10000", counts{Txns: 10000, Committed: 8985, Aborted: 1015, Writes: 61248, Reads: 16024, InitReads: 3098}},
		{"bench/vbox/blindw_wr_10000", counts{Txns: 10000, Committed: 9459, Aborted: 541, Writes: 38649, Reads: 40161, InitReads: 12376}},
		{"bench/vbox/ctwitter_10000", counts{Txns: 10000, Committed: 7001, Aborted: 2999, Writes: 13119, Reads: 69053, InitReads: 25758}},
		{"bench/vbox/blindw_wr_100000", counts{Txns: 100000, Committed: 96863, Aborted: 3137, Writes: 392722, Reads: 396279, InitReads: 12019}},
		{"bench/vbox/blindw_pred_100", counts{Txns: 116, Committed: 82, Aborted: 34, Writes: 10000, PredReads: 234, PredReadRows: 11923, EmptyPredReads: 11, PredWrites: 146, PredWriteRows: 491}},
		{"bench/vbox/blindw_pred_1000", counts{Txns: 1596, Committed: 924, Aborted: 672, Writes: 10000, PredReads: 4507, PredReadRows: 129607, EmptyPredReads: 180, PredWrites: 2615, PredWriteRows: 7488, Placeholders: 23}},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			t.Parallel()
			h, err := readDir(t, filepath.Join(data, tt.dir), NewDecoder())
			if err != nil {
				t.Fatalf("reading %s: %v", tt.dir, err)
			}
			if diff := cmp.Diff(tt.want, count(h)); diff != "" {
				t.Errorf("counts of %s (-want +got):\n%s", tt.dir, diff)
			}
		})
	}
	dirs, _ := filepath.Glob(filepath.Join(data, "vbox/coo/*"))
	if len(dirs) != 29 {
		t.Errorf("found %d Coo cases, want 29", len(dirs))
	}
	for _, dir := range dirs {
		if _, err := readDir(t, dir, &Decoder{Strict: true}); err != nil {
			t.Errorf("reading %s: %v", dir, err)
		}
	}
}

// TestPlaceholderOutcome: a placeholder takes the outcome of the one logged transaction with
// its tid, unless a read naming it ended before that transaction began (the tid then names
// another transaction, as in logs of two runs mixed in one directory): its outcome is
// unknown, and a note names the tid and the logged transaction.
func TestPlaceholderOutcome(t *testing.T) {
	t.Parallel()
	reader := func() []byte { return new(logw).T(1).S(1).R(2, 4, 9, 3).C(3).Bytes() } // intervals 10..41
	later := new(logw)
	later.at = 1000
	early := new(logw)
	tests := []struct {
		name   string
		logged []byte
		want   history.Outcome
		note   string
	}{
		{"began-after-the-read", later.T(9).S(20).W(21, 5, 1, 1).A(22).Bytes(), history.OutcomeUnknown, "transaction 9 of 1.log began): they name other transactions with the same ids"},
		{"running-during-the-read", early.T(9).S(20).W(21, 5, 1, 1).A(22).Bytes(), history.OutcomeAborted, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := decodeFiles(NewDecoder(), map[string][]byte{"0.log": reader(), "1.log": tt.logged})
			if err != nil {
				t.Fatal(err)
			}
			ph := h.Placeholders()
			if len(ph) != 1 {
				t.Fatalf("%d placeholders, want 1", len(ph))
			}
			if got := h.Txns[ph[0]].Outcome; got != tt.want {
				t.Errorf("placeholder outcome %v, want %v", got, tt.want)
			}
			notes := strings.Join(h.Notes, "\n")
			if tt.note == "" && strings.Contains(notes, "same ids") || tt.note != "" && !strings.Contains(notes, tt.note) {
				t.Errorf("notes %q, want one containing %q", notes, tt.note)
			}
			if tt.note != "" && !strings.Contains(notes, "transaction 9 of 1.log aborted") {
				t.Errorf("notes %q do not name the aborted logged transaction", notes)
			}
		})
	}
}
