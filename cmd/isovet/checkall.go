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

	"isovet/check"
)

// runCheckAll checks every history of a collection directory (format.Collection: a
// directory of history directories or files, such as Vbox's coo/ with its 29 cases) at
// the same level: one line per history, then a summary; --json prints an array of
// {"history", "report"}, --out DIR one report directory per history. The exit code is 1 if
// any history violates the level, else 2 if any could not be read, else 3 if any is
// unknown, else 0.
func runCheckAll(ctx context.Context, stdout, stderr io.Writer, dir string, names []string, level check.Level, opts check.Options, f *checkFlags) error {
	type entry struct {
		History string          `json:"history"`
		Error   string          `json:"error,omitempty"`
		Report  json.RawMessage `json:"report,omitempty"`
	}
	var entries []entry
	var index []indexRow
	var pass, fail, unknown, unread, notRealtime, recording int
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	// bad records a history that could not be read or checked.
	bad := func(name, what string, err error) {
		unread++
		entries = append(entries, entry{History: name, Error: err.Error()})
		index = append(index, indexRow{Name: name, Verdict: "error", Summary: what + ": " + err.Error()})
		if !f.asJSON {
			fmt.Fprintf(stdout, "%-*s  %s: %v\n", width, name, what, err)
		}
	}
	for _, name := range names {
		p := filepath.Join(dir, name)
		h, _, err := f.in.open(p)
		if err != nil {
			bad(name, "unreadable", err)
			continue
		}
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if f.timeout > 0 {
			cctx, cancel = context.WithTimeoutCause(ctx, f.timeout, fmt.Errorf("timeout of %v reached", f.timeout))
		}
		rep, err := checkAndFollow(cctx, ctx, stderr, h, level, opts, f.realtime, name)
		cancel()
		if rep == nil {
			if ctx.Err() != nil {
				return &exitError{code: exitUnknown, err: fmt.Errorf("stopped at %s: %w", p, err)}
			}
			if cctx.Err() == nil {
				bad(name, "cannot be checked", err)
				continue
			}
			rep = &check.Report{Level: level, Verdict: check.Unknown, History: h, Notes: []string{"stopped: " + err.Error()}}
		}
		if err := f.in.vacuous(p, rep); err != nil {
			bad(name, "refused", err)
			continue
		}
		switch rep.Verdict {
		case check.Pass:
			pass++
			if fu := rep.Followup; fu != nil && fu.Verdict == check.Fail {
				notRealtime++
			}
		case check.Fail:
			fail++
		default:
			unknown++
		}
		if rep.Failed != nil && len(rep.Failed.Committed) > 0 {
			recording++
		}
		if f.out != "" {
			if err := writeReportDir(filepath.Join(f.out, name), rep); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			index = append(index, indexRow{Name: name, Verdict: rep.Verdict.String(), Summary: summaryLine(rep), Link: name + "/report.html"})
		}
		if f.asJSON {
			var b bytes.Buffer
			if err := writeReportJSON(&b, p, rep); err != nil {
				return err
			}
			entries = append(entries, entry{History: name, Report: json.RawMessage(bytes.TrimSpace(b.Bytes()))})
			continue
		}
		fmt.Fprintf(stdout, "%-*s  %s\n", width, name, summaryLine(rep))
	}
	if f.out != "" {
		page := indexPage{Dir: dir, Level: level.String(), Rows: index}
		err := writeFile(filepath.Join(f.out, "index.html"), func(w io.Writer) error { return indexTmpl.Execute(w, page) })
		if err != nil {
			return &exitError{code: exitUsage, err: err}
		}
	}
	if f.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(entries); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "\n%d histories in %s at %s: %d pass", len(names), dir, level, pass)
		if notRealtime > 0 {
			rt, _ := level.RealtimeCounterpart()
			fmt.Fprintf(stdout, " (%d of them not %s)", notRealtime, rt)
		}
		fmt.Fprintf(stdout, ", %d fail, %d unknown", fail, unknown)
		if unread > 0 {
			fmt.Fprintf(stdout, ", %d could not be checked", unread)
		}
		fmt.Fprintln(stdout)
		if recording > 0 {
			fmt.Fprintf(stdout, "%d of them hold transactions logged as committed with a failed statement, a defect of the recording (--failed-statements says how they are read)\n", recording)
		}
	}
	switch {
	case fail > 0:
		return &exitError{code: exitViolation}
	case unread > 0:
		return &exitError{code: exitUsage, err: errors.New("some histories could not be checked (see above)")}
	case unknown > 0:
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
	if fu := rep.Followup; fu != nil && rep.Verdict == check.Pass {
		switch fu.Verdict {
		case check.Fail:
			fmt.Fprintf(&b, "; not %s: %s", fu.Level, fu.Anomaly.Name())
		case check.Pass:
			fmt.Fprintf(&b, "; %s too", fu.Level)
		default:
			fmt.Fprintf(&b, "; %s unknown", fu.Level)
		}
	}
	if f := rep.Failed; f != nil && len(f.Committed) > 0 {
		fmt.Fprintf(&b, "; %s logged as committed with a failed statement, read as %s", count(len(f.Committed), "transaction"), f.Reading)
	}
	return b.String()
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
