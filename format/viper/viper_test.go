package viper

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/parse"
)

// decode reads files (name, content pairs, in order) as one Viper directory.
func decode(t testing.TB, files ...string) (*history.History, error) {
	t.Helper()
	d := NewDecoder()
	b := history.NewBuilder()
	for i := 0; i < len(files); i += 2 {
		if err := d.Decode(strings.NewReader(files[i+1]), files[i], b); err != nil {
			return nil, err
		}
	}
	if err := d.Finish(b); err != nil {
		return nil, err
	}
	return b.Build()
}

// render prints h one transaction per line: session, name, outcome and ops (failed ops
// marked !).
func render(h *history.History) string {
	var b strings.Builder
	for i := range h.Txns {
		t := &h.Txns[i]
		fmt.Fprintf(&b, "s%v %s %s:", h.Sessions[t.Session].Source, h.Name(history.TxnID(i)), t.Outcome)
		for _, o := range t.Ops {
			fail := ""
			if o.Failed() {
				fail = "!"
			}
			fmt.Fprintf(&b, " %s%s(%v,%v)", fail, o.Kind, h.Key(o.Key), h.Value(o.Value))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestDecode(t *testing.T) {
	h, err := decode(t,
		"dir/J24.log", `{"value": [["w", 1, 1, true], ["w", 2, "a", false]], "isInitial": false}`+"\n\n"+
			`{"value": [["r", 1, 1, false], ["r", 3, null, true]], "extra": 7}`+"\n",
		"dir/J25.log", `{"value": [["i", 4, 9, null, false, true, true, "i"], ["d", 1, -1, 1, false, true]]}`+"\r\n"+
			`  {"value": [["d", 2, -2, "a", false, false], ["r", 1, 1]]}`,
		"dir/J26.log", "",
	)
	if err != nil {
		t.Fatal(err)
	}
	want := `s24 J24:1 committed: write(1,1) !write(2,a)
s24 J24:3 committed: read(1,1) read(3,nil)
s25 J25:1 committed: read(4,nil) write(4,9) read(1,1) write(1,-1)
s25 J25:2 committed: !read(2,a) !write(2,-2) read(1,1)
`
	if diff := cmp.Diff(want, render(h)); diff != "" {
		t.Errorf("decoded history (-want +got):\n%s", diff)
	}
	if len(h.Sessions) != 3 {
		t.Errorf("%d sessions, want 3 (J26.log is an empty client)", len(h.Sessions))
	}
	if h.Initial != history.Nil {
		t.Errorf("initial value %v, want nil", h.Value(h.Initial))
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tt := range []struct {
		in        string
		line, col int
		want      string
	}{
		{`{"value": [["w", 1, 1, true]]` + "\n", 1, 0, "expected one JSON object per line"},
		{"\n" + `{"value": [["w", 1, 1, true]]} x`, 2, 0, "expected one JSON object per line"},
		{`{"values": []}`, 1, 1, `expected a "value" field`},
		{`{"value": 3}`, 1, 0, `found a JSON number where "value" should be`},
		{`{"value": [["w", 1, 1, true], ["x", 1, 1]]}`, 1, 31, `operation 2: expected the operation "r", "w", "i" or "d", found "x"`},
		{`{"value": [["range", 1, 5, [{"id": 1, "val": 2}], [], false]]}`, 1, 12, "does not read Viper's range queries"},
		{`{"value": [["w", 1.5, 1, true]]}`, 1, 12, "expected the key as an integer in the 64-bit range or a string, found 1.5"},
		{`{"value": [["w", null, 1, true]]}`, 1, 12, "expected the key as an integer or a string, found null"},
		{`{"value": [["w", 1, null, true]]}`, 1, 12, "expected the value as an integer or a string, found null"},
		{`{"value": [["w", 1, 2, "yes"]]}`, 1, 12, `expected succ (true or false) as element 4, found "yes"`},
		{`{"value": [["r", 1, 2, true, 5]]}`, 1, 12, "3 or 4 elements), found 5"},
		{`{"value": [["i", 1, 2]]}`, 1, 12, `expected ["i", key, value, readValue, isDead, succ, …], found 3 elements`},
		{`{"value": [["d", 1, 2, null, 1]]}`, 1, 12, "expected isDead (true or false) as element 5, found 1"},
		{`{"value": [[]]}`, 1, 12, "found []"},
		{`{"value": [7]}`, 1, 12, "expected an array"},
		{`{"value": [["w", 99999999999999999999, 1, true]]}`, 1, 12, "64-bit range"},
	} {
		_, err := decode(t, "J3.log", tt.in)
		var pe *parse.Error
		if !errors.As(err, &pe) {
			t.Errorf("%s: error %v, want a located parse error", tt.in, err)
			continue
		}
		if pe.File != "J3.log" || pe.Line != tt.line || (tt.col > 0 && pe.Col != tt.col) || pe.Format != Name || !strings.Contains(pe.Error(), tt.want) {
			t.Errorf("%s:\n got %v (line %d col %d)\nwant J3.log:%d:%d ... %s", tt.in, err, pe.Line, pe.Col, tt.line, tt.col, tt.want)
		}
	}
}

// TestDecodeInitial checks that the isInitial transaction becomes the initial state (no
// transaction, no session order), as Viper takes it, and that anything Viper would not take
// as the initial state is an error.
func TestDecodeInitial(t *testing.T) {
	h, err := decode(t,
		"dir/J0.log", `{"value": [["w", 1, 0, true], ["w", "k", "a"]], "isInitial": true}`+"\n",
		"dir/J24.log", `{"value": [["r", 1, 0, false], ["w", 1, 5, true]]}`+"\n"+`{"value": [["r", "k", "a"], ["r", 3, null]]}`+"\n",
	)
	if err != nil {
		t.Fatal(err)
	}
	want := `s24 J24:1 committed: read(1,0) write(1,5)
s24 J24:2 committed: read(k,a) read(3,nil)
`
	if diff := cmp.Diff(want, render(h)); diff != "" {
		t.Errorf("decoded history (-want +got):\n%s", diff)
	}
	for k, v := range map[history.Datum]history.Datum{history.Int(1): history.Int(0), history.Str("k"): history.Str("a"), history.Int(3): history.NilDatum} {
		if got := h.Value(h.InitialValue(keyOf(t, h, k))); got != v {
			t.Errorf("initial value of %v = %v, want %v", k, got, v)
		}
	}

	for _, tt := range []struct {
		name  string
		files []string
		want  string
	}{
		{"not alone", []string{"J0.log", `{"value": [["w", 1, 0]], "isInitial": true}` + "\n" + `{"value": [["r", 1, 0]]}`}, "J0.log:2:1 (byte 44): viper: expected no transaction after the isInitial one (line 1)"},
		{"after others", []string{"J0.log", `{"value": [["r", 1, 0]]}` + "\n" + `{"value": [["w", 1, 0]], "isInitial": true}`}, "J0.log:2:1 (byte 25): viper: expected the isInitial transaction alone in its file, found it after 1 others"},
		{"a read", []string{"J0.log", `{"value": [["w", 1, 0], ["r", 2, 0]], "isInitial": true}`}, `operation 2 of the isInitial transaction: expected a write (the initial state is a set of writes), found "r"`},
		{"failed", []string{"J0.log", `{"value": [["w", 1, 0, false]], "isInitial": true}`}, "operation 1 of the isInitial transaction: expected a write that succeeded"},
		{"key twice", []string{"J0.log", `{"value": [["w", 1, 0], ["w", 1, 2]], "isInitial": true}`}, "operation 2 of the isInitial transaction: expected each key once, found 1 again"},
		{"two", []string{"J0.log", `{"value": [["w", 1, 0]], "isInitial": true}`, "J1.log", `{"value": [["w", 2, 0]], "isInitial": true}`}, "J1.log:1:1: viper: expected one isInitial transaction in the history, found a second one (the first is in J0.log)"},
	} {
		_, err := decode(t, tt.files...)
		var pe *parse.Error
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want a located parse error containing %q", tt.name, err, tt.want)
		}
	}
}

func keyOf(t *testing.T, h *history.History, d history.Datum) history.Key {
	t.Helper()
	for i, k := range h.Keys {
		if k == d {
			return history.Key(i)
		}
	}
	t.Fatalf("no key %v", d)
	return 0
}

// TestDecodeLongLine reads a transaction longer than the reader's buffer.
func TestDecodeLongLine(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"value": [`)
	const n = 20000
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `["w", %d, %d, true]`, i, i)
	}
	b.WriteString("]}\n")
	h, err := decode(t, "J1.log", b.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Txns) != 1 || len(h.Txns[0].Ops) != n {
		t.Fatalf("%d transactions, want 1 of %d ops", len(h.Txns), n)
	}
}

func TestSniff(t *testing.T) {
	for _, tt := range []struct {
		name, head string
		want       bool
	}{
		{"J24.log", `{"value": [["w", 1, 1, true]]}`, true},
		{"J24.log", "", true},
		{"J7.log", ` {"isInitial": true, "value": []}`, true},
		{"T24.log", `{"value": []}`, false},
		{"J24.log", `{"index": 0, "type": "ok"}`, false},
		{"J24.log", "S\x00\x00", false},
		{"J24.txt", `{"value": []}`, false},
	} {
		if got := Sniff(tt.name, []byte(tt.head)); got != tt.want {
			t.Errorf("Sniff(%q, %q) = %v, want %v", tt.name, tt.head, got, tt.want)
		}
	}
}

// FuzzDecode checks that no input panics, that every error is a located *parse.Error
// inside the input, and that accepted input builds a valid history.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"value": [["w", 1, 1, true], ["r", 2, null, false]]}` + "\n" + `{"value": [["i", 3, 1, null, false, true]]}`))
	f.Add([]byte(`{"value": [["d", "k", "dead", "v", false, false]], "isInitial": true}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := decode(t, "J1.log", string(data[:len(data)/2]), "J2.log", string(data[len(data)/2:]))
		if err == nil {
			if h == nil {
				t.Fatal("no history and no error")
			}
			return
		}
		var pe *parse.Error
		if !errors.As(err, &pe) {
			t.Fatalf("error %v is a %T, not a *parse.Error", err, err)
		}
		if pe.Format != Name || pe.Line < 1 || pe.Offset < 0 || pe.Offset > int64(len(data)) {
			t.Fatalf("error %v is not located in the input (line %d, offset %d of %d)", err, pe.Line, pe.Offset, len(data))
		}
	})
}
