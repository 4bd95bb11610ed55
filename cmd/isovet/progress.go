package main

import (
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
