package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// screenshots, when set, is a directory TestReportsInBrowser writes a PNG of one anomaly's
// report page and of the summary page to (docs/ holds the documentation's):
//
//	go test ./cmd/isovet -run TestReportsInBrowser -args -screenshots "$PWD/docs"
var screenshots = flag.String("screenshots", "", "write report-page.png and index-page.png, screenshots of a report page and of the summary page, to this directory")

// browserPage is one page TestReportsInBrowser renders: the command that writes it, the
// page, and what a person looking at it must see.
type browserPage struct {
	name  string
	args  []string // isovet's arguments; the page's directory is appended as --out
	page  string   // the page, under the --out directory
	file  string   // the history's file name, which the header names
	level string
	kind  string // an anomaly kind the page reports
	// cycle is the number of transactions the cycle's graph draws (0: the anomaly has no
	// steps, so no graph: a timestamp checker's concurrent writers).
	cycle int
	// marked says some timeline operation is marked as making a step.
	marked bool
	// header is more the header must say (a run's database and workload).
	header []string
}

// pageFacts is what the page shows a person, as the browser laid it out.
type pageFacts struct {
	Title     string `json:"title"`
	Header    string `json:"header"`
	Sections  int    `json:"sections"`
	Cycle     shown  `json:"cycle"`
	Nodes     []box  `json:"nodes"`
	Labels    []box  `json:"labels"`
	Spills    int    `json:"spills"` // label texts wider than their boxes
	Timeline  shown  `json:"timeline"`
	TxnBoxes  int    `json:"txnBoxes"`
	Marked    int    `json:"marked"`
	Arrows    int    `json:"arrows"`
	PageWidth int    `json:"pageWidth"`
	Text      string `json:"text"`
	// The summary page's.
	Counts string   `json:"counts"`
	Rows   []string `json:"rows"`
	Links  []string `json:"links"`
}

// shown is an element's box on the page, and whether it is displayed at all.
type shown struct {
	Present bool    `json:"present"`
	Visible bool    `json:"visible"`
	Box     box     `json:"box"`
	Opacity float64 `json:"opacity"`
}

// box is an element's bounding box on the page, in CSS pixels.
type box struct {
	L float64 `json:"l"`
	T float64 `json:"t"`
	R float64 `json:"r"`
	B float64 `json:"b"`
}

func (a box) overlaps(b box) bool { return a.L < b.R && b.L < a.R && a.T < b.B && b.T < a.B }

// factsJS gathers pageFacts in the page.
const factsJS = `(() => {
	const box = e => { const r = e.getBoundingClientRect(); return {l: r.left, t: r.top, r: r.right, b: r.bottom}; };
	const shown = e => {
		if (!e) return {present: false, visible: false, box: {l: 0, t: 0, r: 0, b: 0}, opacity: 0};
		const s = getComputedStyle(e), b = box(e);
		return {present: true, visible: s.display !== 'none' && s.visibility !== 'hidden' && b.r - b.l > 20 && b.b - b.t > 20, box: b, opacity: +s.opacity};
	};
	const all = (root, sel) => root ? [...root.querySelectorAll(sel)] : [];
	const cycle = document.querySelector('svg.cycle'), tl = document.querySelector('svg.timeline');
	const header = document.querySelector('header');
	const labels = all(cycle, 'g.label');
	return {
		title: document.title,
		header: header ? header.innerText : '',
		sections: document.querySelectorAll('section.anomaly').length,
		cycle: shown(cycle),
		nodes: all(cycle, 'g.node rect').map(box),
		labels: labels.map(g => box(g.querySelector('rect'))),
		spills: labels.filter(g => { const r = box(g.querySelector('rect')), t = box(g.querySelector('text')); return t.l < r.l - 0.5 || t.r > r.r + 0.5; }).length,
		timeline: shown(tl),
		txnBoxes: all(tl, 'g.txn').length,
		marked: all(tl, 'g.marked').length,
		arrows: all(tl, 'path.step').length,
		pageWidth: document.documentElement.scrollWidth,
		text: document.body.innerText,
		counts: (document.querySelector('ul.counts') || {innerText: ''}).innerText,
		rows: all(document, 'table.histories tr').slice(1).map(r => r.innerText),
		links: all(document, 'table.histories a').map(a => a.getAttribute('href')),
	};
})()`

// extHistory is a Chronos history with an external read violation: T3 starts after T2
// committed x = 1, yet reads T1's x = 0.
const extHistory = `[
{"tid":1,"sid":1,"sts":{"p":1,"l":0},"cts":{"p":2,"l":0},"ops":[{"t":"w","k":1,"v":0}]},
{"tid":2,"sid":2,"sts":{"p":3,"l":0},"cts":{"p":4,"l":0},"ops":[{"t":"w","k":1,"v":1}]},
{"tid":3,"sid":3,"sts":{"p":5,"l":0},"cts":{"p":6,"l":0},"ops":[{"t":"r","k":1,"v":0}]}
]
`

// TestReportsInBrowser renders a report with an anomaly from each checker (ser, si, weak,
// the timestamp checker, and predicates from a run), and the summary page of several
// histories, and loads each in headless Chromium, checking what a person would see: no
// console error, exception or request for anything outside the page; a header naming the
// history, level, verdict and isovet's version; the cycle drawn, visible, with its
// transactions and with labels that overlap neither each other nor the transactions nor
// spill out of their boxes; the timeline, with operations marked; and on the summary page
// the counts, a row per history with the failures first, and links to pages that exist.
// Without Chromium it skips, unless CI or ISOVET_REQUIRE_BROWSER=1 is set: then it fails.
func TestReportsInBrowser(t *testing.T) {
	chromium := findChromium(t)
	b, started := newBrowser(t, chromium) // it starts while the reports are written
	dir := t.TempDir()
	t.Chdir(filepath.Join("..", "..")) // so that pages name the fixtures as testdata/readers/...
	ext := filepath.Join(dir, "ext-chronos.json")
	if err := os.WriteFile(ext, []byte(extHistory), 0o644); err != nil {
		t.Fatal(err)
	}
	r := filepath.Join("testdata", "readers")
	pages := []browserPage{
		// The si page is the documentation's screenshot of a report (-screenshots).
		{name: "ser", args: []string{"check", filepath.Join(r, "write-skew.edn")}, page: "report.html", file: "write-skew.edn", level: "serializable", kind: "G2-item", cycle: 2, marked: true},
		{name: "si", args: []string{"check", "--level", "snapshot-isolation", filepath.Join(r, "lost-update.jsonl")}, page: "report.html", file: "lost-update.jsonl", level: "snapshot-isolation", kind: "lost-update", cycle: 2, marked: true},
		{name: "weak", args: []string{"check", "--level", "causal", filepath.Join(r, "causal-violation.txt")}, page: "report.html", file: "causal-violation.txt", level: "causal", kind: "causality-violation", cycle: 1, marked: true},
		{name: "timestamp", args: []string{"check", "--method", "timestamp", "--level", "snapshot-isolation", ext}, page: "report.html", file: "ext-chronos.json", level: "snapshot-isolation", kind: "EXT", cycle: 2, marked: true},
		{name: "timestamp-concurrent", args: []string{"check", "--method", "timestamp", "--level", "snapshot-isolation", filepath.Join(r, "lost-update-chronos.json")}, page: "report.html", file: "lost-update-chronos.json", level: "snapshot-isolation", kind: "NOCONFLICT"},
		{name: "predicates", args: []string{"run", "--workload", "pred-write-skew", "--db", "memdb://serializable?fault=phantom", "--txns", "40", "--realtime-budget", "0"}, page: "report-serializable.html", file: "history.jsonl", level: "serializable", kind: "G2", cycle: 2, marked: true,
			header: []string{"database\tmemdb serializable with fault phantom", "workload\tpred-write-skew"}},
	}
	for _, p := range pages {
		out := filepath.Join(dir, p.name)
		code, _, stderr := runCLI(t, append(p.args, "--out", out)...)
		if code != exitViolation {
			t.Fatalf("isovet %s: exit %d, want %d (a violation)\n%s", strings.Join(p.args, " "), code, exitViolation, stderr)
		}
	}
	index := filepath.Join(dir, "index")
	histories := []string{filepath.Join(r, "write-skew.edn"), filepath.Join(r, "stale-read.jsonl"), filepath.Join(r, "lost-update.jsonl"), filepath.Join(r, "fractured-read.json")}
	if code, _, stderr := runCLI(t, append([]string{"check", "--out", index}, histories...)...); code != exitViolation {
		t.Fatalf("isovet check --out of several histories: exit %d\n%s", code, stderr)
	}

	if err := <-started; err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}
	t.Run("broken page", func(t *testing.T) { // the checks below can fail
		page := filepath.Join(dir, "broken.html")
		if err := os.WriteFile(page, []byte(brokenPage), 0o644); err != nil {
			t.Fatal(err)
		}
		_, problems := b.load(t, page)
		got := strings.Join(problems, "\n")
		for _, want := range []string{"console.error", "exception: Uncaught", "a request for file://" + filepath.ToSlash(filepath.Join(dir, "missing.png"))} {
			if !strings.Contains(got, want) {
				t.Errorf("a page with a console error, an uncaught exception and a missing image: problems %q, want one with %q", problems, want)
			}
		}
	})
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			f := b.loadClean(t, filepath.Join(dir, p.name, p.page))
			checkReportPage(t, p, f)
			if p.name == "si" && *screenshots != "" {
				b.screenshot(t, filepath.Join(dir, p.name, p.page), filepath.Join(*screenshots, "report-page.png"))
			}
		})
	}
	t.Run("index", func(t *testing.T) {
		page := filepath.Join(index, "index.html")
		f := b.loadClean(t, page)
		checkIndexPage(t, page, f, len(histories))
		if *screenshots != "" {
			b.screenshot(t, page, filepath.Join(*screenshots, "index-page.png"))
		}
	})
}

// findChromium returns the path of Chromium, or skips the test (fails it under CI or
// ISOVET_REQUIRE_BROWSER=1) when there is none.
func findChromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium on the PATH (chromium, chromium-browser or google-chrome): the report pages are not checked in a browser (apt-get install chromium)"
	if os.Getenv("CI") != "" || os.Getenv("ISOVET_REQUIRE_BROWSER") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// browser is one headless Chromium, shared by the pages of a test.
type browser struct{ ctx context.Context }

// newBrowser starts Chromium at path; the channel says when it has started, or why it
// could not.
func newBrowser(t *testing.T, path string) (*browser, <-chan error) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(1200, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	return &browser{ctx: ctx}, started
}

// load opens the page at path in a new tab, waits for it to load, and returns what it
// shows and its problems: every console message of level error, uncaught exception and
// request for anything but the page itself.
func (b *browser) load(t *testing.T, path string) (pageFacts, []string) {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	defer cancel()
	ctx, cancel2 := context.WithTimeout(ctx, 20*time.Second)
	defer cancel2()
	u := (&url.URL{Scheme: "file", Path: path}).String()
	var mu sync.Mutex
	var problems []string
	err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				problems = append(problems, fmt.Sprintf("console.%s", ev.Type))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				problems = append(problems, "browser log error: "+ev.Entry.Text)
			}
		case *network.EventRequestWillBeSent:
			if ev.Request.URL != u {
				problems = append(problems, "a request for "+ev.Request.URL)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(u)); err != nil {
		t.Fatalf("loading %s: %v", path, err)
	}
	f, err := chromedp.Run(ctx, chromedp.Evaluate[pageFacts](factsJS))
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	mu.Lock()
	defer mu.Unlock()
	return f, slices.Clone(problems)
}

// loadClean is load, failing the test on each problem of the page.
func (b *browser) loadClean(t *testing.T, path string) pageFacts {
	t.Helper()
	f, problems := b.load(t, path)
	for _, p := range problems {
		t.Errorf("%s: %s", filepath.Base(path), p)
	}
	return f
}

// brokenPage has each problem load must see: a console error, an uncaught exception and
// a request for a file outside the page.
const brokenPage = `<!DOCTYPE html><html><head><title>broken</title></head><body>
<img src="missing.png" alt="">
<script>console.error("an error"); throw new Error("uncaught");</script>
</body></html>`

// screenshot writes a PNG of the whole page at path to out.
func (b *browser) screenshot(t *testing.T, path, out string) {
	ctx, cancel := chromedp.NewContext(b.ctx)
	defer cancel()
	u := (&url.URL{Scheme: "file", Path: path}).String()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1100, 800), chromedp.Navigate(u)); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", out)
}

// checkReportPage checks the report page of p as the browser showed it (f).
func checkReportPage(t *testing.T, p browserPage, f pageFacts) {
	t.Helper()
	for _, want := range append([]string{p.file + "\n", "history\t", "level\t" + p.level, "verdict\tfail", "isovet\t", "date\t"}, p.header...) {
		if !strings.Contains(f.Header, want) {
			t.Errorf("the header does not say %q:\n%s", want, f.Header)
		}
	}
	if !strings.Contains(f.Title, p.file) || f.Sections < 1 || !strings.Contains(f.Text, p.kind) {
		t.Errorf("title %q, %d anomaly sections; want the file in the title and a %s anomaly", f.Title, f.Sections, p.kind)
	}
	checkCycle(t, p, f)
	tl := f.Timeline
	if !tl.Visible || tl.Opacity == 0 || f.TxnBoxes < 2 {
		t.Errorf("timeline %+v with %d transactions: want it visible with at least two", tl, f.TxnBoxes)
	}
	if p.marked && (f.Marked == 0 || f.Arrows == 0) {
		t.Errorf("the timeline marks %d operations and draws %d steps; want some of each", f.Marked, f.Arrows)
	}
}

// checkCycle checks the cycle's graph: visible, on the page, the transactions p expects,
// and labels clear of each other and of the transactions, each inside its box.
func checkCycle(t *testing.T, p browserPage, f pageFacts) {
	t.Helper()
	c := f.Cycle
	if p.cycle == 0 {
		if c.Present {
			t.Errorf("a cycle is drawn for an anomaly without steps")
		}
		return
	}
	if !c.Visible || c.Opacity == 0 || c.Box.R > float64(f.PageWidth)+1 || c.Box.L < 0 {
		t.Fatalf("the cycle is not visible on the page: %+v (page width %d)", c, f.PageWidth)
	}
	if len(f.Nodes) != p.cycle {
		t.Errorf("the cycle draws %d transactions, want %d", len(f.Nodes), p.cycle)
	}
	for _, n := range f.Nodes {
		if n.L < c.Box.L || n.R > c.Box.R || n.T < c.Box.T || n.B > c.Box.B {
			t.Errorf("a transaction at %+v lies outside the graph %+v", n, c.Box)
		}
	}
	if len(f.Labels) == 0 {
		t.Errorf("the cycle has no labelled step")
	}
	for i, l := range f.Labels {
		for _, m := range f.Labels[i+1:] {
			if l.overlaps(m) {
				t.Errorf("labels at %+v and %+v overlap", l, m)
			}
		}
		for _, n := range f.Nodes {
			if l.overlaps(n) {
				t.Errorf("the label at %+v covers the transaction at %+v", l, n)
			}
		}
	}
	if f.Spills > 0 {
		t.Errorf("%d labels are wider than their boxes", f.Spills)
	}
}

// checkIndexPage checks the summary page of n histories at path as the browser showed it.
func checkIndexPage(t *testing.T, path string, f pageFacts, n int) {
	t.Helper()
	for _, want := range []string{"fail", "pass", "could not be checked"} {
		if !strings.Contains(f.Counts, want) {
			t.Errorf("the counts do not say %q: %q", want, f.Counts)
		}
	}
	if !strings.Contains(f.Header, "isovet\t") || !strings.Contains(f.Header, "level\tserializable") {
		t.Errorf("the header does not name the level and isovet's version:\n%s", f.Header)
	}
	if len(f.Rows) != n || len(f.Links) != n {
		t.Fatalf("%d rows and %d links for %d histories:\n%s", len(f.Rows), len(f.Links), n, strings.Join(f.Rows, "\n"))
	}
	seenPass := false
	for _, r := range f.Rows {
		pass := strings.Contains(r, "\tpass\t")
		if !pass && seenPass {
			t.Errorf("a failure listed after a pass:\n%s", strings.Join(f.Rows, "\n"))
		}
		seenPass = seenPass || pass
	}
	if !strings.Contains(f.Rows[0], "fail") || !strings.Contains(f.Rows[0], "G2-item") || !strings.Contains(f.Rows[0], "elle-edn") {
		t.Errorf("the first row does not give the format, verdict and anomaly: %q", f.Rows[0])
	}
	for _, l := range f.Links {
		report := filepath.Join(filepath.Dir(path), filepath.FromSlash(l))
		page, err := os.ReadFile(report)
		if err != nil {
			t.Errorf("link %s: %v", l, err)
			continue
		}
		// The report links back to the summary page.
		m := backLink.FindSubmatch(page)
		if m == nil || filepath.Join(filepath.Dir(report), filepath.FromSlash(string(m[1]))) != path {
			t.Errorf("%s does not link back to %s (%q)", l, path, m)
		}
	}
}

// backLink finds a report page's link to the summary page.
var backLink = regexp.MustCompile(`<a href="([^"]*)">All histories checked with this one</a>`)
