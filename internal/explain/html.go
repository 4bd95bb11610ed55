package explain

import (
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

// HTML writes r as one self-contained web page with the report alone in its header: see
// [HTMLWith], which also says where the report came from.
func HTML(w io.Writer, r *report.Report) error { return HTMLWith(w, r, HTMLOptions{}) }

// HTMLOptions is what a report page says about where its report came from, beyond the
// report itself. The command that writes the page fills it in; every field is optional,
// and an empty one is left out of the header. HTMLWith never reads the clock: the date is
// the caller's, so a page is a function of its report and options.
type HTMLOptions struct {
	File    string    // the history file (or directory) as it was named
	Format  string    // the format it was read as (elle-edn, native, ...)
	Bytes   int64     // its size on disk; 0: unknown (standard input)
	Version string    // isovet's version: module version and commit
	Date    time.Time // when the report was made; zero: not shown
	// Database is what `isovet run` drove, with its server's version where the driver
	// could ask ("PostgreSQL 16.4 at 127.0.0.1:5432, REPEATABLE READ").
	Database string
	// Isolation is the isolation level asked of the database, as given ("": the default).
	Isolation string
	// Workload names the workload that ran and its size.
	Workload string
	// Index links back to the summary page of the histories this one was checked with
	// (relative to the page); "": none.
	Index string
	_     struct{}
}

// HTMLWith writes r as one self-contained web page (no scripts, no external files): a
// header saying what was checked (the history, its format and size, the level, the
// verdict, and for a run the database, the isolation asked and the workload, with
// isovet's version and the date from o), then each anomaly: its plain sentence, its
// dependency cycle drawn as an SVG graph of the transactions the steps join (each step an
// arrow colored by its relation, labeled with its relation and key on a box of its own),
// a timeline of its transactions per session with the operations that make each step
// marked and the steps drawn between them, the transactions with every operation (long
// lists fold into an element that expands), the proof step by step and the alternatives
// ruled out; then the notes and statistics. Every name is escaped; the output is
// deterministic.
func HTMLWith(w io.Writer, r *report.Report, o HTMLOptions) error {
	page := htmlPage{
		Level:   r.Level.String(),
		Checker: checkerName(r),
		Verdict: r.Verdict.String(),
		Failed:  Failed(r),
		Notes:   Notes(r),
		Stats:   r.Stats,
		Meta:    metaRows(r, o),
		Index:   o.Index,
	}
	if f := r.Followup; f != nil && r.Verdict == report.Pass {
		hf := &htmlFollowup{Level: f.Level.String(), Verdict: f.Verdict.String(), Why: f.Why}
		if f.Anomaly != nil {
			a := htmlAnomalyOf(r.History, Explain(r.History, *f.Anomaly), 0)
			hf.Anomaly = &a
		}
		page.Followup = hf
	}
	for i, a := range r.Anomalies {
		page.Anomalies = append(page.Anomalies, htmlAnomalyOf(r.History, Explain(r.History, a), i+1))
	}
	return htmlTmpl.Execute(w, page)
}

type htmlPage struct {
	Level, Checker, Verdict string
	Meta                    []metaRow
	Index                   string
	Failed                  string // the failed-statement sentences ([Failed]); "" if none
	Followup                *htmlFollowup
	Anomalies               []htmlAnomaly
	Notes                   []string
	Stats                   report.Stats
}

// metaRow is one line of a page's header: a name and what it says.
type metaRow struct {
	Name, Value string
	Code        bool   // the value is a file name, shown as code
	Class       string // the value's class, for the verdict's color
}

// metaRows is the header of the page of r: the history, the level and checker, the run's
// database, isolation and workload, isovet's version and the date, each when known.
func metaRows(r *report.Report, o HTMLOptions) []metaRow {
	var rows []metaRow
	add := func(name, value string, code bool) {
		if value != "" {
			rows = append(rows, metaRow{Name: name, Value: value, Code: code})
		}
	}
	add("history", o.File, true)
	add("read as", historySize(r, o), false)
	add("level", r.Level.String()+", checked by "+checkerName(r), false)
	rows = append(rows, metaRow{Name: "verdict", Value: fmt.Sprintf("%s: %s reported", r.Verdict, anomalies(len(r.Anomalies))), Class: "verdict-" + r.Verdict.String()})
	add("database", o.Database, false)
	if o.Database != "" && o.Isolation == "" {
		o.Isolation = "none given (the database's default for the run)"
	}
	add("isolation asked", o.Isolation, false)
	add("workload", o.Workload, false)
	add("isovet", o.Version, false)
	if !o.Date.IsZero() {
		add("date", o.Date.UTC().Format("2006-01-02 15:04:05 UTC"), false)
	}
	return rows
}

// historySize says what the history is: its format, its size on disk and its transactions
// and sessions ("elle-edn, 1,204 bytes, 3 transactions in 2 sessions").
func historySize(r *report.Report, o HTMLOptions) string {
	var parts []string
	if o.Format != "" {
		parts = append(parts, o.Format)
	}
	if o.Bytes > 0 {
		parts = append(parts, thousands(o.Bytes)+" bytes")
	}
	if h := r.History; h != nil {
		parts = append(parts, fmt.Sprintf("%s in %s", count(len(h.Txns), "transaction"), count(len(h.Sessions), "session")))
	}
	return strings.Join(parts, ", ")
}

// anomalies says n anomalies: "1 anomaly", "2 anomalies".
func anomalies(n int) string {
	if n == 1 {
		return "1 anomaly"
	}
	return fmt.Sprintf("%d anomalies", n)
}

// thousands writes n with commas between groups of three digits: 1,204,512.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

type htmlFollowup struct {
	Level, Verdict, Why string
	Anomaly             *htmlAnomaly
}

type htmlAnomaly struct {
	N           int
	Name, Title string
	Also        []string
	Lead        string // the plain sentence the anomaly opens with
	Message     string
	Graph       svgGraph
	Timeline    timeline
	Txns        []htmlTxn
	HasTime     bool // some transaction has a client interval
	HasTS       bool // some transaction has database timestamps
	Steps       []htmlStep
	Cycle       bool
	RuledOut    []string
}

// htmlTxn is a transaction as the page's table shows it: its explanation, and every
// operation when the explanation left some out.
type htmlTxn struct {
	Txn
	All []string // every operation, when Elided > 0 and the history is known
}

// htmlStep is a step of the proof with the color of its relation.
type htmlStep struct {
	Step
	Color string
}

func htmlAnomalyOf(h *history.History, e Explanation, n int) htmlAnomaly {
	info := e.Kind.Info()
	var msg string
	if e.showsMessage() {
		msg = strings.TrimSuffix(e.Message, ".")
	}
	a := htmlAnomaly{
		N: n, Name: info.Name, Title: info.Title, Also: alsoNames(e), Lead: e.Lead,
		Message: msg,
		Graph:   layout(e), Timeline: layoutTimeline(h, e), Cycle: e.Cycle,
		RuledOut: e.RuledOut,
		HasTime:  slices.ContainsFunc(e.Txns, func(t Txn) bool { return t.Time != "" }),
		HasTS:    slices.ContainsFunc(e.Txns, func(t Txn) bool { return t.Timestamps != "" }),
	}
	for _, t := range e.Txns {
		ht := htmlTxn{Txn: t}
		if t.Elided > 0 && t.tx != nil && h != nil {
			for _, o := range t.tx.Ops {
				ht.All = append(ht.All, Op(h, o))
			}
		}
		a.Txns = append(a.Txns, ht)
	}
	for _, s := range e.Steps {
		a.Steps = append(a.Steps, htmlStep{Step: s, Color: relColor(s.Rel)})
	}
	return a
}

var htmlTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"f":    func(x float64) string { return fmt.Sprintf("%.1f", x) },
	"last": func(i int, xs []htmlStep) bool { return i == len(xs)-1 },
	"sub":  func(a, b float64) float64 { return a - b },
	"half": func(a float64) float64 { return a / 2 },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>isovet: {{with .Meta}}{{with index . 0}}{{if .Code}}{{.Value}}: {{end}}{{end}}{{end}}{{.Level}}: {{.Verdict}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 76em; padding: 0 1em; color: #1a1a1a; line-height: 1.4; }
code, .ops, svg text { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
h1 { font-size: 1.5em; margin: 0 0 0.4em; }
h2 { font-size: 1.25em; }
h3 { font-size: 1em; margin: 1.2em 0 0.3em; color: #444; }
.verdict-pass { color: #006b1b; } .verdict-fail { color: #b00020; } .verdict-unknown { color: #8a5a00; }
header { padding-bottom: 0.2em; }
header table.meta { margin: 0.4em 0; }
table.meta th, table.meta td { border: none; padding: 0.1em 1em 0.1em 0; background: none; }
table.meta th { color: #555; font-weight: normal; white-space: nowrap; }
nav.toc ol { margin: 0.3em 0; }
section.anomaly { border-top: 1px solid #ccc; margin-top: 2em; }
.lead { font-size: 1.1em; font-weight: 600; }
table { border-collapse: collapse; margin: 0.6em 0; }
td, th { border: 1px solid #ddd; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
.ops { white-space: pre-wrap; word-break: break-word; font-size: 0.92em; }
.ops summary { cursor: pointer; }
.ops details[open] summary { color: #666; }
.time { font-size: 0.85em; word-break: break-all; }
table.txns { width: 100%; }
.proof li { margin: 0.3em 0; }
.rel { display: inline-block; min-width: 2.6em; padding: 0 0.3em; border-radius: 3px; color: #fff; font-family: ui-monospace, monospace; font-size: 0.85em; text-align: center; }
.contradiction { font-weight: bold; }
.recording { background: #fff6e0; border-left: 4px solid #8a5a00; padding: 0.2em 1em; }
.figure { overflow-x: auto; }
.axis { color: #555; font-size: 0.9em; margin: 0.2em 0; }
svg { max-width: 100%; height: auto; background: #fcfcfc; border: 1px solid #eee; }
svg.cycle text { font-size: 14px; }
svg.timeline text { font-size: 12px; }
svg .tick { fill: #666; font-size: 11px; }
svg .steps { font-weight: bold; }
svg .note { fill: #666; }
</style>
</head>
<body>
<header>
<h1>isovet: <span class="verdict-{{.Verdict}}">{{.Level}}: {{.Verdict}}</span></h1>
<table class="meta">
{{range .Meta}}<tr><th>{{.Name}}</th><td{{with .Class}} class="{{.}}"{{end}}>{{if .Code}}<code>{{.Value}}</code>{{else}}{{.Value}}{{end}}</td></tr>
{{end}}</table>
{{if .Index}}<p><a href="{{.Index}}">All histories checked with this one</a></p>{{end}}
{{if gt (len .Anomalies) 1}}<nav class="toc"><ol>{{range .Anomalies}}<li><a href="#anomaly-{{.N}}">{{.Name}}: {{.Title}}</a></li>{{end}}</ol></nav>{{end}}
</header>
{{with .Failed}}<div class="recording"><h2>Failed statements</h2><p>{{.}}</p></div>{{end}}
{{with .Followup}}<div class="followup">
{{if eq .Verdict "pass"}}<p><strong>{{.Level}}</strong> holds too: {{.Why}}.</p>
{{else if eq .Verdict "fail"}}<p><strong>{{.Level}}</strong> does not hold: the history records client time, which {{$.Level}} ignores. Run <code>isovet check --level {{.Level}}</code> for the whole witness.</p>
{{with .Anomaly}}{{template "anomaly" .}}{{end}}
{{else}}<p><strong>{{.Level}}</strong>: unknown ({{.Why}}).</p>{{end}}
</div>{{end}}
{{range .Anomalies}}{{template "anomaly" .}}{{end}}
{{if .Notes}}<h2>Notes</h2>
<ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
<h2>Statistics</h2>
<table>
<tr><th>transactions</th><td>{{.Stats.Txns}} ({{.Stats.Committed}} committed, {{.Stats.Aborted}} aborted, {{.Stats.Unknown}} unknown)</td></tr>
<tr><th>sessions, keys, operations</th><td>{{.Stats.Sessions}}, {{.Stats.Keys}}, {{.Stats.Ops}}</td></tr>
<tr><th>known edges, constraints (pruned)</th><td>{{.Stats.KnownEdges}}, {{.Stats.Constraints}} ({{.Stats.PrunedConstraints}})</td></tr>
<tr><th>elapsed</th><td>{{.Stats.Elapsed}}</td></tr>
</table>
</body>
</html>
{{define "anomaly"}}<section class="anomaly" id="anomaly-{{.N}}">
<h2>{{if .N}}[{{.N}}] {{end}}{{.Name}}: {{.Title}}</h2>
{{if .Lead}}<p class="lead">{{.Lead}}</p>{{end}}
{{if .Also}}<p>Also known as: {{range $i, $a := .Also}}{{if $i}}, {{end}}{{$a}}{{end}}.</p>{{end}}
{{if .Message}}<p>{{.Message}}.</p>{{end}}
{{if .Graph.Nodes}}<h3>{{if .Cycle}}The cycle{{else}}The dependencies{{end}}</h3>{{end}}
{{with .Graph}}{{if .Nodes}}
<div class="figure"><svg class="cycle" xmlns="http://www.w3.org/2000/svg" width="{{f .W}}" height="{{f .H}}" viewBox="{{f .X}} {{f .Y}} {{f .W}} {{f .H}}" role="img" aria-label="dependency cycle">
<defs>{{range $i, $c := .Colors}}<marker id="arrow-{{$.N}}-{{$i}}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="{{$c}}"/></marker>{{end}}</defs>
{{range .Edges}}<path class="edge" d="{{.D}}" fill="none" stroke="{{.Color}}" stroke-width="2" marker-end="url(#arrow-{{$.N}}-{{.Marker}})"><title>{{.Title}}</title></path>
{{end}}{{range .Edges}}<g class="label"><title>{{.Title}}</title><rect x="{{f (sub .LX (half .LW))}}" y="{{f (sub .LY (half .LH))}}" width="{{f .LW}}" height="{{f .LH}}" rx="4" fill="#ffffff" stroke="{{.Color}}" stroke-width="1"/><text x="{{f .LX}}" y="{{f .LY}}" fill="{{.Color}}" text-anchor="middle" dominant-baseline="central">{{.Label}}</text></g>
{{end}}{{range .Nodes}}<g class="node"><title>{{.Title}}</title><rect x="{{f .X}}" y="{{f .Y}}" width="{{f .W}}" height="{{f .H}}" rx="6" fill="#ffffff" stroke="#333" stroke-width="1.5"{{if .Dashed}} stroke-dasharray="5 3"{{end}}/><text x="{{f .TX}}" y="{{f .TY}}" text-anchor="middle" dominant-baseline="central" font-weight="bold">{{.Name}}</text></g>
{{end}}</svg></div>{{end}}{{end}}
{{with .Timeline}}{{if .Boxes}}<h3>Timeline</h3>
<p class="axis">{{.Axis}} Marked operations make the steps of the proof below (their numbers follow them); arrows run from each step's first transaction to its second.</p>
<div class="figure"><svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="{{f .W}}" height="{{f .H}}" viewBox="0 0 {{f .W}} {{f .H}}" role="img" aria-label="timeline">
<defs>{{range $i, $c := .Colors}}<marker id="tl-arrow-{{$.N}}-{{$i}}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="{{$c}}"/></marker>{{end}}</defs>
{{range .Rows}}<g class="session">{{if .Shaded}}<rect x="0" y="{{f .Y}}" width="100%" height="{{f .H}}" fill="#f3f5f8"/>{{end}}<text x="8" y="{{f .LY}}" dominant-baseline="central" fill="#333">{{.Label}}</text></g>
{{end}}{{range .Ticks}}<line x1="{{f .X}}" y1="{{f .Y1}}" x2="{{f .X}}" y2="{{f .Y2}}" stroke="#c8c8c8" stroke-dasharray="3 3"/>{{if .Label}}<text class="tick" x="{{f .X}}" y="{{f .LY}}" text-anchor="middle">{{.Label}}</text>{{end}}
{{end}}{{range .Boxes}}<g class="txn"><title>{{.Title}}</title><rect x="{{f .X}}" y="{{f .Y}}" width="{{f .W}}" height="{{f .H}}" rx="4" fill="#ffffff" stroke="#333"{{if .Open}} stroke-dasharray="6 3"{{end}}/><text x="{{f .NX}}" y="{{f .NY}}" font-weight="bold">{{.Name}}</text>
{{range .Lines}}{{if .Color}}<g class="marked"><title>{{.Title}}</title><rect x="{{f .HX}}" y="{{f .HY}}" width="{{f .HW}}" height="{{f .HH}}" rx="2" fill="{{.Color}}" fill-opacity="0.12"/><text x="{{f .X}}" y="{{f .Y}}" fill="{{.Color}}" font-weight="bold">{{.Text}} <tspan class="steps">◂{{.Steps}}</tspan></text></g>
{{else}}<text x="{{f .X}}" y="{{f .Y}}"{{if .Note}} class="note"{{end}}>{{if .Title}}<title>{{.Title}}</title>{{end}}{{.Text}}</text>
{{end}}{{end}}</g>
{{end}}{{range .Arrows}}<path class="step" d="{{.D}}" fill="none" stroke="{{.Color}}" stroke-width="1.6" stroke-opacity="0.85" marker-end="url(#tl-arrow-{{$.N}}-{{.Marker}})"><title>{{.Title}}</title></path>
{{end}}</svg></div>{{end}}{{end}}
{{if .Txns}}<h3>Transactions</h3>
<table class="txns">
<tr><th>transaction</th><th>session</th><th>outcome</th><th>operations</th>{{if .HasTime}}<th>client time</th>{{end}}{{if .HasTS}}<th>database timestamps</th>{{end}}</tr>
{{range .Txns}}<tr><td><code>{{.Name}}</code></td><td>{{.Session}}</td><td>{{.Outcome}}</td><td class="ops">{{if .All}}<details><summary>{{range $i, $o := .Ops}}{{if $i}} {{end}}{{$o}}{{end}} … {{.Elided}} more (show all {{len .All}})</summary>{{range $i, $o := .All}}{{if $i}} {{end}}{{$o}}{{end}}</details>{{else}}{{range $i, $o := .Ops}}{{if $i}} {{end}}{{$o}}{{end}}{{if .Elided}} … {{.Elided}} more{{end}}{{end}}</td>{{if $.HasTime}}<td class="time">{{.Time}}</td>{{end}}{{if $.HasTS}}<td class="time">{{.Timestamps}}</td>{{end}}</tr>
{{end}}</table>{{end}}
{{if .Steps}}<h3>Proof</h3>
<ol class="proof">{{range $i, $s := .Steps}}<li{{if and $.Cycle (last $i $.Steps)}} class="contradiction"{{end}}><span class="rel" style="background: {{$s.Color}}">{{$s.Rel}}</span> {{$s.Sentence}}</li>{{end}}</ol>{{end}}
{{if .RuledOut}}<details><summary>Alternatives ruled out ({{len .RuledOut}})</summary><ul>{{range .RuledOut}}<li>{{.}}</li>{{end}}</ul></details>{{end}}
</section>{{end}}`))
