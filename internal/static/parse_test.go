package static

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	t.Parallel()
	const tbl = "TABLE A (k KEY, v);\n"
	for _, tc := range []struct {
		name, src string
		want      string // substring of the error, including line:col
		kind      error
	}{
		{"missing-semicolon", tbl + "TXN t(x) {\n  SELECT v AS y FROM A WHERE k = x\n}", "4:1: expected \";\"", ErrSyntax},
		{"bad-char", tbl + "TXN t(x) { LET y = x ? 1; }", "2:22: unexpected character", ErrSyntax},
		{"division", tbl + "TXN t(x) { LET y = x / 2; }", "2:22: unsupported construct: operator \"/\"", ErrUnsupported},
		{"join", tbl + "TXN t(x) { SELECT v AS y FROM A JOIN B; }", "unsupported construct JOIN", ErrUnsupported},
		{"while", tbl + "TXN t(x) { WHILE x > 0 { SKIP; } }", "2:12: unsupported construct WHILE", ErrUnsupported},
		{"sum", tbl + "TXN t(x) { SELECT SUM(v) AS y FROM A WHERE k = x; }", "unsupported construct SUM", ErrUnsupported},
		{"not-full-key", tbl + "TXN t(x) { SELECT v AS y FROM A WHERE v = x; }", "without the full key (missing k)", ErrUnsupported},
		{"update-key", tbl + "TXN t(x) { UPDATE A SET k = 1 WHERE k = x; }", "UPDATE of key field A.k", ErrUnsupported},
		{"unknown-table", "TXN t(x) { DELETE FROM B WHERE k = x; }", "1:12: unknown table B", ErrInvalid},
		{"undefined", tbl + "TXN t(x) { LET y = z + 1; }", "2:20: undefined name z", ErrInvalid},
		{"assigned-twice", tbl + "TXN t(x) { LET y = 1; LET y = 2; }", "variable y is already defined at 2:12", ErrInvalid},
		{"out-of-scope", tbl + "TXN t(x) { SELECT * AS s FROM A WHERE k > x; FOREACH r IN s { LET y = r.v; } LET z = y; }", "y is out of scope", ErrInvalid},
		{"insert-missing-key", tbl + "TXN t(x) { INSERT INTO A VALUES (v = x); }", "missing key field k", ErrInvalid},
		{"no-key", "TABLE A (v);\nTXN t() { SKIP; }", "table A has no KEY field", ErrInvalid},
		{"keyword-name", tbl + "TXN t(select) { SKIP; }", "found keyword SELECT", ErrSyntax},
		{"foreach-not-set", tbl + "TXN t(x) { FOREACH r IN x { SKIP; } }", "FOREACH over x, which is not a set of rows", ErrInvalid},
		{"function-call", tbl + "TXN t(x) { LET y = abs(x); }", "unsupported construct: function call abs", ErrUnsupported},
		{"assume-invariant", tbl + "TXN t(x) { SKIP; }\nASSUME FORALL a IN A: a.v > 0;", "3:8: unsupported construct: ASSUME without INITIALLY", ErrUnsupported},
		{"assume-param", tbl + "TXN t(x) { SKIP; }\nASSUME INITIALLY FORALL a IN A: a.v > x;", "3:39: unsupported construct: x in ASSUME", ErrUnsupported},
		{"assume-is-null", tbl + "TXN t(x) { SKIP; }\nASSUME INITIALLY FORALL a IN A: a IS NULL;", "unsupported construct: IS NULL in ASSUME", ErrUnsupported},
		{"assume-unknown-row", tbl + "TXN t(x) { SKIP; }\nASSUME INITIALLY FORALL a IN A: b.v > 0;", "ASSUME: unknown row b", ErrInvalid},
		{"assume-unknown-field", tbl + "TXN t(x) { SKIP; }\nASSUME INITIALLY FORALL a IN A: a.w > 0;", "table A has no field w", ErrInvalid},
		{"assume-unknown-table", tbl + "TXN t(x) { SKIP; }\nASSUME INITIALLY FORALL a IN B: a.v > 0;", "unknown table B", ErrInvalid},
		{"assume-twice", tbl + "TXN t(x) { SKIP; }\nASSUME INITIALLY FORALL a IN A, a IN A: a.v > 0;", "row name a bound twice", ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src))
			if err == nil {
				t.Fatalf("Parse succeeded, want error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse error = %q, want it to contain %q", err, tc.want)
			}
			if !errors.Is(err, tc.kind) {
				t.Errorf("Parse error %q is not %v", err, tc.kind)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line == 0 || pe.Col == 0 {
				t.Errorf("Parse error %q has no line and column", err)
			}
		})
	}
}

func TestParseHint(t *testing.T) {
	t.Parallel()
	_, err := Parse([]byte("TABLE A (k KEY, v);\nTXN t(x) { SELECT v AS y FROM A WHERE v = x; }"))
	if err == nil || !strings.Contains(err.Error(), "(hint: ") {
		t.Fatalf("Parse error = %v, want a hint", err)
	}
}

func TestParseExamples(t *testing.T) {
	t.Parallel()
	for _, path := range exampleFiles(t) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(src); err != nil {
			t.Errorf("Parse(%s) = %v", path, err)
		}
	}
}

// FuzzParse checks that the parser never panics and that accepted programs
// encode.
func FuzzParse(f *testing.F) {
	f.Add([]byte("TABLE A (k KEY, v);\nTXN t(x) { SELECT v AS y FROM A WHERE k = x; IF y > 1 { UPDATE A SET v = y - 1 WHERE k = x; } }"))
	f.Add([]byte("TABLE A (k KEY, v);\nTXN t(x) { SELECT * AS s FROM A WHERE k > x; FOREACH r IN s { DELETE FROM A WHERE k = r.k; } }"))
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := Parse(src)
		if err != nil {
			return
		}
		if _, err := Encode(p, EncodeOptions{}); err != nil {
			t.Fatalf("Encode after successful Parse: %v", err)
		}
	})
}
