package cobra

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"testing"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/parse"
)

// FuzzReadCobra checks that no input panics, that every error is a located *parse.Error
// (file and byte offset inside the input), and that accepted input builds a valid history.
// Seeds live in testdata/fuzz/FuzzReadCobra (small shared logs and hand-built ones).
func FuzzReadCobra(f *testing.F) {
	f.Add(new(logw).S(1, 0).W(100, 1, 7).C(1, 0).S(2, 0).R(1, 100, 1, 7).R(InitID, InitID, 2, 3).C(2, 0).Bytes())
	f.Add((&logw{ts: true}).S(1, 10).W(100, 1, 7).C(1, 20).Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		// The input is two client logs: split at the middle so reads can cross files.
		files := [][]byte{data[:len(data)/2], data[len(data)/2:]}
		names := []string{"T0.log", "T1.log"}
		d := NewDecoder()
		b := history.NewBuilder()
		for i, file := range files {
			if err := d.Decode(bytes.NewReader(file), names[i], b); err != nil {
				checkError(t, err, names[i], len(file))
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
		h, err := b.Build()
		if err != nil {
			t.Fatalf("accepted input builds an invalid history: %v", err)
		}
		roundTripsOrRefuses(t, h)
	})
}

// roundTripsOrRefuses checks that WriteDir either refuses h as unrepresentable or writes
// logs that read back as h (canonical), and that writing those again gives the same logs.
func roundTripsOrRefuses(t *testing.T, h *history.History) {
	t.Helper()
	files := make(map[string]*bytes.Buffer)
	err := WriteDir(h, func(name string) (io.Writer, error) {
		files[name] = &bytes.Buffer{}
		return files[name], nil
	})
	if errors.Is(err, ErrUnrepresentable) {
		return
	}
	if err != nil {
		t.Fatalf("WriteDir: %v", err)
	}
	written := make(map[string][]byte)
	for n, b := range files {
		written[n] = b.Bytes()
	}
	back, err := decodeNatural(written)
	if err != nil {
		t.Fatalf("reading back what WriteDir wrote: %v", err)
	}
	if g, w := canonical(back), canonical(h); g != w {
		t.Fatalf("read back differs:\n%s\nwant\n%s", g, w)
	}
	if again := writeFiles(t, back); !maps.EqualFunc(again, written, bytes.Equal) {
		t.Fatalf("writing what was read back gives other logs")
	}
}

func checkError(t *testing.T, err error, name string, size int) {
	t.Helper()
	var pe *parse.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v is a %T, not a *parse.Error", err, err)
	}
	if pe.File != name || pe.Offset < 0 || pe.Offset > int64(size) || pe.Format == "" {
		t.Fatalf("error %v: file %q offset %d, want %q and an offset in [0, %d]", err, pe.File, pe.Offset, name, size)
	}
}
