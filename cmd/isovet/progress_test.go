package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/isovet/isovet/check"
)

// fakeTerminal is a writer that says it is a terminal (isTerminal), safe for concurrent use.
type fakeTerminal struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (f *fakeTerminal) terminal() bool { return true }

func (f *fakeTerminal) columns() int { return 200 }

func (f *fakeTerminal) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.b.Write(p)
}

func (f *fakeTerminal) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.b.String()
}

// screen is what a terminal shows after out: carriage returns go back to the line's start,
// ESC [ K erases to its end, other text overwrites; trailing blanks are dropped.
func screen(out string) []string {
	var lines [][]rune
	line, col := []rune{}, 0
	rs := []rune(out)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; {
		case c == '\n':
			lines = append(lines, line)
			line, col = []rune{}, 0
		case c == '\r':
			col = 0
		case c == 0x1b && i+2 < len(rs) && rs[i+1] == '[' && rs[i+2] == 'K':
			line = line[:col]
			i += 2
		case c == 0x1b:
			// another escape sequence (the bar's colours are off): skip to its final byte
			for i++; i < len(rs) && !(rs[i] >= '@' && rs[i] <= '~' && rs[i] != '['); i++ {
			}
		default:
			if col < len(line) {
				line[col] = c
			} else {
				line = append(line, c)
			}
			col++
		}
	}
	lines = append(lines, line)
	out2 := make([]string, len(lines))
	for i, l := range lines {
		out2[i] = strings.TrimRight(string(l), " ")
	}
	return out2
}

// TestStageText: the stage line's text for each kind of stage, with the counts that stage
// has, the level it is at when not the one asked, and the time.
func TestStageText(t *testing.T) {
	t.Parallel()
	ser, si := check.Serializable, check.StrongSessionSI
	tests := []struct {
		name    string
		what    string
		p       check.Progress
		elapsed time.Duration
		want    string
	}{
		{"before any stage", "checking serializable", check.Progress{}, 0, "checking serializable 0s"},
		{"basic", "checking serializable", check.Progress{Level: ser, Stage: check.StageBasic, Txns: 12345}, 1500 * time.Millisecond,
			"checking serializable: basic checks (transactions 12,345) 1s"},
		{"constructing", "checking serializable", check.Progress{Level: ser, Stage: check.StageConstructing, Txns: 10, Edges: 2_000_000}, 0,
			"checking serializable: constructing (edges 2,000,000) 0s"},
		{"solving", "checking serializable", check.Progress{Level: ser, Stage: check.StageSolving, Txns: 10, Edges: 99, Constraints: 12345, Pruned: 9876, Conflicts: 1024, Decisions: 5000}, 3 * time.Second,
			"checking serializable: solving (constraints 12,345, pruned 9,876; conflicts 1,024) 3s"},
		{"pruning before it pruned", "checking serializable", check.Progress{Level: ser, Stage: check.StagePruning, Constraints: 999}, 0,
			"checking serializable: pruning (constraints 999) 0s"},
		{"through another level", "checking snapshot-isolation", check.Progress{Level: si, Stage: check.StagePruning, Constraints: 1000, Pruned: 1}, 61 * time.Second,
			"checking snapshot-isolation: pruning at strong-session-snapshot-isolation (constraints 1,000, pruned 1) 1m01s"},
		{"search", "checking causal", check.Progress{Level: check.Causal, Stage: check.StageSearching, Edges: 7, Conflicts: 300, Tries: 12}, 0,
			"checking causal: searching (edges 7; conflicts 300, choices tried 12) 0s"},
		{"replay", "checking snapshot-isolation", check.Progress{Level: check.SnapshotIsolation, Stage: check.StageReplaying, Txns: 5, Replayed: 4096, Events: 10000, Anomalies: 2}, 0,
			"checking snapshot-isolation: replaying (events 4,096 of 10,000; anomalies 2) 0s"},
		{"explaining", "following up at strict-serializable", check.Progress{Level: check.StrictSerializable, Stage: check.StageExplaining, Constraints: 1, Pruned: 1, Anomalies: 1}, 0,
			"following up at strict-serializable: explaining (constraints 1, pruned 1; anomalies 1) 0s"},
	}
	for _, tt := range tests {
		asked := ser
		switch {
		case strings.Contains(tt.what, "snapshot-isolation"):
			asked = check.SnapshotIsolation
		case strings.Contains(tt.what, "causal"):
			asked = check.Causal
		case strings.Contains(tt.what, "strict"):
			asked = check.StrictSerializable
		}
		if got := stageText(tt.what, asked, tt.p, tt.elapsed); got != tt.want {
			t.Errorf("%s: stageText = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := fit("[2/7] a-long-history-name.edn: checking", 20); got != "[2/7] a-long-histor…" {
		t.Errorf("fit = %q", got)
	}
	if got := thousands(int64(-1234567)); got != "-1,234,567" {
		t.Errorf("thousands(-1234567) = %q", got)
	}
}

// TestStageLineOnTerminal: on a terminal, the stage line shows the stage once the check has
// run a while, with the history's prefix, and is cleared when it stops, leaving nothing on
// the screen; a check quicker than stageDelay shows nothing at all.
func TestStageLineOnTerminal(t *testing.T) {
	t.Parallel()
	var term fakeTerminal
	line := startStageLine(&term, "[2/7] a.edn: ", check.Serializable)
	line.progress()(check.Progress{Level: check.Serializable, Stage: check.StageSolving, Constraints: 12345, Pruned: 9876, Conflicts: 1024})
	time.Sleep(stageDelay + 2*stageEvery)
	shown := term.String()
	line.stop()
	out := term.String()
	if !strings.Contains(shown, "\r[2/7] a.edn: checking serializable: solving (constraints 12,345, pruned 9,876; conflicts 1,024) 0s\x1b[K") {
		t.Errorf("stage line drew %q", shown)
	}
	if !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("stage line did not clear itself: %q", out)
	}
	if s := screen(out); len(s) != 1 || s[0] != "" {
		t.Errorf("the screen after the stage line: %q", s)
	}

	var quick fakeTerminal
	line = startStageLine(&quick, "", check.Serializable)
	line.progress()(check.Progress{Level: check.Serializable, Stage: check.StageBasic})
	line.stop()
	if quick.String() != "" {
		t.Errorf("a quick check drew %q", quick.String())
	}
}

// TestNoControlCharsOffTerminal: with stderr not a terminal (scripts, CI logs), check,
// several histories and run write no carriage return or escape sequence on either stream;
// the stage line is not even started.
func TestNoControlCharsOffTerminal(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "testdata", "examples")
	for _, args := range [][]string{
		{"check", "--level", "serializable", filepath.Join(dir, "lost-update.edn")},
		{"check", "--level", "serializable", filepath.Join(dir, "lost-update.edn"), filepath.Join(dir, "aborted-read.edn")},
		{"run", "--txns", "400", "--check", "serializable,snapshot-isolation"},
	} {
		code, stdout, stderr := runCLI(t, args...)
		if code == exitUsage {
			t.Fatalf("isovet %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		for name, s := range map[string]string{"stdout": stdout, "stderr": stderr} {
			if strings.ContainsAny(s, "\r\x1b") {
				t.Errorf("isovet %s wrote control characters to %s: %q", strings.Join(args, " "), name, s)
			}
		}
	}
	if line := startStageLine(&bytes.Buffer{}, "", check.Serializable); line != nil || line.progress() != nil {
		t.Errorf("a stage line started on a buffer")
	}
	if report, finish := runProgress(&bytes.Buffer{}); report != nil {
		t.Errorf("a run bar on a buffer")
	} else {
		finish()
	}
}

// TestRunBarEndsOnTerminal: on a terminal (stdout and stderr the same, as in a shell), the
// run's bar is cleared before the run's summary is printed, so the summary starts a line of
// its own and no bar or stage line is left on the screen.
func TestRunBarEndsOnTerminal(t *testing.T) {
	t.Parallel()
	var term fakeTerminal
	code := runWithStdin(context.Background(), []string{"run", "--txns", "3000", "--check", "serializable"}, strings.NewReader(""), &term, &term)
	out := term.String()
	if code != exitOK && code != exitViolation {
		t.Fatalf("isovet run: exit %d:\n%q", code, out)
	}
	if !strings.Contains(out, "running (") {
		t.Errorf("isovet run on a terminal drew no bar: %q", out)
	}
	lines := screen(out)
	var recorded bool
	for _, l := range lines {
		if strings.Contains(l, "running (") || strings.Contains(l, "checking serializable") {
			t.Errorf("left on the screen: %q", l)
		}
		if strings.HasPrefix(l, "recorded ") {
			recorded = true
		}
	}
	if !recorded {
		t.Errorf("no line starts with the run's summary:\n%s", strings.Join(lines, "\n"))
	}
	i := strings.Index(out, "recorded ")
	if j := strings.LastIndex(out[:max(i, 0)], "running ("); i < 0 || j >= 0 && !strings.Contains(out[j:i], "\r") {
		t.Errorf("the summary follows the bar on its line: %q", out[max(j, 0):max(i, 0)])
	}
}

// TestRunProgressFinishes: the run's bar, fed as the runner feeds it (every transaction
// recorded, retries of aborted ones too, so more than the templates), is cleared by
// finish, and finishing twice is harmless.
func TestRunProgressFinishes(t *testing.T) {
	t.Parallel()
	var term fakeTerminal
	report, finish := runProgress(&term)
	report(0, 0, 3000, 0)
	time.Sleep(150 * time.Millisecond)
	report(2444, 173, 3000, time.Second)
	time.Sleep(150 * time.Millisecond)
	report(3173, 173, 3000, 2*time.Second)
	finish()
	finish()
	if !strings.Contains(term.String(), "running (173 aborted)") {
		t.Errorf("the bar was not drawn: %q", term.String())
	}
	if s := screen(term.String()); len(s) != 1 || s[0] != "" {
		t.Errorf("the screen after the bar finished: %q", s)
	}
}
