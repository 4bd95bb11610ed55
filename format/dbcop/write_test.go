package dbcop_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/isovet/isovet/format/dbcop"
	"github.com/isovet/isovet/history"
)

// readBincode reads a history.bincode image.
func readBincode(t *testing.T, data []byte) *history.History {
	t.Helper()
	b := history.NewBuilder()
	if err := dbcop.NewDecoder().Decode(bytes.NewReader(data), "history.bincode", b); err != nil {
		t.Fatalf("reading: %v", err)
	}
	h, err := b.Build()
	if err != nil {
		t.Fatalf("building: %v", err)
	}
	return h
}

// TestWriteReproducesFixture: the repository's dbcop fixture, read and written again with
// its own header, is the same file byte for byte.
func TestWriteReproducesFixture(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "readers", "dbcop-write-skew", "history.bincode"))
	if err != nil {
		t.Fatal(err)
	}
	hd, err := dbcop.ReadHeader(data)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := dbcop.WriteHeader(&buf, readBincode(t, data), hd); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), data) {
		t.Errorf("written %d bytes differ from the fixture's %d:\n% x\nwant\n% x", buf.Len(), len(data), buf.Bytes(), data)
	}
}

// TestWriteRefuses: what dbcop cannot hold is an error wrapping ErrUnrepresentable.
func TestWriteRefuses(t *testing.T) {
	t.Parallel()
	build := func(f func(b *history.Builder)) *history.History {
		b := history.NewBuilder()
		f(b)
		h, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	for name, h := range map[string]*history.History{
		"unknown outcome": build(func(b *history.Builder) {
			b.BeginTxn(b.Session(history.Int(0)), history.NilDatum, history.OutcomeUnknown)
			b.Write(b.IntKey(1), b.IntValue(1))
		}),
		"string key": build(func(b *history.Builder) {
			b.BeginTxn(b.Session(history.Int(0)), history.NilDatum, history.OutcomeCommitted)
			b.Write(b.Key(history.Str("x")), b.IntValue(1))
		}),
		"append": build(func(b *history.Builder) {
			b.BeginTxn(b.Session(history.Int(0)), history.NilDatum, history.OutcomeCommitted)
			b.Append(b.IntKey(1), b.IntValue(1))
		}),
	} {
		if err := dbcop.Write(&bytes.Buffer{}, h); !errors.Is(err, dbcop.ErrUnrepresentable) {
			t.Errorf("%s: Write = %v, want ErrUnrepresentable", name, err)
		}
	}
}
