package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestReleaseBinaryIsStatic builds isovet with the README's release command and checks the
// ELF file asks for no dynamic loader and no shared library.
func TestReleaseBinaryIsStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("checks an ELF binary; GOOS is " + runtime.GOOS)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`CGO_ENABLED=0 go (build [^`]*) \\./cmd/isovet`").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md does not say how to build the release binary (`CGO_ENABLED=0 go build ... ./cmd/isovet`)")
	}
	bin := filepath.Join(t.TempDir(), "isovet")
	args := append(strings.Fields(string(m[1])), "-o", bin, ".")
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the release binary has a %v program header: it is dynamically linked", p.Type)
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("the release binary imports %v (%v), want none", libs, err)
	}
}
