package main

import (
	"fmt"
	"io"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/internal/explain"
)

// writeReportText prints the history's name, then the report as prose (internal/explain).
func writeReportText(w io.Writer, path string, rep *check.Report) error {
	if path != "" {
		fmt.Fprintf(w, "%s: %d transactions, %v\n", path, len(rep.History.Txns), rep.Stats.Elapsed.Round(1e6))
	}
	return explain.Text(w, rep)
}

// writeReportJSON prints the results as one JSON document (docs/report.schema.json), with
// names, not dense ids.
func writeReportJSON(w io.Writer, results []explain.Result) error {
	return explain.JSONResults(w, results)
}

// writeReportGraphs writes one DOT graph per anomaly and one of the whole report.
func writeReportGraphs(dir string, rep *check.Report, write func(string, func(io.Writer) error) error) error {
	for i, a := range rep.Anomalies {
		name := fmt.Sprintf("anomaly-%02d-%s.dot", i+1, a.Kind)
		if err := write(name, func(w io.Writer) error { return explain.DOTAnomaly(w, rep.History, a) }); err != nil {
			return err
		}
		prose := fmt.Sprintf("anomaly-%02d-%s.txt", i+1, a.Kind)
		if err := write(prose, func(w io.Writer) error { return explain.TextAnomaly(w, explain.Explain(rep.History, a)) }); err != nil {
			return err
		}
	}
	return write("report.dot", func(w io.Writer) error { return explain.DOT(w, rep) })
}
