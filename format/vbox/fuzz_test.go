package vbox

import (
	"bytes"
	"errors"
	"testing"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/parse"
)

// FuzzReadVbox checks that no input panics, that every error is a located *parse.Error,
// and that accepted input builds a valid history. Seeds live in testdata/fuzz/FuzzReadVbox.
func FuzzReadVbox(f *testing.F) {
	f.Add(new(logw).T(1).S(1).W(2, 1, 1, 5).W(2, 2, 1, 6).P(2, 1, 0, 9, []uint64{1, 2}, []uint32{1, 1}).C(3).
		T(2).S(4).R(5, 1, 1, 2).R(5, 3, 0, 0).P(5, 1, 0, 9, []uint64{1, 3}, []uint32{1, 0}).R(6, 2, 9, 9).A(7).Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		files := [][]byte{data[:len(data)/2], data[len(data)/2:]}
		names := []string{"0.log", "1.log"}
		d := NewDecoder()
		b := history.NewBuilder()
		for i, file := range files {
			if err := d.Decode(bytes.NewReader(file), names[i], b); err != nil {
				var pe *parse.Error
				if !errors.As(err, &pe) || pe.File != names[i] || pe.Offset < 0 || pe.Offset > int64(len(file)) {
					t.Fatalf("error %v is not located in %s (%d bytes)", err, names[i], len(file))
				}
				return
			}
		}
		if err := d.Finish(b); err != nil {
			var pe *parse.Error
			if !errors.As(err, &pe) || pe.File == "" || pe.Offset < 0 {
				t.Fatalf("Finish error %v is not located", err)
			}
			return
		}
		if _, err := b.Build(); err != nil {
			t.Fatalf("accepted input builds an invalid history: %v", err)
		}
	})
}
