package chronos_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/format/chronos"
	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/corpus"
	"github.com/isovet/isovet/internal/cputime"
	"github.com/isovet/isovet/internal/parse"
)

func read(tb testing.TB, r io.Reader) (*history.History, error) {
	tb.Helper()
	b := history.NewBuilder()
	if err := chronos.NewDecoder(nil).Decode(r, "h.json", b); err != nil {
		return nil, err
	}
	return b.Build()
}

// canon renders h in the native format: two histories are the same model exactly when
// their native encodings are equal.
func canon(tb testing.TB, h *history.History) string {
	tb.Helper()
	var buf bytes.Buffer
	if err := native.Write(&buf, h); err != nil {
		tb.Fatalf("native.Write() = %v", err)
	}
	return buf.String()
}

func write(tb testing.TB, h *history.History) string {
	tb.Helper()
	var buf bytes.Buffer
	if err := chronos.Write(&buf, h); err != nil {
		tb.Fatalf("Write() = %v", err)
	}
	return buf.String()
}

func TestReadSharedExamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file                         string
		txns, sessions, ops, keys    int
		reads, writes, appends, list int
	}{
		// Counted by hand with python's json module (see the package report).
		{"format-kv.json", 1000, 50, 15000, 999, 7427, 7573, 0, 0},
		{"format-list.json", 1000, 50, 15000, 983, 0, 0, 7536, 7464},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(corpus.Path(t, "chronos/"+tt.file))
			if err != nil {
				t.Fatal(err)
			}
			h, err := read(t, bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			counts := map[history.OpKind]int{}
			ops := 0
			for _, tx := range h.Txns {
				ops += len(tx.Ops)
				for _, o := range tx.Ops {
					counts[o.Kind]++
				}
				if !tx.HasTimestamps || !tx.Committed() || tx.Commit.Less(tx.Start) {
					t.Fatalf("txn %s: timestamps %v %v..%v, outcome %v", h.Name(tx.ID), tx.HasTimestamps, tx.Start, tx.Commit, tx.Outcome)
				}
			}
			got := []int{len(h.Txns), len(h.Sessions), ops, len(h.Keys), counts[history.OpRead], counts[history.OpWrite], counts[history.OpAppend], counts[history.OpListRead]}
			want := []int{tt.txns, tt.sessions, tt.ops, tt.keys, tt.reads, tt.writes, tt.appends, tt.list}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("counts (txns, sessions, ops, keys, r, w, a, list-r) differ (-want +got):\n%s", diff)
			}
			if h.Initial != history.Nil {
				t.Errorf("Initial = %v, want nil (the format has no initial state)", h.Value(h.Initial))
			}
			// Round trip through our writer, and through a reader fed one byte at a time
			// (every refill path).
			h2, err := read(t, strings.NewReader(write(t, h)))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(canon(t, h), canon(t, h2)); diff != "" {
				t.Errorf("read(Write(h)) differs (-want +got):\n%s", diff)
			}
			// The native format carries this history unchanged.
			nb := history.NewBuilder()
			if err := native.NewDecoder().Decode(strings.NewReader(canon(t, h)), "native", nb); err != nil {
				t.Fatal(err)
			}
			hn, err := nb.Build()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(canon(t, h), canon(t, hn)); diff != "" {
				t.Errorf("native round trip differs (-want +got):\n%s", diff)
			}
			_, err = read(t, iotest.HalfReader(iotest.OneByteReader(bytes.NewReader(raw[:min(len(raw), 30_000)]))))
			if err == nil || !strings.Contains(err.Error(), "found end of input") {
				t.Errorf("reading a truncated file, byte by byte: %v, want an end-of-input error", err)
			}
		})
	}
}

func TestInitialOption(t *testing.T) {
	t.Parallel()
	zero := history.Int(0)
	b := history.NewBuilder()
	if err := chronos.NewDecoder(&zero).Decode(strings.NewReader(`[{"ops":[{"t":"r","k":1,"v":0}]}]`), "h", b); err != nil {
		t.Fatal(err)
	}
	h, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Value(h.Initial); got != zero {
		t.Errorf("Initial = %v, want 0", got)
	}
}

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string // want: the native encoding's transaction lines
	}{
		{"kv", `[{"tid":7,"sid":1,"sts":{"p":1,"l":2},"cts":{"p":"3","l":0},"ops":[{"t":"w","k":1,"v":2},{"t":"r","k":"x","v":null}]}]`,
			`{"s":1,"id":7,"sts":[1,2],"cts":[3,0],"ops":[["w",1,2],["r","x",null]]}`},
		{"list", `[{"ops":[{"v":3,"k":1,"t":"a"},{"t":"r","k":1,"v":[3]},{"t":"r","k":2,"v":[]}],"sid":"c"}]`,
			`{"s":"c","ops":[["a",1,3],["r",1,[3]],["r",2,[]]]}`},
		{"unknown keys skipped", `[{"rtts":12,"x":{"a":[1,true,null,"s",-1.5e3]},"ops":[{"t":"w","k":1,"v":2,"extra":{}}]}]`,
			`{"s":null,"ops":[["w",1,2]]}`},
		{"empty", " [ ] \n", ``},
		{"spaces", "[\n {\"ops\" : [ ] } ,\n{\"ops\":[]}\n]", `{"s":null,"ops":[]}` + "\n" + `{"s":null,"ops":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := read(t, strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			got := canon(t, h)
			got = strings.TrimSpace(got[strings.IndexByte(got, '\n')+1:])
			if got != tt.want {
				t.Errorf("read(%s) =\n%s\nwant\n%s", tt.in, got, tt.want)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"not an array", `{"tid":1}`, `h.json:1:1: chronos: expected '[' starting the JSON array of transactions, found an object`},
		{"bad op type", "[\n{\"ops\":[{\"t\":\"x\",\"k\":1,\"v\":1}]}]", `h.json:2:14 (byte 15): chronos: expected operation type "r", "w" or "a", found "x"`},
		{"missing value", "[{\"ops\":[\n  {\"t\":\"w\",\"k\":1}]}]", `h.json:2:3 (byte 12): chronos: expected a value "v" in the operation object`},
		{"list write", `[{"ops":[{"t":"w","k":1,"v":[1]}]}]`, `h.json:1:10 (byte 9): chronos: expected a single value "v" in a "w" operation, found a list`},
		{"bad timestamp", `[{"sts":{"p":"12a"},"cts":{"p":1},"ops":[]}]`, `h.json:1:14 (byte 13): chronos: expected physical time "p" (an integer or a string of digits), found "12a"`},
		{"sts only", `[{"sts":{"p":1},"ops":[]}]`, `h.json:1:2 (byte 1): chronos: expected both "sts" and "cts" in the transaction object, or neither`},
		{"missing ops", `[{"tid":1}]`, `h.json:1:2 (byte 1): chronos: expected an "ops" array in the transaction object`},
		{"truncated", "[{\"ops\":[{\"t\":\"w\",\"k\":1,\"v\":1}", `h.json:1:31 (byte 30): chronos: expected ',' or ']' in the ops array, found end of input`},
		{"trailing", `[] []`, `h.json:1:4 (byte 3): chronos: expected end of input after the array, found an array`},
		{"float key", `[{"ops":[{"t":"w","k":1.5,"v":1}]}]`, `h.json:1:23 (byte 22): chronos: expected key "k" (an integer), found a fraction or exponent`},
		{"null key", `[{"ops":[{"t":"r","k":null,"v":1}]}]`, `h.json:1:23 (byte 22): chronos: expected key "k" (an integer or a string), found null`},
		{"missing comma", "[{\"ops\":[]}\n{\"ops\":[]}]", `h.json:2:1 (byte 12): chronos: expected ',' or ']' after a transaction, found an object`},
		{"empty input", ``, `h.json:1:1: chronos: expected '[' starting the JSON array of transactions, found end of input`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				_, err := read(t, r)
				var pe *parse.Error
				if !errors.As(err, &pe) {
					t.Fatalf("read(%q) = %v, want a *parse.Error", tt.in, err)
				}
				if got := err.Error(); got != tt.want {
					t.Errorf("read(%q) error\n got %s\nwant %s", tt.in, got, tt.want)
				}
			}
		})
	}
}

func TestDecodeTxn(t *testing.T) {
	t.Parallel()
	b := history.NewBuilder()
	if err := chronos.DecodeTxn([]byte(`{"tid":1,"sid":2,"sts":{"p":1,"l":0},"cts":{"p":2,"l":0},"ops":[{"t":"w","k":1,"v":1}]}`), b); err != nil {
		t.Fatal(err)
	}
	err := chronos.DecodeTxn([]byte(`{"tid":2,"ops":[{"t":"w","k":1,"v":2},{"t":"w"}]}`), b)
	if want := `<input>:1:39 (byte 38): chronos: expected a key "k" in the operation object`; err == nil || err.Error() != want {
		t.Errorf("DecodeTxn(bad) = %v, want %s", err, want)
	}
	h, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Txns) != 1 || h.Values.Len() != 2 {
		t.Errorf("after a bad object: %d txns, %d values; want 1, 2", len(h.Txns), h.Values.Len())
	}
}

func TestWriteRefusesWhatChronosCannotHold(t *testing.T) {
	t.Parallel()
	b := history.NewBuilder()
	b.BeginTxn(b.Session(history.Int(1)), history.NilDatum, history.OutcomeAborted)
	h, _ := b.Build()
	if err := chronos.Write(io.Discard, h); !errors.Is(err, chronos.ErrUnrepresentable) {
		t.Errorf("Write(aborted) = %v, want ErrUnrepresentable", err)
	}
	b = history.NewBuilder()
	b.BeginTxn(b.Session(history.Int(1)), history.NilDatum, history.OutcomeCommitted)
	b.Delete(b.IntKey(1))
	h, _ = b.Build()
	if err := chronos.Write(io.Discard, h); !errors.Is(err, chronos.ErrUnrepresentable) {
		t.Errorf("Write(delete) = %v, want ErrUnrepresentable", err)
	}
}

func TestSniff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		head string
		want bool
	}{
		{"[\n    {\n        \"cts\": {", true},
		{`[{"tid":1`, true},
		{`[{"type":"ok","f":"txn"}]`, false},
		{`{"isovet":1}`, false},
		{`[[1,2]]`, false},
		{`r(1,2,3,4)`, false},
	}
	for _, tt := range tests {
		if got := chronos.Sniff("h.json", []byte(tt.head)); got != tt.want {
			t.Errorf("Sniff(%q) = %v, want %v", tt.head, got, tt.want)
		}
	}
}

func FuzzRead(f *testing.F) {
	for _, file := range []string{"format-kv.json", "format-list.json"} {
		p, ok := corpus.Find("chronos/" + file)
		if !ok {
			continue
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		// The first two transactions of each shared example, as a complete array.
		h, err := read(f, bytes.NewReader(raw))
		if err != nil {
			f.Fatal(err)
		}
		out := write(f, h)
		lines := strings.SplitN(out, "\n", 4)
		f.Add([]byte(lines[0] + lines[1] + lines[2] + "]"))
	}
	f.Add([]byte(`[{"tid":"a","sid":null,"sts":{"p":"1"},"cts":{"p":2,"l":3},"ops":[{"t":"r","k":"\u00e9","v":null}],"z":[{}]}]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		h, err := read(t, bytes.NewReader(in))
		if err != nil {
			return
		}
		h2, err := read(t, strings.NewReader(write(t, h)))
		if err != nil {
			t.Fatalf("re-reading the written %q: %v", in, err)
		}
		if diff := cmp.Diff(canon(t, h), canon(t, h2)); diff != "" {
			t.Fatalf("round trip of %q differs (-want +got):\n%s", in, diff)
		}
	})
}

// genChronos returns a compact Chronos kv array of n transactions over 24 sessions with 8
// ops each (half reads of the latest value, half unique writes) on 10,000 keys.
func genChronos(n int) []byte {
	r := rand.New(rand.NewPCG(3, 4))
	latest := make(map[int]int)
	next := 0
	var b bytes.Buffer
	b.WriteByte('[')
	ts := int64(448719026730565749)
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"tid":%d,"sid":%d,"sts":{"p":%d,"l":0},"cts":{"p":%d,"l":1},"ops":[`, i, i%24, ts, ts+40_000)
		ts += 10_000
		for j := range 8 {
			if j > 0 {
				b.WriteByte(',')
			}
			k := r.IntN(10_000)
			if r.IntN(2) == 0 {
				fmt.Fprintf(&b, `{"t":"r","k":%d,"v":%d}`, k, latest[k])
			} else {
				next++
				latest[k] = next
				fmt.Fprintf(&b, `{"t":"w","k":%d,"v":%d}`, k, next)
			}
		}
		b.WriteString("]}")
	}
	b.WriteString("]\n")
	return b.Bytes()
}

func BenchmarkRead(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("chronos/txns=%d", n), func(b *testing.B) {
			data := genChronos(n)
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			cpu0 := int64(cputime.Self())
			for b.Loop() {
				hb := history.NewBuilder()
				if err := chronos.NewDecoder(nil).Decode(bytes.NewReader(data), "bench", hb); err != nil {
					b.Fatal(err)
				}
				if _, err := hb.Build(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "txns/s")
			b.ReportMetric(float64(len(data))*float64(b.N)/float64(int64(cputime.Self())-cpu0)*1e3, "MB/cpu-s")
		})
	}
	b.Run("chronos/format-kv.json", func(b *testing.B) {
		raw, err := os.ReadFile(corpus.Path(b, "chronos/format-kv.json"))
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if _, err := read(b, bytes.NewReader(raw)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The compact objects the fast paths take and the same objects spaced out (which the
// general parser takes) must read alike.
func TestFastPathsAgreeWithGeneralParser(t *testing.T) {
	t.Parallel()
	compact := genChronos(300)
	var spaced bytes.Buffer
	if err := json.Indent(&spaced, compact, "", " "); err != nil {
		t.Fatal(err)
	}
	h1, err := read(t, bytes.NewReader(compact))
	if err != nil {
		t.Fatal(err)
	}
	h2, err := read(t, &spaced)
	if err != nil {
		t.Fatal(err)
	}
	if len(h1.Txns) != 300 || len(h1.Txns[0].Ops) != 8 {
		t.Fatalf("read %d txns", len(h1.Txns))
	}
	if diff := cmp.Diff(canon(t, h1), canon(t, h2)); diff != "" {
		t.Errorf("compact and indented differ (-compact +indented):\n%s", diff)
	}
}
