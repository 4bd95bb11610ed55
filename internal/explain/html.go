package explain

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

// HTML writes r as one self-contained web page (no scripts, no external files): the
// verdict, then each anomaly with its dependency cycle drawn as an SVG graph (transactions
// on a circle, each step an arrow colored and labeled by its relation and key), the
// transactions with their operations, the proof step by step and the alternatives ruled
// out, then the notes and statistics. Every name is escaped; output is deterministic.
func HTML(w io.Writer, r *report.Report) error {
	page := htmlPage{
		Level:   r.Level.String(),
		Checker: checkerName(r),
		Verdict: r.Verdict.String(),
		Failed:  Failed(r),
		Notes:   Notes(r),
		Stats:   r.Stats,
	}
	if f := r.Followup; f != nil && r.Verdict == report.Pass {
		hf := &htmlFollowup{Level: f.Level.String(), Verdict: f.Verdict.String(), Why: f.Why}
		if f.Anomaly != nil {
			a := htmlAnomalyOf(Explain(r.History, *f.Anomaly), 0)
			hf.Anomaly = &a
		}
		page.Followup = hf
	}
	for i, a := range r.Anomalies {
		page.Anomalies = append(page.Anomalies, htmlAnomalyOf(Explain(r.History, a), i+1))
	}
	return htmlTmpl.Execute(w, page)
}

type htmlPage struct {
	Level, Checker, Verdict string
	Failed                  string // the failed-statement sentences ([Failed]); "" if none
	Followup                *htmlFollowup
	Anomalies               []htmlAnomaly
	Notes                   []string
	Stats                   report.Stats
}

type htmlFollowup struct {
	Level, Verdict, Why string
	Anomaly             *htmlAnomaly
}

type htmlAnomaly struct {
	N           int
	Name, Title string
	Also        []string
	Lead        string
	Message     string
	Graph       svgGraph
	Txns        []Txn
	HasTime     bool // some transaction has a client interval
	HasTS       bool // some transaction has database timestamps
	Steps       []Step
	Cycle       bool
	RuledOut    []string
}

func htmlAnomalyOf(e Explanation, n int) htmlAnomaly {
	info := e.Kind.Info()
	return htmlAnomaly{
		N: n, Name: info.Name, Title: info.Title, Also: alsoNames(e), Lead: e.Lead, Message: strings.TrimSuffix(e.Message, "."),
		Graph: layout(e), Txns: e.Txns, Steps: e.Steps, Cycle: e.Cycle,
		RuledOut: e.RuledOut,
		HasTime:  slices.ContainsFunc(e.Txns, func(t Txn) bool { return t.Time != "" }),
		HasTS:    slices.ContainsFunc(e.Txns, func(t Txn) bool { return t.Timestamps != "" }),
	}
}

// svgGraph is an anomaly's graph, laid out: boxes on a circle, arrows between them.
type svgGraph struct {
	X, Y, W, H float64 // the view box
	Nodes      []svgNode
	Edges      []svgEdge
	Colors     []string // one arrowhead marker per color, referenced by index
}

type svgNode struct {
	X, Y, W, H float64 // top-left corner and size
	TX, TY     float64 // where the name is written
	Name       string
}

type svgEdge struct {
	D      string // the path
	LX, LY float64
	Label  string
	Color  string
	Marker int // index in svgGraph.Colors
}

const (
	nodeH   = 30.0
	charW   = 8.4 // monospace advance at the page's font size
	minRing = 90.0
)

// layout places e's transactions on a circle, in the order the explanation lists them (a
// cycle's order, clockwise), and draws each step as a quadratic curve bent outwards, so
// that the two directions between a pair, and repeated steps, stay apart and labels stay
// off the middle. The view box is fitted to what was drawn.
func layout(e Explanation) svgGraph {
	var g svgGraph
	if len(e.Txns) == 0 {
		return g
	}
	pos := g.placeNodes(e.Txns, ringRadius(e))
	seen := map[[2]int]int{}
	marker := map[string]int{}
	for _, s := range e.Steps {
		i, ok1 := pos[s.FromID]
		j, ok2 := pos[s.ToID]
		if !ok1 || !ok2 || i == j {
			continue
		}
		k := seen[[2]int{i, j}]
		seen[[2]int{i, j}]++
		g.addEdge(s, i, j, k, marker)
	}
	g.fit()
	return g
}

// ringRadius is the radius of the circle layout places e's transactions on: none for one,
// room for a box and a label between two, and neighbours at least a box and a label apart
// along the circle for more.
func ringRadius(e Explanation) float64 {
	n := len(e.Txns)
	widest, label := 0.0, 0.0
	for _, t := range e.Txns {
		widest = max(widest, boxWidth(t.Name))
	}
	for _, s := range e.Steps {
		label = max(label, float64(len(stepLabel(s)))*charW)
	}
	switch {
	case n == 1:
		return 0
	case n == 2:
		return max(minRing, (widest+label)/2+16)
	}
	return max(minRing, (widest+min(label, 3*widest)+40)/(2*math.Sin(math.Pi/float64(n))))
}

// placeNodes places the transactions clockwise on a circle of radius ring from the top
// (two side by side) and returns each one's node index.
func (g *svgGraph) placeNodes(txns []Txn, ring float64) map[history.TxnID]int {
	n := len(txns)
	pos := make(map[history.TxnID]int, n)
	for i, t := range txns {
		a := -math.Pi/2 + 2*math.Pi*float64(i)/float64(n)
		if n == 2 {
			a = math.Pi * float64(i) // side by side
		}
		x, y := ring*math.Cos(a), ring*math.Sin(a)
		w := boxWidth(t.Name)
		g.Nodes = append(g.Nodes, svgNode{X: x - w/2, Y: y - nodeH/2, W: w, H: nodeH, TX: x, TY: y + 5, Name: t.Name})
		pos[t.ID] = i
	}
	return pos
}

// addEdge draws step s from node i to node j, the k-th such step, as a quadratic curve
// bent to the right of the direction of travel (outwards for a clockwise cycle), more for
// each repeated step. marker maps each colour to its arrowhead.
func (g *svgGraph) addEdge(s Step, i, j, k int, marker map[string]int) {
	a, b := g.Nodes[i], g.Nodes[j]
	x1, y1 := a.X+a.W/2, a.Y+a.H/2
	x2, y2 := b.X+b.W/2, b.Y+b.H/2
	dx, dy := x2-x1, y2-y1
	d := math.Hypot(dx, dy)
	bend := d * (0.2 + 0.15*float64(k))
	qx, qy := (x1+x2)/2+dy/d*bend, (y1+y2)/2-dx/d*bend
	sx, sy := clip(a, qx-x1, qy-y1)
	ex, ey := clip(b, qx-x2, qy-y2)
	color := relColor(s.Rel)
	m, ok := marker[color]
	if !ok {
		m = len(g.Colors)
		marker[color] = m
		g.Colors = append(g.Colors, color)
	}
	g.Edges = append(g.Edges, svgEdge{
		D:  fmt.Sprintf("M %.1f %.1f Q %.1f %.1f %.1f %.1f", sx, sy, qx, qy, ex, ey),
		LX: 0.25*sx + 0.5*qx + 0.25*ex, LY: 0.25*sy + 0.5*qy + 0.25*ey + 5,
		Label: stepLabel(s), Color: color, Marker: m,
	})
}

// fit fits the view box to the boxes and labels.
func (g *svgGraph) fit() {
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	grow := func(ax, ay, bx, by float64) {
		x0, y0, x1, y1 = min(x0, ax), min(y0, ay), max(x1, bx), max(y1, by)
	}
	for _, nd := range g.Nodes {
		grow(nd.X, nd.Y, nd.X+nd.W, nd.Y+nd.H)
	}
	for _, ed := range g.Edges {
		w := float64(len(ed.Label)) * charW / 2
		grow(ed.LX-w, ed.LY-16, ed.LX+w, ed.LY+6)
	}
	const pad = 16
	g.X, g.Y = x0-pad, y0-pad
	g.W, g.H = x1-x0+2*pad, y1-y0+2*pad
}

func boxWidth(name string) float64 { return float64(len(name))*charW + 24 }

// stepLabel is an edge's label: its relation, and its key if it has one.
func stepLabel(s Step) string {
	if s.Key != "" {
		return s.Rel.String() + " " + s.Key
	}
	return s.Rel.String()
}

// clip returns where the ray from the centre of box n in direction (dx, dy) leaves it, a
// few pixels out so arrowheads stay visible.
func clip(n svgNode, dx, dy float64) (float64, float64) {
	cx, cy := n.X+n.W/2, n.Y+n.H/2
	t := math.Inf(1)
	if dx != 0 {
		t = min(t, (n.W/2+4)/math.Abs(dx))
	}
	if dy != 0 {
		t = min(t, (n.H/2+4)/math.Abs(dy))
	}
	if math.IsInf(t, 1) {
		return cx, cy
	}
	return cx + dx*t, cy + dy*t
}

var htmlTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"f":    func(x float64) string { return fmt.Sprintf("%.1f", x) },
	"last": func(i int, xs []Step) bool { return i == len(xs)-1 },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>isovet: {{.Level}}: {{.Verdict}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; color: #1a1a1a; }
code, .ops, svg text { font-family: ui-monospace, monospace; }
h1 { font-size: 1.4em; }
.verdict-pass { color: #006b1b; } .verdict-fail { color: #b00020; } .verdict-unknown { color: #8a5a00; }
section.anomaly { border-top: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; margin: 1em 0; }
td, th { border: 1px solid #ddd; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
.ops { white-space: pre-wrap; word-break: break-word; font-size: 0.92em; }
.time { font-size: 0.85em; word-break: break-all; }
table.txns { width: 100%; }
.proof li { margin: 0.3em 0; }
.contradiction { font-weight: bold; }
.recording { background: #fff6e0; border-left: 4px solid #8a5a00; padding: 0.2em 1em; }
svg { max-width: 100%; height: auto; background: #fcfcfc; border: 1px solid #eee; }
svg text { font-size: 14px; }
</style>
</head>
<body>
<h1>isovet: <span class="verdict-{{.Verdict}}">{{.Level}}: {{.Verdict}}</span></h1>
<p>Checked by {{.Checker}}: {{len .Anomalies}} {{if eq (len .Anomalies) 1}}anomaly{{else}}anomalies{{end}} reported.</p>{{with .Failed}}
<div class="recording"><h2>Failed statements</h2><p>{{.}}</p></div>{{end}}
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
{{define "anomaly"}}<section class="anomaly">
<h2>{{if .N}}[{{.N}}] {{end}}{{.Name}}: {{.Title}}</h2>
{{if .Lead}}<p class="lead">{{.Lead}}</p>{{end}}
{{if .Also}}<p>Also known as: {{range $i, $a := .Also}}{{if $i}}, {{end}}{{$a}}{{end}}.</p>{{end}}
{{if .Message}}<p>{{.Message}}.</p>{{end}}
{{with .Graph}}{{if .Nodes}}<svg xmlns="http://www.w3.org/2000/svg" width="{{f .W}}" height="{{f .H}}" viewBox="{{f .X}} {{f .Y}} {{f .W}} {{f .H}}" role="img">
<defs>{{range $i, $c := .Colors}}<marker id="arrow-{{$.N}}-{{$i}}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="{{$c}}"/></marker>{{end}}</defs>
{{range .Edges}}<path d="{{.D}}" fill="none" stroke="{{.Color}}" stroke-width="2" marker-end="url(#arrow-{{$.N}}-{{.Marker}})"/>
<text x="{{f .LX}}" y="{{f .LY}}" fill="{{.Color}}" text-anchor="middle" paint-order="stroke" stroke="#fcfcfc" stroke-width="4">{{.Label}}</text>
{{end}}{{range .Nodes}}<rect x="{{f .X}}" y="{{f .Y}}" width="{{f .W}}" height="{{f .H}}" rx="6" fill="#ffffff" stroke="#333"/>
<text x="{{f .TX}}" y="{{f .TY}}" text-anchor="middle">{{.Name}}</text>
{{end}}</svg>{{end}}{{end}}
{{if .Txns}}<table class="txns">
<tr><th>transaction</th><th>session</th><th>outcome</th><th>operations</th>{{if .HasTime}}<th>client time</th>{{end}}{{if .HasTS}}<th>database timestamps</th>{{end}}</tr>
{{range .Txns}}<tr><td><code>{{.Name}}</code></td><td>{{.Session}}</td><td>{{.Outcome}}</td><td class="ops">{{range $i, $o := .Ops}}{{if $i}} {{end}}{{$o}}{{end}}{{if .Elided}} … {{.Elided}} more{{end}}</td>{{if $.HasTime}}<td class="time">{{.Time}}</td>{{end}}{{if $.HasTS}}<td class="time">{{.Timestamps}}</td>{{end}}</tr>
{{end}}</table>{{end}}
{{if .Steps}}<ol class="proof">{{range $i, $s := .Steps}}<li{{if and $.Cycle (last $i $.Steps)}} class="contradiction"{{end}}>{{$s.Sentence}}</li>{{end}}</ol>{{end}}
{{if .RuledOut}}<details><summary>Alternatives ruled out ({{len .RuledOut}})</summary><ul>{{range .RuledOut}}<li>{{.}}</li>{{end}}</ul></details>{{end}}
</section>{{end}}`))
