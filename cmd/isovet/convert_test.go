package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConvertWarnsWhenInitialStateIsLost: the native history says every key starts at 0;
// Chronos and Elle cannot write that, so convert says so and names the flag that restores
// it, and the check of the output with that flag agrees with the check of the input.
func TestConvertWarnsWhenInitialStateIsLost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "h.jsonl")
	src := `{"isovet":1,"initial":0}
{"s":1,"sts":[1,0],"cts":[2,0],"ops":[["r",1,0],["w",1,5]]}
{"s":2,"sts":[3,0],"cts":[4,0],"ops":[["r",1,5],["w",2,7]]}
`
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{"chronos", "elle-edn", "elle-json"} {
		out := filepath.Join(dir, "h."+to)
		code, _, stderr := runCLI(t, "convert", in, "--to", to, "-o", out)
		if code != 0 || !strings.Contains(stderr, "initial value (every key = 0) is not written by "+to+"; check the output with --initial-value 0") {
			t.Errorf("convert --to %s: exit %d, stderr %q; want 0 and the warning", to, code, stderr)
		}
	}
	code, _, stderr := runCLI(t, "convert", in, "--to", "native", "-o", filepath.Join(dir, "copy.jsonl"))
	if code != 0 || stderr != "" {
		t.Errorf("convert --to native: exit %d, stderr %q; want 0 and no warning", code, stderr)
	}
	out := filepath.Join(dir, "h.chronos")
	if code, stdout, _ := runCLI(t, "check", "--method", "timestamp", "--level", "snapshot-isolation", "--initial-value", "0", out); code != 0 {
		t.Errorf("check of the Chronos copy with --initial-value 0: exit %d\n%s", code, stdout)
	}
	if code, _, _ := runCLI(t, "check", "--method", "timestamp", "--level", "snapshot-isolation", out); code != 1 {
		t.Errorf("check of the Chronos copy without the flag: exit %d, want 1 (the read of 0 has no writer)", code)
	}
}

// TestConvertKeepsTextInitialTransaction: IsoVista's pg_ser_bug.txt writes its initial state
// as transaction 0, which the text reader reads as the initial state (every key 0, per key).
// Written back as text, the initial state is the format's own 0, so nothing is lost and no
// warning is due; the copy still fails serializability, as the original does.
func TestConvertKeepsTextInitialTransaction(t *testing.T) {
	t.Parallel()
	in := filepath.Join("..", "..", "format", "text", "testdata", "pg_ser_bug.txt")
	out := filepath.Join(t.TempDir(), "copy.txt")
	code, _, stderr := runCLI(t, "convert", in, "--to", "text", "-o", out)
	if code != 0 || stderr != "" {
		t.Fatalf("convert --to text: exit %d, stderr %q; want 0 and no warning", code, stderr)
	}
	for _, p := range []string{in, out} {
		if code, stdout, _ := runCLI(t, "check", "--level", "serializable", p); code != 1 || !strings.Contains(stdout, "G2-item") {
			t.Errorf("check %s: exit %d, want 1 with a G2-item\n%s", p, code, stdout)
		}
	}
}
