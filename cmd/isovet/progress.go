package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/isovet/isovet/check"
)

// isTerminal reports whether w is a terminal, for progress bars and the stage line. A
// writer may say for itself (tests stand in for a terminal so).
func isTerminal(w io.Writer) bool {
	if t, ok := w.(interface{ terminal() bool }); ok {
		return t.terminal()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// termWidth is the width of terminal w in columns (80 when it cannot be told). A writer
// may say for itself, as for isTerminal.
func termWidth(w io.Writer) int {
	if t, ok := w.(interface{ columns() int }); ok {
		return t.columns()
	}
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	return 80
}

// progressBar returns a progress callback drawing a bar on w when w is a terminal and the
// work is large enough to be worth one, and a function to finish it, which clears the bar.
// Otherwise both are no-ops, so scripts and CI logs never see control characters. what
// says what the bar is for ("reading", "[2/7] a.edn: reading").
func progressBar(w io.Writer, what string, minTotal int64) (report func(done, total int64), finish func()) {
	if !isTerminal(w) {
		return nil, func() {}
	}
	var bar *progressbar.ProgressBar
	report = func(done, total int64) {
		if total < minTotal {
			return
		}
		if bar == nil {
			bar = progressbar.NewOptions64(total,
				progressbar.OptionSetWriter(w),
				progressbar.OptionSetDescription(what),
				progressbar.OptionShowBytes(true),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionClearOnFinish(),
				progressbar.OptionSetWidth(30))
		}
		_ = bar.Set64(min(done, total))
	}
	finish = func() {
		if bar != nil {
			_ = bar.Finish() // at its end, which clears it
		}
	}
	return report, finish
}

// stageDelay is how long a check runs before the stage line shows: a quick check shows
// none. stageEvery is how often the line is redrawn.
const (
	stageDelay = 500 * time.Millisecond
	stageEvery = 200 * time.Millisecond
)

// stageLine draws, on a terminal, one line saying which stage a check is in, with its
// counts and the time since the check began, updated in place and cleared by stop:
//
//	[2/7] a.edn: checking serializable: solving (constraints 12,345, pruned 9,876; conflicts 1,024) 3s
//
// Its progress method is the check's Options.Progress; it only stores the value, and a
// goroutine draws it every stageEvery once the check has run for stageDelay.
type stageLine struct {
	w      io.Writer
	prefix string // "[2/7] a.edn: " for one history of several, else ""
	width  int
	start  time.Time

	mu    sync.Mutex
	what  string      // "checking serializable"
	asked check.Level // the level what names: the Progress of another says so
	p     check.Progress
	shown string // what the line shows now ("": nothing)

	done, finished chan struct{}
}

// startStageLine starts the stage line of a check of level on w, prefix before it; nil
// when w is not a terminal (a nil *stageLine draws nothing, and its progress is nil).
func startStageLine(w io.Writer, prefix string, level check.Level) *stageLine {
	if !isTerminal(w) {
		return nil
	}
	s := &stageLine{w: w, prefix: prefix, width: termWidth(w), start: time.Now(), what: "checking " + level.String(), asked: level,
		done: make(chan struct{}), finished: make(chan struct{})}
	go s.loop()
	return s
}

// progress returns the callback for check.Options.Progress: nil on a nil line.
func (s *stageLine) progress() func(check.Progress) {
	if s == nil {
		return nil
	}
	return func(p check.Progress) {
		s.mu.Lock()
		s.p = p
		s.mu.Unlock()
	}
}

// follow says that what runs next is the follow-up at level.
func (s *stageLine) follow(level check.Level) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.what, s.asked, s.p = "following up at "+level.String(), level, check.Progress{}
	s.mu.Unlock()
}

// stop clears the line and waits for its goroutine.
func (s *stageLine) stop() {
	if s == nil {
		return
	}
	close(s.done)
	<-s.finished
}

func (s *stageLine) loop() {
	defer close(s.finished)
	select {
	case <-s.done:
		return
	case <-time.After(stageDelay):
	}
	tick := time.NewTicker(stageEvery)
	defer tick.Stop()
	for {
		s.draw()
		select {
		case <-s.done:
			s.clear()
			return
		case <-tick.C:
		}
	}
}

// draw shows the current stage, if it changed.
func (s *stageLine) draw() {
	s.mu.Lock()
	line := fit(s.prefix+stageText(s.what, s.asked, s.p, time.Since(s.start)), s.width-1)
	s.mu.Unlock()
	if line == s.shown {
		return
	}
	fmt.Fprintf(s.w, "\r%s\x1b[K", line)
	s.shown = line
}

// clear erases the line, if anything is on it.
func (s *stageLine) clear() {
	if s.shown != "" {
		io.WriteString(s.w, "\r\x1b[K")
		s.shown = ""
	}
}

// fit cuts line to at most width characters, ending it with "…" when cut.
func fit(line string, width int) string {
	r := []rune(line)
	if width < 1 || len(r) <= width {
		return line
	}
	return string(r[:width-1]) + "…"
}

// stageText is the stage line's text for what (a check of asked) at progress p, elapsed
// since the check began: "checking serializable: solving (constraints 12,345, pruned
// 9,876; conflicts 1,024) 3s". A stage of another level (a check decided through it) says
// which; before the first stage it says only what and the time.
func stageText(what string, asked check.Level, p check.Progress, elapsed time.Duration) string {
	var b strings.Builder
	b.WriteString(what)
	if p.Stage != 0 {
		b.WriteString(": ")
		b.WriteString(p.Stage.String())
		if p.Level != asked && p.Level != 0 {
			b.WriteString(" at " + p.Level.String())
		}
		if c := stageCounts(p); c != "" {
			b.WriteString(" (" + c + ")")
		}
	}
	b.WriteString(" " + seconds(elapsed))
	return b.String()
}

// stageCounts are p's counts that say something, in groups: the constraints (or edges),
// the search, the replay, the anomalies found; the transactions when there is nothing else.
func stageCounts(p check.Progress) string {
	var groups []string
	switch {
	case p.Constraints > 0 && p.Pruned > 0:
		groups = append(groups, "constraints "+thousands(p.Constraints)+", pruned "+thousands(p.Pruned))
	case p.Constraints > 0:
		groups = append(groups, "constraints "+thousands(p.Constraints))
	case p.Edges > 0:
		groups = append(groups, "edges "+thousands(p.Edges))
	}
	var search []string
	if p.Conflicts > 0 {
		search = append(search, "conflicts "+thousands(p.Conflicts))
	}
	if p.Tries > 0 {
		search = append(search, "choices tried "+thousands(p.Tries))
	}
	if len(search) > 0 {
		groups = append(groups, strings.Join(search, ", "))
	}
	if p.Events > 0 {
		groups = append(groups, "events "+thousands(p.Replayed)+" of "+thousands(p.Events))
	}
	if p.Anomalies > 0 {
		groups = append(groups, "anomalies "+thousands(p.Anomalies))
	}
	if len(groups) == 0 && p.Txns > 0 {
		groups = append(groups, "transactions "+thousands(p.Txns))
	}
	return strings.Join(groups, "; ")
}

// thousands writes n with commas between groups of three digits: 12,345.
func thousands[N int | int64](n N) string {
	s := strconv.FormatInt(int64(n), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// seconds is d in whole seconds, with minutes past one: "3s", "2m05s".
func seconds(d time.Duration) string {
	sec := int(d / time.Second)
	if sec < 60 {
		return strconv.Itoa(sec) + "s"
	}
	return fmt.Sprintf("%dm%02ds", sec/60, sec%60)
}
