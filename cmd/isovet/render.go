package main

import (
	"fmt"
	"io"
	"strings"

	"isovet/check"
)

// writeReportText prints the verdict line, then each anomaly and the notes.
func writeReportText(w io.Writer, path string, rep *check.Report) error {
	name := path
	if name == "" {
		name = "history"
	}
	verdict := strings.ToUpper(rep.Verdict.String())
	fmt.Fprintf(w, "%s: %s: %s", name, rep.Level, verdict)
	if n := len(rep.Anomalies); n > 0 {
		fmt.Fprintf(w, " (%d anomal%s)", n, plural(n, "y", "ies"))
	}
	fmt.Fprintf(w, " [%s, %d txns, %v]\n", rep.Checker, len(rep.History.Txns), rep.Stats.Elapsed.Round(1e6))
	for i, a := range rep.Anomalies {
		fmt.Fprintf(w, "\n%d. %s\n", i+1, a.Kind.Info().Title)
		if a.Message != "" {
			fmt.Fprintf(w, "   %s\n", a.Message)
		}
		for _, s := range a.Cycle {
			fmt.Fprintf(w, "   %s -%s-> %s: %s\n", rep.History.Name(s.From), s.Rel, rep.History.Name(s.To), s.Why)
		}
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

type anomalyJSON struct {
	Kind    string     `json:"kind"`
	Title   string     `json:"title"`
	Txns    []string   `json:"txns"`
	Message string     `json:"message,omitempty"`
	Cycle   []stepJSON `json:"cycle,omitempty"`
}

type stepJSON struct {
	From string `json:"from"`
	To   string `json:"to"`
	Rel  string `json:"rel"`
	Why  string `json:"why,omitempty"`
}

func reportJSON(path string, rep *check.Report) any {
	h := rep.History
	as := make([]anomalyJSON, 0, len(rep.Anomalies))
	for _, a := range rep.Anomalies {
		aj := anomalyJSON{Kind: a.Kind.String(), Title: a.Kind.Info().Title, Message: a.Message}
		for _, t := range a.Txns {
			aj.Txns = append(aj.Txns, h.Name(t))
		}
		for _, s := range a.Cycle {
			aj.Cycle = append(aj.Cycle, stepJSON{h.Name(s.From), h.Name(s.To), s.Rel.String(), s.Why})
		}
		as = append(as, aj)
	}
	return struct {
		History   string        `json:"history,omitempty"`
		Level     string        `json:"level"`
		Verdict   string        `json:"verdict"`
		Checker   string        `json:"checker"`
		Anomalies []anomalyJSON `json:"anomalies"`
		Notes     []string      `json:"notes,omitempty"`
		ElapsedMS int64         `json:"elapsed_ms"`
	}{path, rep.Level.String(), rep.Verdict.String(), rep.Checker, as, rep.Notes, rep.Stats.Elapsed.Milliseconds()}
}

func writeReportGraphs(dir string, rep *check.Report, write func(string, func(io.Writer) error) error) error {
	for i, a := range rep.Anomalies {
		if len(a.Cycle) == 0 {
			continue
		}
		name := fmt.Sprintf("anomaly-%02d-%s.dot", i+1, a.Kind)
		err := write(name, func(w io.Writer) error {
			fmt.Fprintf(w, "digraph anomaly {\n  label=%q;\n", a.Kind.Info().Title)
			for _, s := range a.Cycle {
				fmt.Fprintf(w, "  %q -> %q [label=%q];\n", rep.History.Name(s.From), rep.History.Name(s.To), s.Rel.String())
			}
			fmt.Fprintln(w, "}")
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
