package format

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"isovet/history"
	"isovet/internal/parse"
)

// Auto asks [Open] to sniff the format.
const Auto = "auto"

// ErrUnknownFormat is returned when a format name is not registered or sniffing finds none.
var ErrUnknownFormat = errors.New("format: unknown format")

const sniffLen = 4096

// Open reads the history at p, a file (optionally gzip-compressed), a directory of member
// files (a directory format's) or a directory holding one history file under the name its
// tool gives it ([Format.DirFile], dbcop's history.bincode), in the named format or, with
// [Auto] or "", whichever format sniffing finds.
// It returns the format used.
func Open(p, name string, o Options) (*history.History, Format, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, Format{}, err
	}
	var f Format
	var members []string
	if st.IsDir() {
		f, members, err = resolveDir(p, name)
	} else {
		f, err = resolveFile(p, name)
		members = []string{p}
	}
	if err != nil {
		return nil, Format{}, err
	}
	d := f.New(o)
	b := history.NewBuilder()
	var pr *progress
	if o.Progress != nil {
		pr = &progress{report: o.Progress}
		for _, m := range members {
			if st, err := os.Stat(m); err == nil {
				pr.total += st.Size()
			}
		}
	}
	for _, m := range members {
		if err := decodeFile(d, m, b, pr); err != nil {
			return nil, f, err
		}
	}
	if pr != nil {
		pr.report(pr.total, pr.total)
	}
	if err := d.Finish(b); err != nil {
		return nil, f, parse.WithFile(err, p)
	}
	if o.Initial != nil {
		// After the decoder: the option overrides an initial value the format gave.
		b.SetInitial(b.Value(*o.Initial))
	}
	h, err := b.Build()
	if err != nil {
		return nil, f, fmt.Errorf("%s: %s history is inconsistent: %w", p, f.Name, err)
	}
	return h, f, nil
}

// progress counts bytes read across the input files and reports every MiB.
type progress struct {
	report      func(done, total int64)
	done, total int64
	last        int64
}

type countingReader struct {
	r io.Reader
	p *progress
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.p.done += int64(n)
	if c.p.done-c.p.last >= 1<<20 {
		c.p.last = c.p.done
		c.p.report(c.p.done, c.p.total)
	}
	return n, err
}

func decodeFile(d Decoder, p string, b *history.Builder, pr *progress) error {
	fh, err := os.Open(p)
	if err != nil {
		return err
	}
	defer fh.Close()
	var src io.Reader = fh
	if pr != nil {
		src = &countingReader{r: fh, p: pr}
	}
	br := bufio.NewReaderSize(src, 1<<16)
	r, err := maybeGunzip(br)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if st, err := fh.Stat(); err == nil && r == io.Reader(br) && st.Mode().IsRegular() {
		r = &sizedReader{r: r, left: st.Size()}
	}
	if err := d.Decode(r, p, b); err != nil {
		return parse.WithFile(err, p)
	}
	return nil
}

// sizedReader tells a decoder how much of the file is left (Len, as bytes.Reader does), so
// that it can size its buffers and the builder for the whole input.
type sizedReader struct {
	r    io.Reader
	left int64
}

func (s *sizedReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.left -= int64(n)
	return n, err
}

func (s *sizedReader) Len() int { return int(max(s.left, 0)) }

// maybeGunzip wraps r in a gzip reader if it starts with the gzip magic.
func maybeGunzip(r *bufio.Reader) (io.Reader, error) {
	head, _ := r.Peek(2)
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("reading gzip header: %w", err)
		}
		return bufio.NewReaderSize(zr, 1<<16), nil
	}
	return r, nil
}

func readHead(p string) ([]byte, error) {
	fh, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	r, err := maybeGunzip(bufio.NewReader(fh))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(r, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return head[:n], nil
}

func unknown(name string) error {
	return fmt.Errorf("%w %q (supported: %s)", ErrUnknownFormat, name, strings.Join(Names(), ", "))
}

func resolveFile(p, name string) (Format, error) {
	if name != "" && name != Auto {
		f, ok := Lookup(name)
		if !ok {
			return Format{}, unknown(name)
		}
		if f.Dir {
			return Format{}, fmt.Errorf("%s: format %s reads a directory of %s files, not a file", p, f.Name, f.Members)
		}
		return f, nil
	}
	head, err := readHead(p)
	if err != nil {
		return Format{}, err
	}
	if len(bytes.TrimSpace(head)) == 0 {
		return Format{}, fmt.Errorf("%s: empty file: no history to read", p)
	}
	base := filepath.Base(p)
	for _, f := range formats {
		if !f.Dir && f.Sniff != nil && f.Sniff(base, head) {
			return f, nil
		}
	}
	return Format{}, fmt.Errorf("%s: %w: no reader recognizes its content (supported: %s; name one with --format)", p, ErrUnknownFormat, strings.Join(Names(), ", "))
}

func resolveDir(p, name string) (Format, []string, error) {
	entries, err := os.ReadDir(p)
	if err != nil {
		return Format{}, nil, err
	}
	var candidates []Format
	if name != "" && name != Auto {
		f, ok := Lookup(name)
		if !ok {
			return Format{}, nil, unknown(name)
		}
		if !f.Dir && f.DirFile == "" {
			return Format{}, nil, fmt.Errorf("%s is a directory; format %s reads a single file", p, f.Name)
		}
		candidates = []Format{f}
	} else {
		// Directory formats first, then directories holding one file of a file format.
		for _, f := range formats {
			if f.Dir {
				candidates = append(candidates, f)
			}
		}
		for _, f := range formats {
			if !f.Dir && f.DirFile != "" {
				candidates = append(candidates, f)
			}
		}
	}
	for _, f := range candidates {
		members := dirMembers(f, p, entries)
		if len(members) == 0 {
			continue
		}
		if name == "" || name == Auto {
			head, err := readHead(members[0])
			if err != nil {
				return Format{}, nil, err
			}
			if f.Sniff != nil && !f.Sniff(filepath.Base(members[0]), head) {
				continue
			}
		}
		return f, members, nil
	}
	if len(candidates) == 1 {
		f := candidates[0]
		if !f.Dir {
			return Format{}, nil, fmt.Errorf("%s: no %s in the directory (a directory holding a %s history holds it as %s)", p, f.DirFile, f.Name, f.DirFile)
		}
		return Format{}, nil, fmt.Errorf("%s: no %s files in the directory (a %s history is a directory of %s files)", p, f.Members, f.Name, f.Members)
	}
	hint := ""
	if sub := historySubdirs(p, entries); len(sub) > 0 {
		hint = fmt.Sprintf("; these subdirectories hold one: %s", strings.Join(sub, ", "))
	}
	return Format{}, nil, fmt.Errorf("%s: %w: the directory holds no history isovet recognizes (directory formats: %s)%s", p, ErrUnknownFormat, dirNames(), hint)
}

func dirNames() string {
	var ns []string
	for _, f := range formats {
		if f.Dir {
			ns = append(ns, f.Name+" ("+f.Members+")")
		}
	}
	for _, f := range formats {
		if !f.Dir && f.DirFile != "" {
			ns = append(ns, f.Name+" (one "+f.DirFile+")")
		}
	}
	return strings.Join(ns, ", ")
}

// matchMembers returns the regular files in dir matching pattern, sorted naturally so that
// T2.log comes before T10.log.
func matchMembers(dir string, entries []fs.DirEntry, pattern string) []string {
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		if ok, _ := path.Match(pattern, e.Name()); ok {
			names = append(names, e.Name())
		}
	}
	slices.SortFunc(names, naturalCompare)
	for i, n := range names {
		names[i] = filepath.Join(dir, n)
	}
	return names
}

// naturalCompare orders strings with embedded numbers by numeric value.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) - len(nb)
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitPrefix(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// historySubdirs names up to three subdirectories of p (entries) that hold a history a
// directory format recognizes by its file names, for the error that p itself holds none
// (e.g. VeriStrong's BL-10k, whose history is in BL-10k/hist-00000).
func historySubdirs(p string, entries []fs.DirEntry) []string {
	var out []string
	for _, e := range entries {
		if !e.IsDir() || len(out) == 3 {
			continue
		}
		sub := filepath.Join(p, e.Name())
		inner, err := os.ReadDir(sub)
		if err != nil {
			continue
		}
		if slices.ContainsFunc(formats, func(f Format) bool { return len(dirMembers(f, sub, inner)) > 0 }) {
			out = append(out, sub)
		}
	}
	return out
}

// dirMembers returns the files of directory p (entries) that make up a history of format
// f: a directory format's members, or a file format's DirFile; nil if there are none.
func dirMembers(f Format, p string, entries []fs.DirEntry) []string {
	if f.Dir {
		return matchMembers(p, entries, f.Members)
	}
	if f.DirFile == "" {
		return nil
	}
	if i := slices.IndexFunc(entries, func(e fs.DirEntry) bool { return e.Name() == f.DirFile }); i >= 0 && !entries[i].IsDir() {
		return []string{filepath.Join(p, f.DirFile)}
	}
	return nil
}

// Collection returns the histories directly inside directory p when p itself holds none:
// its subdirectories that hold a history, and its files that are one, read in the named
// format or, with [Auto] or "", any format sniffing finds. Names are relative to p and in
// natural order (tap-2 before tap-10). It returns nil when p is a history itself, or holds
// none.
func Collection(p, name string) []string {
	if _, _, err := resolveDir(p, name); err == nil {
		return nil
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		sub := filepath.Join(p, e.Name())
		if e.IsDir() {
			if _, _, err := resolveDir(sub, name); err == nil {
				out = append(out, e.Name())
			}
			continue
		}
		if !e.Type().IsRegular() {
			continue
		}
		if _, err := resolveFile(sub, name); err == nil {
			out = append(out, e.Name())
		}
	}
	slices.SortFunc(out, naturalCompare)
	return out
}
