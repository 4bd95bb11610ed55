package veristrong_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/format/veristrong"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/parse"
)

func read(tb testing.TB, r io.Reader) (*history.History, error) {
	tb.Helper()
	b := history.NewBuilder()
	if err := veristrong.NewDecoder().Decode(r, "h.txt", b); err != nil {
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
	if err := veristrong.Write(&buf, h); err != nil {
		tb.Fatalf("Write() = %v", err)
	}
	return buf.String()
}

// example is a small list-append history in VeriStrong's format (written for this test):
// session 1 appends 1 and 2 to key 5; session 2 reads [1 2], then appends 3 in a record
// separated from its transaction's first one.
const example = `5
1 10 A 5 1
1 11 A 5 2
2 20 R 5 2 1 2
1 12 R 5 0
2 20 A 5 3
`

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"example", example, `{"s":1,"id":10,"ops":[["a",5,1]]}
{"s":1,"id":11,"ops":[["a",5,2]]}
{"s":2,"id":20,"ops":[["r",5,[1,2]],["a",5,3]]}
{"s":1,"id":12,"ops":[["r",5,[]]]}`},
		{"any white space", "2 0 0 A -1 -2\t0 0\r\nR\n-1 1 -2", `{"s":0,"id":0,"ops":[["a",-1,-2],["r",-1,[-2]]]}`},
		{"empty", "0\n", ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				h, err := read(t, r)
				if err != nil {
					t.Fatal(err)
				}
				got := canon(t, h)
				got = strings.TrimSpace(got[strings.IndexByte(got, '\n')+1:])
				if got != tt.want {
					t.Errorf("read(%q) =\n%s\nwant\n%s", tt.in, got, tt.want)
				}
				h2, err := read(t, strings.NewReader(write(t, h)))
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(canon(t, h), canon(t, h2)); diff != "" {
					t.Errorf("read(Write(h)) differs (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"no count", "x", `h.txt:1:1: veristrong: expected the record count (an integer), found "x"`},
		{"negative count", "-1", `h.txt:1:1: veristrong: expected a non-negative record count, found -1`},
		{"bad kind", "1\n1 2 W 3 4", `h.txt:2:5 (byte 6): veristrong: expected R (read) or A (append) in record 1, found "W"`},
		{"truncated", "2\n1 2 A 3 4\n1 2 R 3 2 7", `h.txt:3:12 (byte 23): veristrong: expected a list element (an integer), found end of input: unexpected end of input`},
		{"extra", "1\n1 2 A 3 4\n1 2 A 3 5", `h.txt:3:1 (byte 12): veristrong: expected end of input after 1 records, found "1"`},
		{"two sessions", "2\n1 2 A 3 4\n5 2 A 3 5", `h.txt:3:3 (byte 14): veristrong: transaction 2 is in session 1 (line 2), not 5: expected one session per transaction`},
		{"overflow", "1\n1 2 A 3 99999999999999999999", `h.txt:2:9 (byte 10): veristrong: the appended value 99999999999999999999 is out of the 64-bit integer range`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := read(t, strings.NewReader(tt.in))
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

func TestSniff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		head string
		want bool
	}{
		{example, true},
		{"0\n", true},
		{"3\n1 2 X 4", false},
		{"w(1,2,3,4)", false},
		{`[{"tid":1}]`, false},
		{"{:type :ok}", false},
	}
	for _, tt := range tests {
		if got := veristrong.Sniff("history.txt", []byte(tt.head)); got != tt.want {
			t.Errorf("Sniff(%q) = %v, want %v", tt.head, got, tt.want)
		}
	}
}

func TestWriteRefuses(t *testing.T) {
	t.Parallel()
	b := history.NewBuilder()
	b.BeginTxn(b.Session(history.Int(1)), history.NilDatum, history.OutcomeCommitted)
	b.Write(b.IntKey(1), b.IntValue(1))
	h, _ := b.Build()
	if err := veristrong.Write(io.Discard, h); !errors.Is(err, veristrong.ErrUnrepresentable) {
		t.Errorf("Write(write op) = %v, want ErrUnrepresentable", err)
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(example))
	f.Add([]byte("2 0 0 A -1 -2\t0 0\r\nR\n-1 1 -2"))
	f.Fuzz(func(t *testing.T, in []byte) {
		h, err := read(t, bytes.NewReader(in))
		if err != nil {
			return
		}
		h2, err := read(t, strings.NewReader(write(t, h)))
		if err != nil {
			t.Fatalf("re-reading the written %q: %v", in, err)
		}
		if diff := cmp.Diff(canon(t, h), canon(t, h2)); diff != "" {
			t.Fatalf("round trip of %q differs (-want +got):\n%s", in, diff)
		}
	})
}
