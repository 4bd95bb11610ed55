package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/history"
)

// stdinName stands for standard input (the history argument "-") in reports and errors.
const stdinName = "<stdin>"

// inputHelp is added to the help of every command that reads a history.
const inputHelp = `HISTORY is a file (gzip is undone), a directory of log files (Cobra, Viper, Vbox), or - for
standard input. A pipe, a FIFO, /dev/stdin and a process substitution such as <(zcat h.edn.gz)
are read once, exactly as the file they carry. A history with no transaction is an input error
(exit 2) unless --allow-empty says it is really empty.`

// inputFlags are the flags every command that reads a history takes.
type inputFlags struct {
	format  string
	initial string
	// allowEmpty accepts a history with no transaction (and, for check, a pass with no
	// committed transaction, which proves nothing) instead of refusing it as an input error.
	allowEmpty bool
	// cmd is the command the flags belong to; its stderr gets the reading progress bar when it
	// is a terminal.
	cmd *cobra.Command
}

func (f *inputFlags) register(c *cobra.Command) {
	f.cmd = c
	c.Flags().StringVarP(&f.format, "format", "f", format.Auto, "input format: auto (sniff), or one of "+strings.Join(format.Names(), ", "))
	c.Flags().StringVar(&f.initial, "initial-value", "", "value every key holds initially (an integer, a string, or null); default: what the format says")
	c.Flags().BoolVar(&f.allowEmpty, "allow-empty", false, "accept a history that holds no transaction (check: a pass with no committed transaction) instead of refusing it as an input error")
	if c.Long == "" {
		c.Long = c.Short + "."
	}
	c.Long = strings.TrimRight(c.Long, "\n") + "\n\n" + inputHelp
}

// displayName is what reports call the history at path.
func displayName(path string) string {
	if path == "-" {
		return stdinName
	}
	return path
}

func (f *inputFlags) options() (format.Options, error) {
	var o format.Options
	switch f.initial {
	case "":
	case "null", "nil":
		d := history.NilDatum
		o.Initial = &d
	default:
		d := history.Str(f.initial)
		if i, err := strconv.ParseInt(f.initial, 10, 64); err == nil {
			d = history.Int(i)
		}
		o.Initial = &d
	}
	return o, nil
}

// open reads the history at path; every failure is an input error (exit 2).
func (f *inputFlags) open(path string) (*history.History, format.Format, error) {
	return f.openAs(path, "reading")
}

// openAs is open with what the reading bar (on a terminal, for a large file) says it does.
// The bar is finished, and cleared, before openAs returns.
func (f *inputFlags) openAs(path, what string) (*history.History, format.Format, error) {
	o, err := f.options()
	if err != nil {
		return nil, format.Format{}, &exitError{code: exitUsage, err: err}
	}
	if f.cmd != nil {
		var finish func()
		o.Progress, finish = progressBar(f.cmd.ErrOrStderr(), what, 8<<20)
		defer finish()
	}
	o.AllowEmpty = f.allowEmpty
	var h *history.History
	var ft format.Format
	if path == "-" {
		var stdin io.Reader = os.Stdin
		if f.cmd != nil {
			stdin = f.cmd.InOrStdin()
		}
		h, ft, err = format.Read(stdin, stdinName, f.format, o)
	} else {
		h, ft, err = format.Open(path, f.format, o)
	}
	if err != nil {
		return nil, ft, &exitError{code: exitUsage, err: inputError(err, ft)} // errors from Open name the file
	}
	reclaimReader()
	return h, ft, nil
}

// inputError adds to a reading error the flags that would get past it, where there are
// some; ft is the format read, if one was found.
func inputError(err error, ft format.Format) error {
	if !errors.Is(err, format.ErrEmpty) {
		return err
	}
	if ft.Name == "" {
		return fmt.Errorf("%w (if the history is really empty, name its format with --format and pass --allow-empty)", err)
	}
	return fmt.Errorf("%w (if the history is really empty, pass --allow-empty)", err)
}

// vacuous refuses, unless --allow-empty, a pass of a history that holds no committed
// transaction: the level holds only because nothing took effect (a log cut before its
// first commit, a client that only aborted), so the pass says nothing about the database.
// With --allow-empty the pass stands and its report says it is vacuous.
func (f *inputFlags) vacuous(name string, rep *check.Report) error {
	h := rep.History
	if f.allowEmpty || h == nil || rep.Verdict != check.Pass || h.AnyCommitted() {
		return nil
	}
	var aborted, unknown int
	for _, t := range h.Txns {
		switch t.Outcome {
		case history.OutcomeAborted:
			aborted++
		case history.OutcomeUnknown:
			unknown++
		}
	}
	return fmt.Errorf("%s: expected a committed transaction, found none (%d transactions: %d aborted, %d of unknown outcome, in %d sessions), so %s would hold only vacuously (if that is really the history, pass --allow-empty)",
		name, len(h.Txns), aborted, unknown, len(h.Sessions), rep.Level)
}

// reclaimReader collects what reading a history left behind before anything checks it.
// The reader's own tables (the index that interned every value, the decoder's caches) are
// garbage once the history is built, but a heap that just grew to hold them
// would not be collected again for a long while, so the check's tables would be backed by
// fresh pages, each costing a page fault (on our KVM guests, a large part of the kernel
// time of a check). Collected now, their memory is reused instead. On the 424 MB
// BlindW-Pred history of docs/benchmarks.md (tenth session, six runs a level, alternating
// with the binary without it): 90-130 MB less resident, kernel time 1.0-1.6 -> 0.7-1.2 s;
// the wall time moved less than the machine's noise (medians 2.47 -> 2.27 s serializable,
// 2.35 -> 2.37 s strict). On a small history the collection takes well under a millisecond.
func reclaimReader() { runtime.GC() }
