package parse_test

import (
	"errors"
	"io"
	"testing"

	"isovet/internal/parse"
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
