package coo

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Kind is the kind of a script statement. The zero value is invalid.
type Kind uint8

// Statement kinds: the SQL the Coo scripts use, and nothing else.
const (
	KindInvalid     Kind = iota
	KindBegin            // BEGIN | START TRANSACTION
	KindCommit           // COMMIT
	KindRollback         // ROLLBACK
	KindDropTable        // DROP TABLE [IF EXISTS] t
	KindCreateTable      // CREATE TABLE t (k INT PRIMARY KEY, v INT)
	KindInsert           // INSERT INTO t VALUES (Key, Value)
	KindSelectKey        // SELECT * FROM t WHERE k = Key
	KindSelectRange      // SELECT * FROM t WHERE v >= Lo AND v <= Hi
	KindSelectAll        // SELECT * FROM t [ORDER BY k]
	KindUpdate           // UPDATE t SET v = Value WHERE k = Key
)

var kindNames = [...]string{"invalid", "begin", "commit", "rollback", "drop-table", "create-table", "insert", "select-key", "select-range", "select-all", "update"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

// Stmt is one statement of a script.
type Stmt struct {
	Line, Col     int // where the statement's text starts (1-based; Col counts bytes)
	Step, Session int // the N-M- prefix
	Kind          Kind
	Table         string // the table the statement names (lower case); "" for control statements
	Key, Value    int64  // insert, select-key, update
	Lo, Hi        int64  // select-range
	Text          string // the SQL as written, without the prefix and the semicolon
}

func (s *Stmt) String() string { return fmt.Sprintf("%d-%d-%s", s.Step, s.Session, s.Text) }

// Script is one parsed scenario.
type Script struct {
	Name  string // the file name without .txt, e.g. "wat_sda_lost_update_c1"
	Path  string // as given to [Parse]
	Table string // the table the setup creates (lower case)
	// Setup holds the leading step-0 statements: DROP, CREATE, INSERTs and COMMIT. They run
	// in a loader session of their own.
	Setup []Stmt
	// Steps holds the remaining statements in file order, which is the order they are issued
	// in. Step numbers are labels: one public script numbers two lines out of order (see
	// Warnings), and file order is the order its author meant.
	Steps []Stmt
	// Warnings lists oddities that did not stop parsing (steps out of order).
	Warnings []string
}

// Sessions returns the session numbers the steps use, in increasing order.
func (s *Script) Sessions() []int {
	var out []int
	for _, st := range s.Steps {
		if !slices.Contains(out, st.Session) {
			out = append(out, st.Session)
		}
	}
	slices.Sort(out)
	return out
}

// ParseError is a script that cannot be replayed, with where.
type ParseError struct {
	File      string
	Line, Col int // 1-based; Col 0 when the whole line is at fault
	Err       error
}

func (e *ParseError) Error() string {
	if e.Col > 0 {
		return fmt.Sprintf("%s:%d:%d: %v", e.File, e.Line, e.Col, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// ErrSyntax is wrapped by every [ParseError] about the script's text.
var ErrSyntax = errors.New("coo: syntax error")

// maxLine bounds one line of a script; the real ones are under 60 bytes.
const maxLine = 1 << 16

// Parse reads one step-session-SQL script. name is used in errors and, without its
// directory and .txt, as the script's name. Every line is `STEP-SESSION-SQL;` (CRLF line
// ends, blank lines, trailing blanks and repeated semicolons are accepted; several
// statements may share a line, each after its own STEP-SESSION- prefix or inheriting the
// line's). Anything else is a [*ParseError] naming the file, line and column.
func Parse(name string, r io.Reader) (*Script, error) {
	s := &Script{Name: strings.TrimSuffix(filepath.Base(name), ".txt"), Path: name}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	var all []Stmt
	line := 0
	for sc.Scan() {
		line++
		stmts, err := parseLine(name, line, sc.Bytes())
		if err != nil {
			return nil, err
		}
		all = append(all, stmts...)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &ParseError{File: name, Line: line + 1, Err: fmt.Errorf("%w: line longer than %d bytes", ErrSyntax, maxLine)}
		}
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if err := s.split(all); err != nil {
		return nil, err
	}
	return s, nil
}

// ParseFile parses the script at path.
func ParseFile(path string) (*Script, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(path, f)
}

// LoadDir parses every *.txt script under dir (the coo_origin layout has rat/, wat/ and iat/
// subdirectories), sorted by name. Two scripts with the same name are an error.
func LoadDir(dir string) ([]*Script, error) {
	var out []*Script
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".txt") {
			return nil
		}
		s, err := ParseFile(p)
		if err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no *.txt scripts under %s", dir)
	}
	slices.SortFunc(out, func(a, b *Script) int { return strings.Compare(a.Name, b.Name) })
	for i := 1; i < len(out); i++ {
		if out[i].Name == out[i-1].Name {
			return nil, fmt.Errorf("two scripts named %s: %s and %s", out[i].Name, out[i-1].Path, out[i].Path)
		}
	}
	return out, nil
}

// split checks the statements and divides them into the setup and the steps.
func (s *Script) split(all []Stmt) error {
	if len(all) == 0 {
		return &ParseError{File: s.Path, Line: 1, Err: fmt.Errorf("%w: no statements", ErrSyntax)}
	}
	n, err := s.setupLen(all)
	if err != nil {
		return err
	}
	s.Setup = all[:n:n]
	s.Steps = all[n:]
	if s.Table == "" {
		return s.errAt(&all[0], "the script does not begin with a step-0 setup that creates its table")
	}
	for j := range all {
		st := &all[j]
		if st.Table != "" && st.Table != s.Table {
			return s.errAt(st, "table %s is not the table %s the setup creates", st.Table, s.Table)
		}
	}
	if len(s.Steps) == 0 {
		return &ParseError{File: s.Path, Line: all[len(all)-1].Line, Err: fmt.Errorf("%w: the script has a setup but no steps", ErrSyntax)}
	}
	if err := s.checkSetupOrder(); err != nil {
		return err
	}
	return s.checkSteps()
}

// errAt is a syntax error at st.
func (s *Script) errAt(st *Stmt, format string, args ...any) error {
	return &ParseError{File: s.Path, Line: st.Line, Col: st.Col, Err: fmt.Errorf("%w: "+format, append([]any{ErrSyntax}, args...)...)}
}

// setupLen is the number of step-0 statements that begin all, the setup, which may only
// drop and create the table (once: it sets s.Table), insert and commit.
func (s *Script) setupLen(all []Stmt) (int, error) {
	i := 0
	for ; i < len(all) && all[i].Step == 0; i++ {
		st := &all[i]
		switch st.Kind {
		case KindDropTable:
		case KindCreateTable:
			if s.Table != "" {
				return 0, s.errAt(st, "the setup creates a second table %s", st.Table)
			}
			s.Table = st.Table
		case KindInsert, KindCommit:
		default:
			return 0, s.errAt(st, "%s in the setup (step 0 holds DROP TABLE, CREATE TABLE, INSERT and COMMIT only)", st.Kind)
		}
	}
	return i, nil
}

// checkSetupOrder checks that the setup creates the table before it inserts into it.
func (s *Script) checkSetupOrder() error {
	created := false
	for j := range s.Setup {
		st := &s.Setup[j]
		switch st.Kind {
		case KindCreateTable:
			created = true
		case KindInsert:
			if !created {
				return s.errAt(st, "INSERT before the setup's CREATE TABLE")
			}
		}
	}
	return nil
}

// checkSteps checks the steps: none is step 0 or session 0, none drops or creates a table;
// a step number lower than an earlier one is a warning (statements go in file order).
func (s *Script) checkSteps() error {
	prev := 0
	for j := range s.Steps {
		st := &s.Steps[j]
		switch {
		case st.Step == 0:
			return s.errAt(st, "step 0 after the setup (step 0 is the setup only)")
		case st.Session == 0:
			return s.errAt(st, "session 0 (sessions are numbered from 1)")
		case st.Kind == KindDropTable || st.Kind == KindCreateTable:
			return s.errAt(st, "%s outside the setup", st.Kind)
		case st.Step < prev:
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s:%d: step %d follows step %d; statements are issued in file order", s.Path, st.Line, st.Step, prev))
		}
		prev = max(prev, st.Step)
	}
	return nil
}

// parseLine parses one line into its statements.
func parseLine(file string, line int, b []byte) ([]Stmt, error) {
	b = bytes.TrimSuffix(b, []byte("\r"))
	if line == 1 {
		b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) // a UTF-8 byte-order mark
	}
	lp := &lineParser{file: file, line: line}
	var out []Stmt
	// Statements end at ';'. The grammar has no string literals, so ';' never occurs inside
	// one; a quote is a syntax error of its own.
	start := 0
	for start <= len(b) {
		end := bytes.IndexByte(b[start:], ';')
		last := end < 0
		if last {
			end = len(b)
		} else {
			end += start
		}
		stmt, ok, err := lp.stmt(b[start:end], start+1)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, stmt)
		}
		if last {
			break
		}
		start = end + 1
	}
	if len(out) == 0 && len(bytes.Trim(b, " \t")) > 0 {
		return nil, lp.errAt(1, "a line with no statement: %s", quote(b))
	}
	return out, nil
}

// lineParser parses the statements of one line; a STEP-SESSION- prefix holds for the
// statements after it.
type lineParser struct {
	file       string
	line       int
	step, sess int
	havePrefix bool
}

// errAt is a syntax error at column col of the line.
func (lp *lineParser) errAt(col int, format string, args ...any) error {
	return &ParseError{File: lp.file, Line: lp.line, Col: col, Err: fmt.Errorf("%w: "+format, append([]any{ErrSyntax}, args...)...)}
}

// stmt parses piece, the text between two ';' that begins at column col: ok is false if it
// is blank.
func (lp *lineParser) stmt(piece []byte, col int) (Stmt, bool, error) {
	// Skip leading blanks.
	for len(piece) > 0 && (piece[0] == ' ' || piece[0] == '\t') {
		piece, col = piece[1:], col+1
	}
	if len(bytes.TrimRight(piece, " \t")) == 0 {
		return Stmt{}, false, nil
	}
	if st, se, n, ok := prefix(piece); ok {
		lp.step, lp.sess, lp.havePrefix = st, se, true
		piece, col = piece[n:], col+n
	} else if !lp.havePrefix {
		return Stmt{}, false, lp.errAt(col, "want a STEP-SESSION- prefix such as 2-1-, found %s", quote(piece))
	}
	stmt, err := parseSQL(piece)
	if err != nil {
		var se *sqlError
		if errors.As(err, &se) {
			return Stmt{}, false, lp.errAt(col+se.off, "%s", se.msg)
		}
		return Stmt{}, false, lp.errAt(col, "%v", err)
	}
	stmt.Line, stmt.Col, stmt.Step, stmt.Session = lp.line, col, lp.step, lp.sess
	stmt.Text = strings.TrimRight(string(piece), " \t")
	return stmt, true, nil
}

// prefix parses "STEP-SESSION-" at the start of b.
func prefix(b []byte) (step, sess, n int, ok bool) {
	step, i, ok := numberDash(b, 0)
	if !ok {
		return 0, 0, 0, false
	}
	sess, i, ok = numberDash(b, i)
	if !ok {
		return 0, 0, 0, false
	}
	return step, sess, i, true
}

// numberDash parses a number of at most nine digits and the '-' after it at b[i:], and
// returns the number and the index after the dash.
func numberDash(b []byte, i int) (int, int, bool) {
	j := i
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	if j == i || j-i > 9 || j >= len(b) || b[j] != '-' {
		return 0, 0, false
	}
	v, _ := strconv.Atoi(string(b[i:j]))
	return v, j + 1, true
}

// quote shortens b for an error message.
func quote(b []byte) string {
	const max = 40
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "..."
	}
	return strconv.Quote(string(b))
}
