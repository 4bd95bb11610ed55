package format_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/format/chronos"
	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/format/text"
	"github.com/isovet/isovet/format/veristrong"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/corpus"
)

// TestOpenSniffsNativeChronosTextVeriStrong opens files of the native, chronos, text and
// veristrong formats with format auto-detection.
func TestOpenSniffsNativeChronosTextVeriStrong(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	put := func(name, content string, gz bool) string {
		p := filepath.Join(dir, name)
		var buf bytes.Buffer
		if gz {
			zw := gzip.NewWriter(&buf)
			zw.Write([]byte(content))
			zw.Close()
		} else {
			buf.WriteString(content)
		}
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A path starting with "corpus:" names a file in the public corpora.
	tests := []struct {
		path, want string
		txns       int
	}{
		{"corpus:chronos/format-kv.json", "chronos", 1000},
		{"corpus:chronos/format-list.json", "chronos", 1000},
		{"corpus:polysi/violations/galera/galera.txt", "text", 7},
		{"corpus:polysi/violations/yugabyte/yugabyte.txt", "text", 20},
		{"corpus:plume/testcase/text/tap-b.txt", "text", 2},
		{put("h.jsonl", "{\"isovet\":1}\n{\"s\":1,\"ops\":[[\"w\",1,1]]}\n", false), "native", 1},
		{put("noheader.jsonl", "{\"s\":1,\"ops\":[[\"w\",1,1]]}\n", false), "native", 1},
		{put("h.jsonl.gz", "{\"ops\":[]}\n{\"ops\":[]}\n", true), "native", 2},
		{put("vs.txt", "2\n1 1 A 1 1\n2 2 R 1 1 1\n", false), "veristrong", 2},
		{put("c.json.gz", `[{"tid":1,"sid":1,"sts":{"p":1,"l":0},"cts":{"p":2,"l":0},"ops":[{"t":"w","k":1,"v":1}]}]`, true), "chronos", 1},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			t.Parallel()
			p := tt.path
			if rel, ok := strings.CutPrefix(p, "corpus:"); ok {
				p = corpus.Path(t, rel)
			}
			h, f, err := format.Open(p, format.Auto, format.Options{})
			if err != nil {
				t.Fatalf("Open(%s) = %v", p, err)
			}
			if f.Name != tt.want || len(h.Txns) != tt.txns {
				t.Errorf("Open(%s) = %s with %d txns, want %s with %d", p, f.Name, len(h.Txns), tt.want, tt.txns)
			}
		})
	}
}

func TestOpenChronosAppliesInitial(t *testing.T) {
	t.Parallel()
	p := corpus.Path(t, "chronos/format-kv.json")
	zero := history.Int(0)
	h, _, err := format.Open(p, "chronos", format.Options{Initial: &zero})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Value(h.Initial); got != zero {
		t.Errorf("Initial = %v, want 0", got)
	}
	h, _, err = format.Open(p, "aion", format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h.Initial != history.Nil {
		t.Errorf("Initial = %v, want nil without the option", h.Value(h.Initial))
	}
}

// TestSniffersRejectOtherFormats feeds every shared file of the other formats to the
// native, chronos, text and veristrong sniffers.
func TestSniffersRejectOtherFormats(t *testing.T) {
	t.Parallel()
	shared := corpus.Dir(t) + string(filepath.Separator)
	sniffers := map[string]func(string, []byte) bool{
		"native": native.Sniff, "chronos": chronos.Sniff, "text": text.Sniff, "veristrong": veristrong.Sniff,
	}
	var files []string
	for _, pat := range []string{
		"elle/elle/*.edn", "elle/elle-cli/*", "polysi/violations/dgraph/*.bincode",
		"plume/testcase/elle/*", "plume/testcase/dbcop/*/*", "plume/testcase/cobra/*/*",
		"cobra/ser-violation/*/T*.log", "vbox/coo/*/*.log", "vbox/coo_origin/*/*.txt",
	} {
		m, _ := filepath.Glob(shared + pat)
		for _, p := range m {
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				files = append(files, p)
			}
		}
	}
	if len(files) == 0 {
		t.Fatalf("no histories of other formats in %s", shared)
	}
	own := map[string][]string{
		"chronos": {shared + "chronos/format-kv.json", shared + "chronos/format-list.json"},
		"text":    {shared + "polysi/violations/galera/galera.txt", shared + "plume/testcase/text/tap-a.txt"},
	}
	for name, ps := range own {
		for _, p := range ps {
			for other, sniff := range sniffers {
				if other == name {
					continue
				}
				if head := head(t, p); sniff(filepath.Base(p), head) {
					t.Errorf("%s sniffer accepts %s (a %s file)", other, p, name)
				}
			}
		}
	}
	for _, p := range files {
		h := head(t, p)
		for name, sniff := range sniffers {
			if sniff(filepath.Base(p), h) {
				t.Errorf("%s sniffer accepts %s", name, strings.TrimPrefix(p, shared))
			}
		}
	}
}

func head(t *testing.T, p string) []byte {
	t.Helper()
	fh, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	buf := make([]byte, 4096)
	n, err := io.ReadFull(fh, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		t.Fatal(err)
	}
	return buf[:n]
}

// TestOpenDirectoryHoldingDbcopHistory opens directories laid out as dbcop writes them,
// one history.bincode each, as that file.
func TestOpenDirectoryHoldingDbcopHistory(t *testing.T) {
	t.Parallel()
	src := corpus.Path(t, "plume/testcase/dbcop/tap-a/history.bincode")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := format.Open(src, format.Auto, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "history.bincode"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	// Other files beside it (a tool's logs) do not matter.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("run 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{format.Auto, "dbcop", "bincode"} {
		h, f, err := format.Open(dir, name, format.Options{})
		if err != nil {
			t.Fatalf("Open(dir, %s) = %v", name, err)
		}
		if f.Name != "dbcop" || len(h.Txns) != len(want.Txns) || len(h.Txns) == 0 || h.Values.Len() != want.Values.Len() {
			t.Errorf("Open(dir, %s) = %s with %d txns and %d values, want dbcop with %d and %d", name, f.Name, len(h.Txns), h.Values.Len(), len(want.Txns), want.Values.Len())
		}
	}
	// The shared VeriStrong benchmark directories are laid out this way.
	vs := corpus.Path(t, "bench/veristrong-10k/HD-10k/hist-00000")
	h, f, err := format.Open(vs, format.Auto, format.Options{})
	if err != nil || f.Name != "dbcop" || len(h.Txns) == 0 {
		t.Errorf("Open(%s) = %s, %v", vs, f.Name, err)
	}
}

// TestOpenRunDirectory opens a directory as isovet run --out leaves it: history.jsonl
// beside the reports, read as the native format it is.
func TestOpenRunDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hist := "{\"isovet\":1}\n{\"s\":0,\"ops\":[[\"w\",1,5]]}\n{\"s\":1,\"ops\":[[\"r\",1,5]]}\n"
	if err := os.WriteFile(filepath.Join(dir, "history.jsonl"), []byte(hist), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report-serializable.txt"), []byte("pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{format.Auto, "native"} {
		h, f, err := format.Open(dir, name, format.Options{})
		if err != nil {
			t.Fatalf("Open(run dir, %s) = %v", name, err)
		}
		if f.Name != "native" || len(h.Txns) != 2 {
			t.Errorf("Open(run dir, %s) = %s with %d txns, want native with 2", name, f.Name, len(h.Txns))
		}
	}
}

func TestOpenDirectoryErrorsNameWhatIsRecognized(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := format.Open(dir, format.Auto, format.Options{})
	if err == nil || !strings.Contains(err.Error(), "directory formats: cobra (T*.log), viper (J*.log), vbox (*.log), dbcop (one history.bincode), native (one history.jsonl)") {
		t.Errorf("Open(empty dir) = %v, want the directory formats listed with dbcop's history.bincode", err)
	}
	_, _, err = format.Open(dir, "dbcop", format.Options{})
	if err == nil || !strings.Contains(err.Error(), "no history.bincode in the directory") {
		t.Errorf("Open(empty dir, dbcop) = %v, want it to say history.bincode is missing", err)
	}
	_, _, err = format.Open(dir, "chronos", format.Options{})
	if err == nil || !strings.Contains(err.Error(), "format chronos reads a single file") {
		t.Errorf("Open(dir, chronos) = %v, want a single-file error", err)
	}
	// A history.bincode that is not one is not taken for dbcop.
	if err := os.WriteFile(filepath.Join(dir, "history.bincode"), []byte("{\"s\":1,\"ops\":[]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, f, err := format.Open(dir, format.Auto, format.Options{}); err == nil {
		t.Errorf("Open(dir with a bogus history.bincode) = %s, want an error", f.Name)
	}
}

// TestOpenDirectoryErrorNamesSubdirectories: a directory whose history is one level down
// (VeriStrong's BL-10k/hist-00000) gets an error naming the subdirectory that holds it.
func TestOpenDirectoryErrorNamesSubdirectories(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sub := filepath.Join(dir, "hist-00000")
	if err := os.MkdirAll(filepath.Join(dir, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "history.jsonl"), []byte("{\"isovet\":1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := format.Open(dir, format.Auto, format.Options{})
	if err == nil || !strings.HasSuffix(err.Error(), "; these subdirectories hold one: "+sub) {
		t.Errorf("Open(dir) = %v, want it to name %s", err, sub)
	}
}
