package explain

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

// DOT writes r's anomalies as one Graphviz digraph, one cluster per anomaly: a node per
// transaction (its name, ops and outcome) and an edge per step, labeled with the relation
// and key ("wr x"). Output is byte-stable; render it with `dot -Tsvg`.
func DOT(w io.Writer, r *report.Report) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "digraph isovet {\n")
	fmt.Fprintf(bw, "  label=%s;\n", dotQuote(fmt.Sprintf("%s, checked by %s: %s", r.Level, checkerName(r), r.Verdict)))
	dotDefaults(bw)
	for i, a := range r.Anomalies {
		fmt.Fprintf(bw, "  subgraph cluster_%d {\n", i)
		writeDOT(bw, Explain(r.History, a), fmt.Sprintf("a%d_", i), "    ")
		bw.WriteString("  }\n")
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// DOTAnomaly writes one anomaly as a Graphviz digraph, as [DOT] writes each cluster.
func DOTAnomaly(w io.Writer, h *history.History, a report.Anomaly) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("digraph isovet {\n")
	dotDefaults(bw)
	writeDOT(bw, Explain(h, a), "", "  ")
	bw.WriteString("}\n")
	return bw.Flush()
}

func dotDefaults(w *bufio.Writer) {
	w.WriteString("  node [shape=box, fontname=\"monospace\"];\n")
	w.WriteString("  edge [fontname=\"monospace\"];\n")
}

// relColors gives each relation a stable color, as Elle's plots do.
var relColors = []struct {
	rel   report.Rel
	color string
}{
	{report.WW, "#C02700"}, {report.WR, "#C000A5"}, {report.RW, "#5B00C0"},
	{report.SO, "#0050C0"}, {report.RT, "#00C0B6"}, {report.TS, "#008A00"},
	{report.PredWR, "#C000A5"}, {report.PredRW, "#5B00C0"},
}

// relColor returns the color of the first relation in rel's set, black if none.
func relColor(rel report.Rel) string {
	for _, rc := range relColors {
		if rel&rc.rel != 0 {
			return rc.color
		}
	}
	return "black"
}

func writeDOT(w *bufio.Writer, e Explanation, prefix, indent string) {
	info := e.Kind.Info()
	fmt.Fprintf(w, "%slabel=%s;\n", indent, dotQuote(info.Name+": "+info.Title))
	ids := make(map[history.TxnID]string, len(e.Txns))
	for i, t := range e.Txns {
		id := fmt.Sprintf("%st%d", prefix, i)
		ids[t.ID] = id
		label := t.Name
		if len(t.Ops) > 0 || t.Elided > 0 {
			ops := strings.Join(t.Ops, " ")
			if t.Elided > 0 {
				ops += fmt.Sprintf(" ... %d more", t.Elided)
			}
			label += "\n" + strings.TrimSpace(ops)
		}
		if t.Outcome != "" {
			label += "\n" + t.Outcome
		}
		fmt.Fprintf(w, "%s%s [label=%s];\n", indent, id, dotQuote(label))
	}
	for _, s := range e.Steps {
		color := relColor(s.Rel)
		fmt.Fprintf(w, "%s%s -> %s [label=%s, color=%s, fontcolor=%s];\n", indent, ids[s.FromID], ids[s.ToID], dotQuote(stepLabel(s)), dotQuote(color), dotQuote(color))
	}
}

// dotQuote quotes s as a DOT string: backslashes and quotes escaped, newlines as \n.
func dotQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
