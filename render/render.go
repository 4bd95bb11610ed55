// Package render writes a [check.Report] for people and programs: [Text] as prose in Elle's
// manner ("Let: T1 = {...} Then: T1 < T2, because ...: a contradiction!"), [HTML] as one
// self-contained page that draws each anomaly's cycle, [DOT] as Graphviz source and [JSON]
// in a stable, documented shape.
//
// Every renderer names transactions, keys and values as the history's source did (the ids a
// [record.Recorder] or a reader kept), takes them from Report.History, and writes
// deterministic output, byte for byte. None needs anything installed: DOT is written as
// text, and the HTML page draws its graphs as inline SVG.
//
// In a test, render a failure into the test's log:
//
//	if rep.Verdict == check.Fail {
//		var b strings.Builder
//		render.Text(&b, rep)
//		t.Fatal(b.String())
//	}
//
// [record.Recorder]: https://pkg.go.dev/github.com/isovet/isovet/record#Recorder
package render

import (
	"io"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/explain"
)

// Text writes rep as prose: a header line with the level, the checker and the verdict, then
// each anomaly (its name and other names, the checker's summary, the transactions with their
// operations, and the proof step by step), then the notes.
func Text(w io.Writer, rep *check.Report) error { return explain.Text(w, rep) }

// TextAnomaly writes one anomaly of a report on history h as prose, as [Text] writes each
// one. h names transactions, keys and values; it may be nil (then transactions are T<id>
// and their operations are not shown).
func TextAnomaly(w io.Writer, h *history.History, a check.Anomaly) error {
	return explain.TextAnomaly(w, explain.Explain(h, a))
}

// HTML writes rep as one self-contained web page, with no scripts and no external files:
// the verdict, then each anomaly with its dependency cycle drawn as an SVG graph, the
// transactions with their operations, the proof and the alternatives ruled out, then the
// notes and statistics. Every name is escaped.
func HTML(w io.Writer, rep *check.Report) error { return explain.HTML(w, rep) }

// DOT writes rep's anomalies as one Graphviz digraph, one cluster per anomaly: a node per
// transaction (its name, operations and outcome) and an edge per step of the cycle, labelled
// with the relation and key ("rw x"). Render it with `dot -Tsvg`.
func DOT(w io.Writer, rep *check.Report) error { return explain.DOT(w, rep) }

// DOTAnomaly writes one anomaly of a report on history h as a Graphviz digraph, as [DOT]
// writes each cluster.
func DOTAnomaly(w io.Writer, h *history.History, a check.Anomaly) error {
	return explain.DOTAnomaly(w, h, a)
}

// JSON writes rep as indented JSON, the document `isovet check --json` prints for one
// history, with one result and no file (docs/report.schema.json is its JSON Schema). It
// names transactions, keys and values as the source did, never by dense ids; keys are
// always strings as the source wrote them, values keep their type (numbers stay numbers,
// strings strings, nil is null):
//
//	{
//	  "schema": 1,
//	  "results": [{
//	    "level": "serializable", "verdict": "fail", "checker": "ser",   // pass, fail or unknown
//	    "anomalies": [{
//	      "kind": "G2-item", "title": "...", "also": ["lost-update"], "key": "x", "message": "...",
//	      "txns": [{"name": "T1", "session": "s1", "outcome": "committed", "ops": ["r(x,0)", "w(x,1)"],
//	                "time": {"begin": 1, "end": 5}}],
//	      "steps": [{"from": "T1", "to": "T2", "rel": "rw", "key": "x", "value": 0, "value2": 2,
//	                 "why": "...", "sentence": "T1 < T2, because ..."}],
//	      "cycle": true, "contradiction": "...", "ruled_out": ["..."]
//	    }],
//	    "notes": ["..."], "caveats": [{"kind": "partial", "note": "..."}],
//	    "stats": {"txns": 2, ...}, "followup": {"level": "strict-serializable", "verdict": "fail", ...}
//	  }]
//	}
//
// Fields that do not apply are left out; docs/reading-reports.md describes each.
func JSON(w io.Writer, rep *check.Report) error { return explain.JSON(w, rep) }
