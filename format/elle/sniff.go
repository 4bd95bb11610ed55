package elle

import (
	"bytes"
	"slices"
	"strings"
)

// SniffEDN reports whether head (the first bytes of a file) looks like a Jepsen EDN history:
// after comments and whitespace, a map whose first key is a keyword (optionally inside a
// vector or list, or as a #jepsen.history.Op record), and :type or :value somewhere in head.
func SniffEDN(_ string, head []byte) bool {
	rest := skipEDNSpace(head)
	if startsWith(rest, "[(") {
		rest = skipEDNSpace(rest[1:])
	}
	rest, _ = bytes.CutPrefix(rest, []byte("#jepsen.history.Op"))
	if !startsWith(rest, "{") {
		return false
	}
	rest = skipEDNSpace(rest[1:])
	if len(rest) < 2 || rest[0] != ':' {
		return false
	}
	return bytes.Contains(head, []byte(":type")) || bytes.Contains(head, []byte(":value"))
}

// SniffJSON reports whether head looks like an Elle JSON history: an object (optionally
// inside an array) whose first key is a string, with a "type" of "invoke", "ok", "fail" or
// "info" in head.
func SniffJSON(_ string, head []byte) bool {
	rest := bytes.TrimLeft(head, " \t\r\n\ufeff")
	if startsWith(rest, "[") {
		rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	}
	if !startsWith(rest, "{") {
		return false
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	if !startsWith(rest, `"`) {
		return false
	}
	return slices.ContainsFunc(jsonTypes, func(t []byte) bool { return bytes.Contains(head, t) })
}

// jsonTypes are the "type" fields SniffJSON looks for, with and without a space.
var jsonTypes = func() (ts [][]byte) {
	for _, typ := range []string{"invoke", "ok", "fail", "info"} {
		for _, sp := range []string{`"type":"`, `"type": "`} {
			ts = append(ts, []byte(sp+typ+`"`))
		}
	}
	return ts
}()

// startsWith reports whether b starts with one of the bytes of set.
func startsWith(b []byte, set string) bool {
	return len(b) > 0 && strings.IndexByte(set, b[0]) >= 0
}

// skipEDNSpace skips whitespace, commas and ; comments.
func skipEDNSpace(b []byte) []byte {
	for len(b) > 0 {
		switch b[0] {
		case ' ', '\t', '\r', '\n', ',', '\f':
			b = b[1:]
		case ';':
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				return nil
			}
			b = b[i+1:]
		default:
			if bytes.HasPrefix(b, []byte("\ufeff")) {
				b = b[3:]
				continue
			}
			return b
		}
	}
	return b
}
