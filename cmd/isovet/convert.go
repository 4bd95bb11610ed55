package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/history"
)

func writableNames() []string {
	var ns []string
	for _, f := range format.Formats() {
		if f.Writable() {
			ns = append(ns, f.Name)
		}
	}
	return ns
}

func newConvertCmd() *cobra.Command {
	var in inputFlags
	var cf convertFlags
	c := &cobra.Command{
		Use:   "convert HISTORY --to FORMAT [-o FILE|DIR] [--lossy]",
		Short: "Convert a history to another format (native jsonl, elle-edn, elle-json, text, chronos, veristrong, dbcop, cobra)",
		Long: `Convert a history to another format.

Before writing, convert compares what the history says with what the target format can
hold (docs/formats.md, "What each format holds"). If something would be lost (explicit
read sources that value matching cannot recover, outcomes, failed flags, predicates, times,
timestamps, snapshots, the initial state, ...), it writes nothing, says what and how much,
and exits 2; with --lossy it writes the history without it and says on stderr what was
dropped. An output file is written whole or not at all.

With --json (which needs -o FILE, the history's place) the conversion's report is one JSON
document on stdout, {"schema": 1, "kind": "convert", "results": [...]}: the file, the
formats, whether the history was written, and every loss with its count and whether it
was dropped (docs/json.md).

Cobra logs are a directory, one T<n>.log per session: --to cobra needs -o DIR, a directory
that does not exist yet or is empty, which is written whole or not at all. --to dbcop writes
history.bincode, the file dbcop, PolySI and VeriStrong read.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return cf.run(c, &in, args[0]) },
	}
	in.register(c)
	c.Flags().StringVar(&cf.to, "to", "", "output format: "+strings.Join(writableNames(), ", ")+" (required)")
	c.Flags().StringVarP(&cf.out, "output", "o", "", "output file (default: stdout), or directory for a directory format (cobra)")
	c.Flags().BoolVar(&cf.lossy, "lossy", false, "write even when the format cannot hold everything the history says, dropping it (stderr says what)")
	c.Flags().BoolVar(&cf.asJSON, "json", false, `print the conversion's report (losses, what was written) as one JSON document, {"schema": 1, "kind": "convert", "results": [...]}; needs -o FILE (docs/json.md)`)
	_ = c.MarkFlagRequired("to")
	return c
}

// convertFlags are the flags of `isovet convert`.
type convertFlags struct {
	to, out       string
	lossy, asJSON bool
}

// run converts the history at path: it reads it, fits it to the target format and writes
// it, then, with --json, prints the report.
func (cf *convertFlags) run(c *cobra.Command, in *inputFlags, path string) error {
	f, ok := format.Lookup(cf.to)
	if !ok || !f.Writable() {
		return &exitError{code: exitUsage, err: fmt.Errorf("cannot write format %q (writable: %s)", cf.to, strings.Join(writableNames(), ", "))}
	}
	if f.WriteDir != nil && (cf.out == "" || cf.out == "-") {
		return &exitError{code: exitUsage, err: fmt.Errorf("%s is a directory of files: give the directory to write with -o DIR", f.Name)}
	}
	if cf.asJSON && (cf.out == "" || cf.out == "-") {
		return &exitError{code: exitUsage, err: errors.New("convert --json prints the conversion's report on stdout: give the history a file with -o FILE")}
	}
	h, from, err := in.open(path)
	if err != nil {
		return err
	}
	var ls []format.Loss
	if cf.asJSON {
		ls = format.Losses(h, f)
	}
	fitted, err := fitTo(c.ErrOrStderr(), h, f, path, cf.lossy)
	if err == nil {
		err = writeConverted(c.OutOrStdout(), cf.out, f, fitted)
	}
	if !cf.asJSON {
		return err
	}
	res := convertResult{File: displayName(path), Format: from.Name, To: f.Name, Output: cf.out, Lossy: cf.lossy, Written: err == nil, Losses: []lossJSON{}}
	for _, l := range ls {
		res.Losses = append(res.Losses, lossOf(l, res.Written))
	}
	if err != nil {
		res.Error = err.Error()
	}
	doc := struct {
		jsonHead
		Results []convertResult `json:"results"`
	}{newHead("convert"), []convertResult{res}}
	if jerr := writeJSONDoc(c.OutOrStdout(), doc); jerr != nil {
		return jerr
	}
	return err
}

// writeConverted writes h in format f to out: a directory for a directory format (whole or
// not at all), else a file or stdout.
func writeConverted(stdout io.Writer, out string, f format.Format, h *history.History) error {
	if f.WriteDir != nil {
		return writeDirOutput(out, func(create func(string) (io.Writer, error)) error {
			if err := f.WriteDir(h, create); err != nil {
				return fmt.Errorf("writing %s: %w", f.Name, err)
			}
			return nil
		})
	}
	return writeOutput(stdout, out, func(w io.Writer) error {
		if err := f.Write(w, h); err != nil {
			return fmt.Errorf("writing %s: %w", f.Name, err)
		}
		return nil
	})
}

// convertResult is the convert document's result: what was converted to what, whether it
// was written, and what the target format could not hold.
type convertResult struct {
	File    string     `json:"file"`
	Format  string     `json:"format"`
	To      string     `json:"to"`
	Output  string     `json:"output"`
	Lossy   bool       `json:"lossy"`
	Written bool       `json:"written"`
	Error   string     `json:"error,omitempty"`
	Losses  []lossJSON `json:"losses"`
}

// lossJSON is one kind of content the target format cannot hold.
type lossJSON struct {
	Feature string `json:"feature"`
	Count   int    `json:"count"`
	Unit    string `json:"unit"`
	What    string `json:"what"`
	Example string `json:"example,omitempty"`
	// Droppable says --lossy can write the history without it (Instead says what it
	// writes); Dropped says it was.
	Droppable bool   `json:"droppable"`
	Dropped   bool   `json:"dropped"`
	Instead   string `json:"instead,omitempty"`
}

// lossOf is l in the document's words; written says the history was written, so every
// loss was dropped.
func lossOf(l format.Loss, written bool) lossJSON {
	in := l.Feature.Info()
	return lossJSON{Feature: in.Name, Count: l.Count, Unit: in.Unit, What: in.What, Example: l.Example, Droppable: l.Droppable(), Dropped: written, Instead: in.Drop}
}

// fitTo returns h as format f can hold it. When f cannot hold something h says, it
// refuses (exit 2), listing the losses on stderr, unless lossy is set; then it drops them
// and says so. Losses that cannot be dropped refuse either way.
func fitTo(stderr io.Writer, h *history.History, f format.Format, name string, lossy bool) (*history.History, error) {
	ls := format.Losses(h, f)
	if len(ls) == 0 {
		return h, nil
	}
	if l, bad := format.Undroppable(ls); bad {
		fmt.Fprintf(stderr, "isovet: %s cannot express this history:\n%s\n", f.Name, format.Describe(ls))
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("cannot convert %s to %s: %s (not even with --lossy); nothing was written", name, f.Name, l.Feature.Info().Name)}
	}
	if !lossy {
		fmt.Fprintf(stderr, "isovet: %s cannot hold everything this history says:\n%s\n", f.Name, format.Describe(ls))
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("refusing to convert %s to %s: %s would be lost (see above); nothing was written; --lossy writes it without them", name, f.Name, plural(len(ls), "kind of content", "kinds of content"))}
	}
	var b strings.Builder
	for _, l := range ls {
		fmt.Fprintf(&b, "  - %s: %s\n", l, l.Feature.Info().Drop)
	}
	fmt.Fprintf(stderr, "isovet: warning: %s cannot hold everything this history says; written without it (--lossy):\n%s", f.Name, b.String())
	return format.Drop(h, ls), nil
}

// writeOutput writes through render to path, or to stdout when path is "" or "-". A file
// is written whole or not at all: render writes a temporary file in the same directory
// (of the link's target, when path is a symbolic link), renamed over path on success and
// removed on failure. An existing path that is not a regular file (a device such as
// /dev/stdout, a pipe) is written directly.
func writeOutput(stdout io.Writer, path string, render func(io.Writer) error) error {
	if path == "" || path == "-" {
		return writeBuffered(stdout, render)
	}
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	mode, direct, err := outputMode(path)
	if err != nil {
		return err
	}
	if direct {
		return writeFile(path, render)
	}
	return replaceFile(path, mode, render)
}

// replaceFile writes through render to a temporary file next to path, with permission
// mode, and renames it over path; on failure it removes it.
func replaceFile(path string, mode os.FileMode, render func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	fh, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("writing %s: %w", path, err)}
	}
	tmp := fh.Name()
	defer func() {
		if err != nil {
			fh.Close()
			os.Remove(tmp)
		}
	}()
	if err := writeBuffered(fh, render); err != nil {
		return err
	}
	if err := fh.Chmod(mode); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// outputMode is the permission the file written to path gets: an existing file's, else
// 0644. direct says path exists and is not a regular file (a device, a pipe): it is written
// in place; a directory is a usage error.
func outputMode(path string) (mode os.FileMode, direct bool, err error) {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return 0o644, false, nil
	case st.IsDir():
		return 0, false, &exitError{code: exitUsage, err: fmt.Errorf("writing %s: is a directory", path)}
	case !st.Mode().IsRegular():
		return 0, true, nil
	}
	return st.Mode().Perm(), false, nil
}

// writeDirOutput writes the member files render creates into the directory path, which
// must not exist or be empty. The files go to a temporary directory next to path, renamed
// to path when complete and removed on failure, so path is written whole or not at all.
func writeDirOutput(path string, render func(create func(string) (io.Writer, error)) error) (err error) {
	if err := emptyOrAbsent(path); err != nil {
		return err
	}
	parent, base := filepath.Split(filepath.Clean(path))
	if parent == "" {
		parent = "."
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".*.tmp")
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("writing %s: %w", path, err)}
	}
	var open *dirMember
	defer func() {
		if open != nil {
			if cerr := open.close(); err == nil {
				err = cerr
			}
		}
		if err == nil {
			err = placeDir(tmp, path)
		}
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	return render(func(name string) (io.Writer, error) {
		if open != nil {
			if err := open.close(); err != nil {
				return nil, err
			}
			open = nil
		}
		if name != filepath.Base(name) || name == "." || name == ".." {
			return nil, fmt.Errorf("writing %s: member name %q is not a file name", path, name)
		}
		fh, err := os.OpenFile(filepath.Join(tmp, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
		open = &dirMember{fh: fh, bw: bufio.NewWriterSize(fh, 1<<16)}
		return open.bw, nil
	})
}

// dirMember is a member file being written, through a buffer.
type dirMember struct {
	fh *os.File
	bw *bufio.Writer
}

func (m *dirMember) close() error {
	err := m.bw.Flush()
	if cerr := m.fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", m.fh.Name(), err)
	}
	return nil
}

// emptyOrAbsent refuses (exit 2) a path that exists and is not an empty directory.
func emptyOrAbsent(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return nil
	}
	if !st.IsDir() {
		return &exitError{code: exitUsage, err: fmt.Errorf("writing %s: exists and is not a directory", path)}
	}
	es, err := os.ReadDir(path)
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("writing %s: %w", path, err)}
	}
	if len(es) > 0 {
		return &exitError{code: exitUsage, err: fmt.Errorf("writing %s: the directory is not empty (convert writes a new directory, or fills an empty one)", path)}
	}
	return nil
}

// placeDir gives the complete directory tmp the usual permissions and renames it to path,
// replacing path if it is an empty directory.
func placeDir(tmp, path string) error {
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// plural says n things: "1 kind", "2 kinds".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func writeBuffered(w io.Writer, write func(io.Writer) error) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := write(bw); err != nil {
		return err
	}
	return bw.Flush()
}

func newFormatsCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "formats",
		Short: "List the history formats isovet reads and writes",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			w := c.OutOrStdout()
			if asJSON {
				return formatsJSON(w)
			}
			for _, f := range format.Formats() {
				rw := "read"
				if f.Writable() {
					rw = "read/write"
				}
				kind := "file"
				if f.Dir {
					kind = "directory of " + f.Members
				}
				fmt.Fprintf(w, "%-12s %-10s %-22s %s\n", f.Name, rw, kind, f.Summary)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, `print the formats as one JSON document, {"schema": 1, "kind": "formats", "formats": [...]} (docs/json.md)`)
	return c
}

// formatJSON is one format in the formats document.
type formatJSON struct {
	Name    string   `json:"name"`
	Aliases []string `json:"aliases"`
	Summary string   `json:"summary"`
	Write   bool     `json:"write"`
	Dir     bool     `json:"dir"`
	Members string   `json:"members,omitempty"`
}

// formatsJSON prints the formats document: every format isovet reads, whether it writes
// it, and whether a history of it is a directory (of which member files).
func formatsJSON(w io.Writer) error {
	doc := struct {
		jsonHead
		Formats []formatJSON `json:"formats"`
	}{newHead("formats"), []formatJSON{}}
	for _, f := range format.Formats() {
		doc.Formats = append(doc.Formats, formatJSON{Name: f.Name, Aliases: append([]string{}, f.Aliases...), Summary: f.Summary, Write: f.Write != nil, Dir: f.Dir, Members: f.Members})
	}
	return writeJSONDoc(w, doc)
}
