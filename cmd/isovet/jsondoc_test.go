package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/explain"
	"github.com/isovet/isovet/internal/server"
	"github.com/isovet/isovet/internal/smtlib/solve"
)

// jsonCase is one command run with --json: its arguments, the kind its document must name,
// and the exit code it must give.
type jsonCase struct {
	name string
	args []string
	kind string
	code int
	// needs, when set, says why the case cannot run here ("" when it can).
	needs func() string
}

// docKind validates doc against the schema and returns its kind.
func docKind(t *testing.T, what string, doc []byte) string {
	t.Helper()
	validReport(t, reportSchema(t), what, doc)
	var head struct {
		Schema int    `json:"schema"`
		Kind   string `json:"kind"`
	}
	if err := json.Unmarshal(doc, &head); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if head.Schema != explain.SchemaVersion {
		t.Errorf("%s: schema %d, want %d", what, head.Schema, explain.SchemaVersion)
	}
	return head.Kind
}

// TestEveryCommandsJSON: every command with a --json flag is run with it on a fixture here
// (the test fails on a command with --json it does not run), prints one document that
// validates against docs/report.schema.json and names its kind, and exits as it would
// without --json. check and run are TestJSONValidatesAgainstSchema's; coo needs both
// database servers (TestCooJSON); analyze needs z3, and skips visibly without it.
func TestEveryCommandsJSON(t *testing.T) {
	dir := t.TempDir()
	plain := writeInput(t, dir, "plain.jsonl", `{"isovet":1}
{"s":0,"ops":[["w","x",1],["w",7,"a"]]}
{"s":1,"ops":[["r","x",1],["r",7,"a"]]}
`)
	timed := writeInput(t, dir, "timed.jsonl", `{"isovet":1,"initial":0}
{"s":0,"t":[0,10],"ops":[["w",1,1]]}
{"s":1,"t":[20,30],"ops":[["r",1,1]]}
`)
	lists := writeInput(t, dir, "lists.edn", `{:type :ok, :process 0, :value [[:append :x 1]]}
{:type :ok, :process 1, :value [[:r :x [1]]]}
`)
	missing := filepath.Join(dir, "missing.edn")
	cnf := func(name, text string) string { return writeInput(t, dir, name, text) }
	satF, unsatF := cnf("sat.cnf", "p cnf 2 2\n1 2 0\n-1 0\n"), cnf("unsat.cnf", "p cnf 1 2\n1 0\n-1 0\n")
	php := filepath.Join("..", "..", "internal", "sat", "dimacs", "testdata", "php-6-5-unsat.cnf")
	z3 := func() string {
		if solve.Available("z3") {
			return ""
		}
		return "z3 not found on PATH"
	}
	bank := filepath.Join("..", "..", "examples", "programs", "bank.txn")
	cases := []jsonCase{
		{name: "stat", args: []string{"stat", "--json", plain}, kind: "stat"},
		{name: "stat several, one missing", args: []string{"stat", "--json", plain, timed, lists, missing}, kind: "stat", code: exitUsage},
		{name: "check one missing", args: []string{"check", "--json", missing}, kind: "report", code: exitUsage},
		{name: "check one unreadable", args: []string{"check", "--json", cnf("bad.edn", "{:type")}, kind: "report", code: exitUsage},
		{name: "sat satisfiable", args: []string{"sat", "--json", satF}, kind: "sat", code: 10},
		{name: "sat unsatisfiable", args: []string{"sat", "--json", unsatF}, kind: "sat", code: 20},
		{name: "sat unknown", args: []string{"sat", "--json", "--conflicts", "1", php}, kind: "sat", code: 0},
		{name: "formats", args: []string{"formats", "--json"}, kind: "formats"},
		{name: "convert written", args: []string{"convert", "--json", "--to", "elle-edn", "-o", filepath.Join(dir, "plain.edn"), plain}, kind: "convert"},
		{name: "convert refused", args: []string{"convert", "--json", "--to", "text", "-o", filepath.Join(dir, "lists.txt"), lists}, kind: "convert", code: exitUsage},
		{name: "convert lossy", args: []string{"convert", "--json", "--lossy", "--to", "text", "-o", filepath.Join(dir, "timed.txt"), timed}, kind: "convert"},
		{name: "analyze", args: []string{"analyze", "--json", bank, "--model", "ec", "--bound", "2", "--txns", "deposit", "--no-unbounded"}, kind: "analyze", code: 1, needs: z3},
	}
	ran := map[string]bool{"check": true, "run": true, "coo": true, "replay": true} // tested elsewhere
	for _, tc := range cases {
		ran[tc.args[0]] = true
		t.Run(tc.name, func(t *testing.T) {
			if tc.needs != nil {
				if why := tc.needs(); why != "" {
					if os.Getenv("ISOVET_REQUIRE_SERVICES") == "1" {
						t.Fatalf("%s and ISOVET_REQUIRE_SERVICES=1", why)
					}
					t.Skip(why)
				}
			}
			code, out, stderr := runCLI(t, tc.args...)
			if code != tc.code {
				t.Errorf("isovet %s: exit %d, want %d: %s", strings.Join(tc.args, " "), code, tc.code, stderr)
			}
			if kind := docKind(t, "isovet "+strings.Join(tc.args, " "), []byte(out)); kind != tc.kind {
				t.Errorf("isovet %s: kind %q, want %q", strings.Join(tc.args, " "), kind, tc.kind)
			}
		})
	}
	for _, c := range withJSONFlag(newRoot(nil, nil)) {
		if !ran[c] {
			t.Errorf("isovet %s has --json, but no test runs it against the schema", c)
		}
	}
}

// withJSONFlag lists the commands under root that take --json, sorted.
func withJSONFlag(root *cobra.Command) []string {
	var names []string
	for _, c := range root.Commands() {
		if c.Flags().Lookup("json") != nil {
			names = append(names, c.Name())
		}
	}
	sort.Strings(names)
	return names
}

// TestStatJSONShape: one history or several, stat's document is a list of results, each
// naming its file; an unreadable history is a result with its error; keys never appear,
// and the initial value keeps its type.
func TestStatJSONShape(t *testing.T) {
	dir := t.TempDir()
	zero := writeInput(t, dir, "zero.jsonl", `{"isovet":1,"initial":0}
{"s":0,"ops":[["w","x",1]]}
`)
	missing := filepath.Join(dir, "missing.edn")
	type result struct {
		File    string `json:"file"`
		Error   string `json:"error"`
		Initial any    `json:"initial"`
	}
	var one, two struct{ Results []result }
	_, out, _ := runCLI(t, "stat", "--json", zero)
	if err := json.Unmarshal([]byte(out), &one); err != nil || len(one.Results) != 1 || one.Results[0].File != zero || one.Results[0].Initial != float64(0) {
		t.Errorf("stat --json one history: %v, %+v; want one result naming %s with initial 0", err, one, zero)
	}
	code, out, stderr := runCLI(t, "stat", "--json", zero, missing)
	if err := json.Unmarshal([]byte(out), &two); err != nil || len(two.Results) != 2 || two.Results[0].File != zero || two.Results[1].File != missing || !strings.Contains(two.Results[1].Error, "no such file") {
		t.Errorf("stat --json with a missing history: %v, %+v; want two results, the second with its error", err, two)
	}
	if code != exitUsage || !strings.Contains(stderr, "missing.edn") || !strings.Contains(stderr, "1 of 2 histories could not be read") {
		t.Errorf("stat --json with a missing history: exit %d, stderr %q; want 2 naming it", code, stderr)
	}
}

// TestConvertJSONNeedsOutput: convert --json prints its report on stdout, so the history
// needs a file of its own.
func TestConvertJSONNeedsOutput(t *testing.T) {
	p := writeInput(t, t.TempDir(), "h.jsonl", "{\"isovet\":1}\n{\"s\":0,\"ops\":[[\"w\",1,1]]}\n")
	code, out, stderr := runCLI(t, "convert", "--json", "--to", "elle-edn", p)
	if code != exitUsage || out != "" || !strings.Contains(stderr, "give the history a file with -o FILE") {
		t.Errorf("convert --json without -o: exit %d, stdout %q, stderr %q; want exit 2 asking for -o", code, out, stderr)
	}
}

// TestServeJSON: every JSON answer of isovet serve (status, accepted, error) and every line
// of its violations file validates against the schema with its kind, keys are strings,
// and replay --json's document does too.
func TestServeJSON(t *testing.T) {
	if server.SchemaVersion != explain.SchemaVersion {
		t.Fatalf("server.SchemaVersion %d, explain.SchemaVersion %d: one schema, one version", server.SchemaVersion, explain.SchemaVersion)
	}
	dir := t.TempDir()
	vfile := filepath.Join(dir, "violations.jsonl")
	s, err := server.New(server.Options{Initial: history.Int(0), Settle: 50 * time.Millisecond, Tick: 10 * time.Millisecond, ViolationsFile: vfile})
	if err != nil {
		t.Fatal(err)
	}
	s.Start(context.Background())
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()

	get := func(what string, resp *http.Response, err error, status int, kind string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			b.WriteString(sc.Text())
		}
		if resp.StatusCode != status {
			t.Errorf("%s: status %d, want %d: %s", what, resp.StatusCode, status, b.String())
		}
		if k := docKind(t, what, []byte(b.String())); k != kind {
			t.Errorf("%s: kind %q, want %q", what, k, kind)
		}
	}
	body := `[{"tid":"r1","sid":2,"sts":{"p":10,"l":0},"cts":{"p":11,"l":0},"ops":[{"t":"r","k":99,"v":42}]}]`
	resp, err := http.Post(hs.URL+"/v1/txns", "application/json", strings.NewReader(body))
	get("POST /v1/txns", resp, err, http.StatusOK, "accepted")
	resp, err = http.Post(hs.URL+"/v1/txns", "application/json", strings.NewReader(`[{"tid":`))
	get("POST /v1/txns (malformed)", resp, err, http.StatusBadRequest, "error")
	resp, err = http.Get(hs.URL + "/v1/status")
	get("GET /v1/status", resp, err, http.StatusOK, "status")

	hist := writeInput(t, dir, "h.jsonl", `{"isovet":1,"initial":0}
{"id":"a","s":0,"sts":[1,0],"cts":[2,0],"ops":[["w",1,5]]}
{"id":"b","s":1,"sts":[3,0],"cts":[4,0],"ops":[["r",1,5]]}
`)
	code, out, stderr := runCLI(t, "replay", "--json", "--to", hs.URL, hist)
	if code != 0 {
		t.Errorf("replay --json: exit %d: %s", code, stderr)
	}
	if k := docKind(t, "isovet replay --json", []byte(out)); k != "replay" {
		t.Errorf("replay --json: kind %q, want replay", k)
	}

	deadline := time.Now().Add(10 * time.Second)
	for s.Status().Violations == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	s.Close()
	b, err := os.ReadFile(vfile)
	if err != nil {
		t.Fatal(err)
	}
	lines := slices.DeleteFunc(strings.Split(string(b), "\n"), func(l string) bool { return l == "" })
	if len(lines) == 0 {
		t.Fatal("no violation in the violations file: the read of 42, which nobody wrote, is one")
	}
	for _, l := range lines {
		if k := docKind(t, "violation line", []byte(l)); k != "violation" {
			t.Errorf("violation line %s: kind %q", l, k)
		}
		var v struct {
			Anomaly string `json:"anomaly"`
			Key     any    `json:"key"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.Anomaly != "EXT" || v.Key != "99" {
			t.Errorf("violation line %s: %+v; want EXT on the key \"99\", a string", l, v)
		}
	}
}
