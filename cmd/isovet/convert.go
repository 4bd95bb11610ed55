package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"isovet/format"
	"isovet/history"
)

func writableNames() []string {
	var ns []string
	for _, f := range format.Formats() {
		if f.Write != nil {
			ns = append(ns, f.Name)
		}
	}
	return ns
}

func newConvertCmd() *cobra.Command {
	var in inputFlags
	var to, out string
	c := &cobra.Command{
		Use:   "convert HISTORY --to FORMAT [-o FILE]",
		Short: "Convert a history to another format (native jsonl, elle-edn, elle-json, text, chronos)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			f, ok := format.Lookup(to)
			if !ok || f.Write == nil {
				return &exitError{code: exitUsage, err: fmt.Errorf("cannot write format %q (writable: %s)", to, strings.Join(writableNames(), ", "))}
			}
			h, _, err := in.open(args[0])
			if err != nil {
				return err
			}
			w := c.OutOrStdout()
			var fh *os.File
			if out != "" && out != "-" {
				if fh, err = os.Create(out); err != nil {
					return &exitError{code: exitUsage, err: err}
				}
				w = fh
			}
			if err := writeBuffered(w, func(w io.Writer) error { return f.Write(w, h) }); err != nil {
				if fh != nil {
					fh.Close()
				}
				return fmt.Errorf("writing %s: %w", f.Name, err)
			}
			if fh != nil {
				if err := fh.Close(); err != nil {
					return err
				}
			}
			if msg := initialLost(f.Name, h); msg != "" {
				fmt.Fprintln(c.ErrOrStderr(), "isovet: warning: "+msg)
			}
			return nil
		},
	}
	in.register(c)
	c.Flags().StringVar(&to, "to", "", "output format: "+strings.Join(writableNames(), ", ")+" (required)")
	c.Flags().StringVarP(&out, "output", "o", "", "output file (default: stdout)")
	_ = c.MarkFlagRequired("to")
	return c
}

// initialLost says what of h's initial state the format name cannot write, or "". Nothing a
// user gave may be lost silently: the warning names the flag that restores it when checking.
func initialLost(name string, h *history.History) string {
	if name == "native" {
		return "" // native holds every initial value
	}
	zero := h.Initial
	// Keys given the initial value of every key (a text reader's initial transaction) need
	// nothing of their own.
	if own := countFunc(h.InitialByKey, func(v history.Value) bool { return v != zero }); own > 0 {
		return fmt.Sprintf("the history gives %d keys their own initial value, which %s cannot hold; reading the output assumes one value for every key", own, name)
	}
	switch name {
	case "text":
		// The text format's keys start at 0 (PolySI, Plume).
		if v, ok := h.Value(zero).Int(); ok && v == 0 {
			return ""
		}
	default:
		if zero == history.Nil {
			return ""
		}
	}
	return fmt.Sprintf("the history's initial value (every key = %s) is not written by %s; check the output with --initial-value %s", h.Value(zero).String(), name, h.Value(zero).String())
}

// countFunc counts the values of m for which f holds.
func countFunc[K comparable, V any](m map[K]V, f func(V) bool) int {
	n := 0
	for _, v := range m {
		if f(v) {
			n++
		}
	}
	return n
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
				if f.Write != nil {
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
