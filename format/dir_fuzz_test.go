package format_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/isovet/isovet/format"
)

// memberNames are the names a directory fuzz input's files get, per format: the third is
// another name of the first's client, so that duplicates are exercised too.
var memberNames = map[string][3]string{
	"cobra": {"T1.log", "T2.log", "T01.log"},
	"viper": {"J1.log", "J2.log", "J01.log"},
	"vbox":  {"1.log", "2.log", "01.log"},
}

// fuzzDir splits data into 1 to 3 member files (the first byte says how many and whether
// the last takes the first's client name), writes them into a directory and opens it in
// the named format and by sniffing. Opening must not panic; an accepted directory holds
// at least one transaction; a reader's error is located in a member file.
func fuzzDir(t *testing.T, name string, data []byte) {
	if len(data) == 0 {
		return
	}
	n := int(data[0]%3) + 1
	dupName := data[0]&4 != 0
	data = data[1:]
	dir := t.TempDir()
	names := memberNames[name]
	for i := range n {
		part := data[i*len(data)/n : (i+1)*len(data)/n]
		file := names[i]
		if i == 2 && !dupName {
			file = names[1][:len(names[1])-len(".log")] + "0.log" // T20.log: another client
		}
		if err := os.WriteFile(filepath.Join(dir, file), part, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{name, format.Auto} {
		h, got, err := format.Open(dir, f, format.Options{})
		if err != nil {
			var pe *format.ParseError
			if errors.As(err, &pe) && (pe.File == "" || pe.Offset < 0) {
				t.Fatalf("Open(%s) error %v is not located", f, err)
			}
			continue
		}
		if len(h.Txns) == 0 {
			t.Fatalf("Open(%s) = a %s history with no transaction and no error", f, got.Name)
		}
		if f == name && got.Name != name {
			t.Fatalf("Open(%s) read it as %s", f, got.Name)
		}
	}
}

// seedDir seeds a fuzz target with each file of a directory history alone, the files
// together, and the files with a copy of the first under another name of its client.
func seedDir(f *testing.F, files map[string][]byte) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	var all []byte
	for _, n := range names {
		f.Add(append([]byte{0}, files[n]...))
		all = append(all, files[n]...)
	}
	f.Add(append([]byte{1}, all...))
	f.Add(append([]byte{2 | 4}, bytes.Join([][]byte{all, files[names[0]]}, nil)...))
}

func dirFiles(t testing.TB, format string) map[string][]byte {
	for _, c := range dirCases {
		if c.format == format {
			return c.files
		}
	}
	t.Fatalf("no dirCase for %s", format)
	return nil
}

// FuzzOpenCobraDir opens fuzzed Cobra log directories.
func FuzzOpenCobraDir(f *testing.F) {
	seedDir(f, dirFiles(f, "cobra"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDir(t, "cobra", data) })
}

// FuzzOpenViperDir opens fuzzed Viper log directories.
func FuzzOpenViperDir(f *testing.F) {
	seedDir(f, dirFiles(f, "viper"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDir(t, "viper", data) })
}

// FuzzOpenVboxDir opens fuzzed Vbox log directories.
func FuzzOpenVboxDir(f *testing.F) {
	seedDir(f, dirFiles(f, "vbox"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDir(t, "vbox", data) })
}
