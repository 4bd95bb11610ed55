package native_test

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/history"
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

// snapLines carry database snapshots: the first two in the compact form, the rest not, or
// wrong.
var snapLines = []string{
	`{"s":5,"id":734,"t":[1,9],"snap":"734:736:735","ops":[["w",1,2]]}`,
	`{"s":5,"id":734,"o":"a","snap":"734:734:","ops":[]}`,
	`{"s":5,"id":734,"sts":[1,0],"cts":[2,0],"snap":"734:734:","ops":[]}`,
	`{"s":5,"id":734,"snap":"734:736:737","ops":[]}`,
	`{"s":5,"id":734,"snap":"734:736","ops":[]}`,
	`{"s":5,"id":734,"snap":"73\u0034:736:","ops":[]}`,
	`{"s":5,"snap":"1:2:","t":[1,9],"ops":[]}`,
	`{"s":5,"snap":"1:2:","snap":"1:2:","ops":[]}`,
	`{"s":5,"snap":12,"ops":[]}`,
}

// predLines are predicate lines in (or just outside) the compact form the fast path takes:
// the runner's blindw-pred lines, every optional part of a predicate and of a row, and
// near misses the fast path must leave to the general parser.
var predLines = []string{
	`{"s":3,"t":[49908709,50134451],"sts":[21,0],"cts":[30,0],"ops":[["pr",{"rel":"t","expr":"v2 BETWEEN 3408 AND 3411","range":["v2",3408,3411]},[[31,"v1=6782,v2=3409,w=32"],[2195,"v1=7244,v2=3409,w=2196"]]]]}`,
	`{"s":0,"o":"a","ops":[["pw",{"rel":"t","expr":"v1 BETWEEN 1 AND 9","range":["v1",1,9]},[[214,"v1=8,v2=2345,w=10002",{"match":false}],[1271,"v1=2,v2=5052,w=10002",{"src":[3,0]}],[5,null,{"match":false,"src":"init"}],[6,7,{"src":"none"}]]],["r",1,2]]}`,
	`{"s":"c1","id":9,"ops":[["w","k","v"],["pr",{},[]],["pw",{"expr":"k in [1,3]"},[["a",1],["b","x"]]],["pr",{"range":[null,-5,5]},[[1,-922337203685477580]]],["pr",{"rel":"","range":[7,0,0]},[["",""]]]]}`,
	`{"s":1,"ops":[["pr",{"rel":"t"},[[1,"v1=1"]]],["pr",{"rel":"t","range":["v1",1,2]},[]],["pr",{"expr":"x","range":["v1",1,2]},[]]]}`,
	`{"s":1,"ops":[["pr",{"range":["v1",1,2],"rel":"t"},[]]]}`,
	`{"s":1,"ops":[["pr",{"rel":"t","rel":"u"},[]]]}`,
	`{"s":1,"ops":[["pr",{"rel":"t"},[[1,2,{"match":true}]]]]}`,
	`{"s":1,"ops":[["pr",{"rel":"t"},[[1,2,{"src":"none","match":false}]]]]}`,
	`{"s":1,"ops":[["pr",{"rel":"t"},[[1,2,{}]]]]}`,
	`{"s":1,"ops":[["pr",{"rel":"t"},[[1,2,{"match":false,"src":[-1,0]}]]]]}`,
	`{"s":1,"ops":[["pr",{"rel":"t"},[[1,2,{"src":[2147483648,0]}]]]]}`,
	`{"s":1,"ops":[["pr",{"rel":"t"},[[1,2,{"src":"later"}]]]]}`,
	`{"s":1,"ops":[["pr",{"rel":"t"},[[null,2]]]]}`,
	`{"s":1,"ops":[["pr",{"rel":"t"},[[1]]]]}`,
	`{"s":1,"ops":[["pr",{"rel":"t"},[[1,2]],{"failed":true}]]}`,
	`{"s":1,"ops":[["pr",{"rel":"t"},[[1,2]],{"src":[0,0]}]]}`,
	`{"s":1,"ops":[["pr",{"rel":1},[]]]}`,
	`{"s":1,"ops":[["pr",{"rel":"\u0074","expr":"é"},[[1,"\n"]]]]}`,
	`{"s":1,"ops":[["pr",{"range":["v",1.5,2]},[]]]}`,
	`{"s":1,"ops":[["pr",{"range":["v",-9223372036854775808,2]},[[1,-9223372036854775808]]]]}`,
	`{"s":1,"ops":[["pr",{"range":["v",1,2,3]},[]]]}`,
	`{"s":1,"ops":[["pr",{"range":["v",99999999999999999999,2]},[]]]}`,
	`{"s":1,"ops":[["pr",{"bogus":1},[]]]}`,
	`{"s":1,"ops":[["pr", {"rel":"t"}, [[1, 2]]]]}`,
	`{"s":1,"ops":[["pq",{},[]]]}`,
	`{"s":1,"ops":[["pr",{}]]}`,
	`{"s":1,"ops":[["pr",{},[],]]}`,
}

// batchLines are compact predicate lines whose string values the fast path interns in
// batches: values repeated within an op (with the same key and with another), values
// interned by an earlier op or line, integers and nulls between strings, and an op of more
// rows than one batch of the builder.
var batchLines = []string{
	`{"s":1,"ops":[["w",5,"a"],["pr",{"rel":"t"},[[1,"b"],[2,"a"],[1,"b"],[3,7],[3,"c"],[4,null],[2,"b"],[5,"c"],[1,"d"],[6,""],[7,""]]],["pw",{},[[1,"d"],[9,"e"],[9,"e"],[9,9],[9,"f"]]],["w",5,"f"]]}`,
	`{"s":2,"ops":[["pr",{},[[1,"e"],[5,"g"],[5,"a"],[1,"g"],[8,1],[8,"h"]]],["pw",{},[[1,"i"]]]]}`,
	longPredLine(300),
}

// longPredLine returns a predicate read of n rows of string values, a few of them repeated
// and every tenth an integer.
func longPredLine(n int) string {
	var s strings.Builder
	s.WriteString(`{"s":3,"ops":[["pr",{"rel":"t"},[`)
	for i := range n {
		if i > 0 {
			s.WriteByte(',')
		}
		switch {
		case i%10 == 9:
			fmt.Fprintf(&s, `[%d,%d]`, i, i)
		case i%7 == 6:
			fmt.Fprintf(&s, `[%d,"w=%d"]`, i%5, i/3)
		default:
			fmt.Fprintf(&s, `[%d,"v1=%d,w=%d"]`, i, i%40, i)
		}
	}
	s.WriteString(`]]]}`)
	return s.String()
}

func TestFastPathAgreesWithGeneralParser(t *testing.T) {
	t.Parallel()
	header := "{\"isovet\":1,\"initial\":0}\n"
	inputs := []string{string(genNative(t, 300)), write(t, rich(t))}
	inputs = append(inputs, string(genPredNative(t, 300, 1000, 100)))
	for _, ln := range slices.Concat(fastLines, predLines, batchLines, snapLines) {
		inputs = append(inputs, ln, header+ln+"\n"+ln, ln+"\n{bad")
	}
	inputs = append(inputs, strings.Join(batchLines, "\n"))
	for _, in := range inputs {
		checkPathsAgree(t, in)
	}
	// Every truncation and many single-byte changes of compact lines: whatever the fast
	// path takes, it must read as the general parser does; whatever it declines, the
	// general parser reports as before.
	for _, ln := range slices.Concat(fastLines[:4], predLines[:4]) {
		for i := range len(ln) {
			checkPathsAgree(t, ln[:i])
			for _, c := range []byte(`"0-[]},:n `) {
				checkPathsAgree(t, ln[:i]+string(c)+ln[i+1:])
				checkPathsAgree(t, ln[:i]+string(c)+ln[i:])
			}
		}
	}
}

// TestFastPathTakesCompactLines checks that the fast path does take the lines the writers
// emit, item and predicate ones, so that the agreement tests above compare two paths.
func TestFastPathTakesCompactLines(t *testing.T) {
	t.Parallel()
	var lines []string
	lines = append(lines, strings.Split(strings.TrimSpace(string(genNative(t, 50))), "\n")[1:]...)
	lines = append(lines, strings.Split(strings.TrimSpace(string(genPredNative(t, 200, 1000, 200))), "\n")[1:]...)
	lines = append(lines, fastLines[:2]...)
	lines = append(lines, predLines[:4]...)
	lines = append(lines, batchLines...)
	lines = append(lines, snapLines[:3]...)
	for _, ln := range lines {
		if !native.FastTakes([]byte(ln)) {
			t.Errorf("the fast path declines %q", ln)
		}
	}
	for _, ln := range predLines[4:] {
		if native.FastTakes([]byte(ln)) {
			t.Errorf("the fast path takes %q, which is not in the compact form", ln)
		}
	}
}

// FuzzFastPathAgrees checks that the fast path and the general parser read any input the
// same way: the same history (with the same interning order) or the same error.
func FuzzFastPathAgrees(f *testing.F) {
	for _, ln := range slices.Concat(fastLines, predLines, batchLines, snapLines) {
		f.Add([]byte(ln))
	}
	f.Add(genNative(f, 20))
	f.Add(genPredNative(f, 20, 100, 1000))
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
		"predicate lines":  strings.Join(predLines, "\n"),
		"snapshot lines":   strings.Join(snapLines[:4], "\n"),
		"predicates":       string(genPredNative(t, 500, 2000, 200)),
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
