package native_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"isovet/format/native"
	"isovet/history"
)

// readWith reads in with d and renders the outcome: the error, or the history with its
// interned key and value tables in id order (both paths must intern in the same order).
func readWith(t testing.TB, d *native.Decoder, in string) string {
	t.Helper()
	b := history.NewBuilder()
	if err := d.Decode(strings.NewReader(in), "h.jsonl", b); err != nil {
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
