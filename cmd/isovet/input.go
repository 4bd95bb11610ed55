package main

import (
	"runtime"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"isovet/format"
	"isovet/history"
)

// inputFlags are the flags every command that reads a history takes.
type inputFlags struct {
	format  string
	initial string
	// cmd is the command the flags belong to; its stderr gets the reading progress bar when it
	// is a terminal.
	cmd *cobra.Command
}

func (f *inputFlags) register(c *cobra.Command) {
	f.cmd = c
	c.Flags().StringVarP(&f.format, "format", "f", format.Auto, "input format: auto (sniff), or one of "+strings.Join(format.Names(), ", "))
	c.Flags().StringVar(&f.initial, "initial-value", "", "value every key holds initially (an integer, a string, or null); default: what the format says")
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
	o, err := f.options()
	if err != nil {
		return nil, format.Format{}, &exitError{code: exitUsage, err: err}
	}
	if f.cmd != nil {
		var finish func()
		o.Progress, finish = progressBar(f.cmd.ErrOrStderr(), "reading", 8<<20)
		defer finish()
	}
	h, ft, err := format.Open(path, f.format, o)
	if err != nil {
		return nil, ft, &exitError{code: exitUsage, err: err} // errors from Open name the file
	}
	reclaimReader()
	return h, ft, nil
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
