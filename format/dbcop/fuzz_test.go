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
		h, err := b.Build()
		if err != nil {
			t.Fatalf("accepted input builds an invalid history: %v", err)
		}
		rewritesSame(t, data, h)
	})
}

// rewritesSame checks that h, read from data, written with data's header is data again,
// unless data's initial session wrote 0 to every key (the format's own initial value,
// which Write does not write again); then writing is idempotent.
func rewritesSame(t *testing.T, data []byte, h *history.History) {
	t.Helper()
	hd, err := ReadHeader(data)
	if err != nil {
		t.Fatalf("ReadHeader of a file Decode accepted: %v", err)
	}
	var buf bytes.Buffer
	if err := WriteHeader(&buf, h, hd); err != nil {
		t.Fatalf("WriteHeader of a history read from bincode: %v", err)
	}
	if !zeroInitial(h) {
		if !bytes.Equal(buf.Bytes(), data) {
			t.Fatalf("written again, the file differs:\n% x\nwant\n% x", buf.Bytes(), data)
		}
		return
	}
	b := history.NewBuilder()
	if err := NewDecoder().Decode(bytes.NewReader(buf.Bytes()), "again.bincode", b); err != nil {
		t.Fatalf("reading back: %v", err)
	}
	back, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := WriteHeader(&again, back, hd); err != nil || !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Fatalf("writing what was read back: %v, or other bytes", err)
	}
}

// zeroInitial reports whether h has initial values of its own, all 0.
func zeroInitial(h *history.History) bool {
	for _, v := range h.InitialByKey {
		if h.Value(v) != history.Int(0) {
			return false
		}
	}
	return len(h.InitialByKey) > 0
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
