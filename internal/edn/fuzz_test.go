package edn_test

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"

	"github.com/isovet/isovet/internal/edn"
)

// FuzzEDN (corpus: testdata/fuzz/FuzzEDN, copies of the shared Elle histories) checks that decoding never panics and that whatever decodes prints back to EDN
// that decodes to the same thing (print is a fixed point after one round).
func FuzzEDN(f *testing.F) {
	for _, s := range []string{
		"{:a 1, :b [1 2 3]}", `"str\n\u0041"`, `#inst "2020"`, "#jepsen.history.Op{:index 0}",
		`[\a \newline 1/2 1.5M 2N ##NaN]`, "#{1 #_2 3} ; c", "(a b c)", `{"a" 1}`,
	} {
		f.Add([]byte(s), false)
	}
	f.Add([]byte(`{"a":[1,2.5,null,true,"x\u00e9"]}`), true)
	f.Fuzz(func(t *testing.T, data []byte, json bool) {
		vs, err := edn.ParseAll(data, edn.Options{JSON: json})
		// Reading one byte at a time takes the slow paths at every token: the result,
		// error included, must not depend on how the input is buffered.
		slow, serr := parseOneByte(data, json)
		if (err == nil) != (serr == nil) || err != nil && err.Error() != serr.Error() {
			t.Fatalf("whole input: %v\none byte at a time: %v", err, serr)
		}
		if err != nil {
			return
		}
		if len(slow) != len(vs) {
			t.Fatalf("%d forms whole, %d one byte at a time", len(vs), len(slow))
		}
		for i := range vs {
			if a, b := vs[i].String(), slow[i].String(); a != b || vs[i].Pos != slow[i].Pos {
				t.Fatalf("form %d: %s at %+v whole, %s at %+v one byte at a time", i, a, vs[i].Pos, b, slow[i].Pos)
			}
		}
		var out []byte
		for _, v := range vs {
			out = edn.Append(out, v)
			out = append(out, '\n')
		}
		back, err := edn.ParseAll(out, edn.Options{})
		if err != nil {
			t.Fatalf("printed form does not decode: %v\n%s", err, out)
		}
		if len(back) != len(vs) {
			t.Fatalf("printed %d forms, read back %d\n%s", len(vs), len(back), out)
		}
		var again []byte
		for _, v := range back {
			again = edn.Append(again, v)
			again = append(again, '\n')
		}
		if string(again) != string(out) {
			t.Fatalf("print is not a fixed point:\n%s\n%s", out, again)
		}
	})
}

func parseOneByte(data []byte, json bool) ([]edn.Value, error) {
	d := edn.NewDecoder(iotest.OneByteReader(bytes.NewReader(data)), edn.Options{JSON: json})
	var vs []edn.Value
	for {
		v, err := d.Next()
		if err == io.EOF {
			return vs, nil
		}
		if err != nil {
			return vs, err
		}
		vs = append(vs, v)
	}
}
