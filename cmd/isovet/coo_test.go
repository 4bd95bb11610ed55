package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/isovet/isovet/internal/runner/coo"
)

// cooServers returns the PostgreSQL and MariaDB URLs `isovet coo` tests use, after checking
// that both answer; it skips, or fails under ISOVET_REQUIRE_SERVICES=1, when one does not.
func cooServers(t *testing.T) []string {
	t.Helper()
	var urls []string
	for _, s := range []struct{ env, def, what string }{
		{"ISOVET_PG_DSN", cooDefaultDBs[0], "PostgreSQL"},
		{"ISOVET_MYSQL_DSN", cooDefaultDBs[1], "MySQL/MariaDB"},
	} {
		u := os.Getenv(s.env)
		if u == "" {
			u = s.def
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		db, err := coo.Open(ctx, u)
		cancel()
		if err != nil {
			if os.Getenv("ISOVET_REQUIRE_SERVICES") == "1" {
				t.Fatalf("%s is required (ISOVET_REQUIRE_SERVICES=1) but not reachable at %s: %v", s.what, u, err)
			}
			t.Skipf("%s not reachable at %s (set %s): %v", s.what, u, s.env, err)
		}
		db.Close()
		urls = append(urls, u)
	}
	return urls
}

func TestCooUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad, empty := filepath.Join(dir, "bad"), filepath.Join(dir, "empty")
	for _, d := range []string{bad, empty} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bad, "x.txt"), []byte("0-1-CREATE TABLE t1 (k INT PRIMARY KEY, v INT);\n1-1-SELEC * FROM t1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"bad script", []string{"coo", "--scenarios", bad}, "bad/x.txt:2:5: coo: syntax error: unsupported statement SELEC"},
		{"missing directory", []string{"coo", "--scenarios", filepath.Join(dir, "nope")}, "no such file or directory"},
		{"no scripts", []string{"coo", "--scenarios", empty}, "no *.txt scripts under"},
		{"args", []string{"coo", "extra"}, `unknown command "extra" for "isovet coo"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, _, stderr := runCLI(t, tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("isovet %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tt.args, " "), code, stderr, exitUsage, tt.wantErr)
			}
		})
	}
}

func TestCooUsageErrorsGoodScripts(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(sharedData(t), "vbox", "coo_origin")
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown isolation", []string{"coo", "--scenarios", dir, "--isolation", "snapshot"}, `unknown isolation "snapshot" (isolations: read-uncommitted, read-committed, repeatable-read, serializable)`},
		{"unknown scenario", []string{"coo", "--scenarios", dir, "--only", "rat_sda_dirty_read,nope"}, "--only names scenarios not under"},
		{"bad database", []string{"coo", "--scenarios", dir, "--only", "rat_sda_dirty_read", "--db", "sqlite://x"}, `database "sqlite://x": want a postgres:// or mysql:// URL`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, _, stderr := runCLI(t, tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("isovet %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tt.args, " "), code, stderr, exitUsage, tt.wantErr)
			}
		})
	}
}

// TestCooReplaysAndWrites runs `isovet coo` on two scenarios against both servers, then
// checks a written history again with `isovet check`: the write skew MariaDB lets through
// at READ COMMITTED is found in the file too.
func TestCooReplaysAndWrites(t *testing.T) {
	t.Parallel()
	urls := cooServers(t)
	dir := filepath.Join(sharedData(t), "vbox", "coo_origin")
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "coo", "--scenarios", dir, "--db", strings.Join(urls, ","), "--only", "iat_dda_write_skew,iat_sda_non_repeatable_read_committed", "--out", out)
	if code != exitOK {
		t.Fatalf("isovet coo: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"| scenario | PostgreSQL RC | PostgreSQL RR | PostgreSQL SER | MariaDB RC | MariaDB RR | MariaDB SER |",
		"| iat_dda_write_skew | G2-item (write-skew) | G2-item (write-skew) | serializable [1 aborted] | G2-item (write-skew) | G2-item (write-skew) | serializable [1 aborted] |",
		"| iat_sda_non_repeatable_read_committed | G-single | serializable | serializable | G-single | serializable | serializable |",
		"#### Checked at snapshot-isolation",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("isovet coo output lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "step 8 follows step 9; statements are issued in file order") {
		t.Errorf("isovet coo did not warn about iat_dda_write_skew's step order: %s", stderr)
	}
	table, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil || !strings.Contains(stdout, string(table)) {
		t.Errorf("table.md (%v) is not the table printed", err)
	}
	h := filepath.Join(out, "mariadb", "read-committed", "iat_dda_write_skew.jsonl")
	code, checkOut, checkErr := runCLI(t, "check", "--level", "serializable", h)
	if code != exitViolation || !strings.Contains(checkOut, "G2-item") {
		t.Errorf("isovet check %s: exit %d, want %d naming G2-item:\n%s%s", h, code, exitViolation, checkOut, checkErr)
	}
	h = filepath.Join(out, "postgresql", "serializable", "iat_dda_write_skew.jsonl")
	if code, checkOut, checkErr := runCLI(t, "check", "--level", "serializable", h); code != exitOK {
		t.Errorf("isovet check %s: exit %d, want %d:\n%s%s", h, code, exitOK, checkOut, checkErr)
	}
}

// TestCooJSON: --json prints one document, valid against the schema, naming the server and
// holding a result per replay with its counts and verdicts.
func TestCooJSON(t *testing.T) {
	t.Parallel()
	urls := cooServers(t)
	dir := filepath.Join(sharedData(t), "vbox", "coo_origin")
	code, stdout, stderr := runCLI(t, "coo", "--json", "--scenarios", dir, "--db", urls[1], "--isolation", "repeatable-read", "--only", "wat_dda_read_write_skew1_c1")
	if code != exitOK {
		t.Fatalf("isovet coo --json: exit %d\n%s", code, stderr)
	}
	var doc cooDoc
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("isovet coo --json: %v\n%s", err, stdout)
	}
	validReport(t, reportSchema(t), "isovet coo --json", []byte(stdout))
	if doc.Kind != "coo" || len(doc.Servers) != 1 || doc.Servers[0].Name != "MariaDB" {
		t.Errorf("isovet coo --json: kind %q, servers %+v; want coo and MariaDB", doc.Kind, doc.Servers)
	}
	cells := doc.Results
	if len(cells) != 1 {
		t.Fatalf("isovet coo --json: %d cells, want 1", len(cells))
	}
	got := cells[0]
	if got.Scenario != "wat_dda_read_write_skew1_c1" || got.Database != "MariaDB" || got.Isolation != "repeatable-read" || got.Committed != 4 || got.Aborted != 0 || got.Blocked < 1 {
		t.Errorf("isovet coo --json: %+v; want the MariaDB REPEATABLE READ replay, 4 committed (with the loader), none aborted, a blocked statement", got)
	}
	var ser *cooVerdict
	for i := range got.Verdicts {
		if got.Verdicts[i].Level == "serializable" {
			ser = &got.Verdicts[i]
		}
	}
	if ser == nil || ser.Verdict != "fail" || len(ser.Kinds) == 0 || ser.Kinds[0] != "G-single" {
		t.Errorf("isovet coo --json: serializable verdict %+v, want fail with G-single", ser)
	}
}
