package main

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progressBar returns a progress callback drawing a bar on w when w is a terminal and the
// work is large enough to be worth one, and a function to finish it. Otherwise both are
// no-ops, so scripts and CI logs never see control characters.
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
		_ = bar.Set64(done)
	}
	finish = func() {
		if bar != nil {
			_ = bar.Finish()
		}
	}
	return report, finish
}

// spinner draws, on w when w is a terminal, a line saying what is being done and for how
// long, once the work has taken more than a second (a check's progress cannot be counted:
// a solver's search has no known end); stop clears it. Otherwise both are no-ops.
func spinner(w io.Writer, what string) (stop func()) {
	if !isTerminal(w) {
		return func() {}
	}
	start := time.Now()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case <-done:
			return
		case <-time.After(time.Second):
		}
		bar := progressbar.NewOptions(-1,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(what),
			progressbar.OptionSpinnerType(14),
			progressbar.OptionSetElapsedTime(false),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish())
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				_ = bar.Finish()
				return
			case <-tick.C:
				bar.Describe(fmt.Sprintf("%s (%ds)", what, int(time.Since(start).Seconds())))
				_ = bar.Add(1)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
