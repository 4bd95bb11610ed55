package dbcop_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/format/dbcop"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/corpus"
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

// TestRoundTripFixtureBytes: the repository's dbcop fixture, read and written again with
// its own header, is the same file byte for byte.
func TestRoundTripFixtureBytes(t *testing.T) {
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

// TestRoundTripFirstSessionStaysATransaction: a first session of one transaction writing every
// key once, in a history where nobody reads 0, is what PolySI's initial session looks like;
// Write puts an empty session before it so that it reads back as the transaction it is.
// A history whose keys start elsewhere than 0 gets a real initial session, read back as
// the initial state.
func TestRoundTripFirstSessionStaysATransaction(t *testing.T) {
	t.Parallel()
	build := func(initial int64) *history.History {
		b := history.NewBuilder()
		if initial != 0 {
			b.SetInitial(b.IntValue(initial))
		}
		b.BeginTxn(b.Session(history.Int(0)), history.NilDatum, history.OutcomeCommitted)
		b.Write(b.IntKey(1), b.IntValue(5))
		b.BeginTxn(b.Session(history.Int(1)), history.NilDatum, history.OutcomeCommitted)
		b.Read(b.IntKey(1), b.IntValue(5))
		b.Read(b.IntKey(2), b.IntValue(initial))
		h, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	for _, initial := range []int64{0, 9} {
		var buf bytes.Buffer
		if err := dbcop.Write(&buf, build(initial)); err != nil {
			t.Fatal(err)
		}
		back := readBincode(t, buf.Bytes())
		if len(back.Txns) != 2 || back.Txns[0].Ops[0].Kind != history.OpWrite {
			t.Errorf("initial %d: read back %d transactions, want the 2 written (notes %q)", initial, len(back.Txns), back.Notes)
		}
		for _, k := range []int64{1, 2} {
			key := slices.Index(back.Keys, history.Int(k))
			if got := back.Value(back.InitialValue(history.Key(key))); got != history.Int(initial) {
				t.Errorf("initial %d: key %d reads back starting at %v", initial, k, got)
			}
		}
	}
}

// TestRoundTripSharedBytes: every public history.bincode (Plume's fixtures, whose first
// session is PolySI's initial transaction; PolySI's Dgraph history, with aborted
// transactions; VeriStrong's 10,000-transaction histories, with repeated values), read and
// written again with its own header, is the same file byte for byte.
func TestRoundTripSharedBytes(t *testing.T) {
	t.Parallel()
	root := corpus.Dir(t)
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".bincode") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 19 {
		t.Fatalf("found %d bincode files in the corpora, want the 19 the manifest lists", len(files))
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		hd, err := dbcop.ReadHeader(data)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := dbcop.WriteHeader(&buf, readBincode(t, data), hd); err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if !bytes.Equal(buf.Bytes(), data) {
			i := 0
			for i < min(buf.Len(), len(data)) && buf.Bytes()[i] == data[i] {
				i++
			}
			t.Errorf("%s: written %d bytes, the file %d; first difference at byte %d", p, buf.Len(), len(data), i)
		}
	}
}
