package jsonscan_test

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/jsonscan"
)

func TestScannerErrorsSayWhatAndWhere(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		scan     func(s *jsonscan.Scanner) bool
		at       int
		want     string
		hitEnd   bool
	}{
		{"object key", `{1:2}`, func(s *jsonscan.Scanner) bool {
			return s.Object("an object", func([]byte, int) bool { return s.Skip() })
		}, 1, "expected a key (a quoted string), found a number", false},
		{"missing comma", `{"a":1 "b":2}`, func(s *jsonscan.Scanner) bool {
			return s.Object("an object", func([]byte, int) bool { return s.Skip() })
		}, 7, `expected ',' or '}' in object, found a string`, false},
		{"fraction", `1.5`, func(s *jsonscan.Scanner) bool { _, ok := s.Int("a count"); return ok }, 0, "expected a count (an integer), found a fraction or exponent", false},
		{"overflow", `9223372036854775808`, func(s *jsonscan.Scanner) bool { _, ok := s.Int("a count"); return ok }, 0, "a count is out of the 64-bit integer range", true},
		{"leading zero", `012`, func(s *jsonscan.Scanner) bool { _, ok := s.Int("a count"); return ok }, 0, "expected a count without leading zeros", true},
		{"unterminated", `"abc`, func(s *jsonscan.Scanner) bool { _, ok := s.Str("a name"); return ok }, 0, "unterminated string", true},
		{"bad escape", `"a\qb"`, func(s *jsonscan.Scanner) bool { _, ok := s.Str("a name"); return ok }, 2, `invalid escape '\q' in string`, true}, // an escape near the end may continue
		{"lone surrogate", `"\ud800x"`, func(s *jsonscan.Scanner) bool { _, ok := s.Str("a name"); return ok }, 1, `unpaired surrogate \ud800 in string`, true},
		{"null key", ` null`, func(s *jsonscan.Scanner) bool { _, ok := s.Key("a key"); return ok }, 1, "expected a key (an integer or a string), found null", false},
		{"loose int", `"12x"`, func(s *jsonscan.Scanner) bool { _, ok := s.IntLoose("a time"); return ok }, 0, `expected a time (an integer or a string of digits), found "12x"`, false},
		{"pair", `[1,2,3]`, func(s *jsonscan.Scanner) bool { _, _, ok := s.Pair("an interval"); return ok }, 4, "expected ']' closing an interval (two elements), found ','", false},
		{"end", `[1,`, func(s *jsonscan.Scanner) bool { _, ok := s.List(nil, "a list"); return ok }, 3, "expected a list element (an integer, a string or null), found end of input", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var s jsonscan.Scanner
			s.Reset([]byte(tc.in), 0)
			if tc.scan(&s) {
				t.Fatalf("scanning %q succeeded, want %q", tc.in, tc.want)
			}
			if s.Err == nil || s.Err.Error() != tc.want || s.At != tc.at {
				t.Errorf("scanning %q: error %v at %d, want %q at %d", tc.in, s.Err, s.At, tc.want, tc.at)
			}
			if s.HitEnd != tc.hitEnd {
				t.Errorf("scanning %q: HitEnd = %v, want %v", tc.in, s.HitEnd, tc.hitEnd)
			}
		})
	}
}

func TestScannerEndName(t *testing.T) {
	t.Parallel()
	s := jsonscan.Scanner{End: "end of line"}
	s.Reset([]byte(`[`), 0)
	s.Expect('[', "'['")
	if s.Expect(']', "']'") || !strings.Contains(s.Err.Error(), "found end of line") {
		t.Errorf("error %v, want it to name the end of line", s.Err)
	}
}

func TestScannerParsesWhatEncodingJSONDoes(t *testing.T) {
	t.Parallel()
	in := ` {"a": [1, -2, "x\u00e9\n\ud83d\ude00", null, true], "b": {"c": "d"}, "e": 3.5e1, "f": 9007199254740993} `
	var want any
	if err := json.Unmarshal([]byte(in), &want); err != nil {
		t.Fatal(err)
	}
	var s jsonscan.Scanner
	s.Reset([]byte(in), 0)
	var got []history.Datum
	ok := s.Object("an object", func(k []byte, _ int) bool {
		switch string(k) {
		case "a":
			s.Expect('[', "'['")
			for {
				if s.Peek() == 't' {
					if b, ok := s.Boolean("a flag"); !ok || !b {
						return false
					}
				} else {
					d, ok := s.Datum("an element")
					if !ok {
						return false
					}
					got = append(got, d.Datum())
				}
				if more, ok := s.More(']', "in a"); !ok {
					return false
				} else if !more {
					return true
				}
			}
		case "f":
			i, ok := s.Int("f")
			got = append(got, history.Int(i))
			return ok
		}
		return s.Skip()
	})
	if !ok || !s.AtEnd() {
		t.Fatalf("scan failed: %v at %d", s.Err, s.At)
	}
	wantA := want.(map[string]any)["a"].([]any)
	if len(got) != 5 || got[0] != history.Int(1) || got[1] != history.Int(-2) || got[2] != history.Str(wantA[2].(string)) || !got[3].IsNil() || got[4] != history.Int(9007199254740993) {
		t.Errorf("got %v, want 1, -2, %q, nil, 9007199254740993", got, wantA[2])
	}
}

func TestFastIntAgreesWithNumber(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"0", "-0", "7,", "123456789012345678]", "1234567890123456789", "-12", "01", "-", "", "x"} {
		v, j, ok := jsonscan.FastInt([]byte(in), 0)
		var s jsonscan.Scanner
		s.Reset([]byte(in), 0)
		if in == "" || in == "x" {
			if ok {
				t.Errorf("FastInt(%q) = %d, true; want false", in, v)
			}
			continue
		}
		w, wok := s.Number("n")
		if ok && (!wok || w != v || s.I != j) {
			t.Errorf("FastInt(%q) = %d, %d; Number = %d, %d, %v", in, v, j, w, s.I, wok)
		}
		if !ok && wok && len(strings.TrimLeft(in, "-")) <= 18 && strings.Trim(in, "0123456789-") == "" && in[len(in)-1] != ',' {
			t.Errorf("FastInt(%q) refused an integer Number accepts", in)
		}
	}
}

// TestFastIntDigits compares FastInt with strconv on numbers of every length, so both the
// eight-digit steps and the byte loop after them are exercised.
func TestFastIntDigits(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 21; n++ {
		for range 300 {
			digits := make([]byte, n)
			for i := range digits {
				digits[i] = byte('0' + rng.IntN(10))
			}
			if n > 1 && digits[0] == '0' {
				digits[0] = '1'
			}
			for _, in := range []string{string(digits), "-" + string(digits), string(digits) + ",1", string(digits) + "x12345678"} {
				v, j, ok := jsonscan.FastInt([]byte(in), 0)
				num := strings.TrimRight(strings.SplitN(strings.SplitN(in, ",", 2)[0], "x", 2)[0], "")
				want, err := strconv.ParseInt(num, 10, 64)
				fits := err == nil && len(strings.TrimLeft(num, "-")) <= 18
				if fits && (!ok || v != want || j != len(num)) {
					t.Fatalf("FastInt(%q) = %d, %d, %v; want %d, %d", in, v, j, ok, want, len(num))
				}
				if ok && (err != nil || v != want) {
					t.Fatalf("FastInt(%q) = %d, true; strconv says %d, %v", in, v, want, err)
				}
			}
		}
	}
}

func TestAppendStringRoundTrips(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "plain", "q\"b\\s", "tab\tnl\nctl\x01", "é😀", "bad\xffutf8"} {
		out := jsonscan.AppendString(nil, in)
		var s jsonscan.Scanner
		s.Reset(out, 0)
		got, ok := s.Str("a string")
		want := strings.ToValidUTF8(in, "\uFFFD")
		if !ok || string(got) != want || !s.AtEnd() {
			t.Errorf("AppendString(%q) = %s, reads back as %q (%v), want %q", in, out, got, s.Err, want)
		}
	}
}

func TestInternerMemoizesLastValue(t *testing.T) {
	t.Parallel()
	b := history.NewBuilder()
	var in jsonscan.Interner
	in.Reset(b)
	k := in.Key(jsonscan.IntDatum(7))
	v1 := in.Value(k, jsonscan.IntDatum(100))
	if again := in.Value(k, jsonscan.IntDatum(100)); again != v1 {
		t.Fatalf("Value twice = %d, %d", v1, again)
	}
	v2 := in.Value(k, jsonscan.IntDatum(101))
	s := in.Value(k, jsonscan.Datum{Kind: history.DatumStr, S: []byte("x")})
	if v2 == v1 || s == v2 || in.Value(k, jsonscan.Datum{}) != history.Nil {
		t.Fatalf("distinct values share ids: %d %d %d", v1, v2, s)
	}
	if in.Value(in.Key(jsonscan.IntDatum(8)), jsonscan.IntDatum(100)) != v1 {
		t.Fatal("value 100 seen with another key got another id")
	}
}

func TestPairFastAndSlowPathsAgree(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"[1,2]", "[ 1 , 2 ]", "[-5,1700000000000000000]", "[8999999999999999999,0]", "[9223372036854775807,-9223372036854775808]", "[1,2,3]", "[1]", "[01,2]", "[1,2"} {
		var s jsonscan.Scanner
		s.Reset([]byte(in), 0)
		a, b, ok := s.Pair("a pair")
		var want []int64
		err := json.Unmarshal([]byte(in), &want)
		if err == nil && len(want) != 2 {
			err = errors.New("not two elements")
		}
		if ok != (err == nil) || ok && (a != want[0] || b != want[1] || !s.AtEnd()) {
			t.Errorf("Pair(%s) = %d, %d, %v (%v); encoding/json: %v, %v", in, a, b, ok, s.Err, want, err)
		}
	}
}

// TestFastIntStopsAtAnyNonDigit puts every non-digit byte after digits of every length up to
// the word size, so the word-wide digit test meets each of them at each position.
func TestFastIntStopsAtAnyNonDigit(t *testing.T) {
	t.Parallel()
	for c := range 256 {
		if c >= '0' && c <= '9' {
			continue
		}
		for n := 1; n <= 9; n++ {
			num := "123456789"[:n]
			in := []byte(num + string([]byte{byte(c)}) + "12345678")
			want, _ := strconv.ParseInt(num, 10, 64)
			if v, j, ok := jsonscan.FastInt(in, 0); !ok || v != want || j != n {
				t.Fatalf("FastInt(%q) = %d, %d, %v; want %d, %d", in, v, j, ok, want, n)
			}
		}
	}
}
