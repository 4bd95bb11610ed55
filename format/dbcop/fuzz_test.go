package dbcop

import (
	"bytes"
	"errors"
	"testing"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/parse"
)

// FuzzReadDBCop checks that no bincode input panics, that every error is a located
// *parse.Error, and that accepted input builds a valid history. Seeds live in
// testdata/fuzz/FuzzReadDBCop (the Plume test cases and hand-built histories).
func FuzzReadDBCop(f *testing.F) {
	f.Add(encode([][]txn{{{evs: []ev{{write: true, k: 1, v: 5, ok: true}, {k: 1, v: 0, ok: false}}, ok: true}}, {{ok: false}}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		b := history.NewBuilder()
		if err := NewDecoder().Decode(bytes.NewReader(data), "history.bincode", b); err != nil {
			var pe *parse.Error
			if !errors.As(err, &pe) || pe.File != "history.bincode" || pe.Offset < 0 || pe.Offset > int64(len(data)) {
				t.Fatalf("error %v is not located", err)
			}
			return
		}
		if _, err := b.Build(); err != nil {
			t.Fatalf("accepted input builds an invalid history: %v", err)
		}
	})
}

// FuzzReadDBCopJSON does the same for the JSON format.
func FuzzReadDBCopJSON(f *testing.F) {
	f.Add([]byte(`[[{"events":[{"Write":{"variable":0,"version":1}},{"Read":{"variable":0,"version":null}}],"committed":true}]]`))
	f.Add([]byte(`{"params":{},"info":"","start":"","end":"","data":[[{"events":[],"committed":false}]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b := history.NewBuilder()
		if err := NewJSONDecoder().Decode(bytes.NewReader(data), "history.json", b); err != nil {
			var pe *parse.Error
			if !errors.As(err, &pe) || pe.File != "history.json" || pe.Offset > int64(len(data)) {
				t.Fatalf("error %v is not located", err)
			}
			return
		}
		if _, err := b.Build(); err != nil {
			t.Fatalf("accepted input builds an invalid history: %v", err)
		}
	})
}
