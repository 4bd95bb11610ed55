package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionOf(t *testing.T) {
	t.Parallel()
	rev := "abc1234def5678abc1234def5678abc1234def56"
	tests := []struct {
		name     string
		version  string
		settings []debug.BuildSetting
		want     string
	}{
		{"devel, no vcs", "(devel)", nil, "(devel)"},
		{"empty version", "", nil, "(devel)"},
		{"checkout, clean", "(devel)", []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}, "(devel) (commit abc1234def56)"},
		{"checkout, modified", "(devel)", []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}, "(devel) (commit abc1234def56, modified)"},
		{"go install of a pseudo-version", "v0.0.0-20261129101500-abc1234def56", nil, "v0.0.0-20261129101500-abc1234def56"},
		{"release with vcs", "v1.2.3", []debug.BuildSetting{{Key: "vcs.revision", Value: "abc1234"}}, "v1.2.3 (commit abc1234)"},
	}
	for _, tt := range tests {
		info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/isovet/isovet", Version: tt.version}, Settings: tt.settings}
		if got := versionOf(info); got != tt.want {
			t.Errorf("%s: versionOf = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	code, out, _ := runCLI(t, "--version")
	if code != exitOK {
		t.Fatalf("--version: exit %d", code)
	}
	if want := "isovet " + version() + "\n"; out != want {
		t.Errorf("--version printed %q, want %q", out, want)
	}
	if !strings.HasPrefix(out, "isovet ") {
		t.Errorf("--version printed %q", out)
	}
}
