package main

import (
	"runtime/debug"
	"strings"
)

// version says which isovet this is: the module version the binary was built as ("(devel)"
// for a build from a checkout, v1.2.3 or a pseudo-version for go install) and the commit it
// was built from, with "modified" when the work tree had uncommitted changes.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown version: built without module support)"
	}
	return versionOf(info)
}

// versionOf is version from the build information info.
func versionOf(info *debug.BuildInfo) string {
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev string
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	var b strings.Builder
	b.WriteString(v + " (commit " + rev)
	if modified {
		b.WriteString(", modified")
	}
	b.WriteString(")")
	return b.String()
}
