package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/isovet/isovet/history"
)

func newStatCmd() *cobra.Command {
	var in inputFlags
	var asJSON bool
	c := &cobra.Command{
		Use:   "stat HISTORY...",
		Short: "Count what a history holds: sessions, transactions by outcome, operations by kind, keys, timestamps",
		Long: `Count what each history holds: sessions, transactions by outcome, operations by kind,
keys, values, and which times and timestamps it records. With --json, one document
{"schema": 1, "kind": "stat", "results": [...]} holds a result per history, each naming its
file (docs/json.md); a history that cannot be read is a result with an error. Exit code 2
when any history cannot be read.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if asJSON {
				return statJSON(c.OutOrStdout(), c.ErrOrStderr(), &in, args)
			}
			return statText(c.OutOrStdout(), c.ErrOrStderr(), &in, args)
		},
	}
	in.register(c)
	c.Flags().BoolVar(&asJSON, "json", false, `print one JSON document, {"schema": 1, "kind": "stat", "results": [...]} (docs/json.md)`)
	return c
}

// statText prints each history's counts, a blank line between two; a history that cannot
// be read is reported on stderr and the others are still counted.
func statText(stdout, stderr io.Writer, in *inputFlags, args []string) error {
	var errs []error
	printed := 0
	for _, path := range args {
		h, f, err := in.open(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if printed++; printed > 1 {
			fmt.Fprintln(stdout)
		}
		writeStat(stdout, displayName(path), f.Name, history.Summarize(h))
	}
	return readErrors(stderr, errs, len(args))
}

func sortedKinds(m map[history.OpKind]int) []history.OpKind {
	var ks []history.OpKind
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func writeStat(w io.Writer, path, format string, s history.Summary) {
	fmt.Fprintf(w, "history     %s (%s)\n", path, format)
	fmt.Fprintf(w, "sessions    %d\n", s.Sessions)
	fmt.Fprintf(w, "txns        %d (committed %d, aborted %d, unknown %d)\n", s.Txns, s.Committed, s.Aborted, s.Unknown)
	writeStatOps(w, s)
	fmt.Fprintf(w, "keys        %d\n", s.Keys)
	fmt.Fprintf(w, "values      %d distinct\n", s.Values)
	if s.UniqueWrites {
		fmt.Fprintf(w, "writes      unique (every key/value pair written once)\n")
	} else {
		fmt.Fprintf(w, "writes      %d repeat an earlier key/value pair (duplicate values)\n", s.DuplicateWrites)
	}
	if s.ExplicitSources > 0 {
		fmt.Fprintf(w, "sources     %d reads name their writer\n", s.ExplicitSources)
	}
	fmt.Fprintf(w, "initial     %v\n", s.Initial)
	fmt.Fprintf(w, "client time %s\n", coverage(s.Timed, s.Txns, "txns have client intervals"))
	if s.OpTimed > 0 {
		fmt.Fprintf(w, "op time     %s\n", coverage(s.OpTimed, s.Txns, "txns have per-op intervals"))
	}
	if s.Snapshots > 0 {
		fmt.Fprintf(w, "snapshots   %s\n", coverage(s.Snapshots, s.Txns, "txns have a database snapshot"))
	}
	fmt.Fprintf(w, "db time     %s\n", statDBTime(s))
}

// writeStatOps writes the ops line, with the count of each kind, and the failed ops line
// when there are any.
func writeStatOps(w io.Writer, s history.Summary) {
	fmt.Fprintf(w, "ops         %d", s.Ops)
	for i, k := range sortedKinds(s.OpsByKind) {
		sep := ", "
		if i == 0 {
			sep = " ("
		}
		fmt.Fprintf(w, "%s%s %d", sep, k, s.OpsByKind[k])
	}
	if len(s.OpsByKind) > 0 {
		fmt.Fprint(w, ")")
	}
	fmt.Fprintln(w)
	if s.FailedOps > 0 {
		fmt.Fprintf(w, "failed ops  %d", s.FailedOps)
		if s.FailedCommitted > 0 {
			fmt.Fprintf(w, " (%d transactions logged as committed contain one: isovet check --help, --failed-statements)", s.FailedCommitted)
		}
		fmt.Fprintln(w)
	}
}

// statDBTime says how many transactions have database timestamps and, when the history
// records snapshots, that the timestamps come from them or why they could not.
func statDBTime(s history.Summary) string {
	dbTime := coverage(s.Timestamped, s.Txns, "txns have start/commit timestamps")
	switch {
	case s.Snapshots > 0 && s.SnapshotErr == "":
		dbTime += ", derived from the snapshots"
	case s.Snapshots > 0:
		dbTime += " (" + s.SnapshotErr + ")"
	}
	return dbTime
}

func coverage(n, of int, what string) string {
	switch {
	case n == 0:
		return "none"
	case n == of:
		return "all " + what
	default:
		return fmt.Sprintf("%d of %d %s", n, of, what)
	}
}

// statJSON prints the stat document of args: a result per history, an unreadable one
// with its error, which stderr gets too; the exit is 2 when any could not be read.
func statJSON(stdout, stderr io.Writer, in *inputFlags, args []string) error {
	doc := struct {
		jsonHead
		Results []statResult `json:"results"`
	}{newHead("stat"), []statResult{}}
	var errs []error
	for _, path := range args {
		h, f, err := in.open(path)
		r := statResult{File: displayName(path), Format: f.Name}
		if err != nil {
			r.Error, errs = err.Error(), append(errs, err)
		} else {
			r.statCounts = statCountsOf(history.Summarize(h))
		}
		doc.Results = append(doc.Results, r)
	}
	if err := writeJSONDoc(stdout, doc); err != nil {
		return err
	}
	return readErrors(stderr, errs, len(args))
}

// readErrors is the error of a command over n histories of which errs could not be read:
// nil when none, the one error for one history, else each on stderr and their count.
func readErrors(stderr io.Writer, errs []error, n int) error {
	switch {
	case len(errs) == 0:
		return nil
	case n == 1:
		return errs[0]
	}
	for _, err := range errs {
		fmt.Fprintf(stderr, "isovet: %v\n", err)
	}
	return &exitError{code: exitUsage, err: fmt.Errorf("%d of %d histories could not be read", len(errs), n)}
}

// statResult is one history's element of the stat document: its file and format, then
// its counts, or the error that kept it from being read.
type statResult struct {
	File   string `json:"file"`
	Format string `json:"format,omitempty"`
	Error  string `json:"error,omitempty"`
	*statCounts
}

// statCounts is a history.Summary in the document's words.
type statCounts struct {
	Sessions        int            `json:"sessions"`
	Txns            int            `json:"txns"`
	Committed       int            `json:"committed"`
	Aborted         int            `json:"aborted"`
	Unknown         int            `json:"unknown"`
	Ops             int            `json:"ops"`
	OpsByKind       map[string]int `json:"ops_by_kind"`
	FailedOps       int            `json:"failed_ops"`
	FailedCommitted int            `json:"txns_committed_with_failed_ops"`
	Keys            int            `json:"keys"`
	Values          int            `json:"values"`
	UniqueWrites    bool           `json:"unique_writes"`
	DuplicateWrites int            `json:"duplicate_writes"`
	ExplicitSources int            `json:"explicit_sources"`
	Initial         any            `json:"initial"` // null, an integer or a string, as the history's values
	Timed           int            `json:"txns_with_client_time"`
	OpTimed         int            `json:"txns_with_op_time"`
	Timestamped     int            `json:"txns_with_db_timestamps"`
	Snapshots       int            `json:"txns_with_db_snapshots"`
	SnapshotErr     string         `json:"snapshots_gave_no_timestamps,omitempty"`
}

// statCountsOf is s in the document's words.
func statCountsOf(s history.Summary) *statCounts {
	ops := make(map[string]int)
	for k, n := range s.OpsByKind {
		ops[k.String()] = n
	}
	return &statCounts{s.Sessions, s.Txns, s.Committed, s.Aborted, s.Unknown, s.Ops, ops, s.FailedOps, s.FailedCommitted, s.Keys, s.Values,
		s.UniqueWrites, s.DuplicateWrites, s.ExplicitSources, datumJSON(s.Initial), s.Timed, s.OpTimed, s.Timestamped,
		s.Snapshots, s.SnapshotErr}
}

// datumJSON is d as the JSON documents write a value: an integer, a string, or null.
func datumJSON(d history.Datum) any {
	if i, ok := d.Int(); ok {
		return i
	}
	if s, ok := d.Str(); ok {
		return s
	}
	return nil
}
