package coo

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/internal/corpus"
)

const setup = "0-1-DROP TABLE IF EXISTS t1;\n0-1-CREATE TABLE t1 (k INT PRIMARY KEY, v INT);\n0-1-INSERT INTO t1 VALUES (0, 0);\n0-1-COMMIT;\n"

func TestParseStatements(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []Stmt // Steps only; Line, Col, Step, Session, Kind, Table, Key, Value, Lo, Hi
	}{
		{"every kind", setup + "1-1-BEGIN;\n2-1-SELECT * from t1 WHERE k=0;\n3-2-update t1 set v=1 where k=0;\n4-2-SELECT * FROM t1 WHERE v >= -1 AND v <= 3;\n5-3-select * from t1 order by k;\n6-3-SELECT * FROM t1;\n7-2-INSERT INTO t1 VALUES (5, -7);\n8-1-COMMIT;\n9-2-ROLLBACK;\n10-3-start transaction;\n", []Stmt{
			{Line: 5, Col: 5, Step: 1, Session: 1, Kind: KindBegin, Text: "BEGIN"},
			{Line: 6, Col: 5, Step: 2, Session: 1, Kind: KindSelectKey, Table: "t1", Text: "SELECT * from t1 WHERE k=0"},
			{Line: 7, Col: 5, Step: 3, Session: 2, Kind: KindUpdate, Table: "t1", Value: 1, Text: "update t1 set v=1 where k=0"},
			{Line: 8, Col: 5, Step: 4, Session: 2, Kind: KindSelectRange, Table: "t1", Lo: -1, Hi: 3, Text: "SELECT * FROM t1 WHERE v >= -1 AND v <= 3"},
			{Line: 9, Col: 5, Step: 5, Session: 3, Kind: KindSelectAll, Table: "t1", Text: "select * from t1 order by k"},
			{Line: 10, Col: 5, Step: 6, Session: 3, Kind: KindSelectAll, Table: "t1", Text: "SELECT * FROM t1"},
			{Line: 11, Col: 5, Step: 7, Session: 2, Kind: KindInsert, Table: "t1", Key: 5, Value: -7, Text: "INSERT INTO t1 VALUES (5, -7)"},
			{Line: 12, Col: 5, Step: 8, Session: 1, Kind: KindCommit, Text: "COMMIT"},
			{Line: 13, Col: 5, Step: 9, Session: 2, Kind: KindRollback, Text: "ROLLBACK"},
			{Line: 14, Col: 6, Step: 10, Session: 3, Kind: KindBegin, Text: "start transaction"},
		}},
		{"CRLF, blanks, doubled semicolons, no final newline", strings.ReplaceAll(setup, "\n", "\r\n") + "\r\n1-1-BEGIN;;\r\n  \r\n2-1-SELECT * from t1 WHERE k=0; \r\n3-1-COMMIT", []Stmt{
			{Line: 6, Col: 5, Step: 1, Session: 1, Kind: KindBegin, Text: "BEGIN"},
			{Line: 8, Col: 5, Step: 2, Session: 1, Kind: KindSelectKey, Table: "t1", Text: "SELECT * from t1 WHERE k=0"},
			{Line: 9, Col: 5, Step: 3, Session: 1, Kind: KindCommit, Text: "COMMIT"},
		}},
		{"statements run together on one line", "0-1-CREATE TABLE t1 (k INT PRIMARY KEY, v INT);0-1-INSERT INTO t1 VALUES (0, 0);0-1-COMMIT;1-1-BEGIN; SELECT * FROM t1 WHERE k = 0;2-2-COMMIT;\n", []Stmt{
			{Line: 1, Col: 96, Step: 1, Session: 1, Kind: KindBegin, Text: "BEGIN"},
			{Line: 1, Col: 103, Step: 1, Session: 1, Kind: KindSelectKey, Table: "t1", Text: "SELECT * FROM t1 WHERE k = 0"},
			{Line: 1, Col: 136, Step: 2, Session: 2, Kind: KindCommit, Text: "COMMIT"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := Parse("x.txt", strings.NewReader(tt.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if s.Name != "x" || s.Table != "t1" {
				t.Errorf("Parse: name %q table %q, want x and t1", s.Name, s.Table)
			}
			if diff := cmp.Diff(tt.want, s.Steps); diff != "" {
				t.Errorf("Parse steps (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string // the whole error text
	}{
		{"empty", "", "x.txt:1: coo: syntax error: no statements"},
		{"no prefix", setup + "BEGIN;\n", `x.txt:5:1: coo: syntax error: want a STEP-SESSION- prefix such as 2-1-, found "BEGIN"`},
		{"half a prefix", setup + "1-BEGIN;\n", `x.txt:5:1: coo: syntax error: want a STEP-SESSION- prefix such as 2-1-, found "1-BEGIN"`},
		{"prefix alone", setup + "1-1-\n", "x.txt:5:5: coo: syntax error: empty statement"},
		{"unknown statement", setup + "1-1-DELETE FROM t1 WHERE k=0;\n", "x.txt:5:5: coo: syntax error: unsupported statement DELETE (the scripts use BEGIN, COMMIT, ROLLBACK, DROP, CREATE, INSERT, SELECT, UPDATE)"},
		{"unsupported where", setup + "1-1-SELECT * FROM t1 WHERE v = 1;\n", `x.txt:5:30: coo: syntax error: want >=, found "="`},
		{"columns", setup + "1-1-SELECT k FROM t1;\n", `x.txt:5:12: coo: syntax error: want *, found "k"`},
		{"trailing junk", setup + "1-1-COMMIT now;\n", `x.txt:5:12: coo: syntax error: unexpected "now" after the statement`},
		{"string literal", setup + "1-1-UPDATE t1 SET v='a' WHERE k=0;\n", `x.txt:5:21: coo: syntax error: unexpected character '\''`},
		{"operator", setup + "1-1-SELECT * FROM t1 WHERE v > 1 AND v <= 2;\n", `x.txt:5:30: coo: syntax error: unsupported operator '>' (the scripts use =, >= and <=)`},
		{"integer overflow", setup + "1-1-UPDATE t1 SET v=99999999999999999999 WHERE k=0;\n", "x.txt:5:21: coo: syntax error: integer 99999999999999999999 out of range"},
		{"missing integer", setup + "1-1-UPDATE t1 SET v= WHERE k=0;\n", `x.txt:5:22: coo: syntax error: want an integer, found "where"`},
		{"unterminated", setup + "1-1-INSERT INTO t1 VALUES (1, 2\n", "x.txt:5:32: coo: syntax error: want ), found the end of the statement"},
		{"other table", setup + "1-1-SELECT * FROM t2 WHERE k=0;\n", "x.txt:5:5: coo: syntax error: table t2 is not the table t1 the setup creates"},
		{"other schema", "0-1-CREATE TABLE t1 (k INT PRIMARY KEY, v INT, w INT);\n", `x.txt:1:46: coo: syntax error: unsupported table definition (want (k INT PRIMARY KEY, v INT)): want ), found ","`},
		{"no setup", "1-1-BEGIN;\n", "x.txt:1:5: coo: syntax error: the script does not begin with a step-0 setup that creates its table"},
		{"setup only", setup, "x.txt:4: coo: syntax error: the script has a setup but no steps"},
		{"query in the setup", "0-1-CREATE TABLE t1 (k INT PRIMARY KEY, v INT);\n0-1-SELECT * FROM t1;\n", "x.txt:2:5: coo: syntax error: select-all in the setup (step 0 holds DROP TABLE, CREATE TABLE, INSERT and COMMIT only)"},
		{"insert before create", "0-1-INSERT INTO t1 VALUES (0, 0);\n0-1-CREATE TABLE t1 (k INT PRIMARY KEY, v INT);\n1-1-COMMIT;\n", "x.txt:1:5: coo: syntax error: INSERT before the setup's CREATE TABLE"},
		{"step 0 later", setup + "1-1-BEGIN;\n0-1-COMMIT;\n", "x.txt:6:5: coo: syntax error: step 0 after the setup (step 0 is the setup only)"},
		{"session 0", setup + "1-0-BEGIN;\n", "x.txt:5:5: coo: syntax error: session 0 (sessions are numbered from 1)"},
		{"create later", setup + "1-1-CREATE TABLE t1 (k INT PRIMARY KEY, v INT);\n", "x.txt:5:5: coo: syntax error: create-table outside the setup"},
		{"line of semicolons", setup + ";;\n", `x.txt:5:1: coo: syntax error: a line with no statement: ";;"`},
		{"binary", setup + "1-1-\x00\xff;\n", `x.txt:5:5: coo: syntax error: unexpected character '\x00'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := Parse("x.txt", strings.NewReader(tt.in))
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want error %q", tt.in, s, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("Parse(%q) error\n got %s\nwant %s", tt.in, err, tt.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, ErrSyntax) {
				t.Errorf("Parse error %v is not a *ParseError wrapping ErrSyntax", err)
			}
		})
	}
}

func TestParseLongLine(t *testing.T) {
	t.Parallel()
	_, err := Parse("x.txt", strings.NewReader(setup+"1-1-"+strings.Repeat(" ", maxLine+10)+"BEGIN;\n"))
	if err == nil || !strings.Contains(err.Error(), "x.txt:5: coo: syntax error: line longer than") {
		t.Errorf("Parse of an overlong line: %v, want a line-length error at x.txt:5", err)
	}
}

// sharedScenarios returns the public scripts' directory in the public corpora, or skips
// (fails under ISOVET_REQUIRE_DATA=1) when they are missing.
func sharedScenarios(t testing.TB) string {
	t.Helper()
	return corpus.Path(t, "vbox/coo_origin")
}

// TestLoadDirPublicScripts parses the 29 public scripts: 13 RAT, 9 WAT and 7 IAT, each with a
// setup that creates t1, sessions 1 to 3, and one warning for the one misnumbered step.
func TestLoadDirPublicScripts(t *testing.T) {
	t.Parallel()
	scripts, err := LoadDir(sharedScenarios(t))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	var warned []string
	for _, s := range scripts {
		count[s.Name[:3]]++
		if s.Table != "t1" || cmp.Diff([]int{1, 2, 3}, s.Sessions()) != "" {
			t.Errorf("%s: table %q, sessions %v; want t1 and [1 2 3]", s.Name, s.Table, s.Sessions())
		}
		if n := len(s.Setup); n < 4 || s.Setup[n-1].Kind != KindCommit {
			t.Errorf("%s: setup %v does not end with COMMIT", s.Name, s.Setup)
		}
		if len(s.Warnings) > 0 {
			warned = append(warned, s.Name)
		}
	}
	if diff := cmp.Diff(map[string]int{"rat": 13, "wat": 9, "iat": 7}, count); diff != "" {
		t.Errorf("scripts per type (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"iat_dda_write_skew"}, warned); diff != "" {
		t.Errorf("scripts with warnings (-want +got):\n%s", diff)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(setup + "1-1-BEGIN;\n2-1-SELECT * from t1 WHERE k=0;\n3-1-COMMIT;")
	f.Add(setup + "1-2-SELECT * FROM t1 WHERE v >= 1 AND v <= 1;\r\n2-2-update t1 set v=3 where k=2;;")
	f.Add("0-1-CREATE TABLE t1 (k INT PRIMARY KEY, v INT);0-1-COMMIT;1-1-BEGIN;")
	f.Add("1-1-\x00;;-1-2-")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse("fuzz.txt", strings.NewReader(in))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line < 1 || pe.Col < 0 {
				t.Fatalf("Parse error %v: want a *ParseError with a line", err)
			}
			return
		}
		if s.Table == "" || len(s.Steps) == 0 {
			t.Fatalf("Parse(%q) succeeded without a table or steps: %+v", in, s)
		}
		for _, st := range s.Steps {
			if st.Kind == KindInvalid || st.Step == 0 || st.Session == 0 {
				t.Fatalf("Parse(%q): bad step %+v", in, st)
			}
			// Every statement's text parses on its own to the same statement.
			again, err := parseSQL([]byte(st.Text))
			if err != nil || again.Kind != st.Kind || again.Key != st.Key || again.Value != st.Value || again.Lo != st.Lo || again.Hi != st.Hi {
				t.Fatalf("statement %q reparses as %+v, %v; want %+v", st.Text, again, err, st)
			}
		}
	})
}
