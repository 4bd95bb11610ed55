package parse_test

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/isovet/isovet/internal/parse"
)

func TestErrorNamesLocation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  *parse.Error
		want string
	}{
		{"text", parse.Errorf("text", "h.txt", 3, 7, 42, "expected %q", ")"), `h.txt:3:7 (byte 42): text: expected ")"`},
		{"binary", parse.Errorf("cobra", "T1.log", 0, 0, 17, "truncated record"), "T1.log (byte 17): cobra: truncated record"},
		{"stream", parse.Errorf("jsonl", "", 1, 0, 0, "bad"), "<input>:1: jsonl: bad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
	e := &parse.Error{Format: "x", Offset: -1, Err: io.ErrUnexpectedEOF}
	if !errors.Is(parse.WithFile(e, "f"), io.ErrUnexpectedEOF) || e.File != "f" {
		t.Errorf("WithFile/Unwrap broken: %v", e)
	}
}

func TestReadAll(t *testing.T) {
	t.Parallel()
	data := bytes.Repeat([]byte("0123456789"), 10_000)
	for _, r := range []io.Reader{
		bytes.NewReader(data),                       // says its length
		iotest.OneByteReader(bytes.NewReader(data)), // does not
		&lying{bytes.NewReader(data), 10},           // says less than it holds
		&lying{bytes.NewReader(data), 1 << 20},      // says more
	} {
		got, err := parse.ReadAll(r)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("ReadAll(%T) = %d bytes, %v; want %d bytes", r, len(got), err, len(data))
		}
	}
	if _, err := parse.ReadAll(&lying{iotest.ErrReader(io.ErrClosedPipe), 5}); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("ReadAll of a failing reader: error %v, want %v", err, io.ErrClosedPipe)
	}
}

type lying struct {
	io.Reader
	n int
}

func (l *lying) Len() int { return l.n }

func TestPush(t *testing.T) {
	t.Parallel()
	var s []int
	for i := range 1000 {
		s = parse.Push(s, i)
		if len(s) != i+1 || s[i] != i || s[0] != 0 {
			t.Fatalf("after %d pushes: len %d, s[0] %d, last %d", i+1, len(s), s[0], s[i])
		}
	}
	if cap(s) >= 2048 || cap(s) < 1000 {
		t.Errorf("cap after 1000 pushes = %d, want doubling from 16", cap(s))
	}
}
