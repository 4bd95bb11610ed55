package main

import (
	"bufio"
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
	var to, out string
	var lossy bool
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

Cobra logs are a directory, one T<n>.log per session: --to cobra needs -o DIR, a directory
that does not exist yet or is empty, which is written whole or not at all. --to dbcop writes
history.bincode, the file dbcop, PolySI and VeriStrong read.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			f, ok := format.Lookup(to)
			if !ok || !f.Writable() {
				return &exitError{code: exitUsage, err: fmt.Errorf("cannot write format %q (writable: %s)", to, strings.Join(writableNames(), ", "))}
			}
			if f.WriteDir != nil && (out == "" || out == "-") {
				return &exitError{code: exitUsage, err: fmt.Errorf("%s is a directory of files: give the directory to write with -o DIR", f.Name)}
			}
			h, _, err := in.open(args[0])
			if err != nil {
				return err
			}
			h, err = fitTo(c.ErrOrStderr(), h, f, args[0], lossy)
			if err != nil {
				return err
			}
			if f.WriteDir != nil {
				return writeDirOutput(out, func(create func(string) (io.Writer, error)) error {
					if err := f.WriteDir(h, create); err != nil {
						return fmt.Errorf("writing %s: %w", f.Name, err)
					}
					return nil
				})
			}
			return writeOutput(c.OutOrStdout(), out, func(w io.Writer) error {
				if err := f.Write(w, h); err != nil {
					return fmt.Errorf("writing %s: %w", f.Name, err)
				}
				return nil
			})
		},
	}
	in.register(c)
	c.Flags().StringVar(&to, "to", "", "output format: "+strings.Join(writableNames(), ", ")+" (required)")
	c.Flags().StringVarP(&out, "output", "o", "", "output file (default: stdout), or directory for a directory format (cobra)")
	c.Flags().BoolVar(&lossy, "lossy", false, "write even when the format cannot hold everything the history says, dropping it (stderr says what)")
	_ = c.MarkFlagRequired("to")
	return c
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
	return &cobra.Command{
		Use:   "formats",
		Short: "List the history formats isovet reads and writes",
		Args:  cobra.NoArgs,
		Run: func(c *cobra.Command, _ []string) {
			w := c.OutOrStdout()
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
		},
	}
}
