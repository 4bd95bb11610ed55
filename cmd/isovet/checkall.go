package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"strings"

	"github.com/isovet/isovet/check"
)

// runCheckAll checks every history of a collection directory (format.Collection: a
// directory of history directories or files, such as Vbox's coo/ with its 29 cases) at
// the same level: one line per history, then a summary; --json prints an array of
// {"history", "report"}, --out DIR one report directory per history. The exit code is 1 if
// any history violates the level (or, with --strict-exit, fails its real-time follow-up),
// else 2 if any could not be read, else 3 if any is unknown, else 0.
func runCheckAll(ctx context.Context, stdout, stderr io.Writer, dir string, names []string, level check.Level, opts check.Options, f *checkFlags) error {
	ca := &checkAll{stdout: stdout, stderr: stderr, dir: dir, level: level, opts: opts, f: f}
	for _, n := range names {
		ca.width = max(ca.width, len(n))
	}
	for _, name := range names {
		if err := ca.one(ctx, name); err != nil {
			return err
		}
	}
	if f.out != "" {
		page := indexPage{Dir: dir, Level: level.String(), Rows: ca.index}
		err := writeFile(filepath.Join(f.out, "index.html"), func(w io.Writer) error { return indexTmpl.Execute(w, page) })
		if err != nil {
			return &exitError{code: exitUsage, err: err}
		}
	}
	if f.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(ca.entries); err != nil {
			return err
		}
	} else {
		ca.summary(len(names))
	}
	return ca.exit()
}

// checkAllEntry is one history's element of check-all's --json array.
type checkAllEntry struct {
	History string          `json:"history"`
	Error   string          `json:"error,omitempty"`
	Report  json.RawMessage `json:"report,omitempty"`
}

// checkAll is the state of one runCheckAll: its settings, and what it has found.
type checkAll struct {
	stdout, stderr io.Writer
	dir            string
	level          check.Level
	opts           check.Options
	f              *checkFlags
	width          int // of the longest name

	entries                                             []checkAllEntry
	index                                               []indexRow
	pass, fail, unknown, unread, notRealtime, recording int
}

// bad records a history that could not be read or checked.
func (ca *checkAll) bad(name, what string, err error) {
	ca.unread++
	ca.entries = append(ca.entries, checkAllEntry{History: name, Error: err.Error()})
	ca.index = append(ca.index, indexRow{Name: name, Verdict: "error", Summary: what + ": " + err.Error()})
	if !ca.f.asJSON {
		fmt.Fprintf(ca.stdout, "%-*s  %s: %v\n", ca.width, name, what, err)
	}
}

// one reads, checks and reports the history name; an error ends the whole run.
func (ca *checkAll) one(ctx context.Context, name string) error {
	f := ca.f
	p := filepath.Join(ca.dir, name)
	h, _, err := f.in.open(p)
	if err != nil {
		ca.bad(name, "unreadable", err)
		return nil
	}
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if f.timeout > 0 {
		cctx, cancel = context.WithTimeoutCause(ctx, f.timeout, fmt.Errorf("timeout of %v reached", f.timeout))
	}
	rep, err := checkAndFollow(cctx, ctx, ca.stderr, h, ca.level, ca.opts, f.realtime, name)
	cancel()
	if rep == nil {
		if ctx.Err() != nil {
			return &exitError{code: exitUnknown, err: fmt.Errorf("stopped at %s: %w", p, err)}
		}
		if cctx.Err() == nil {
			ca.bad(name, "cannot be checked", err)
			return nil
		}
		rep = &check.Report{Level: ca.level, Verdict: check.Unknown, History: h, Notes: []string{"stopped: " + err.Error()}}
	}
	if err := f.in.vacuous(p, rep); err != nil {
		ca.bad(name, "refused", err)
		return nil
	}
	ca.tally(rep)
	return ca.report(name, p, rep)
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

// report writes rep's report directory (--out) and its JSON entry (--json) or line.
func (ca *checkAll) report(name, p string, rep *check.Report) error {
	if ca.f.out != "" {
		if err := writeReportDir(filepath.Join(ca.f.out, name), rep); err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		ca.index = append(ca.index, indexRow{Name: name, Verdict: rep.Verdict.String(), Summary: summaryLine(rep), Link: name + "/report.html"})
	}
	if ca.f.asJSON {
		var b bytes.Buffer
		if err := writeReportJSON(&b, p, rep); err != nil {
			return err
		}
		ca.entries = append(ca.entries, checkAllEntry{History: name, Report: json.RawMessage(bytes.TrimSpace(b.Bytes()))})
		return nil
	}
	fmt.Fprintf(ca.stdout, "%-*s  %s\n", ca.width, name, summaryLine(rep))
	return nil
}

// summary prints the counts of n histories.
func (ca *checkAll) summary(n int) {
	out := ca.stdout
	fmt.Fprintf(out, "\n%d histories in %s at %s: %d pass", n, ca.dir, ca.level, ca.pass)
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
		fmt.Fprintf(&b, ": %s", rep.Anomalies[0].Name())
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

// indexRow is one history on a collection's index page.
type indexRow struct {
	Name, Verdict, Summary, Link string
}

type indexPage struct {
	Dir, Level string
	Rows       []indexRow
}

// indexTmpl is the page --out writes for a collection: one row per history, linking to its
// report.
var indexTmpl = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>isovet: {{.Dir}} at {{.Level}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; }
table { border-collapse: collapse; width: 100%; }
td, th { border: 1px solid #ddd; padding: 0.3em 0.6em; text-align: left; }
th { background: #f4f4f4; }
.pass { color: #006b1b; } .fail { color: #b00020; } .unknown, .error { color: #8a5a00; }
</style>
</head>
<body>
<h1>isovet: {{.Dir}} at {{.Level}}</h1>
<table>
<tr><th>history</th><th>verdict</th><th>what was found</th></tr>
{{range .Rows}}<tr><td>{{if .Link}}<a href="{{.Link}}">{{.Name}}</a>{{else}}{{.Name}}{{end}}</td><td class="{{.Verdict}}">{{.Verdict}}</td><td>{{.Summary}}</td></tr>
{{end}}</table>
</body>
</html>
`))

// count says n things: "1 transaction", "2 transactions".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
