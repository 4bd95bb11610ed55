package main

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/internal/explain"
)

// checkItem is one history runCheckAll checks: the name its line and summary show, and
// its path.
type checkItem struct{ name, path string }

// runCheckAll checks several histories at the same level: those of a collection directory
// dir (format.Collection: a directory of history directories or files, such as Vbox's coo/
// with its 29 cases), or those the command line named (dir is then ""). It prints one line
// per history, then a summary; --json prints one document with a result per history, --out
// DIR one report directory per history and an index page. The exit code is 1 if any
// history violates the level (or, with --strict-exit, fails its real-time follow-up), else
// 2 if any could not be read, else 3 if any is unknown, else 0.
func runCheckAll(ctx context.Context, stdout, stderr io.Writer, dir string, items []checkItem, level check.Level, opts check.Options, f *checkFlags) error {
	ca := &checkAll{stdout: stdout, stderr: stderr, dir: dir, level: level, opts: opts, f: f}
	for _, it := range items {
		ca.width = max(ca.width, len(it.name))
	}
	for i, it := range items {
		ca.prefix = fmt.Sprintf("[%d/%d] %s: ", i+1, len(items), it.name)
		if err := ca.one(ctx, it); err != nil {
			return err
		}
	}
	if f.out != "" {
		if err := ca.writeIndex(f.out, dir, len(items)); err != nil {
			return &exitError{code: exitUsage, err: err}
		}
	}
	if f.asJSON {
		if err := writeReportJSON(stdout, ca.results); err != nil {
			return err
		}
	} else {
		ca.summary(len(items))
	}
	return ca.exit()
}

// checkAll is the state of one runCheckAll: its settings, and what it has found.
type checkAll struct {
	stdout, stderr io.Writer
	dir            string // the collection directory, or "" for histories named one by one
	level          check.Level
	opts           check.Options
	f              *checkFlags
	width          int    // of the longest name
	prefix         string // "[2/7] a.edn: ": which history the progress on stderr is of

	results                                             []explain.Result
	index                                               []indexRow
	pass, fail, unknown, unread, notRealtime, recording int
}

// bad records a history that could not be read or checked.
func (ca *checkAll) bad(it checkItem, formatName, what string, err error) {
	ca.unread++
	ca.results = append(ca.results, explain.Result{File: it.path, Format: formatName, Level: ca.level, Err: fmt.Errorf("%s: %w", what, err)})
	ca.index = append(ca.index, indexRow{Name: it.name, Format: formatName, Verdict: "error", Summary: what + ": " + err.Error()})
	if !ca.f.asJSON {
		fmt.Fprintf(ca.stdout, "%-*s  %s: %v\n", ca.width, it.name, what, err)
	}
}

// one reads, checks and reports the history it; an error ends the whole run.
func (ca *checkAll) one(ctx context.Context, it checkItem) error {
	f := ca.f
	p := it.path
	h, ft, err := f.in.openAs(p, ca.prefix+"reading")
	if err != nil {
		ca.bad(it, "", "unreadable", err)
		return nil
	}
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if f.timeout > 0 {
		cctx, cancel = context.WithTimeoutCause(ctx, f.timeout, fmt.Errorf("timeout of %v reached", f.timeout))
	}
	rep, err := checkAndFollow(cctx, ctx, ca.stderr, h, ca.level, ca.opts, f.realtime, ca.prefix)
	cancel()
	if rep == nil {
		if ctx.Err() != nil {
			return &exitError{code: exitUnknown, err: fmt.Errorf("stopped at %s: %w", p, err)}
		}
		if cctx.Err() == nil {
			ca.bad(it, ft.Name, "cannot be checked", err)
			return nil
		}
		rep = &check.Report{Level: ca.level, Verdict: check.Unknown, History: h, Notes: []string{"stopped: " + err.Error()}}
	}
	if err := f.in.vacuous(p, rep); err != nil {
		ca.bad(it, ft.Name, "refused", err)
		return nil
	}
	ca.tally(rep)
	return ca.report(it, ft.Name, rep)
}

// tally counts rep's verdict.
func (ca *checkAll) tally(rep *check.Report) {
	switch rep.Verdict {
	case check.Pass:
		ca.pass++
		if followupFailed(rep) {
			ca.notRealtime++
		}
	case check.Fail:
		ca.fail++
	default:
		ca.unknown++
	}
	if rep.Failed != nil && len(rep.Failed.Committed) > 0 {
		ca.recording++
	}
}

// report writes rep's report directory (--out) and keeps its JSON result (--json), or
// prints its line.
func (ca *checkAll) report(it checkItem, formatName string, rep *check.Report) error {
	if ca.f.out != "" {
		sub := outName(it.name)
		up := strings.Repeat("../", strings.Count(filepath.ToSlash(sub), "/")+1) + "index.html"
		if err := writeReportDir(filepath.Join(ca.f.out, sub), it.path, formatName, up, rep); err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		ca.index = append(ca.index, indexOf(it, formatName, filepath.ToSlash(sub)+"/report.html", rep))
	}
	if ca.f.asJSON {
		ca.results = append(ca.results, explain.Result{File: it.path, Format: formatName, Report: rep})
		return nil
	}
	fmt.Fprintf(ca.stdout, "%-*s  %s\n", ca.width, it.name, summaryLine(rep))
	return nil
}

// outName is the directory under --out that holds the report of the history named name: the
// name made relative, with no element that climbs out ("/a/../b.edn" is "a/__/b.edn").
func outName(name string) string {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(name)), "/")
	var keep []string
	for _, p := range parts {
		switch p {
		case "", ".":
		case "..":
			keep = append(keep, "__")
		default:
			keep = append(keep, p)
		}
	}
	if len(keep) == 0 {
		return "_"
	}
	return filepath.Join(keep...)
}

// summary prints the counts of n histories.
func (ca *checkAll) summary(n int) {
	out := ca.stdout
	where := ""
	if ca.dir != "" {
		where = " in " + ca.dir
	}
	fmt.Fprintf(out, "\n%s%s at %s: %d pass", histories(n), where, ca.level, ca.pass)
	if ca.notRealtime > 0 {
		rt, _ := ca.level.RealtimeCounterpart()
		fmt.Fprintf(out, " (%d of them not %s)", ca.notRealtime, rt)
	}
	fmt.Fprintf(out, ", %d fail, %d unknown", ca.fail, ca.unknown)
	if ca.unread > 0 {
		fmt.Fprintf(out, ", %d could not be checked", ca.unread)
	}
	fmt.Fprintln(out)
	if ca.recording > 0 {
		fmt.Fprintf(out, "%d of them hold transactions logged as committed with a failed statement, a defect of the recording (--failed-statements says how they are read)\n", ca.recording)
	}
}

// exit is the exit of the whole run: 1 if any history violates the level, else 2 if any
// could not be read, else 3 if any is unknown, else 0.
func (ca *checkAll) exit() error {
	switch {
	case ca.fail > 0, ca.f.strictExit && ca.notRealtime > 0:
		return &exitError{code: exitViolation}
	case ca.unread > 0:
		return &exitError{code: exitUsage, err: errors.New("some histories could not be checked (see above)")}
	case ca.unknown > 0:
		return &exitError{code: exitUnknown}
	}
	return nil
}

// summaryLine says a report in one line: the verdict, the first anomaly with its other
// names, and what the real-time follow-up found.
func summaryLine(rep *check.Report) string {
	var b strings.Builder
	b.WriteString(rep.Verdict.String())
	if h := rep.History; h != nil && rep.Verdict == check.Pass && !h.AnyCommitted() {
		b.WriteString(" (vacuously: no committed transaction)")
	}
	if len(rep.Anomalies) > 0 {
		fmt.Fprintf(&b, ": %s", summaryName(rep.Anomalies[0]))
		if n := len(rep.Anomalies); n > 1 {
			fmt.Fprintf(&b, " (and %d more)", n-1)
		}
	}
	if rep.Followup != nil && rep.Verdict == check.Pass {
		b.WriteString(followupText(rep))
	}
	if f := rep.Failed; f != nil && len(f.Committed) > 0 {
		fmt.Fprintf(&b, "; %s logged as committed with a failed statement, read as %s", count(len(f.Committed), "transaction"), f.Reading)
	}
	return b.String()
}

// summaryName names anomaly a in a one-line summary: by its names, and for an internal
// inconsistency, whose name alone reads like a fault of isovet, by its title too.
func summaryName(a check.Anomaly) string {
	if a.Kind == anomaly.Internal {
		return a.Name() + " (a read did not return the transaction's own write)"
	}
	return a.Name()
}

// followupText is what the real-time follow-up of rep, a pass, found, as summaryLine
// appends it.
func followupText(rep *check.Report) string {
	fu := rep.Followup
	switch fu.Verdict {
	case check.Fail:
		return fmt.Sprintf("; not %s: %s", fu.Level, fu.Anomaly.Name())
	case check.Pass:
		return fmt.Sprintf("; %s too", fu.Level)
	default:
		return fmt.Sprintf("; %s unknown", fu.Level)
	}
}

// indexRow is one history on the summary page of many: its name, format, size and
// verdict, the kinds of anomaly found, what the one-line summary says, and its report.
type indexRow struct {
	Name, Format, Verdict, Summary, Link string
	Txns                                 int
	Kinds                                []string
}

// indexOf is the summary page's row of the history it, read as formatName, whose report
// rep is at link.
func indexOf(it checkItem, formatName, link string, rep *check.Report) indexRow {
	row := indexRow{Name: it.name, Format: formatName, Verdict: rep.Verdict.String(), Summary: summaryLine(rep), Link: link}
	if h := rep.History; h != nil {
		row.Txns = len(h.Txns)
	}
	for _, a := range rep.Anomalies {
		if k := a.Kind.Info().Name; !slices.Contains(row.Kinds, k) {
			row.Kinds = append(row.Kinds, k)
		}
	}
	if fu := rep.Followup; fu != nil && rep.Verdict == check.Pass && fu.Verdict == check.Fail && fu.Anomaly != nil {
		row.Kinds = append(row.Kinds, fu.Anomaly.Kind.Info().Name+" (not "+fu.Level.String()+")")
	}
	return row
}

// verdictRank orders the summary page's rows: failures first, then what could not be
// checked, then unknowns, then passes.
var verdictRank = map[string]int{"fail": 0, "error": 1, "unknown": 2, "pass": 3}

// indexPage is the summary page of many histories checked at one level.
type indexPage struct {
	Title, Level, Version, Date string
	Counts                      []indexCount
	Rows                        []indexRow
}

// indexCount is how many histories got one verdict.
type indexCount struct {
	Verdict, Label string
	N              int
}

// writeIndex writes the summary page of the n histories checked so far, dir being the
// collection directory they came from ("" if they were named one by one), to out/index.html.
func (ca *checkAll) writeIndex(out, dir string, n int) error {
	title := dir
	if title == "" {
		title = histories(n)
	}
	rows := slices.Clone(ca.index)
	slices.SortStableFunc(rows, func(a, b indexRow) int { return verdictRank[a.Verdict] - verdictRank[b.Verdict] })
	page := indexPage{
		Title: title, Level: ca.level.String(), Version: version(), Date: time.Now().UTC().Format("2006-01-02 15:04:05 UTC"), Rows: rows,
		Counts: []indexCount{{"fail", "fail", ca.fail}, {"error", "could not be checked", ca.unread}, {"unknown", "unknown", ca.unknown}, {"pass", "pass", ca.pass}},
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	return writeFile(filepath.Join(out, "index.html"), func(w io.Writer) error { return indexTmpl.Execute(w, page) })
}

// indexTmpl is the page --out writes for many histories: the counts of each verdict, then
// one row per history, failures first, linking to its report.
var indexTmpl = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>isovet: {{.Title}} at {{.Level}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 76em; padding: 0 1em; color: #1a1a1a; line-height: 1.4; }
code { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
h1 { font-size: 1.5em; margin: 0 0 0.4em; }
table { border-collapse: collapse; width: 100%; margin: 0.6em 0; }
td, th { border: 1px solid #ddd; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; } td.format { white-space: nowrap; }
.pass { color: #006b1b; } .fail { color: #b00020; } .unknown, .error { color: #8a5a00; }
td.verdict { font-weight: bold; }
tr.row-fail td:first-child { border-left: 4px solid #b00020; }
tr.row-error td:first-child, tr.row-unknown td:first-child { border-left: 4px solid #8a5a00; }
tr.row-pass td:first-child { border-left: 4px solid #006b1b; }
.counts { display: flex; gap: 1em; margin: 0.8em 0; padding: 0; list-style: none; }
.counts li { border: 1px solid #ddd; border-radius: 6px; padding: 0.4em 1em; min-width: 6em; }
.counts b { display: block; font-size: 1.6em; }
table.meta, table.meta td, table.meta th { border: none; width: auto; background: none; padding: 0.1em 1em 0.1em 0; }
table.meta th { color: #555; font-weight: normal; }
.summary { color: #444; font-size: 0.92em; }
</style>
</head>
<body>
<header>
<h1>isovet: {{.Title}} at {{.Level}}</h1>
<ul class="counts">{{range .Counts}}<li class="{{.Verdict}}"><b>{{.N}}</b>{{.Label}}</li>{{end}}</ul>
<table class="meta">
<tr><th>level</th><td>{{.Level}}</td></tr>
<tr><th>isovet</th><td>{{.Version}}</td></tr>
<tr><th>date</th><td>{{.Date}}</td></tr>
</table>
</header>
<table class="histories">
<tr><th>history</th><th>format</th><th>transactions</th><th>verdict</th><th>anomalies found</th><th>what was found</th></tr>
{{range .Rows}}<tr class="row-{{.Verdict}}"><td>{{if .Link}}<a href="{{.Link}}"><code>{{.Name}}</code></a>{{else}}<code>{{.Name}}</code>{{end}}</td><td class="format">{{.Format}}</td><td class="num">{{if .Txns}}{{.Txns}}{{end}}</td><td class="verdict {{.Verdict}}">{{.Verdict}}</td><td>{{range $i, $k := .Kinds}}{{if $i}}, {{end}}{{$k}}{{end}}</td><td class="summary">{{.Summary}}</td></tr>
{{end}}</table>
</body>
</html>
`))

// histories says n histories: "1 history", "2 histories".
func histories(n int) string {
	if n == 1 {
		return "1 history"
	}
	return fmt.Sprintf("%d histories", n)
}

// count says n things: "1 transaction", "2 transactions".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
