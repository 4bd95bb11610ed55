package dbcop

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/corpus"
	"github.com/isovet/isovet/internal/parse"
)

// bin builds bincode.
type bin struct{ bytes.Buffer }

func (w *bin) u64(vs ...uint64) *bin {
	for _, v := range vs {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		w.Write(b[:])
	}
	return w
}
func (w *bin) str(s string) *bin { w.u64(uint64(len(s))); w.WriteString(s); return w }
func (w *bin) boolean(v bool) *bin {
	if v {
		w.WriteByte(1)
	} else {
		w.WriteByte(0)
	}
	return w
}

type ev struct {
	write bool
	k, v  uint64
	ok    bool
}

type txn struct {
	evs []ev
	ok  bool
}

func encode(sessions [][]txn) []byte {
	w := new(bin)
	w.u64(0, uint64(len(sessions)), 10, 1, 2).str("test").str("2024-01-01").str("2024-01-02")
	w.u64(uint64(len(sessions)))
	for _, s := range sessions {
		w.u64(uint64(len(s)))
		for _, t := range s {
			w.u64(uint64(len(t.evs)))
			for _, e := range t.evs {
				w.boolean(e.write).u64(e.k, e.v).boolean(e.ok)
			}
			w.boolean(t.ok)
		}
	}
	return w.Bytes()
}

func render(h *history.History) []string {
	var out []string
	for _, t := range h.Txns {
		var sb strings.Builder
		fmt.Fprintf(&sb, "s%v %v", h.Sessions[t.Session].Source, t.Outcome)
		for _, o := range t.Ops {
			kind := "r"
			if o.Kind == history.OpWrite {
				kind = "w"
			}
			fmt.Fprintf(&sb, " %s(%v,%v)", kind, h.Key(o.Key), h.Value(o.Value))
			if o.Failed() {
				sb.WriteString("!")
			}
		}
		out = append(out, sb.String())
	}
	return out
}

func decodeBin(data []byte) (*history.History, error) {
	b := history.NewBuilder()
	if err := NewDecoder().Decode(bytes.NewReader(data), "history.bincode", b); err != nil {
		return nil, err
	}
	return b.Build()
}

func decodeJSON(data string) (*history.History, error) {
	b := history.NewBuilder()
	if err := NewJSONDecoder().Decode(strings.NewReader(data), "history.json", b); err != nil {
		return nil, err
	}
	return b.Build()
}

func TestDecodeBincode(t *testing.T) {
	t.Parallel()
	data := encode([][]txn{
		{{evs: []ev{{write: true, k: 1, v: 5, ok: true}, {k: 2, v: 0, ok: true}}, ok: true}},
		{{evs: []ev{{k: 1, v: 5, ok: true}, {write: true, k: 2, v: 6, ok: false}}, ok: true}, {evs: []ev{{write: true, k: 1, v: 7, ok: true}}, ok: false}},
	})
	h, err := decodeBin(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"s0 committed w(1,5) r(2,0)", "s1 committed r(1,5) w(2,6)!", "s1 aborted w(1,7)"}
	if diff := cmp.Diff(want, render(h)); diff != "" {
		t.Errorf("Decode mismatch (-want +got):\n%s", diff)
	}
	if got := h.Value(h.Initial); got != history.Int(0) {
		t.Errorf("initial value = %v, want 0", got)
	}
	hd, err := ReadHeader(data)
	if err != nil || hd.Info != "test" || hd.Nodes != 2 {
		t.Errorf("ReadHeader = %+v, %v", hd, err)
	}
}

func TestDecodeBincodeErrors(t *testing.T) {
	t.Parallel()
	good := encode([][]txn{{{evs: []ev{{write: true, k: 1, v: 5, ok: true}}, ok: true}}})
	// Layout: header 40, strings 8+4, 8+10, 8+10 = 88; sessions len at 88; session 0 len at
	// 96; txn events len at 104; event at 112 (write bool), 113 var, 121 value, 129 success;
	// txn success at 130; end 131.
	bad := func(at int, c byte) []byte { d := bytes.Clone(good); d[at] = c; return d }
	tests := []struct {
		name  string
		data  []byte
		want  string
		trunc bool
	}{
		{"empty", nil, "history.bincode (byte 0): dbcop: unexpected end of input: expected history id (u64, 8 bytes), 0 bytes left", true},
		{"cut-header", good[:30], "(byte 24): dbcop: unexpected end of input: expected n_transaction (u64, 8 bytes), 6 bytes left", true},
		{"cut-string-length", good[:45], "(byte 40): dbcop: unexpected end of input: expected info string length (u64, 8 bytes), 5 bytes left", true},
		{"cut-string", good[:50], "(byte 40): dbcop: unexpected end of input: info string length 4 needs at least 4 bytes, 2 left", true},
		{"cut-event", good[:120], "(byte 104): dbcop: unexpected end of input: transaction events length 1 needs at least 18 bytes, 8 left", true},
		{"cut-txn-flag", good[:130], "(byte 130): dbcop: unexpected end of input: expected transaction success flag (bool, 1 byte)", true},
		{"bad-write-bool", bad(112, 2), "(byte 112): dbcop: expected a bool (byte 0 or 1) in an event, found 0x02", false},
		{"bad-success-bool", bad(129, 7), "(byte 129): dbcop: expected a bool (byte 0 or 1) in an event, found 0x07", false},
		{"bad-txn-bool", bad(130, 9), "(byte 130): dbcop: expected transaction success flag (bool: byte 0 or 1), found 0x09", false},
		{"huge-length", bad(95, 0x7f), "(byte 88): dbcop: expected sessions length, found implausible", false},
		{"trailing", append(bytes.Clone(good), 0), "(byte 131): dbcop: expected the end of the history, found 1 more bytes", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := decodeBin(tt.data)
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

func TestDecodeJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     []string
		err      string
	}{
		{
			name: "bare",
			in:   `[[{"events":[{"Write":{"variable":0,"version":1}},{"Read":{"variable":1,"version":null}}],"committed":true}],[{"events":[{"Read":{"variable":0,"version":1}}],"committed":false}]]`,
			want: []string{"s0 committed w(0,1) r(1,nil)", "s1 aborted r(0,1)"},
		},
		{
			name: "wrapped",
			in:   `{"params":{"n":1},"info":"x","start":"a","end":"b","data":[[{"events":[{"Write":{"variable":3,"version":2}}],"committed":true}]]}`,
			want: []string{"s0 committed w(3,2)"},
		},
		{name: "syntax", in: "[[{\"events\":\n[}]]", err: "history.json:2:2 (byte 14): dbcop-json: invalid character '}'"},
		{name: "truncated", in: `[[{"events":[`, err: "dbcop-json: unexpected end of input"},
		{name: "type", in: `[[{"events":[{"Write":{"variable":"x","version":1}}],"committed":true}]]`, err: "(byte 37): dbcop-json: json: cannot unmarshal string"},
		{name: "both", in: `[[{"events":[{"Write":{"variable":1,"version":1},"Read":{"variable":1,"version":1}}],"committed":true}]]`, err: "session 0, transaction 0, event 0: expected exactly one of \"Write\" or \"Read\""},
		{name: "no-committed", in: `[[{"events":[]}]]`, err: "session 0, transaction 0: expected a \"committed\" member"},
		{name: "no-data", in: `{"info":"x"}`, err: "expected an object with a \"data\" member"},
		{name: "write-null", in: `[[{"events":[{"Write":{"variable":1,"version":null}}],"committed":true}]]`, err: "expected a written \"version\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := decodeJSON(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Decode = %v, want an error containing %q", err, tt.err)
				}
				if tt.name == "truncated" && !errors.Is(err, parse.ErrTruncated) {
					t.Errorf("errors.Is(%v, ErrTruncated) = false", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, render(h)); diff != "" {
				t.Errorf("Decode mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSniff(t *testing.T) {
	t.Parallel()
	good := encode([][]txn{{{evs: []ev{{write: true, k: 1, v: 5, ok: true}}, ok: true}}})
	if !Sniff("history.bincode", good) || !Sniff("x", good) {
		t.Errorf("Sniff(bincode) = false")
	}
	for _, head := range [][]byte{nil, []byte("[[{\"events\":[]}]]"), bytes.Repeat([]byte{0xff}, 100), append([]byte{'T', 1, 0, 0, 0}, make([]byte, 100)...)} {
		if Sniff("x", head) {
			t.Errorf("Sniff(%q) = true", head)
		}
	}
	if !SniffJSON("h.json", []byte(` [[{"events":[{"Write":{"variable":0,"version":1}}],"committed":true}]]`)) {
		t.Errorf("SniffJSON(dbcop json) = false")
	}
	for _, head := range []string{`{"sts":1,"cts":2,"ops":[]}`, `[{"type":"ok","value":[["r",1,null]]}]`, "S..."} {
		if SniffJSON("x.json", []byte(head)) {
			t.Errorf("SniffJSON(%q) = true", head)
		}
	}
}

type counts struct{ Sessions, Txns, Aborted, Reads, Writes, Failed int }

func count(h *history.History) counts {
	c := counts{Sessions: len(h.Sessions), Txns: len(h.Txns)}
	for _, t := range h.Txns {
		if t.Outcome == history.OutcomeAborted {
			c.Aborted++
		}
		for _, o := range t.Ops {
			if o.Kind == history.OpWrite {
				c.Writes++
			} else {
				c.Reads++
			}
			if o.Failed() {
				c.Failed++
			}
		}
	}
	return c
}

// TestSharedFiles reads every shared bincode history; the counts were taken independently
// with a Python reader of the same layout.
func TestSharedFiles(t *testing.T) {
	t.Parallel()
	sharedData := corpus.Dir(t)
	tests := []struct {
		path string
		want counts
	}{
		{"bench/veristrong-10k/RH-10k/hist-00000/history.bincode", counts{25, 10000, 0, 75948, 4052, 0}},
		{"bench/veristrong-10k/BL-10k/hist-00000/history.bincode", counts{25, 10000, 0, 40129, 39871, 0}},
		{"bench/veristrong-10k/WH-10k/hist-00000/history.bincode", counts{25, 10000, 0, 23880, 56120, 0}},
		{"bench/veristrong-10k/HD-10k/hist-00000/history.bincode", counts{25, 10000, 0, 40113, 39887, 0}},
		{"polysi/violations/dgraph/history.bincode", counts{10, 800, 320, 8038, 7962, 0}},
		// Five sessions in the file: the first, PolySI's initial transaction writing both
		// variables, is read as the initial state.
		{"plume/testcase/dbcop/tap-n/history.bincode", counts{4, 7, 0, 5, 3, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(corpus.Path(t, tt.path))
			if err != nil {
				t.Fatal(err)
			}
			if !Sniff("history.bincode", data[:min(len(data), 4096)]) {
				t.Errorf("Sniff(%s) = false", tt.path)
			}
			h, err := decodeBin(data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, count(h)); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
		})
	}
	files, _ := filepath.Glob(filepath.Join(sharedData, "plume/testcase/dbcop/*/history.bincode"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h, err := decodeBin(data)
		if err != nil {
			t.Errorf("reading %s: %v", f, err)
			continue
		}
		// Every Plume file starts with the converter's initial transaction, read as the
		// initial state.
		if len(h.Notes) != 1 || !strings.Contains(h.Notes[0], "initial state") || len(h.InitialByKey) == 0 {
			t.Errorf("%s: notes %q, %d initial values: want the first session read as the initial state", f, h.Notes, len(h.InitialByKey))
		}
	}
}

// TestBincodeInitialSession checks when the first session is read as the initial state:
// only when it is one committed transaction of successful writes, each variable once, that
// every other transaction's variables come from, whose values nobody else writes, and no
// read of 0 (the format's own initial value) exists.
func TestBincodeInitialSession(t *testing.T) {
	t.Parallel()
	w := func(k, v uint64) ev { return ev{write: true, k: k, v: v, ok: true} }
	r := func(k, v uint64) ev { return ev{k: k, v: v, ok: true} }
	init := txn{evs: []ev{w(1, 1), w(2, 1)}, ok: true}
	rest := []txn{{evs: []ev{r(1, 1), w(2, 5)}, ok: true}}
	tests := []struct {
		name     string
		sessions [][]txn
		dropped  bool
	}{
		{"initial", [][]txn{{init}, rest}, true},
		{"two transactions", [][]txn{{init, {evs: []ev{w(1, 7)}, ok: true}}, rest}, false},
		{"alone", [][]txn{{init}}, false},
		{"reads", [][]txn{{{evs: []ev{w(1, 1), r(2, 1), w(2, 1)}, ok: true}}, rest}, false},
		{"a key twice", [][]txn{{{evs: []ev{w(1, 1), w(1, 2), w(2, 1)}, ok: true}}, rest}, false},
		{"aborted", [][]txn{{{evs: init.evs, ok: false}}, rest}, false},
		{"failed write", [][]txn{{{evs: []ev{w(1, 1), {write: true, k: 2, v: 1}}, ok: true}}, rest}, false},
		{"value written again", [][]txn{{init}, {{evs: []ev{w(1, 1)}, ok: true}}}, false},
		{"a read of 0", [][]txn{{init}, {{evs: []ev{r(1, 0)}, ok: true}}}, false},
		{"another variable", [][]txn{{init}, {{evs: []ev{w(3, 4)}, ok: true}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := decodeBin(encode(tt.sessions))
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, s := range tt.sessions {
				want += len(s)
			}
			if tt.dropped {
				want--
			}
			if len(h.Txns) != want || (len(h.Notes) == 1) != tt.dropped {
				t.Errorf("%d transactions, notes %q; want %d and a note = %v", len(h.Txns), h.Notes, want, tt.dropped)
			}
			if tt.dropped {
				if len(h.InitialByKey) != 2 || h.Value(h.InitialValue(0)) != history.Int(1) || h.Sessions[0].Source != history.Int(1) {
					t.Errorf("initial values %v, first session %v: want variables 1 and 2 at 1, session 0 gone", h.InitialByKey, h.Sessions[0].Source)
				}
			}
		})
	}
}
