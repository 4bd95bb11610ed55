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

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/parse"
)

// Auto asks [Open] to sniff the format.
const Auto = "auto"

// ErrUnknownFormat is returned when a format name is not registered or sniffing finds none.
var ErrUnknownFormat = errors.New("format: unknown format")

// ErrEmpty is wrapped when the input holds no transaction: an empty or blank file, or a
// directory whose member files hold none. An empty history is an input error, never a
// vacuous pass, unless [Options.AllowEmpty] says that it is really empty.
var ErrEmpty = errors.New("format: empty history")

// ErrDuplicate is wrapped when two member files of a directory history hold the same client
// or the same transactions (a copied log): reading both would merge a client with itself.
// Each directory format says in its package doc what makes two files the same client.
var ErrDuplicate = parse.ErrDuplicate

// ErrStream is wrapped when a directory format is asked to read a stream ([Read]): its
// history is a directory of files, which a stream cannot hold.
var ErrStream = errors.New("format: a directory format cannot read a stream")

const sniffLen = 4096

// Open reads the history at p, a file (optionally gzip-compressed), a directory of member
// files (a directory format's) or a directory holding one history file under the name its
// tool gives it ([Format.DirFile], dbcop's history.bincode), in the named format or, with
// [Auto] or "", whichever format sniffing finds.
// It returns the format used.
//
// A file is opened once and read once: sniffing looks at the first bytes of the buffered
// reader the decoder then reads from, so a pipe, a FIFO, /dev/stdin or a shell's process
// substitution (/dev/fd/63) reads as the file it carries. Member files of a directory must
// be regular files.
func Open(p, name string, o Options) (*history.History, Format, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, Format{}, err
	}
	if st.IsDir() {
		return openDir(p, name, o)
	}
	fh, err := os.Open(p)
	if err != nil {
		return nil, Format{}, err
	}
	defer fh.Close()
	return read(fh, p, name, o)
}

// Read reads one history from r, in the named format or, with [Auto] or "", whichever format
// sniffing finds; name stands for r in errors and is what sniffers see as the file name
// (for example "<stdin>"). r is read once, to its end: what sniffing looks at is buffered
// and decoded from, so r may be a pipe. gzip input is undone. A directory format cannot
// read a stream ([ErrStream]).
func Read(r io.Reader, name, formatName string, o Options) (*history.History, Format, error) {
	if f, ok := Lookup(formatName); ok && f.Dir {
		return nil, Format{}, fmt.Errorf("%s: %w: a %s history is a directory of %s files, and a stream holds one file; name the directory instead", name, ErrStream, f.Name, f.Members)
	}
	return read(r, name, formatName, o)
}

// read decodes the single-file history that src carries.
func read(src io.Reader, p, name string, o Options) (*history.History, Format, error) {
	f, sniff, err := lookupFile(p, name)
	if err != nil {
		return nil, Format{}, err
	}
	size := regularSize(src)
	pr, src := streamProgress(o, src, size)
	br := bufio.NewReaderSize(src, 1<<16)
	r, err := maybeGunzip(br)
	if err != nil {
		return nil, Format{}, fmt.Errorf("%s: %w", p, err)
	}
	if sniff {
		if f, err = sniffReader(p, r); err != nil {
			return nil, Format{}, err
		}
	}
	in, dec := decodeInput(r, br, size)
	d := f.New(o)
	b := history.NewBuilder()
	if err := d.Decode(dec, p, b); err != nil {
		return nil, f, parse.WithFile(err, p)
	}
	if b.NumTxns() == 0 && !o.AllowEmpty {
		return nil, f, &ParseError{Format: f.Name, File: p, Offset: in.n,
			Err: fmt.Errorf("%w: expected at least one transaction, found none in %s", ErrEmpty, bytesText(in.n))}
	}
	pr.complete()
	return finish(d, b, f, p, o)
}

// streamProgress returns the progress of reading src, size bytes, and what to read src
// through to count it; no progress when o asks for none or the size is unknown (a pipe:
// there is no total to show).
func streamProgress(o Options, src io.Reader, size int64) (*progress, io.Reader) {
	if o.Progress == nil || size < 0 {
		return nil, src
	}
	pr := &progress{report: o.Progress, total: size}
	return pr, &countingReader{r: src, p: pr}
}

// regularSize returns the size of src when it is a regular file, else -1.
func regularSize(src io.Reader) int64 {
	if s, ok := src.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if st, err := s.Stat(); err == nil && st.Mode().IsRegular() {
			return st.Size()
		}
	}
	return -1
}

// sniffReader returns the single-file format whose sniffer accepts the first bytes of r,
// the content of file p, which it peeks at.
func sniffReader(p string, r *bufio.Reader) (Format, error) {
	head, err := r.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return Format{}, fmt.Errorf("%s: %w", p, err)
	}
	return sniffFile(p, head)
}

// decodeInput returns what a decoder reads of r, the content of a file read through br:
// r counted by in, which also says, when r is br (not gunzipped) and the file's size is
// known, how much is left.
func decodeInput(r, br *bufio.Reader, size int64) (in *counter, dec io.Reader) {
	in = &counter{r: r}
	if r == br && size >= 0 {
		return in, &sizedReader{counter: in, size: size}
	}
	return in, in
}

// member is one member file of a directory history, as read.
type member struct {
	path string
	size int64 // bytes decoded (after gzip)
}

// openDir reads the directory history at p.
func openDir(p, name string, o Options) (*history.History, Format, error) {
	f, members, err := resolveDir(p, name)
	if err != nil {
		return nil, Format{}, err
	}
	pr := membersProgress(o, members)
	d := f.New(o)
	b := history.NewBuilder()
	got := make([]member, len(members))
	for i, m := range members {
		n, err := decodeFile(d, m, b, pr)
		if err != nil {
			return nil, f, err
		}
		got[i] = member{m, n}
	}
	pr.complete()
	if err := checkMembers(f, p, got, b, o); err != nil {
		return nil, f, err
	}
	return finish(d, b, f, p, o)
}

// membersProgress returns the progress of reading the member files, nil when o asks for
// none.
func membersProgress(o Options, members []string) *progress {
	if o.Progress == nil {
		return nil
	}
	pr := &progress{report: o.Progress}
	for _, m := range members {
		if st, err := os.Stat(m); err == nil {
			pr.total += st.Size()
		}
	}
	return pr
}

// checkMembers refuses a directory history whose member files hold no transaction, and notes
// the empty members of one that holds some.
func checkMembers(f Format, p string, members []member, b *history.Builder, o Options) error {
	if b.NumTxns() > 0 || o.AllowEmpty {
		noteEmpty(members, b)
		return nil
	}
	var sizes []string
	for _, m := range members {
		sizes = append(sizes, filepath.Base(m.path)+" "+bytesText(m.size))
	}
	first := members[0]
	return &ParseError{Format: f.Name, File: first.path, Offset: first.size,
		Err: fmt.Errorf("%w: expected at least one transaction in the %s of %s, found none (%s)", ErrEmpty, count(len(members), f.Members, " files"), p, listNames(sizes))}
}

// noteEmpty notes the empty member files, when some but not all are.
func noteEmpty(members []member, b *history.Builder) {
	var empty []string
	for _, m := range members {
		if m.size == 0 {
			empty = append(empty, filepath.Base(m.path))
		}
	}
	if len(empty) > 0 && len(empty) < len(members) {
		b.Note(fmt.Sprintf("%s of the %d member files %s empty (%s): read as clients that logged nothing; if a client's log was lost, reads of its writes have no writer",
			count(len(empty), "", ""), len(members), isAre(len(empty)), listNames(empty)))
	}
}

// finish resolves what spans inputs and builds the history.
func finish(d Decoder, b *history.Builder, f Format, p string, o Options) (*history.History, Format, error) {
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

func bytesText(n int64) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// count says n things: "1 T*.log file", "3 T*.log files".
func count(n int, what, plural string) string {
	s := fmt.Sprint(n)
	if what != "" {
		s += " " + what
	}
	if n == 1 {
		return s + strings.TrimSuffix(plural, "s")
	}
	return s + plural
}

// listNames joins up to five names, then says how many more there are.
func listNames(ns []string) string {
	if len(ns) <= 5 {
		return strings.Join(ns, ", ")
	}
	return strings.Join(ns[:5], ", ") + fmt.Sprintf(" and %d more", len(ns)-5)
}

// progress counts bytes read across the input files and reports every MiB.
type progress struct {
	report      func(done, total int64)
	done, total int64
	last        int64
}

// complete reports all input read; pr may be nil (no progress asked).
func (pr *progress) complete() {
	if pr != nil {
		pr.report(pr.total, pr.total)
	}
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

// decodeFile decodes the member file at p and returns the bytes it held (after gzip).
func decodeFile(d Decoder, p string, b *history.Builder, pr *progress) (int64, error) {
	fh, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return 0, err
	}
	if !st.Mode().IsRegular() {
		return 0, notRegular(p)
	}
	var src io.Reader = fh
	if pr != nil {
		src = &countingReader{r: fh, p: pr}
	}
	br := bufio.NewReaderSize(src, 1<<16)
	r, err := maybeGunzip(br)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p, err)
	}
	in, dec := decodeInput(r, br, st.Size())
	if err := d.Decode(dec, p, b); err != nil {
		return in.n, parse.WithFile(err, p)
	}
	return in.n, nil
}

func notRegular(p string) error {
	return fmt.Errorf("%s: not a regular file: the member files of a directory history are read twice (once to tell the format), so they must be regular files", p)
}

// counter counts the bytes read through it.
type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// sizedReader tells a decoder how much of the file is left (Len, as bytes.Reader does), so
// that it can size its buffers and the builder for the whole input.
type sizedReader struct {
	*counter
	size int64
}

func (s *sizedReader) Len() int { return int(max(s.size-s.n, 0)) }

// maybeGunzip returns a reader of r's content: r itself, or, if r starts with the gzip
// magic, a buffered reader of what it decompresses to.
func maybeGunzip(r *bufio.Reader) (*bufio.Reader, error) {
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

// readHead returns the first bytes of the regular file at p (after gzip), for sniffing a
// directory's members and a collection's files. Never call it on a file that is then read
// again unless it is regular: a pipe would lose what it returns.
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

// sniffed reports whether the format named name is to be sniffed from the content: it is
// [Auto] or "".
func sniffed(name string) bool { return name == "" || name == Auto }

func unknown(name string) error {
	return fmt.Errorf("%w %q (supported: %s)", ErrUnknownFormat, name, strings.Join(Names(), ", "))
}

// lookupFile returns the single-file format named name, or sniff set when it is to be
// sniffed from the content.
func lookupFile(p, name string) (f Format, sniff bool, err error) {
	if sniffed(name) {
		return Format{}, true, nil
	}
	f, ok := Lookup(name)
	if !ok {
		return Format{}, false, unknown(name)
	}
	if f.Dir {
		return Format{}, false, fmt.Errorf("%s: format %s reads a directory of %s files, not a file", p, f.Name, f.Members)
	}
	return f, false, nil
}

// sniffFile returns the single-file format whose sniffer accepts head, the first bytes of
// the file p.
func sniffFile(p string, head []byte) (Format, error) {
	if len(bytes.TrimSpace(head)) == 0 {
		return Format{}, blankHead(p, head)
	}
	base := filepath.Base(p)
	for _, f := range formats {
		if !f.Dir && f.Sniff != nil && f.Sniff(base, head) {
			return f, nil
		}
	}
	return Format{}, fmt.Errorf("%s: %w: no reader recognizes its content (supported: %s; name one with --format)", p, ErrUnknownFormat, strings.Join(Names(), ", "))
}

// blankHead says why a file p whose first bytes, head, are white space has no format: it is
// empty, blank, or starts with more white space than sniffing looks at.
func blankHead(p string, head []byte) error {
	switch {
	case len(head) == 0:
		return &ParseError{File: p, Offset: 0, Err: fmt.Errorf("%w: empty file: expected a history, found 0 bytes", ErrEmpty)}
	case len(head) < sniffLen:
		return &ParseError{File: p, Offset: int64(len(head)), Err: fmt.Errorf("%w: blank file: expected a history, found only white space", ErrEmpty)}
	}
	return fmt.Errorf("%s: %w: its first %d bytes are white space (name the format with --format)", p, ErrUnknownFormat, len(head))
}

// resolveFile returns the format of the regular file p: the one named, or the one sniffing
// finds.
func resolveFile(p, name string) (Format, error) {
	f, sniff, err := lookupFile(p, name)
	if err != nil || !sniff {
		return f, err
	}
	head, err := readHead(p)
	if err != nil {
		return Format{}, err
	}
	return sniffFile(p, head)
}

func resolveDir(p, name string) (Format, []string, error) {
	entries, err := os.ReadDir(p)
	if err != nil {
		return Format{}, nil, err
	}
	candidates, err := dirCandidates(p, name)
	if err != nil {
		return Format{}, nil, err
	}
	sniff := sniffed(name)
	var blank []string // the members of a directory format's pattern, all empty
	for _, f := range candidates {
		members := dirMembers(f, p, entries)
		if len(members) == 0 {
			continue
		}
		if sniff {
			ok, empty, err := sniffDir(f, members)
			if err != nil {
				return Format{}, nil, err
			}
			if empty && blank == nil {
				blank = members
			}
			if !ok {
				continue
			}
		}
		return f, members, nil
	}
	return Format{}, nil, noDirFormat(p, entries, candidates, blank)
}

// dirCandidates lists the formats that may read directory p: the one named, or, when the
// format is to be sniffed, the directory formats first, then those of a directory
// holding one file of a file format.
func dirCandidates(p, name string) ([]Format, error) {
	if sniffed(name) {
		return dirFormats(), nil
	}
	f, ok := Lookup(name)
	if !ok {
		return nil, unknown(name)
	}
	if !f.Dir && f.DirFile == "" {
		return nil, fmt.Errorf("%s is a directory; format %s reads a single file", p, f.Name)
	}
	return []Format{f}, nil
}

// dirFormats lists the formats that read a directory: the directory formats first, then
// those of a directory holding one file of a file format.
func dirFormats() []Format {
	var out []Format
	for _, f := range formats {
		if f.Dir {
			out = append(out, f)
		}
	}
	for _, f := range formats {
		if !f.Dir && f.DirFile != "" {
			out = append(out, f)
		}
	}
	return out
}

// sniffDir reports whether f's sniffer accepts its members in a directory, judging by the
// first that is not empty; empty is set when f is a directory format and every member is
// empty.
func sniffDir(f Format, members []string) (ok, empty bool, err error) {
	m, head, err := sniffMember(members)
	if err != nil {
		return false, false, err
	}
	if m == "" {
		m = members[0]
		empty = f.Dir
	}
	return f.Sniff == nil || f.Sniff(filepath.Base(m), head), empty, nil
}

// noDirFormat says why no candidate format reads directory p: its logs are all empty
// (blank), the one format named finds nothing, or none recognizes it.
func noDirFormat(p string, entries []os.DirEntry, candidates []Format, blank []string) error {
	if blank != nil {
		// Empty logs say nothing of their format, and hold no transaction in any.
		return &ParseError{File: blank[0], Offset: 0,
			Err: fmt.Errorf("%w: expected at least one transaction in the log files of %s, found %s, every one empty (%s)", ErrEmpty, p, count(len(blank), "", " files"), listNames(baseNames(blank)))}
	}
	if len(candidates) == 1 {
		f := candidates[0]
		if !f.Dir {
			return fmt.Errorf("%s: no %s in the directory (a directory holding a %s history holds it as %s)", p, f.DirFile, f.Name, f.DirFile)
		}
		return fmt.Errorf("%s: no %s files in the directory (a %s history is a directory of %s files)", p, f.Members, f.Name, f.Members)
	}
	hint := ""
	if sub := historySubdirs(p, entries); len(sub) > 0 {
		hint = fmt.Sprintf("; these subdirectories hold one: %s", strings.Join(sub, ", "))
	}
	return fmt.Errorf("%s: %w: the directory holds no history isovet recognizes (directory formats: %s)%s", p, ErrUnknownFormat, dirNames(), hint)
}

func baseNames(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = filepath.Base(p)
	}
	return out
}

// sniffMember returns the first member file that is not empty, with its first bytes, for
// sniffing: an empty log (a client that logged nothing) says nothing of the format. When
// every member is empty it returns "". A member that is not a regular file is an error:
// peeking at it would consume what the decoder must read.
func sniffMember(members []string) (string, []byte, error) {
	for _, m := range members {
		st, err := os.Stat(m)
		if err != nil {
			return "", nil, err
		}
		if !st.Mode().IsRegular() {
			return "", nil, notRegular(m)
		}
		head, err := readHead(m)
		if err != nil {
			return "", nil, err
		}
		if len(head) > 0 {
			return m, head, nil
		}
	}
	return "", nil, nil
}

func dirNames() string {
	var ns []string
	for _, f := range dirFormats() {
		if f.Dir {
			ns = append(ns, f.Name+" ("+f.Members+")")
		} else {
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

// naturalCompare orders strings with embedded numbers by numeric value; strings equal so
// (T1.log, T01.log) by their bytes.
func naturalCompare(a, b string) int {
	if c := numericCompare(a, b); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func numericCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da > 0 && db > 0 {
			if c := compareNumbers(a[:da], b[:db]); c != 0 {
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

// compareNumbers orders two runs of digits by numeric value.
func compareNumbers(a, b string) int {
	na, nb := strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(na) != len(nb) {
		return len(na) - len(nb)
	}
	return strings.Compare(na, nb)
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
		if isHistory(p, e, name) {
			out = append(out, e.Name())
		}
	}
	slices.SortFunc(out, naturalCompare)
	return out
}

// isHistory reports whether entry e of directory p, not hidden, is a history in the named
// format: a directory one reads, or a regular file.
func isHistory(p string, e fs.DirEntry, name string) bool {
	if strings.HasPrefix(e.Name(), ".") {
		return false
	}
	sub := filepath.Join(p, e.Name())
	if e.IsDir() {
		_, _, err := resolveDir(sub, name)
		return err == nil
	}
	if !e.Type().IsRegular() {
		return false
	}
	_, err := resolveFile(sub, name)
	return err == nil
}
