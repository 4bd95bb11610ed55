package format_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"

	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/parse"
)

// streamCases are single-file histories in several formats, small enough to inline.
var streamCases = []struct {
	name, content string
	txns          int
}{
	{"h.jsonl", "{\"isovet\":1}\n{\"s\":1,\"ops\":[[\"w\",1,1]]}\n{\"s\":2,\"ops\":[[\"r\",1,1]]}\n", 2},
	{"h.edn", `{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0, :index 0}
{:type :ok, :f :txn, :value [[:append 1 1]], :process 0, :index 1}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 1, :index 2}
{:type :ok, :f :txn, :value [[:r 1 [1]]], :process 1, :index 3}
`, 2},
	{"h.txt", "w(1,1,0,0)\nr(1,1,1,1)\n", 2},
	{"vs.txt", "2\n1 1 A 1 1\n2 2 R 1 1 1\n", 2},
}

// TestReadStreamMatchesOpen: Read of a stream that returns a byte at a time (a slow pipe)
// gives the history Open gives for the file, sniffing included, plain and gzipped.
func TestReadStreamMatchesOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range streamCases {
		for _, gz := range []bool{false, true} {
			content := []byte(tc.content)
			name := tc.name
			if gz {
				var b bytes.Buffer
				zw := gzip.NewWriter(&b)
				zw.Write(content)
				zw.Close()
				content, name = b.Bytes(), name+".gz"
			}
			t.Run(name, func(t *testing.T) {
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, content, 0o644); err != nil {
					t.Fatal(err)
				}
				want, wf, err := format.Open(p, format.Auto, format.Options{})
				if err != nil || len(want.Txns) != tc.txns {
					t.Fatalf("Open(%s) = %v; want %d txns", name, err, tc.txns)
				}
				got, gf, err := format.Read(iotest.OneByteReader(bytes.NewReader(content)), "<stdin>", format.Auto, format.Options{})
				if err != nil {
					t.Fatalf("Read(%s) = %v", name, err)
				}
				if gf.Name != wf.Name || len(got.Txns) != len(want.Txns) || got.Values.Len() != want.Values.Len() {
					t.Errorf("Read(%s) = %s with %d txns, %d values; Open gives %s with %d, %d", name, gf.Name, len(got.Txns), got.Values.Len(), wf.Name, len(want.Txns), want.Values.Len())
				}
			})
		}
	}
}

// TestOpenFIFO: a FIFO (what a shell's process substitution gives) is read once, as the
// file it carries: sniffing does not consume it.
func TestOpenFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i, tc := range streamCases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "fifo"+string(rune('a'+i)))
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			done := make(chan error, 1)
			go func() {
				w, err := os.OpenFile(p, os.O_WRONLY, 0)
				if err != nil {
					done <- err
					return
				}
				_, err = io.WriteString(w, tc.content)
				w.Close()
				done <- err
			}()
			h, _, err := format.Open(p, format.Auto, format.Options{})
			if werr := <-done; werr != nil {
				t.Fatal(werr)
			}
			if err != nil || len(h.Txns) != tc.txns {
				t.Fatalf("Open(FIFO of %s) = %v; want %d txns", tc.name, err, tc.txns)
			}
		})
	}
}

// TestEmptyInputs: an input with no transaction is an error wrapping ErrEmpty that names
// the input and the offset, unless AllowEmpty; a directory format cannot read a stream.
func TestEmptyInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content, format string
		want                  string // substring of the error without AllowEmpty
		allowed               bool   // AllowEmpty reads it as an empty history
	}{
		{"nothing", "", format.Auto, "<stdin> (byte 0): format: empty history: empty file: expected a history, found 0 bytes", false},
		{"blank", " \n\n", format.Auto, "<stdin> (byte 3): format: empty history: blank file", false},
		{"header only", "{\"isovet\":1}\n", "native", "<stdin> (byte 13): native: format: empty history: expected at least one transaction, found none in 13 bytes", true},
		{"named format, no bytes", "", "native", "<stdin> (byte 0): native: format: empty history: expected at least one transaction, found none in 0 bytes", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := format.Read(strings.NewReader(tt.content), "<stdin>", tt.format, format.Options{})
			if !errors.Is(err, format.ErrEmpty) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Read = %v, want ErrEmpty and %q", err, tt.want)
			}
			var pe *format.ParseError
			if !errors.As(err, &pe) || pe.File != "<stdin>" || pe.Offset < 0 {
				t.Errorf("Read error %v does not name the input and an offset", err)
			}
			h, _, err := format.Read(strings.NewReader(tt.content), "<stdin>", tt.format, format.Options{AllowEmpty: true})
			if tt.allowed != (err == nil) {
				t.Errorf("Read with AllowEmpty = %v, want an error: %v", err, !tt.allowed)
			}
			if err == nil && len(h.Txns) != 0 {
				t.Errorf("Read with AllowEmpty = %d txns, want 0", len(h.Txns))
			}
		})
	}
	_, _, err := format.Read(strings.NewReader("S"), "<stdin>", "cobra", format.Options{})
	if !errors.Is(err, format.ErrStream) || !strings.Contains(err.Error(), "a cobra history is a directory of T*.log files") {
		t.Errorf("Read(cobra) = %v, want ErrStream naming the directory layout", err)
	}
}

// dirCase is a small directory history of one directory format, and ways to break it.
type dirCase struct {
	format string
	files  map[string][]byte
	// cut is a member and a length that cuts it inside a record, with the error it gives.
	cutFile string
	cutLen  int
	cutIs   error // what the cut error wraps, if anything
	cutWant string
	// copyAs names a second file that holds cutFile's client or content.
	copyAs, dupWant string
}

func cobraLog(recs ...[]byte) []byte { return bytes.Join(recs, nil) }

func cobraRec(tag byte, ids ...uint64) []byte {
	b := []byte{tag}
	for _, id := range ids {
		b = append(b, byte(id>>56), byte(id>>48), byte(id>>40), byte(id>>32), byte(id>>24), byte(id>>16), byte(id>>8), byte(id))
	}
	return b
}

func vboxRec(tag byte, id uint32, at uint64, rest ...uint64) []byte {
	b := []byte{tag}
	b = append(b, byte(id), byte(id>>8), byte(id>>16), byte(id>>24))
	for _, v := range append([]uint64{at, at + 1}, rest...) {
		for i := range 8 {
			b = append(b, byte(v>>(8*i)))
		}
	}
	return b
}

// vboxW is a 'W' record: oid, interval, key, field, value (u32).
func vboxW(oid uint32, at, key, field uint64, v uint32) []byte {
	b := vboxRec('W', oid, at, key, field)
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

var dirCases = []dirCase{
	{
		format: "cobra",
		files: map[string][]byte{
			"T1.log": cobraLog(cobraRec('S', 10), cobraRec('W', 100, 1, 7), cobraRec('C', 10)),
			"T2.log": cobraLog(cobraRec('S', 20), cobraRec('R', 10, 100, 1, 7), cobraRec('C', 20)),
		},
		cutFile: "T2.log", cutLen: 30,
		cutIs:   parse.ErrTruncated,
		cutWant: "T2.log (byte 9): cobra: unexpected end of input: 'R' record needs 32 bytes after its tag, 20 left",
		copyAs:  "T01.log", dupWant: "T1.log (byte 0): cobra: duplicate log: ",
	},
	{
		format: "viper",
		files: map[string][]byte{
			"J1.log": []byte(`{"value": [["w", 1, 1, true]]}` + "\n"),
			"J2.log": []byte(`{"value": [["r", 1, 1, false]]}` + "\n"),
		},
		cutFile: "J1.log", cutLen: 20,
		cutWant: "J1.log:1:",
		copyAs:  "J3.log", dupWant: "J3.log (byte 0): viper: duplicate log: ",
	},
	{
		format: "vbox",
		files: map[string][]byte{
			"1.log": cobraLog(vboxRec('T', 1, 10), vboxRec('S', 1, 20), vboxW(2, 30, 4, 1, 5), vboxRec('C', 3, 40)),
			"2.log": cobraLog(vboxRec('T', 2, 50), vboxRec('S', 1, 60), vboxRec('C', 2, 70)),
		},
		cutFile: "1.log", cutLen: 30,
		cutIs:   parse.ErrTruncated,
		cutWant: "1.log (byte 21): vbox: unexpected end of input: 'S' record needs 20 bytes after its tag, 8 left",
		copyAs:  "3.log", dupWant: "3.log (byte 0): vbox: duplicate log: ",
	},
}

func writeDir(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func with(files map[string][]byte, name string, b []byte) map[string][]byte {
	out := make(map[string][]byte, len(files)+1)
	for n, c := range files {
		out[n] = c
	}
	out[name] = b
	return out
}

// TestDirectoryInputs: for each directory format, the whole history reads; a member cut
// inside a record, every member emptied, and a second file holding a member's client are
// errors that name the file and the offset (ErrTruncated, ErrEmpty, ErrDuplicate); an empty
// member beside others is noted; AllowEmpty reads a directory of empty logs as empty.
func TestDirectoryInputs(t *testing.T) {
	t.Parallel()
	for _, tc := range dirCases {
		t.Run(tc.format, func(t *testing.T) {
			t.Parallel()
			for _, name := range []string{format.Auto, tc.format} {
				h, f, err := format.Open(writeDir(t, tc.files), name, format.Options{})
				if err != nil || f.Name != tc.format || len(h.Txns) != 2 {
					t.Fatalf("Open(%s) = %v; want %s with 2 txns", name, err, tc.format)
				}
			}
			check := func(what string, files map[string][]byte, name string, is error, want string) {
				t.Helper()
				_, _, err := format.Open(writeDir(t, files), name, format.Options{})
				var pe *format.ParseError
				if (is != nil && !errors.Is(err, is)) || err == nil || !strings.Contains(err.Error(), want) || !errors.As(err, &pe) || pe.File == "" || pe.Offset < 0 {
					t.Errorf("%s (format %s): Open = %v; want %v naming the file and offset, containing %q", what, name, err, is, want)
				}
			}
			cut := with(tc.files, tc.cutFile, tc.files[tc.cutFile][:tc.cutLen])
			empty := make(map[string][]byte)
			for n := range tc.files {
				empty[n] = nil
			}
			for _, name := range []string{format.Auto, tc.format} {
				check("cut", cut, name, tc.cutIs, tc.cutWant)
				check("empty", empty, name, format.ErrEmpty, "format: empty history: expected at least one transaction in the ")
				check("copy", with(tc.files, tc.copyAs, tc.files[tc.cutFile]), name, format.ErrDuplicate, tc.dupWant)
			}
			h, _, err := format.Open(writeDir(t, empty), tc.format, format.Options{AllowEmpty: true})
			if err != nil || len(h.Txns) != 0 {
				t.Errorf("Open(empty logs, AllowEmpty) = %v; want an empty history", err)
			}
			// One empty member beside the others: a client that logged nothing, noted.
			var other string
			for n := range tc.files {
				if n != tc.cutFile {
					other = n
				}
			}
			extra := with(tc.files, other, nil)
			h, _, err = format.Open(writeDir(t, extra), format.Auto, format.Options{})
			if err != nil || !strings.Contains(strings.Join(notes(h), "\n"), "1 of the 2 member files is empty ("+other+")") {
				t.Errorf("Open(one empty member) = %v, notes %q; want it read and noted", err, notes(h))
			}
		})
	}
}

func notes(h *history.History) []string {
	if h == nil {
		return nil
	}
	return h.Notes
}
