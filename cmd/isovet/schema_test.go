package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// reportSchema compiles docs/report.schema.json, the schema of every JSON report.
func reportSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sch, err := jsonschema.NewCompiler().Compile(filepath.Join("..", "..", "docs", "report.schema.json"))
	if err != nil {
		t.Fatalf("compiling docs/report.schema.json: %v", err)
	}
	return sch
}

// validReport fails t unless doc, the JSON what printed, validates against sch.
func validReport(t *testing.T, sch *jsonschema.Schema, what string, doc []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Errorf("%s: not JSON: %v\n%.400s", what, err, doc)
		return
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("%s does not validate against docs/report.schema.json: %v", what, err)
	}
}

// TestJSONValidatesAgainstSchema: the JSON of every command that prints or writes a report
// (check on a file, on several, on a directory of histories, check --out, run --json on
// memdb, run --out) and the renderer's golden files validate against
// docs/report.schema.json.
func TestJSONValidatesAgainstSchema(t *testing.T) {
	sch := reportSchema(t)
	data := sharedData(t)
	paper := filepath.Join(data, "elle", "elle", "paper-example.edn")
	stale := filepath.Join(data, "vbox", "coo", "wat_sda_lost_update_c1")
	dir := t.TempDir()
	plain := writeInput(t, dir, "plain.jsonl", `{"isovet":1}
{"s":0,"ops":[["w","x",1],["w",7,"a"]]}
{"s":1,"ops":[["r","x",1],["r",7,"a"]]}
`)
	missing := filepath.Join(dir, "missing.edn")
	coll := filepath.Join(dir, "coll")
	if err := os.Mkdir(coll, 0o755); err != nil {
		t.Fatal(err)
	}
	writeInput(t, coll, "a.jsonl", `{"isovet":1}
{"s":0,"ops":[["w",1,1]]}
`)
	writeInput(t, coll, "bad.txt", "r(1,1,0,0)\nw(1,x,0,0)\n")
	checkOut, runOut := filepath.Join(dir, "check-out"), filepath.Join(dir, "run-out")

	for _, args := range [][]string{
		{"check", "--json", paper},
		{"check", "--json", "--level", "serializable", stale},
		{"check", "--json", plain},
		{"check", "--json", "--level", "snapshot-isolation", paper, stale, plain, missing, coll},
		{"check", "--json", coll},
		{"check", "--json", "--level", "serializable", "--timeout", "1ns", paper},
		{"check", "--out", checkOut, paper},
		{"run", "--json", "--db", "memdb://serializable?fault=lost-update", "--workload", "rmw", "-n", "200", "--check", "serializable,read-committed"},
		{"run", "--out", runOut, "-n", "200"},
	} {
		code, out, stderr := runCLI(t, args...)
		if code == exitUsage && args[len(args)-1] != coll {
			t.Errorf("isovet %v: exit %d: %s", args, code, stderr)
			continue
		}
		if args[1] == "--json" {
			validReport(t, sch, "isovet "+args[0]+" "+args[1]+" ...", []byte(out))
		}
	}
	for _, p := range []string{filepath.Join(checkOut, "report.json"), filepath.Join(runOut, "report.json")} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Error(err)
			continue
		}
		validReport(t, sch, p, b)
	}
	goldens, _ := filepath.Glob(filepath.Join("..", "..", "internal", "explain", "testdata", "*.json"))
	if len(goldens) == 0 {
		t.Error("no golden JSON report in internal/explain/testdata")
	}
	for _, p := range goldens {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		validReport(t, sch, p, b)
	}
}

// TestSchemaRejects: the schema is not vacuous: a document without its version or kind,
// of an unknown kind, a report with an integer key or an unknown verdict, a stat result
// with neither counts nor error, a single result where a list belongs, a violation line
// with an integer key fail it.
func TestSchemaRejects(t *testing.T) {
	sch := reportSchema(t)
	for _, doc := range []string{
		`{"kind": "report", "results": []}`,
		`{"schema": 2, "kind": "report", "results": []}`,
		`{"schema": 1, "results": []}`,
		`{"schema": 1, "kind": "nope", "results": []}`,
		`{"schema": 1, "kind": "report", "results": [{"level": "serializable", "verdict": "maybe"}]}`,
		`{"schema": 1, "kind": "report", "results": [{"level": "serializable", "verdict": "error"}]}`,
		`{"schema": 1, "kind": "report", "results": [{"level": "serializable", "verdict": "pass"}]}`,
		`{"schema": 1, "kind": "stat", "results": [{"file": "h.edn"}]}`,
		`{"schema": 1, "kind": "stat", "results": {"file": "h.edn", "error": "unreadable"}}`,
		`{"schema": 1, "kind": "sat", "results": [{"file": "f.cnf", "status": "SATISFIABLE", "vars": 0, "clauses": 0, "stats": {}}]}`,
		`{"schema": 1, "kind": "violation", "id": "v", "anomaly": "EXT", "txn": "T1", "key": 99, "txn_start": [1, 0], "txn_commit": [2, 0], "message": "m", "at": "t"}`,
		intKey(t),
	} {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(doc)))
		if err != nil {
			t.Fatal(err)
		}
		if sch.Validate(inst) == nil {
			t.Errorf("the schema accepts %s", doc)
		}
	}
}

// intKey is a golden report, valid, with one key made an integer.
func intKey(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "explain", "testdata", "gsingle.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(b), `"key": "x"`, `"key": 3`, 1)
	if doc == string(b) {
		t.Fatal(`gsingle.json has no "key": "x" to change`)
	}
	return doc
}
