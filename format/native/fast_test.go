package native_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"isovet/format/native"
	"isovet/history"
)

// readWith reads in with d and renders the outcome: the error, or the history with its
// interned key and value tables in id order (both paths must intern in the same order).
func readWith(t testing.TB, d *native.Decoder, in string) string {
	t.Helper()
	return readFrom(t, d, strings.NewReader(in))
}

func readFrom(t testing.TB, d *native.Decoder, r io.Reader) string {
	t.Helper()
	b := history.NewBuilder()
	if err := d.Decode(r, "h.jsonl", b); err != nil {
		return "error: " + err.Error()
	}
	h, err := b.Build()
	if err != nil {
		return "build error: " + err.Error()
	}
	var s strings.Builder
	s.WriteString(dump(h))
	fmt.Fprintf(&s, "keys %#v\nvalues", h.Keys)
	for _, v := range h.Values.All() {
		fmt.Fprintf(&s, " %#v", v)
	}
	return s.String()
}

func checkPathsAgree(t *testing.T, in string) {
	t.Helper()
	fast := readWith(t, native.NewDecoder(), in)
	general := readWith(t, native.NewGeneralDecoder(), in)
	if fast != general {
		t.Fatalf("reading %q: fast path and general parser differ (-general +fast):\n%s", in, cmp.Diff(general, fast))
	}
}

// fastLines are lines in (or just outside) the compact form the fast path takes.
var fastLines = []string{
	`{"s":0,"id":0,"t":[1700000000000000000,1700000000001500000],"ops":[["r",7693,null],["w",9409,1],["r",9409,1]]}`,
	`{"s":1,"id":"T1","o":"a","sts":[5,0],"cts":[9,1],"ops":[["a","k",1],["i",-3,"v"],["d",-3],["r",-3,null]]}`,
	`{"s":1,"id":"T1","o":"a","sts":[5,0],"cts":[9,1],"ops":[["a","k",1],["r","k",[1]],["i",-3,"v"],["d",-3]]}`,
	`{"s":"p1","o":"u","t":[-5,-1],"ops":[]}`,
	`{"s":null,"id":null,"ops":[["w","",""],["r","",""]]}`,
	`{"s":2,"o":"c","ops":[["w",1,2,{"failed":true}]]}`,
	`{"s":2,"sts":[1,2],"ops":[["w",1,2]]}`,
	`{"s":3,"ops":[["w",9223372036854775807,-9223372036854775808]]}`,
	`{"s":3,"ops":[["w",1,2]]} `,
	"{\"s\":3,\"ops\":[[\"w\",1,2]]}\r\n",
	`{"s":3,"ops":[["w","\u00fc",2]]}`,
	`{"s":3,"ops":[["w","ü",2]]}`,
	`{"s":3,"ops":[["x",1,2]]}`,
	`{"s":3,"ops":[["r",1]]}`,
	`{"s":3,"ops":[["d",1,2]]}`,
	`{"s":3,"ops":[["w",null,2]]}`,
	`{"s":3,"ops":[["w",01,2]]}`,
	`{"s":3,"ops":[["w",1.5,2]]}`,
	`{"s":3,"ops":[["w",1,2]],"ops":[]}`,
	`{"s":3,"id":4,"id":5,"ops":[]}`,
	`{"s":4096,"ops":[]}`,
	`{"s":-1,"ops":[]}`,
}

func TestFastPathAgreesWithGeneralParser(t *testing.T) {
	t.Parallel()
	header := "{\"isovet\":1,\"initial\":0}\n"
	inputs := []string{string(genNative(t, 300)), write(t, rich(t))}
	for _, ln := range fastLines {
		inputs = append(inputs, ln, header+ln+"\n"+ln, ln+"\n{bad")
	}
	for _, in := range inputs {
		checkPathsAgree(t, in)
	}
	// Every truncation and many single-byte changes of compact lines: whatever the fast
	// path takes, it must read as the general parser does; whatever it declines, the
	// general parser reports as before.
	for _, ln := range fastLines[:4] {
		for i := range len(ln) {
			checkPathsAgree(t, ln[:i])
			for _, c := range []byte(`"0-[]},:n `) {
				checkPathsAgree(t, ln[:i]+string(c)+ln[i+1:])
				checkPathsAgree(t, ln[:i]+string(c)+ln[i:])
			}
		}
	}
}

// FuzzFastPathAgrees checks that the fast path and the general parser read any input the
// same way: the same history (with the same interning order) or the same error.
func FuzzFastPathAgrees(f *testing.F) {
	for _, ln := range fastLines {
		f.Add([]byte(ln))
	}
	f.Add(genNative(f, 20))
	f.Fuzz(func(t *testing.T, in []byte) {
		checkPathsAgree(t, string(in))
	})
}

// TestPipelineAgreesWithSerialReading reads streams in two stages with blocks of many sizes
// (so that lines straddle blocks and outgrow them), through readers that return little at a
// time or fail, and checks the outcome is what serial reading gives: the same history, or
// the same error at the same line and offset.
func TestPipelineAgreesWithSerialReading(t *testing.T) {
	t.Parallel()
	gen := string(genNative(t, 2000))
	mid := strings.Index(gen[len(gen)/2:], "\n") + len(gen)/2 + 1
	long := `{"s":1,"ops":[` + strings.Repeat(`["w",1,2],`, 500) + `["w",1,3]]}`
	inputs := map[string]string{
		"generated":        gen,
		"rich":             write(t, rich(t)),
		"bad line midway":  gen[:mid] + "{\"s\":1,\"ops\":[[\"w\",1,2]],}\n" + gen[mid:],
		"header midway":    gen[:mid] + "{\"isovet\":1}\n" + gen[mid:],
		"no final newline": strings.TrimSuffix(gen, "\n"),
		"cut mid-line":     gen[:mid+40],
		"blank and crlf":   "\n\r\n" + strings.ReplaceAll(gen[:mid], "\n", "\r\n\n"),
		"long lines":       long + "\n" + gen[:2000] + long,
		"fast lines":       strings.Join(fastLines, "\n"),
		"empty":            "",
	}
	boom := errors.New("disk on fire")
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want := readWith(t, native.NewSerialDecoder(), in)
			if general := readWith(t, native.NewGeneralDecoder(), in); general != want {
				t.Fatalf("serial fast path and general parser differ:\n%s", cmp.Diff(general, want))
			}
			wantErr := readFrom(t, native.NewSerialDecoder(), io.MultiReader(strings.NewReader(in), iotest.ErrReader(boom)))
			for _, block := range []int{1, 7, 100, 4096, 1 << 20} {
				readers := map[string]io.Reader{
					"whole":    strings.NewReader(in),
					"one byte": iotest.OneByteReader(strings.NewReader(in)),
					"half":     iotest.HalfReader(strings.NewReader(in)),
				}
				if block == 1 || block == 4096 {
					// A one-byte reader with one-byte blocks is slow on the generated input.
					delete(readers, "one byte")
				}
				for rname, r := range readers {
					if got := readFrom(t, native.NewPipelinedDecoder(block), r); got != want {
						t.Fatalf("block %d, %s reader: pipelined reading differs (-serial +pipelined):\n%s", block, rname, cmp.Diff(want, got))
					}
				}
				r := io.MultiReader(strings.NewReader(in), iotest.ErrReader(boom))
				if got := readFrom(t, native.NewPipelinedDecoder(block), r); got != wantErr {
					t.Fatalf("block %d, failing reader: pipelined reading differs (-serial +pipelined):\n%s", block, cmp.Diff(wantErr, got))
				}
			}
			if name == "generated" && !strings.HasPrefix(wantErr, "error: reading h.jsonl: disk on fire") {
				t.Errorf("a failing reader gave %.200q, want the read error", wantErr)
			}
		})
	}
}
