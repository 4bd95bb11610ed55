package text_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/format/text"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/corpus"
	"github.com/isovet/isovet/internal/parse"
)

func read(tb testing.TB, in string) (*history.History, error) {
	tb.Helper()
	b := history.NewBuilder()
	if err := text.NewDecoder().Decode(strings.NewReader(in), "h.txt", b); err != nil {
		return nil, err
	}
	return b.Build()
}

func canon(tb testing.TB, h *history.History) string {
	tb.Helper()
	var buf bytes.Buffer
	if err := native.Write(&buf, h); err != nil {
		tb.Fatalf("native.Write() = %v", err)
	}
	return buf.String()
}

func write(tb testing.TB, h *history.History) string {
	tb.Helper()
	var buf bytes.Buffer
	if err := text.Write(&buf, h); err != nil {
		tb.Fatalf("Write() = %v", err)
	}
	return buf.String()
}

func TestReadSharedFiles(t *testing.T) {
	t.Parallel()
	corpus.Dir(t) // skip once, not per file, without them
	tests := []struct {
		file                         string
		ops, sessions, txns, aborted int
	}{
		// Counted by hand (a regex over every line; see the report).
		{"polysi/violations/galera/galera.txt", 14, 2, 7, 0},
		{"polysi/violations/yugabyte/yugabyte.txt", 200, 2, 20, 0},
		{"plume/testcase/text/tap-a.txt", 2, 1, 1, 0},
		{"plume/testcase/text/tap-b.txt", 3, 1, 2, 1},
		{"plume/testcase/text/tap-c.txt", 2, 1, 1, 0},
		{"plume/testcase/text/tap-d.txt", 3, 2, 2, 0},
		{"plume/testcase/text/tap-e.txt", 3, 1, 1, 0},
		{"plume/testcase/text/tap-f.txt", 3, 2, 2, 0},
		{"plume/testcase/text/tap-g.txt", 4, 2, 3, 0},
		{"plume/testcase/text/tap-h.txt", 6, 3, 4, 0},
		{"plume/testcase/text/tap-i.txt", 6, 3, 3, 0},
		{"plume/testcase/text/tap-j.txt", 4, 2, 2, 0},
		{"plume/testcase/text/tap-k.txt", 6, 3, 4, 0},
		{"plume/testcase/text/tap-l.txt", 6, 3, 3, 0},
		{"plume/testcase/text/tap-m.txt", 6, 3, 5, 0},
		{"plume/testcase/text/tap-n.txt", 8, 4, 7, 0},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(corpus.Path(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			h, err := read(t, string(raw))
			if err != nil {
				t.Fatal(err)
			}
			ops, aborted := 0, 0
			for _, tx := range h.Txns {
				ops += len(tx.Ops)
				if tx.Outcome == history.OutcomeAborted {
					aborted++
				}
			}
			got := []int{ops, len(h.Sessions), len(h.Txns), aborted}
			if diff := cmp.Diff([]int{tt.ops, tt.sessions, tt.txns, tt.aborted}, got); diff != "" {
				t.Errorf("(ops, sessions, txns, aborted) differ (-want +got):\n%s", diff)
			}
			if h.Value(h.Initial) != history.Int(0) {
				t.Errorf("Initial = %v, want 0", h.Value(h.Initial))
			}
			h2, err := read(t, write(t, h))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(canon(t, h), canon(t, h2)); diff != "" {
				t.Errorf("read(Write(h)) differs (-want +got):\n%s", diff)
			}
			// The native format carries this history unchanged.
			nb := history.NewBuilder()
			if err := native.NewDecoder().Decode(strings.NewReader(canon(t, h)), "native", nb); err != nil {
				t.Fatal(err)
			}
			hn, err := nb.Build()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(canon(t, h), canon(t, hn)); diff != "" {
				t.Errorf("native round trip differs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGaleraIsTheDigestsHistory(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(corpus.Path(t, "polysi/violations/galera/galera.txt"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := read(t, string(raw))
	if err != nil {
		t.Fatal(err)
	}
	got := canon(t, h)
	want := `{"isovet":1,"initial":0}
{"s":1,"id":1,"ops":[["w",0,1],["w",0,2]]}
{"s":1,"id":2,"ops":[["w",0,3],["w",0,4]]}
{"s":1,"id":3,"ops":[["r",0,4],["w",0,5]]}
{"s":1,"id":4,"ops":[["r",0,5],["r",0,5]]}
{"s":2,"id":8,"ops":[["r",0,4],["w",0,10]]}
{"s":2,"id":9,"ops":[["w",0,11],["w",0,12]]}
{"s":2,"id":10,"ops":[["w",0,13],["w",0,14]]}
`
	if got != want {
		t.Errorf("galera.txt =\n%s\nwant\n%s", got, want)
	}
}

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"interleaved txns", "w(1,1,0,5)\nw(2,1,1,6)\nr(2,1,0,5)\n", `{"s":0,"id":5,"ops":[["w",1,1],["r",2,1]]}` + "\n" + `{"s":1,"id":6,"ops":[["w",2,1]]}`},
		{"aborted per session", "w(1,1,0,-1)\nw(1,2,1,-1)\nr(1,1,0,1)", `{"s":0,"id":-1,"o":"a","ops":[["w",1,1]]}` + "\n" + `{"s":1,"id":-1,"o":"a","ops":[["w",1,2]]}` + "\n" + `{"s":0,"id":1,"ops":[["r",1,1]]}`},
		{"negatives and spaces", " w( -3 , -4 ,\t-5, 7 ) \r\n\n", `{"s":-5,"id":7,"ops":[["w",-3,-4]]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := read(t, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			got := canon(t, h)
			got = strings.TrimSpace(got[strings.IndexByte(got, '\n')+1:])
			if got != tt.want {
				t.Errorf("read(%q) =\n%s\nwant\n%s", tt.in, got, tt.want)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"bad op", "w(1,1,0,0)\nx(1,1,0,0)", `h.txt:2:1 (byte 11): text: expected r(key,value,session,txn) or w(...), found 'x'`},
		{"missing paren", "r 1,1,0,0)", `h.txt:1:3 (byte 2): text: expected '(' after the operation, found '1'`},
		{"missing field", "r(1,1,0)", `h.txt:1:8 (byte 7): text: expected ',' after the session, found ')'`},
		{"not a number", "r(1,x,0,0)", `h.txt:1:5 (byte 4): text: expected the value (an integer), found 'x'`},
		{"overflow", "r(1,99999999999999999999,0,0)", `h.txt:1:5 (byte 4): text: the value is out of the 64-bit integer range`},
		{"trailing", "r(1,1,0,0);", `h.txt:1:11 (byte 10): text: expected end of line after the operation, found ';'`},
		{"truncated", "r(1,1,0,0", `h.txt:1:10 (byte 9): text: expected ')' after the transaction id, found end of line`},
		{"txn in two sessions", "w(1,1,0,3)\nw(1,2,1,3)", `h.txt:2:1 (byte 11): text: transaction 3 is in session 0 (line 1), not 1: expected one session per transaction`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := read(t, tt.in)
			var pe *parse.Error
			if !errors.As(err, &pe) {
				t.Fatalf("read(%q) = %v, want a *parse.Error", tt.in, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("read(%q) error\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestWrite(t *testing.T) {
	t.Parallel()
	// A history with no usable source ids is numbered by dense ids.
	b := history.NewBuilder()
	s := b.Session(history.Str("client"))
	b.BeginTxn(s, history.NilDatum, history.OutcomeCommitted)
	b.Write(b.IntKey(1), b.IntValue(2))
	b.BeginTxn(s, history.Str("t"), history.OutcomeAborted)
	b.Write(b.IntKey(1), b.IntValue(3))
	b.BeginTxn(s, history.NilDatum, history.OutcomeCommitted) // no ops: not written
	b.BeginTxn(s, history.NilDatum, history.OutcomeCommitted)
	b.Read(b.IntKey(1), b.IntValue(2))
	h, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := write(t, h), "w(1,2,0,0)\nw(1,3,0,-1)\nr(1,2,0,3)\n"; got != want {
		t.Errorf("Write() =\n%s\nwant\n%s", got, want)
	}
	for _, bad := range []func(b *history.Builder){
		func(b *history.Builder) { b.Append(b.IntKey(1), b.IntValue(1)) },
		func(b *history.Builder) { b.Write(b.StrKey("x"), b.IntValue(1)) },
		func(b *history.Builder) { b.Read(b.IntKey(1), history.Nil) },
	} {
		b := history.NewBuilder()
		b.BeginTxn(b.Session(history.Int(1)), history.NilDatum, history.OutcomeCommitted)
		bad(b)
		h, _ := b.Build()
		if err := text.Write(io.Discard, h); !errors.Is(err, text.ErrUnrepresentable) {
			t.Errorf("Write(%s) = %v, want ErrUnrepresentable", canon(t, h), err)
		}
	}
}

func TestSniff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		head string
		want bool
	}{
		{"r(15,0,0,0)\nr(10,0,0,0)", true},
		{"\nw(1,1,0,-1)", true},
		{"w(1,1,0,0", true}, // cut by the sniff limit
		{"rw(1,1)", false},
		{`{"isovet":1}`, false},
		{"2\n0 1 A 1 1", false},
		{"w(1,1,0,0) trailing\n", false},
	}
	for _, tt := range tests {
		if got := text.Sniff("h.txt", []byte(tt.head)); got != tt.want {
			t.Errorf("Sniff(%q) = %v, want %v", tt.head, got, tt.want)
		}
	}
}

func FuzzRead(f *testing.F) {
	for _, p := range []string{"polysi/violations/galera/galera.txt", "plume/testcase/text/tap-b.txt", "plume/testcase/text/tap-n.txt"} {
		if path, ok := corpus.Find(p); ok {
			if raw, err := os.ReadFile(path); err == nil {
				f.Add(raw)
			}
		}
	}
	f.Add([]byte("w(1,1,0,5)\nw(2,1,1,6)\nr(2,1,0,5)\nw(1,1,0,-1)\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		h, err := read(t, string(in))
		if err != nil {
			return
		}
		h2, err := read(t, write(t, h))
		if err != nil {
			t.Fatalf("re-reading the written %q: %v", in, err)
		}
		if diff := cmp.Diff(canon(t, uniform(h)), canon(t, uniform(h2))); diff != "" {
			t.Fatalf("round trip of %q differs (-want +got):\n%s", in, diff)
		}
	})
}

// uniform returns h without the per-key initial values that equal the initial value of every
// key: a first transaction read as the initial state gives its keys 0, which the text
// format writes as nothing (every key starts at 0), so only the representation differs.
func uniform(h *history.History) *history.History {
	c := *h
	c.InitialByKey = nil
	for k, v := range h.InitialByKey {
		if v != h.Initial {
			if c.InitialByKey == nil {
				c.InitialByKey = make(map[history.Key]history.Value)
			}
			c.InitialByKey[k] = v
		}
	}
	return &c
}
