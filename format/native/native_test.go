package native_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/parse"
)

func read(t testing.TB, in string) (*history.History, error) {
	t.Helper()
	b := history.NewBuilder()
	if err := native.NewDecoder().Decode(strings.NewReader(in), "h.jsonl", b); err != nil {
		return nil, err
	}
	return b.Build()
}

func write(t testing.TB, h *history.History) string {
	t.Helper()
	var buf bytes.Buffer
	if err := native.Write(&buf, h); err != nil {
		t.Fatalf("Write() = %v", err)
	}
	return buf.String()
}

// rich builds a history using every part of the model.
func rich(t testing.TB) *history.History {
	t.Helper()
	b := history.NewBuilder()
	b.SetInitial(b.IntValue(0))
	kx, ky, kz := b.StrKey("x"), b.IntKey(-7), b.StrKey("a \"quoted\"\nkey ü")
	b.SetInitialKey(kz, b.StrValue("z0"))
	empty := b.Session(history.Str("idle")) // a session with no transactions
	_ = empty
	s1 := b.Session(history.Int(1))
	s1b := b.NewSession(history.Int(1)) // same source id, another session
	s2 := b.Session(history.NilDatum)

	t0 := b.BeginTxn(s1, history.Int(100), history.OutcomeCommitted)
	w := b.Write(kx, b.IntValue(1))
	b.Append(ky, b.IntValue(2))
	b.Insert(kz, b.StrValue("v"))
	b.Current().Time, b.Current().HasTime = history.Interval{Begin: 1, End: 5}, true
	cur := b.Current()
	cur.Start, cur.Commit, cur.HasTimestamps = history.Timestamp{Physical: 3, Logical: 1}, history.Timestamp{Physical: 4}, true

	b.BeginTxn(s1b, history.Str("T-2"), history.OutcomeUnknown)
	b.ReadFrom(kx, b.IntValue(1), history.Src{Kind: history.SrcTxn, Txn: t0, Op: w})
	b.ReadFrom(kx, history.Nil, history.Src{Kind: history.SrcNone})
	b.ReadFrom(kz, b.StrValue("z0"), history.Src{Kind: history.SrcInit})
	i := b.ReadList(ky, []history.Value{b.IntValue(2), b.IntValue(-9)})
	b.SetOpTime(i, history.Interval{Begin: 6, End: 7})
	b.ReadList(ky, nil)
	d := b.Delete(kz)
	b.SetOpFlags(d, history.OpFailed)

	b.BeginTxn(s2, history.NilDatum, history.OutcomeAborted)
	b.PredRead(history.PredOp{
		Pred: history.Predicate{Relation: "t", Expr: "v = 2", Field: history.Str("v"), Lo: 2, Hi: 2, IsRange: true},
		Rows: []history.Row{{Key: kx, Value: b.IntValue(2), Match: true}, {Key: ky, Value: history.Nil, Match: true}},
		Srcs: []history.Src{{}, {Kind: history.SrcInit}},
	})
	b.PredWrite(history.PredOp{
		Pred: history.Predicate{Expr: "k in [1,3]"},
		Rows: []history.Row{{Key: kx, Value: b.IntValue(3), Match: false}},
		Srcs: []history.Src{{Kind: history.SrcTxn, Txn: t0, Op: w}},
	})
	b.PredRead(history.PredOp{})
	b.BeginTxn(s1, history.Int(101), history.OutcomeCommitted) // no ops
	h, err := b.Build()
	if err != nil {
		t.Fatalf("Build() = %v", err)
	}
	return h
}

func TestWriteReadIsIdentity(t *testing.T) {
	t.Parallel()
	h := rich(t)
	out := write(t, h)
	h2, err := read(t, out)
	if err != nil {
		t.Fatalf("read(Write(h)) = %v\n%s", err, out)
	}
	if diff := cmp.Diff(dump(h), dump(h2)); diff != "" {
		t.Errorf("read(Write(h)) differs (-want +got):\n%s\n%s", diff, out)
	}
	if out2 := write(t, h2); out2 != out {
		t.Errorf("Write is not stable:\n%s\n%s", out, out2)
	}
}

func TestWriteGolden(t *testing.T) {
	t.Parallel()
	// Key -7 is a list: it starts empty whatever "initial" says, and the writer says so.
	want := `{"isovet":1,"initial":0,"initial_keys":[[-7,null],["a \"quoted\"\nkey ü","z0"]],"sessions":["idle",1,1,null]}
{"s":1,"id":100,"t":[1,5],"sts":[3,1],"cts":[4,0],"ops":[["w","x",1],["a",-7,2],["i","a \"quoted\"\nkey ü","v"]]}
{"s":1,"si":2,"id":"T-2","o":"u","ops":[["r","x",1,{"src":[0,0],"t":[0,0]}],["r","x",null,{"src":"none","t":[0,0]}],["r","a \"quoted\"\nkey ü","z0",{"src":"init","t":[0,0]}],["r",-7,[2,-9],{"t":[6,7]}],["r",-7,[],{"t":[0,0]}],["d","a \"quoted\"\nkey ü",{"failed":true,"t":[0,0]}]]}
{"s":null,"o":"a","ops":[["pr",{"rel":"t","expr":"v = 2","range":["v",2,2]},[["x",2],[-7,null,{"src":"init"}]]],["pw",{"expr":"k in [1,3]"},[["x",3,{"match":false,"src":[0,0]}]]],["pr",{},[]]]}
{"s":1,"id":101,"ops":[]}
`
	if got := write(t, rich(t)); got != want {
		t.Errorf("Write() =\n%s\nwant\n%s", got, want)
	}
}

func TestDecodeAcceptsAnyKeyOrderAndSpacing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"canonical", `{"s":1,"ops":[["w",1,2]]}`, `{"s":1,"ops":[["w",1,2]]}`},
		{"ops first", `{"ops":[["w",1,2]],"o":"c","s":1}`, `{"s":1,"ops":[["w",1,2]]}`},
		{"spaces and crlf", " { \"s\" : 1 , \"ops\" : [ [ \"w\" , 1 , 2 ] ] } \r\n\n\n", `{"s":1,"ops":[["w",1,2]]}`},
		{"no session", `{"ops":[]}`, `{"s":null,"ops":[]}`},
		{"escapes", `{"s":"\u00fc\ud83d\ude00\/","ops":[["w","\t",""]]}`, `{"s":"ü😀/","ops":[["w","\t",""]]}`},
		{"extremes", `{"s":-9223372036854775808,"ops":[["w",9223372036854775807,0]]}`, `{"s":-9223372036854775808,"ops":[["w",9223372036854775807,0]]}`},
		{"empty options", `{"s":1,"ops":[["w",1,2,{}]]}`, `{"s":1,"ops":[["w",1,2]]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := read(t, tt.in)
			if err != nil {
				t.Fatalf("read(%q) = %v", tt.in, err)
			}
			got := write(t, h)
			got = got[strings.IndexByte(got, '\n')+1:]
			if got != tt.want+"\n" {
				t.Errorf("read(%q) wrote %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestDecodeErrorsNameLineColumnAndExpectation(t *testing.T) {
	t.Parallel()
	ok := `{"s":1,"ops":[["w",1,2]]}` + "\n"
	tests := []struct {
		name, in, want string
	}{
		{"not an object", ok + `[1]`, `h.jsonl:2:1 (byte 26): native: expected '{' starting a transaction or header object, found an array`},
		{"unknown key", `{"s":1,"op":[]}`, `h.jsonl:1:8 (byte 7): native: unknown key "op" in a transaction (expected "s", "si", "id", "o", "t", "sts", "cts", "snap" or "ops")`},
		{"bad snapshot", `{"s":1,"snap":"5:3:","ops":[]}`, `h.jsonl:1:15 (byte 14): native: snapshot "5:3:": xmax 3 is below xmin 5`},
		{"snapshot not a string", `{"s":1,"snap":[5,3],"ops":[]}`, `h.jsonl:1:15 (byte 14): native: expected database snapshot "snap" ("xmin:xmax:xip,..."), found an array`},
		{"missing ops", `{"s":1}`, `h.jsonl:1:1: native: expected an "ops" array in the transaction object`},
		{"bad kind", `{"ops":[["x",1,2]]}`, `h.jsonl:1:10 (byte 9): native: expected an operation kind ("r", "w", "a", "i", "d", "pr" or "pw"), found "x"`},
		{"float value", `{"ops":[["w",1,2.5]]}`, `h.jsonl:1:16 (byte 15): native: expected a value (an integer), found a fraction or exponent`},
		{"null key", `{"ops":[["w",null,2]]}`, `h.jsonl:1:14 (byte 13): native: expected a key (an integer or a string), found null`},
		{"overflow", `{"ops":[["w",1,9223372036854775808]]}`, `h.jsonl:1:16 (byte 15): native: a value is out of the 64-bit integer range`},
		{"truncated", `{"ops":[["w",1,2]`, `h.jsonl:1:18 (byte 17): native: expected ',' or ']' in the ops array, found end of line`},
		{"trailing", `{"ops":[]} x`, `h.jsonl:1:12 (byte 11): native: expected end of line after the object, found 'x'`},
		{"bad outcome", `{"o":"ok","ops":[]}`, `h.jsonl:1:6 (byte 5): native: expected outcome "c", "a" or "u", found "ok"`},
		{"sts without cts", `{"sts":[1,2],"ops":[]}`, `h.jsonl:1:8 (byte 7): native: expected both "sts" and "cts" or neither`},
		{"bad pair", `{"t":[1],"ops":[]}`, `h.jsonl:1:8 (byte 7): native: expected ',' and a second element of client interval "t", found ']'`},
		{"late header", ok + `{"isovet":1}`, `h.jsonl:2:1 (byte 26): native: a header line (starting with "isovet") must be the first line of the stream`},
		{"version", `{"isovet":2}`, `h.jsonl:1:11 (byte 10): native: unsupported native format version 2 (this reader knows version 1)`},
		{"si without header", `{"s":1,"si":0,"ops":[]}`, `h.jsonl:1:13 (byte 12): native: session index 0 names no session: the header declares 0`},
		{"bad src", `{"ops":[["r",1,2,{"src":"me"}]]}`, `h.jsonl:1:25 (byte 24): native: expected read source "src" ("init", "none" or [txn, op]), found "me"`},
		{"control char", "{\"s\":\"a\x01\",\"ops\":[]}", `h.jsonl:1:8 (byte 7): native: control character 0x01 in string (escape it)`},
		{"bad utf8", "{\"s\":\"\xff\",\"ops\":[]}", `h.jsonl:1:6 (byte 5): native: invalid UTF-8 in string`},
		{"duplicate ops", `{"ops":[],"ops":[]}`, `h.jsonl:1:11 (byte 10): native: duplicate key "ops"`},
		{"unpaired surrogate", `{"s":"\ud800","ops":[]}`, `h.jsonl:1:7 (byte 6): native: unpaired surrogate \ud800 in string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := read(t, tt.in)
			var pe *parse.Error
			if !errors.As(err, &pe) {
				t.Fatalf("read(%q) = %v, want a *parse.Error", tt.in, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("read(%q) error\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestDecodeLineLeavesBuilderUntouchedOnError(t *testing.T) {
	t.Parallel()
	b := history.NewBuilder()
	d := native.NewDecoder()
	if err := d.DecodeLine([]byte(`{"s":1,"ops":[["w",1,2]]}`), b); err != nil {
		t.Fatal(err)
	}
	if err := d.DecodeLine([]byte(`{"s":2,"ops":[["w",1,3],["w",2]]}`), b); err == nil {
		t.Fatal("DecodeLine(bad) = nil")
	} else if want := "<input>:2:31 (byte 55): native: expected ',' and a value, found ']'"; err.Error() != want {
		t.Errorf("DecodeLine(bad) = %v, want %s", err, want)
	}
	if err := native.DecodeLine([]byte(`{"s":2,"ops":[["r",1,2]]}`), b); err != nil {
		t.Fatal(err)
	}
	h, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Txns) != 2 || len(h.Sessions) != 2 || h.Values.Len() != 2 {
		t.Errorf("after a bad line: %d txns, %d sessions, %d values; want 2, 2, 2", len(h.Txns), len(h.Sessions), h.Values.Len())
	}
}

func TestEncodeTxnMatchesEncode(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	e := native.NewEncoder(&buf)
	if err := e.EncodeHeader(native.Header{Initial: history.Int(0)}); err != nil {
		t.Fatal(err)
	}
	tx := native.Txn{
		Session: history.Int(3), ID: history.Str("t1"), Outcome: history.OutcomeCommitted,
		Time: history.Interval{Begin: 10, End: 20}, HasTime: true,
		Ops: []native.Op{
			{Kind: history.OpRead, Key: history.Str("k"), Value: history.NilDatum},
			{Kind: history.OpAppend, Key: history.Int(1), Value: history.Int(4), Failed: true},
			{Kind: history.OpListRead, Key: history.Int(1), List: []history.Datum{history.Int(4)}, Time: history.Interval{Begin: 11, End: 12}, HasTime: true},
			{Kind: history.OpPredRead, Pred: &native.Pred{Pred: history.Predicate{Expr: "true"}, Rows: []native.Row{{Key: history.Int(2), Value: history.Int(4), Match: true}}}},
		},
	}
	if err := e.EncodeTxn(&tx); err != nil {
		t.Fatal(err)
	}
	want := `{"isovet":1,"initial":0}
{"s":3,"id":"t1","t":[10,20],"ops":[["r","k",null],["a",1,4,{"failed":true}],["r",1,[4],{"t":[11,12]}],["pr",{"expr":"true"},[[2,4]]]]}
`
	if got := buf.String(); got != want {
		t.Fatalf("EncodeTxn wrote\n%s\nwant\n%s", got, want)
	}
	h, err := read(t, want)
	if err != nil {
		t.Fatal(err)
	}
	// Once one op of a transaction has a time, every op has one (zero if not recorded).
	want2 := `{"s":3,"id":"t1","t":[10,20],"ops":[["r","k",null,{"t":[0,0]}],["a",1,4,{"failed":true,"t":[0,0]}],["r",1,[4],{"t":[11,12]}],["pr",{"expr":"true"},[[2,4]],{"t":[0,0]}]]}`
	if got := write(t, h); !strings.HasSuffix(got, want2+"\n") {
		t.Errorf("re-encoding wrote\n%s\nwant suffix\n%s", got, want2)
	}
	if err := e.EncodeTxn(&native.Txn{Ops: []native.Op{{Kind: history.OpWrite}}}); !errors.Is(err, native.ErrUnrepresentable) {
		t.Errorf("EncodeTxn(nil key) = %v, want ErrUnrepresentable", err)
	}
}

func TestSniff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		head string
		want bool
	}{
		{`{"isovet":1}`, true},
		{"\n {\"s\":1,\"ops\":[]}", true},
		{`{"ops":[]}`, true},
		{`[{"sts":{"p":1,"l":0}}]`, false},
		{`{"type":"ok","f":"txn","value":[]}`, false},
		{`{:type :ok}`, false},
		{`w(1,2,3,4)`, false},
		{`{"s"}`, false},
	}
	for _, tt := range tests {
		if got := native.Sniff("h.jsonl", []byte(tt.head)); got != tt.want {
			t.Errorf("Sniff(%q) = %v, want %v", tt.head, got, tt.want)
		}
	}
}

// FuzzRead checks that reading never panics and that whatever reads also survives a
// write/read round trip unchanged.
func FuzzRead(f *testing.F) {
	f.Add([]byte(write(f, rich(f))))
	f.Add([]byte(`{"s":1,"ops":[["w",1,2],["r",1,[1,2]]]}`))
	f.Add([]byte("{\"isovet\":1,\"sessions\":[1,1]}\n{\"si\":1,\"ops\":[[\"d\",\"x\",{\"failed\":true}]]}"))
	f.Add([]byte(`{"ops":[["pw",{"range":[1,2,3]},[[1,2,{"match":true,"src":[0,0]}]]]]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		h, err := read(t, string(in))
		if err != nil {
			return
		}
		out := write(t, h)
		h2, err := read(t, out)
		if err != nil {
			t.Fatalf("re-reading %q (written from %q): %v", out, in, err)
		}
		if diff := cmp.Diff(dump(h), dump(h2)); diff != "" {
			t.Fatalf("round trip of %q differs (-want +got):\n%s", in, diff)
		}
	})
}

// TestSnapshotsGiveTimestamps: a history with PostgreSQL snapshots and ids reads with
// timestamps derived from them, and writes back its snapshots, not the derived timestamps.
func TestSnapshotsGiveTimestamps(t *testing.T) {
	t.Parallel()
	in := `{"isovet":1}
{"s":"load","id":700,"snap":"700:700:","ops":[["w","x",0]]}
{"s":1,"id":702,"snap":"701:701:","ops":[["r","x",0],["w","x",1]]}
{"s":2,"snap":"701:703:701,702","ops":[["r","x",0]]}
{"s":3,"id":701,"o":"a","snap":"701:701:","ops":[["w","y",5]]}
{"s":2,"snap":"703:703:","ops":[["r","x",1]]}
`
	h, err := read(t, in)
	if err != nil {
		t.Fatal(err)
	}
	if h.SnapshotErr != nil {
		t.Fatalf("SnapshotErr = %v", h.SnapshotErr)
	}
	// The load's snapshot and commit; the snapshots that see the load only (702's, the
	// first reader's, the aborted 701's); 702's commit; the snapshot that sees it.
	want := [][2]int64{{1, 2}, {3, 6}, {4, 4}, {5, 5}, {7, 7}}
	for i, w := range want {
		x := &h.Txns[i]
		if !x.HasTimestamps || x.Start.Physical != w[0] || x.Commit.Physical != w[1] {
			t.Errorf("txn %d: timestamps %v..%v (%v), want %d..%d", i, x.Start, x.Commit, x.HasTimestamps, w[0], w[1])
		}
	}
	out := write(t, h)
	if strings.Contains(out, `"sts"`) || strings.Count(out, `"snap":`) != 5 {
		t.Fatalf("written:\n%s\nwant five snapshots and no timestamps", out)
	}
	h2, err := read(t, out)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := dump(h), dump(h2); a != b {
		t.Fatalf("round trip differs:\n%s", cmp.Diff(a, b))
	}
	// For a receiver that reads line by line: the timestamps, not the snapshots.
	var buf strings.Builder
	enc := native.NewEncoder(&buf)
	enc.DerivedTimestamps = true
	for tid := range h.All() {
		if err := enc.Encode(h, tid); err != nil {
			t.Fatal(err)
		}
	}
	if got := buf.String(); strings.Contains(got, `"snap"`) || !strings.Contains(got, `"sts":[3,0],"cts":[6,0]`) {
		t.Fatalf("with DerivedTimestamps:\n%s\nwant timestamps and no snapshots", got)
	}
}
