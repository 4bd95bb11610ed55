package jsonscan

import (
	"strconv"
	"unicode/utf8"

	"github.com/isovet/isovet/history"
)

// AppendDatum appends d as JSON: an integer, a string or null.
func AppendDatum(b []byte, d history.Datum) []byte {
	if i, ok := d.Int(); ok {
		return strconv.AppendInt(b, i, 10)
	}
	if s, ok := d.Str(); ok {
		return AppendString(b, s)
	}
	return append(b, "null"...)
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plain[c] {
			i++
			continue
		}
		if c >= 0x80 {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			b = append(append(b, s[start:i]...), `\ufffd`...)
		} else {
			b = appendEscape(append(b, s[start:i]...), c)
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plain marks the bytes AppendString copies as they are: printable ASCII but the quote and
// the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// shortEscapes are the escapes of the bytes with a one-letter escape.
var shortEscapes = [256]string{'"': `\"`, '\\': `\\`, '\n': `\n`, '\t': `\t`, '\r': `\r`}

// appendEscape appends the escape of the ASCII byte c: a one-letter escape or \u00XX.
func appendEscape(b []byte, c byte) []byte {
	if e := shortEscapes[c]; e != "" {
		return append(b, e...)
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
}
