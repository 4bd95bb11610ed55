// Package parse holds what every history reader shares: the located [Error] type (exported to
// users as format.ParseError) and small helpers for tracking lines and byte offsets.
package parse

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Error is a reader's error with its location: the file, 1-based line and column when the
// format is textual, and the byte offset (0-based) always. It wraps the cause.
type Error struct {
	Format string // format name, e.g. "elle-edn"
	File   string // file name ("" when reading a stream)
	Line   int    // 1-based; 0 when not applicable (binary formats)
	Col    int    // 1-based; 0 when unknown
	Offset int64  // byte offset of the problem; -1 when unknown
	Err    error  // what was wrong, phrased as what was expected
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
	} else {
		b.WriteString("<input>")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	if e.Offset >= 0 && (e.Line == 0 || e.Offset > 0) {
		fmt.Fprintf(&b, " (byte %d)", e.Offset)
	}
	if e.Format != "" {
		fmt.Fprintf(&b, ": %s", e.Format)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ErrTruncated is wrapped by readers when input ends in the middle of a record.
var ErrTruncated = errors.New("unexpected end of input")

// ErrDuplicate is wrapped by directory readers when two member files hold the same client
// or the same transactions (a copied log). format exports it as format.ErrDuplicate.
var ErrDuplicate = errors.New("duplicate log")

// Errorf returns an *Error at the given location with a formatted cause.
func Errorf(format, file string, line, col int, off int64, msg string, args ...any) *Error {
	return &Error{Format: format, File: file, Line: line, Col: col, Offset: off, Err: fmt.Errorf(msg, args...)}
}

// WithFile sets the file name on err if it is an *Error without one, and returns err.
func WithFile(err error, file string) error {
	var pe *Error
	if errors.As(err, &pe) && pe.File == "" {
		pe.File = file
	}
	return err
}

// ReadAll reads r to the end like io.ReadAll, but when r says how much it holds (a Len()
// method, as bytes.Reader has and format.Open's readers do) it reads into one buffer of
// that size instead of growing one from 512 bytes, which copies a large file several
// times over.
func ReadAll(r io.Reader) ([]byte, error) {
	l, ok := r.(interface{ Len() int })
	if !ok {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, l.Len()+1) // +1: EOF is seen without growing
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // it held more than it said
		}
	}
}

// Push appends v to s, doubling the capacity when s is full: append grows large slices by
// only a quarter, which copies a slice of millions of records several times over.
func Push[T any](s []T, v T) []T {
	if len(s) == cap(s) {
		s = slices.Grow(s, max(len(s), 16))
	}
	return append(s, v)
}
