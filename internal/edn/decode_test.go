package edn_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/isovet/isovet/internal/corpus"
	"github.com/isovet/isovet/internal/edn"
	"github.com/isovet/isovet/internal/parse"
)

func parseOne(t *testing.T, src string, opts edn.Options) edn.Value {
	t.Helper()
	vs, err := edn.ParseAll([]byte(src), opts)
	if err != nil {
		t.Fatalf("ParseAll(%q) = %v", src, err)
	}
	if len(vs) != 1 {
		t.Fatalf("ParseAll(%q) = %d forms, want 1", src, len(vs))
	}
	return vs[0]
}

func TestDecodePrintsBack(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"nil", "nil", "nil"},
		{"bools", "[true false]", "[true false]"},
		{"ints", "[0 -5 +7 9223372036854775807]", "[0 -5 7 9223372036854775807]"},
		{"bigint", "[9223372036854775808 12N -0N]", "[9223372036854775808N 12N 0N]"},
		{"floats", "[1.5 -2e3 1E-2 3.0]", "[1.5 -2000.0 0.01 3.0]"},
		{"bigdec", "[1.5M 2M]", "[1.5M 2M]"},
		{"hex", "[0x1F -0xff]", "[31 -255]"},
		{"ratio", "-1/2", "-1/2"},
		{"specials", "[##Inf ##-Inf ##NaN]", "[##Inf ##-Inf ##NaN]"},
		{"chars", `[\a \newline \space \u00e9 \o101 \( \é]`, `[\a \newline \space \u00e9 \A \( \u00e9]`},
		{"string escapes", `"a\"b\\c\nd\te\u0041\101"`, `"a\"b\\c\nd\teAA"`},
		{"keywords", "[:a :b/c :can't-join :x.y]", "[:a :b/c :can't-join :x.y]"},
		{"symbols", "[foo + - -> a/b .x]", "[foo + - -> a/b .x]"},
		{"map commas", "{:a 1, :b 2,}", "{:a 1, :b 2}"},
		{"set", "#{1 2}", "#{1 2}"},
		{"list", "(1 (2))", "(1 (2))"},
		{"tagged", `#inst "2020-01-01T00:00:00Z"`, `#inst "2020-01-01T00:00:00Z"`},
		{"record", "#jepsen.history.Op{:index 0}", "#jepsen.history.Op {:index 0}"},
		{"discard", "[1 #_2 3 #_ #_ 4 5]", "[1 3]"},
		{"discard at end", "[1 #_[2]]", "[1]"},
		{"comments", "[1 ; two\n 3] ; end", "[1 3]"},
		{"object tag", "#object[x 0x1 {:a 1}]", "#object [x 1 {:a 1}]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := parseOne(t, tt.in, edn.Options{})
			if got := v.String(); got != tt.want {
				t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestDecodeKinds(t *testing.T) {
	t.Parallel()
	v := parseOne(t, `{:k "s" 1 2.5 nil [a \c]}`, edn.Options{})
	if v.Kind != edn.Map || v.Len() != 3 {
		t.Fatalf("kind %v len %d, want map of 3", v.Kind, v.Len())
	}
	want := []edn.Kind{edn.Keyword, edn.String, edn.Int, edn.Float, edn.Nil, edn.Vector}
	for i, k := range want {
		if v.Items[i].Kind != k {
			t.Errorf("item %d kind = %v, want %v", i, v.Items[i].Kind, k)
		}
	}
	if v.Items[0].Str != ":k" || v.Items[1].Str != "s" || v.Items[2].Int != 1 || v.Items[3].Float != 2.5 {
		t.Errorf("item contents = %+v", v.Items[:4])
	}
	if p := v.Items[5].Pos; p.Line != 1 || p.Col != 19 || p.Offset != 18 {
		t.Errorf("vector pos = %+v, want 1:19 (offset 18)", p)
	}
}

func TestDecodeJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"object", `{"type":"ok","value":[["append",3,7],["r",4,[1,2]]],"process":1}`, `{"type" "ok", "value" [["append" 3 7] ["r" 4 [1 2]]], "process" 1}`},
		{"literals", `[true,false,null]`, `[true false nil]`},
		{"numbers", `[-0, 1.5, 2e3, 12345678901234567890]`, `[0 1.5 2000.0 12345678901234567890N]`},
		{"escapes", `"a\/b\u00e9\ud83d\ude00"`, "\"a/b\u00e9\U0001F600\""},
		{"empty", `[{}, []]`, `[{} []]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := parseOne(t, tt.in, edn.Options{JSON: true})
			if got := v.String(); got != tt.want {
				t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestDecodeErrorsNameLocation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		json     bool
		want     string // the whole message
		trunc    bool
	}{
		{"unclosed vector", "{:a 1}\n[1 2", false, `h.edn:2:5 (byte 11): edn: unexpected end of input: expected ']' to close the vector opened at line 2, column 1`, true},
		{"mismatched", "[1 2}", false, `h.edn:1:5 (byte 4): edn: unexpected '}': expected ']' to close the vector opened at line 1, column 1`, false},
		{"odd map", "\n {:a}", false, `h.edn:2:2 (byte 2): edn: map has an odd number of forms (1): expected a value after every key`, false},
		{"bad number", "[1x]", false, `h.edn:1:2 (byte 1): edn: invalid number "1x": expected digits with an optional sign, fraction, exponent, ratio or N/M suffix`, false},
		{"stray closer", "  )", false, `h.edn:1:3 (byte 2): edn: unexpected ')': no collection is open here`, false},
		{"unclosed string", `["abc`, false, `h.edn:1:2 (byte 1): edn: unexpected end of input: expected '"' to close the string opened here`, true},
		{"bad escape", `"a\qb"`, false, `h.edn:1:1: edn: invalid escape "\\q" in string: expected one of \" \\ \n \t \r \b \f \uXXXX`, false},
		{"bad dispatch", "#!x", false, `h.edn:1:1: edn: unexpected '!' after '#': expected '{' (set), '_' (discard), '#' (##Inf) or a tag`, false},
		{"bad char", `\foo`, false, `h.edn:1:1: edn: invalid character \foo: expected a single character, \newline, \space, \tab, \return, \formfeed, \backspace, \uXXXX or \oNNN`, false},
		{"keyword", ": x", false, `h.edn:1:1: edn: expected a keyword name after ':'`, false},
		{"unexpected", "[1 @x]", false, `h.edn:1:4 (byte 3): edn: unexpected '@': expected a form (map, vector, list, set, string, number, keyword, symbol, character or tagged literal)`, false},
		{"json missing comma", `{"a":1 "b":2}`, true, `h.json:1:8 (byte 7): json: unexpected '"': expected ',' or '}' after a member of the object opened at line 1, column 1`, false},
		{"json colon", `{"a" 1}`, true, `h.json:1:6 (byte 5): json: unexpected '1': expected ':' after the key "a"`, false},
		{"json keyword", `[:a]`, true, `h.json:1:2 (byte 1): json: unexpected ':': expected a JSON value (object, array, string, number, true, false or null)`, false},
		{"json truncated", "[1,\n2", true, `h.json:2:2 (byte 5): json: unexpected end of input: expected ']' to close the array opened at line 1, column 1`, true},
		{"json number", `[01]`, true, `h.json:1:2 (byte 1): json: invalid number "01": expected -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`, false},
		{"json newline in string", "\"a\nb\"", true, `h.json:1:3 (byte 2): json: unescaped newline in a string: expected '"' to close the string opened at line 1, column 1`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := "h.edn"
			if tt.json {
				file = "h.json"
			}
			_, err := edn.ParseAll([]byte(tt.in), edn.Options{File: file, JSON: tt.json})
			var pe *parse.Error
			if !errors.As(err, &pe) {
				t.Fatalf("ParseAll(%q) = %v, want a *parse.Error", tt.in, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("ParseAll(%q) error:\n got %s\nwant %s", tt.in, got, tt.want)
			}
			if errors.Is(err, parse.ErrTruncated) != tt.trunc {
				t.Errorf("errors.Is(ErrTruncated) = %v, want %v", !tt.trunc, tt.trunc)
			}
		})
	}
}

func TestDepthLimit(t *testing.T) {
	t.Parallel()
	in := strings.Repeat("[", 2000) + strings.Repeat("]", 2000)
	if _, err := edn.ParseAll([]byte(in), edn.Options{}); err == nil || !strings.Contains(err.Error(), "nested deeper than 1000") {
		t.Errorf("deep nesting: err = %v, want a depth error", err)
	}
	in = strings.Repeat("[", 500) + strings.Repeat("]", 500)
	if _, err := edn.ParseAll([]byte(in), edn.Options{}); err != nil {
		t.Errorf("500 levels: %v", err)
	}
}

// TestStreamingSmallReads reads the shared histories one byte at a time (exercising every
// buffer refill) and checks that the result equals reading the whole file.
func TestStreamingSmallReads(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(corpus.Path(t, "elle/elle"), "*.edn"))
	more, _ := filepath.Glob(filepath.Join(corpus.Path(t, "elle/elle-cli"), "*", "*.edn"))
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatal("no Elle histories in the public corpora")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := edn.ParseAll(data, edn.Options{File: f})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(data) > 100_000 {
			continue
		}
		d := edn.NewDecoder(iotest.OneByteReader(bytes.NewReader(data)), edn.Options{File: f, Reuse: true})
		for i := 0; ; i++ {
			v, err := d.Next()
			if err == io.EOF {
				if i != len(whole) {
					t.Errorf("%s: %d forms one byte at a time, want %d", f, i, len(whole))
				}
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if got, want := v.String(), whole[i].String(); got != want || v.Pos != whole[i].Pos {
				t.Fatalf("%s form %d: %s at %+v, want %s at %+v", f, i, got, v.Pos, want, whole[i].Pos)
			}
		}
	}
}

func TestEnterMore(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		json bool
	}{{"[{:a 1}\n{:a 2}, {:a 3}] ", false}, {`[{"a":1},{"a":2},{"a":3}]`, true}, {"({:a 1} {:a 2} {:a 3})", false}} {
		d := edn.NewDecoder(strings.NewReader(tt.in), edn.Options{JSON: tt.json, Reuse: true})
		if err := d.Enter(); err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			ok, err := d.More()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			v, err := d.Next()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, v.String())
		}
		if len(got) != 3 {
			t.Errorf("%q: elements %q, want 3", tt.in, got)
		}
		if _, err := d.Next(); err != io.EOF {
			t.Errorf("%q: after the vector: %v, want EOF", tt.in, err)
		}
	}
	d := edn.NewDecoder(strings.NewReader("[1 2"), edn.Options{})
	_ = d.Enter()
	for {
		ok, err := d.More()
		if err != nil {
			if !errors.Is(err, parse.ErrTruncated) {
				t.Errorf("unclosed: %v, want ErrTruncated", err)
			}
			break
		}
		if !ok {
			t.Fatal("unclosed vector closed")
		}
		if _, err := d.Next(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFloatPrintsBackExactly(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{0, 1, -1.25, 1e300, 5e-324, math.MaxFloat64, 123456789012345678} {
		v := edn.Value{Kind: edn.Float, Float: f}
		back := parseOne(t, v.String(), edn.Options{})
		if back.Kind != edn.Float || back.Float != f {
			t.Errorf("%v prints as %s, reads back as %v %v", f, v.String(), back.Kind, back.Float)
		}
	}
}

// TestInternCache reads many short and long strings and keywords, twice, through the
// decoder's intern cache: each must come back as written, whatever slot it shares.
func TestInternCache(t *testing.T) {
	var want []string
	for i := range 3000 {
		want = append(want,
			fmt.Sprintf("k%d", i), fmt.Sprintf("%07d", i), fmt.Sprintf("%08d", i),
			fmt.Sprintf("key-%012d", i), fmt.Sprintf("p\u00e9%03d", i%1000), "")
	}
	for _, json := range []bool{false, true} {
		var b strings.Builder
		b.WriteString("[")
		for range 2 {
			for i, s := range want {
				if i > 0 || b.Len() > 1 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, "%q", s)
				if !json {
					fmt.Fprintf(&b, " :%s", strings.ReplaceAll(s, "\u00e9", "e")+"x")
				}
			}
		}
		b.WriteString("]")
		vs, err := edn.ParseAll([]byte(b.String()), edn.Options{JSON: json})
		if err != nil {
			t.Fatal(err)
		}
		items := vs[0].Items
		step := 1
		if !json {
			step = 2
		}
		for i := range 2 * len(want) {
			s := want[i%len(want)]
			if got := items[i*step].Str; got != s {
				t.Fatalf("json=%v: string %d is %q, want %q", json, i, got, s)
			}
			if !json {
				if got, k := items[i*step+1].Str, ":"+strings.ReplaceAll(s, "\u00e9", "e")+"x"; got != k {
					t.Fatalf("keyword %d is %q, want %q", i, got, k)
				}
			}
		}
	}
}
