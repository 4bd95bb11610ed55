package main

import (
	"encoding/json"
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
		Use:   "stat HISTORY",
		Short: "Count what a history holds: sessions, transactions by outcome, operations by kind, keys, timestamps",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			h, f, err := in.open(args[0])
			if err != nil {
				return err
			}
			s := history.Summarize(h)
			if asJSON {
				return writeStatJSON(c.OutOrStdout(), displayName(args[0]), f.Name, s)
			}
			writeStat(c.OutOrStdout(), displayName(args[0]), f.Name, s)
			return nil
		},
	}
	in.register(c)
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
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

func writeStatJSON(w io.Writer, path, format string, s history.Summary) error {
	ops := make(map[string]int)
	for k, n := range s.OpsByKind {
		ops[k.String()] = n
	}
	out := struct {
		History         string         `json:"history"`
		Format          string         `json:"format"`
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
		Initial         string         `json:"initial"`
		Timed           int            `json:"txns_with_client_time"`
		OpTimed         int            `json:"txns_with_op_time"`
		Timestamped     int            `json:"txns_with_db_timestamps"`
		Snapshots       int            `json:"txns_with_db_snapshots"`
		SnapshotErr     string         `json:"snapshots_gave_no_timestamps,omitempty"`
	}{path, format, s.Sessions, s.Txns, s.Committed, s.Aborted, s.Unknown, s.Ops, ops, s.FailedOps, s.FailedCommitted, s.Keys, s.Values,
		s.UniqueWrites, s.DuplicateWrites, s.ExplicitSources, s.Initial.String(), s.Timed, s.OpTimed, s.Timestamped,
		s.Snapshots, s.SnapshotErr}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
