package native

import (
	"strings"
	"testing"

	"github.com/isovet/isovet/history"
)

// TestParseFastDatumStrings checks the word-at-a-time string scan against a byte loop: a
// string of every length up to 24 with each byte that ends it, stops the fast path or
// borders those ranges, at every position.
func TestParseFastDatumStrings(t *testing.T) {
	t.Parallel()
	// want is the byte-at-a-time answer: the end of the plain string at ln[0], or -1.
	want := func(ln []byte) int {
		for j := 1; j < len(ln); j++ {
			switch c := ln[j]; {
			case c == '"':
				return j + 1
			case c == '\\' || c < 0x20 || c >= 0x7f:
				return -1
			}
		}
		return -1
	}
	special := []byte{'"', '\\', 0x00, 0x1f, 0x20, 0x21, 0x5b, 0x5d, 0x7e, 0x7f, 0x80, 0xfe, 0xff, 'a'}
	for n := range 25 {
		for pos := range n {
			for _, c := range special {
				for _, tail := range []string{`"`, `",1]`, ``, `"` + strings.Repeat("x", 9)} {
					body := []byte(strings.Repeat("v", n))
					body[pos] = c
					ln := append(append([]byte{'"'}, body...), tail...)
					d, j, ok := parseFastDatum(ln, 0)
					w := want(ln)
					if ok != (w >= 0) || ok && (j != w || d.kind != history.DatumStr || int(d.i&0xffffffff) != w-2 || d.i>>32 != 1) {
						t.Fatalf("parseFastDatum(%q) = %v, %d, %v; want end %d", ln, d, j, ok, w)
					}
				}
			}
		}
	}
}
