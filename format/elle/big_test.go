package elle

import (
	"bufio"
	"io"
	"os"
	"testing"

	"github.com/isovet/isovet/history"
)

// BenchmarkReadBig reads the large histories at $ISOVET_ELLE_BIG.elle-edn and .elle-json
// (default /tmp/lead/big/h), 1.12M rw-register transactions of 8 micro-ops; it skips
// when they are absent.
func BenchmarkReadBig(b *testing.B) {
	base := os.Getenv("ISOVET_ELLE_BIG")
	if base == "" {
		base = "/tmp/lead/big/h"
	}
	for _, c := range []struct {
		name string
		read func(*os.File) error
	}{
		{"EDN", func(f *os.File) error { _, err := ReadEDN(sized(f), f.Name()); return err }},
		{"JSON", func(f *os.File) error { _, err := ReadJSON(sized(f), f.Name()); return err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := base + ".elle-" + map[string]string{"EDN": "edn", "JSON": "json"}[c.name]
			if _, err := os.Stat(p); err != nil {
				b.Skipf("%s: %v", p, err)
			}
			for b.Loop() {
				f, err := os.Open(p)
				if err != nil {
					b.Fatal(err)
				}
				err = c.read(f)
				f.Close()
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// lenReader reports the bytes left, as the reader format.Open passes does.
type lenReader struct {
	r    io.Reader
	left int64
}

func (l *lenReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

func (l *lenReader) Len() int { return int(max(l.left, 0)) }

func sized(f *os.File) io.Reader {
	st, err := f.Stat()
	if err != nil {
		return f
	}
	return &lenReader{r: bufio.NewReaderSize(f, 1<<16), left: st.Size()}
}

// BenchmarkSummarizeBig times history.Summarize (what isovet stat adds to reading) on the
// large EDN history; it skips when the file is absent.
func BenchmarkSummarizeBig(b *testing.B) {
	p := os.Getenv("ISOVET_ELLE_BIG")
	if p == "" {
		p = "/tmp/lead/big/h"
	}
	f, err := os.Open(p + ".elle-edn")
	if err != nil {
		b.Skip(err)
	}
	h, err := ReadEDN(sized(f), f.Name())
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		history.Summarize(h)
	}
}
