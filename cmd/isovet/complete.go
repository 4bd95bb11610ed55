package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/memdb"
	"github.com/isovet/isovet/internal/runner"
	"github.com/isovet/isovet/internal/runner/coo"
	"github.com/isovet/isovet/internal/workload"
)

// flagValues are the values shell completion offers for a flag, by flag name, wherever a
// command has that flag (every --format is an input format; convert's --to is added
// apart). list says the flag takes a comma-separated list; noSpace that a value is only
// a prefix (a URL scheme).
var flagValues = map[string]struct {
	values        func() []string
	list, noSpace bool
}{
	"level":             {values: levelNames},
	"check":             {values: levelNames, list: true},
	"format":            {values: func() []string { return append([]string{format.Auto}, format.Names()...) }},
	"method":            {values: func() []string { return []string{"auto", "black-box", "timestamp", "basic"} }},
	"failed-statements": {values: history.FailedReadings},
	"workload":          {values: workload.Names},
	"db":                {values: dbURLs, noSpace: true},
	"log-level":         {values: func() []string { return []string{"debug", "info", "warn", "error"} }},
	"dist":              {values: func() []string { return []string{"uniform", "zipfian", "hotspot"} }},
}

// levelNames are the levels' names, weakest first.
func levelNames() []string {
	var ns []string
	for _, l := range check.Levels() {
		ns = append(ns, l.String())
	}
	return ns
}

// dbURLs are the starts of the database URLs isovet run takes: memdb with each mode, and
// the scheme of every other linked driver.
func dbURLs() []string {
	var us []string
	for _, m := range memdb.Modes() {
		us = append(us, "memdb://"+m.String())
	}
	for _, s := range runner.Schemes() {
		if s != "memdb" {
			us = append(us, s+"://")
		}
	}
	return us
}

// registerCompletions registers the completion of flag values on every command under c.
func registerCompletions(c *cobra.Command) {
	for _, sub := range c.Commands() {
		registerCompletions(sub)
	}
	for name, fv := range flagValues {
		if c.Flags().Lookup(name) == nil {
			continue
		}
		_ = c.RegisterFlagCompletionFunc(name, completeValues(fv.values, fv.list, fv.noSpace))
	}
	if c.Name() == "convert" && c.Flags().Lookup("to") != nil {
		_ = c.RegisterFlagCompletionFunc("to", completeValues(writableNames, false, false))
	}
	if c.Name() == "run" && c.Flags().Lookup("isolation") != nil {
		_ = c.RegisterFlagCompletionFunc("isolation", completeValues(runner.IsolationNames, false, false))
	}
	if c.Name() == "coo" && c.Flags().Lookup("isolation") != nil {
		_ = c.RegisterFlagCompletionFunc("isolation", completeValues(func() []string { return coo.AllIsolations }, true, false))
	}
}

// completeValues offers the values that start with what was typed; for a list, the values
// that start the element after the last comma, with the elements before it kept.
func completeValues(values func() []string, list, noSpace bool) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var done string
		if list {
			if i := strings.LastIndexByte(typed, ','); i >= 0 {
				done, typed = typed[:i+1], typed[i+1:]
			}
		}
		var out []cobra.Completion
		for _, v := range values() {
			if strings.HasPrefix(v, strings.ToLower(typed)) {
				out = append(out, done+v)
			}
		}
		d := cobra.ShellCompDirectiveNoFileComp
		if noSpace {
			d |= cobra.ShellCompDirectiveNoSpace
		}
		return out, d
	}
}
