package elle_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/format/elle"
	"github.com/isovet/isovet/history"
)

// realtimePairs returns every pair "a<b" of transactions whose client intervals order a
// before b.
func realtimePairs(h *history.History) []string {
	var out []string
	for i := range h.Txns {
		for j := range h.Txns {
			a, b := &h.Txns[i], &h.Txns[j]
			if a.HasTime && b.HasTime && a.Time.Before(b.Time) {
				out = append(out, h.Name(a.ID)+"<"+h.Name(b.ID))
			}
		}
	}
	slices.Sort(out)
	return out
}

// positionPairs returns the pairs the input's positions order: a's completion comes before
// b's invoke, each transaction named by its invoke's :index. A completion completes its
// process's open invoke with the same :value text, or else the oldest.
func positionPairs(in string) []string {
	type ev struct{ inv, done int }
	type inv struct{ idx, value string }
	evs := map[string]*ev{}
	open := map[string][]inv{} // process -> open invokes
	field := func(line, name, end string) string {
		i := strings.Index(line, name)
		if i < 0 {
			return ""
		}
		rest := line[i+len(name):]
		if j := strings.Index(rest, end); j >= 0 {
			rest = rest[:j]
		}
		return strings.TrimSpace(rest)
	}
	for pos, line := range strings.Split(strings.TrimSpace(in), "\n") {
		typ, proc, idx := field(line, ":type", ","), field(line, ":process", "}"), field(line, ":index", ",")
		proc = strings.TrimSpace(strings.Split(proc, ",")[0])
		value := field(line, ":value", ", :process")
		if typ == ":invoke" {
			evs[idx] = &ev{inv: pos, done: -1}
			open[proc] = append(open[proc], inv{idx, value})
			continue
		}
		k := slices.IndexFunc(open[proc], func(o inv) bool { return o.value == value })
		if k < 0 {
			k = 0
		}
		i := open[proc][k].idx
		open[proc] = slices.Delete(open[proc], k, k+1)
		if typ != ":info" {
			evs[i].done = pos
		}
	}
	var out []string
	for a, ea := range evs {
		for b, eb := range evs {
			if ea.done >= 0 && ea.done < eb.inv {
				out = append(out, "T"+a+"<T"+b)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestPositionIntervals: without :time, client intervals order exactly the pairs whose
// completion comes before the other's invoke in the file.
func TestPositionIntervals(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in string }{
		{"sequential", `{:index 0, :type :invoke, :value [[:append 1 1]], :process 0}
{:index 1, :type :ok, :value [[:append 1 1]], :process 0}
{:index 2, :type :invoke, :value [[:r 1 nil]], :process 1}
{:index 3, :type :ok, :value [[:r 1 [1]]], :process 1}`},
		{"overlapping and nested", `{:index 0, :type :invoke, :value [[:append 1 1]], :process 0}
{:index 1, :type :invoke, :value [[:append 1 2]], :process 1}
{:index 2, :type :ok, :value [[:append 1 1]], :process 0}
{:index 3, :type :invoke, :value [[:r 1 nil]], :process 2}
{:index 4, :type :ok, :value [[:r 1 [1]]], :process 2}
{:index 5, :type :ok, :value [[:append 1 2]], :process 1}
{:index 6, :type :invoke, :value [[:r 1 nil]], :process 0}
{:index 7, :type :ok, :value [[:r 1 [1 2]]], :process 0}`},
		{"info never precedes", `{:index 0, :type :invoke, :value [[:append 1 1]], :process 0}
{:index 1, :type :info, :value [[:append 1 1]], :process 0}
{:index 2, :type :invoke, :value [[:r 1 nil]], :process 1}
{:index 3, :type :ok, :value [[:r 1 [1]]], :process 1}
{:index 4, :type :invoke, :value [[:append 1 3]], :process 2}
{:index 5, :type :fail, :value [[:append 1 3]], :process 2}
{:index 6, :type :invoke, :value [[:r 1 nil]], :process 3}`},
		{"mixed: some events timed", `{:index 0, :type :invoke, :value [[:append 1 1]], :process 0, :time 50}
{:index 1, :type :invoke, :value [[:append 1 2]], :process 1}
{:index 2, :type :ok, :value [[:append 1 1]], :process 0, :time 60}
{:index 3, :type :ok, :value [[:append 1 2]], :process 1, :time 10}
{:index 4, :type :invoke, :value [[:r 1 nil]], :process 0, :time 5}
{:index 5, :type :ok, :value [[:r 1 [1 2]]], :process 0, :time 70}`},
		{"two open invokes on one process", `{:index 0, :type :invoke, :value [[:append 1 1]], :process 0}
{:index 1, :type :invoke, :value [[:append 2 1]], :process 0}
{:index 2, :type :ok, :value [[:append 2 1]], :process 0}
{:index 3, :type :invoke, :value [[:r 2 nil]], :process 1}
{:index 4, :type :ok, :value [[:append 1 1]], :process 0}
{:index 5, :type :ok, :value [[:r 2 [1]]], :process 1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := elle.ReadEDN(strings.NewReader(tt.in), "h.edn")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(positionPairs(tt.in), realtimePairs(h)); diff != "" {
				t.Errorf("real-time pairs (-positions +intervals):\n%s", diff)
			}
			if !slices.Contains(h.Notes, elle.PositionsNote) {
				t.Errorf("Notes = %q, want the positions note", h.Notes)
			}
			roundTrip(t, h)
		})
	}
}

// TestTimeKeptWhenEveryEventHasIt: with :time on every invoke and completion, intervals are
// times and no note is added.
func TestTimeKeptWhenEveryEventHasIt(t *testing.T) {
	t.Parallel()
	in := `{:type :invoke, :value [[:append 1 1]], :process 0, :time 100}
{:type :ok, :value [[:append 1 1]], :process 0, :time 200}
{:type :ok, :value [[:r 1 [1]]], :process 1}`
	h, err := elle.ReadEDN(strings.NewReader(in), "h.edn")
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Txns[0].Time; !h.Txns[0].HasTime || got != (history.Interval{Begin: 100, End: 200}) {
		t.Errorf("T0 time = %v (%v), want [100,200]", got, h.Txns[0].HasTime)
	}
	if h.Txns[1].HasTime {
		t.Errorf("a completion alone has time %v, want none", h.Txns[1].Time)
	}
	if len(h.Notes) != 0 {
		t.Errorf("Notes = %q, want none", h.Notes)
	}
}

// TestStaleReadByPosition: a read that misses a write completed before it began, in file
// order alone, violates strict serializability and not serializability. It also pins what
// outcomes mean: a :fail's write is aborted (reading it fails), an :info's reads are not
// trusted.
func TestStaleReadByPosition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		level    check.Level
		want     check.Verdict
	}{
		{"stale read", `{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0}
{:type :ok, :f :txn, :value [[:append 1 1]], :process 0}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 1}
{:type :ok, :f :txn, :value [[:r 1 nil]], :process 1}`, check.StrictSerializable, check.Fail},
		{"stale read", "", check.Serializable, check.Pass},
		{"stale read", "", check.StrongSI, check.Fail},
		{"stale read", "", check.SnapshotIsolation, check.Pass},
		{"concurrent read", `{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 1}
{:type :ok, :f :txn, :value [[:append 1 1]], :process 0}
{:type :ok, :f :txn, :value [[:r 1 nil]], :process 1}`, check.StrictSerializable, check.Pass},
		{"read of an info write", `{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0}
{:type :info, :f :txn, :value [[:append 1 1]], :process 0}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 1}
{:type :ok, :f :txn, :value [[:r 1 nil]], :process 1}`, check.StrictSerializable, check.Pass},
		{"read of a failed write", `{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0}
{:type :fail, :f :txn, :value [[:append 1 1]], :process 0}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 1}
{:type :ok, :f :txn, :value [[:r 1 [1]]], :process 1}`, check.Serializable, check.Fail},
		{"info read is not trusted", `{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 0}
{:type :info, :f :txn, :value [[:r 1 [7]]], :process 0}
{:type :invoke, :f :txn, :value [[:append 1 1]], :process 1}
{:type :ok, :f :txn, :value [[:append 1 1]], :process 1}`, check.Serializable, check.Pass},
		{"ok read of nothing written", `{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 0}
{:type :ok, :f :txn, :value [[:r 1 [7]]], :process 0}`, check.Serializable, check.Fail},
	}
	in := ""
	for _, tt := range tests {
		if tt.in == "" {
			tt.in = in
		}
		in = tt.in
		t.Run(tt.name+"/"+tt.level.String(), func(t *testing.T) {
			t.Parallel()
			h, err := elle.ReadEDN(strings.NewReader(tt.in), "h.edn")
			if err != nil {
				t.Fatal(err)
			}
			rep, err := check.Check(context.Background(), h, tt.level, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != tt.want {
				t.Errorf("Check(%s) = %v, want %v (anomalies %v)", tt.level, rep.Verdict, tt.want, rep.Anomalies)
			}
		})
	}
}

// TestOpenInvokesPerProcess: a process with several open invokes pairs each completion with
// the oldest open invoke whose micro-ops it repeats, each in a lane (session) of its own.
func TestOpenInvokesPerProcess(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{
			name: "completions out of order",
			in: `{:index 0, :type :invoke, :value [[:append 1 1] [:r 2 nil]], :process 0}
{:index 1, :type :invoke, :value [[:append 2 5]], :process 0}
{:index 2, :type :ok, :value [[:append 2 5]], :process 0}
{:index 3, :type :ok, :value [[:append 1 1] [:r 2 [5]]], :process 0}
{:index 4, :type :invoke, :value [[:r 1 nil]], :process 0}
{:index 5, :type :ok, :value [[:r 1 [1]]], :process 0}
`,
			want: `S0 process=0 txns=[0]
S1 process=0 txns=[1 2]
T0 S0.0 committed src=1 time=[1,2]: append(2,5)
T1 S1.0 committed src=0 time=[0,3]: append(1,1) r(2)=[5]
T2 S1.1 committed src=4 time=[4,5]: r(1)=[1]
`,
		},
		{
			name: "alike invokes widen to the oldest",
			in: `{:index 0, :type :invoke, :value [[:r 1 nil]], :process 0}
{:index 1, :type :ok, :value [[:append 1 1]], :process 1}
{:index 2, :type :invoke, :value [[:r 1 nil]], :process 0}
{:index 3, :type :ok, :value [[:r 1 [1]]], :process 0}
{:index 4, :type :ok, :value [[:r 1 []]], :process 0}
`,
			want: `S0 process=1 txns=[0]
S1 process=0 txns=[1]
S2 process=0 txns=[2]
T0 S0.0 committed src=1: append(1,1)
T1 S1.0 committed src=0 time=[0,3]: r(1)=[1]
T2 S2.0 committed src=2 time=[0,4]: r(1)=[]
`,
		},
		{
			name: "an info ends its lane, and the next invoke takes the lane freed last",
			in: `{:index 0, :type :invoke, :value [[:append 1 1]], :process 0, :time 10}
{:index 1, :type :invoke, :value [[:append 1 2]], :process 0, :time 20}
{:index 2, :type :info, :value [[:append 1 1]], :process 0, :time 30}
{:index 3, :type :ok, :value [[:append 1 2]], :process 0, :time 40}
{:index 4, :type :invoke, :value [[:r 1 nil]], :process 0, :time 50}
{:index 5, :type :ok, :value [[:r 1 [2]]], :process 0, :time 60}
`,
			want: `S0 process=0 txns=[0]
S1 process=0 txns=[1 2]
T0 S0.0 unknown src=0 time=[10,60]: append(1,1)
T1 S1.0 committed src=1 time=[20,40]: append(1,2)
T2 S1.1 committed src=4 time=[50,60]: r(1)=[2]
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := elle.ReadEDN(strings.NewReader(tt.in), "h.edn")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, dump(h, true)); diff != "" {
				t.Errorf("ReadEDN (-want +got):\n%s", diff)
			}
			roundTrip(t, h)
		})
	}
}

// TestAnyKey: keys may be any EDN value Elle compares by text; they intern by a canonical
// rendering and survive both writers.
func TestAnyKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, in string
		keys           []string // rendered keys, in order of first appearance
	}{
		{"vector", "h.edn", `{:type :ok, :value [[:append [:anti 1] 1] [:r [:anti 1] [1]] [:append [:anti 2] 1]]}`,
			[]string{`"[:anti 1]"`, `"[:anti 2]"`}},
		{"list is a vector", "h.edn", `{:type :ok, :value [[:append (:anti 1) 1] [:r [:anti 1] [1]]]}`,
			[]string{`"[:anti 1]"`}},
		{"map entries sorted", "h.edn", `{:type :ok, :value [[:w {:b 2 :a 1} 1] [:r {:a 1, :b 2} 1]]}`,
			[]string{`"{:a 1, :b 2}"`}},
		{"set", "h.edn", `{:type :ok, :value [[:w #{3 1 2} 1] [:r #{1 2 3} 1]]}`,
			[]string{`"#{1 2 3}"`}},
		{"nested string and big integer", "h.edn", `{:type :ok, :value [[:w ["a" 1N {:k [2]}] 1] [:w 7N 2]]}`,
			[]string{`"[\"a\" 1 {:k [2]}]"`, `7`}},
		{"keyword, string, integer", "h.edn", `{:type :ok, :value [[:w :x 1] [:w "y" 2] [:w 3 3] [:w true 4] [:w \c 5]]}`,
			[]string{`":x"`, `"y"`, `3`, `"true"`, `"\\c"`}},
		{"json array and object", "h.json", `[{"type":"ok","value":[["append",["anti",1],1],["r",{"b":[1],"a":null},[1]]]}]`,
			[]string{`"[\"anti\" 1]"`, `"{\"a\" nil, \"b\" [1]}"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := read(tt.file, []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, k := range h.Keys {
				keys = append(keys, k.GoString())
			}
			if diff := cmp.Diff(tt.keys, keys); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			roundTrip(t, h)
		})
	}
}

// TestAnyKeyWrittenBare: the EDN writer writes a collection key as the collection, not as a
// string, so Elle reads the key it was given.
func TestAnyKeyWrittenBare(t *testing.T) {
	t.Parallel()
	h, err := elle.ReadEDN(strings.NewReader(`{:type :ok, :f :txn, :value [[:append [:anti 1] 1] [:append "[x  y]" 2] [:r {:a #{1}} [3]]], :process 0}`), "h.edn")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		write func(*strings.Builder, *history.History) error
		want  string
	}{
		{"edn", func(b *strings.Builder, h *history.History) error { return elle.WriteEDN(b, h) },
			`{:type :ok, :process 0, :f :txn, :value [[:append [:anti 1] 1] [:append "[x  y]" 2] [:r {:a #{1}} [3]]]}` + "\n"},
		{"json", func(b *strings.Builder, h *history.History) error { return elle.WriteJSON(b, h) },
			"[\n" + `{"type":"ok","process":0,"f":"txn","value":[["append","[:anti 1]",1],["append","[x  y]",2],["r","{:a #{1}}",[3]]]}` + "\n]\n"},
	} {
		var b strings.Builder
		if err := tt.write(&b, h); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, b.String()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestAmbiguousDatum: a string that renders like another kind of value in the same history
// is refused, not merged with it.
func TestAmbiguousDatum(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{:type :ok, :value [[:w [:anti 1] 1] [:w "[:anti 1]" 2]]}`,
		`{:type :ok, :value [[:w "x" 1] [:w x 2]]}`,
		`{:type :ok, :value [[:w 1 :v] [:w 2 ":v"]]}`,
	} {
		_, err := elle.ReadEDN(strings.NewReader(in), "h.edn")
		if !errors.Is(err, elle.ErrAmbiguousDatum) {
			t.Errorf("ReadEDN(%s) = %v, want ErrAmbiguousDatum", in, err)
		}
	}
}

// TestElleTestHistories reads histories from Elle's own tests (jepsen-io/elle,
// test/elle/rw_register_test.clj and list_append_test.clj) and checks the verdicts Elle's
// tests expect.
func TestElleTestHistories(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		level    check.Level
		want     check.Verdict
	}{
		// rw_register_test.clj: one process, no :time; Elle finds G-single and G2.
		{"rw-register process order", `[{:type :invoke, :f :txn, :value [[:w 499 14] [:w 503 1]], :process 4}
{:type :ok, :f :txn, :value [[:w 499 14] [:w 503 1]], :process 4}
{:type :invoke, :f :txn, :value [[:r 503 nil] [:w 503 11]], :process 4}
{:type :ok, :f :txn, :value [[:r 503 1] [:w 503 11]], :process 4}
{:type :invoke, :f :txn, :value [[:r 503 nil] [:w 503 13]], :process 4}
{:type :ok, :f :txn, :value [[:r 503 1] [:w 503 13]], :process 4}]`, check.Serializable, check.Fail},
		// rw_register_test.clj: the "Six hours, one word fix" history, valid for serializable.
		{"rw-register linear set bug", `[{:index 1,   :time 33189116, :type :invoke,  :process 0, :f :txn, :value []}
{:index 2,   :time 34621247, :type :ok,      :process 0, :f :txn, :value []}
{:index 3,   :time 36022782, :type :invoke,  :process 0, :f :txn, :value [[:r 1 nil]]}
{:index 4,   :time 36230324, :type :invoke,  :process 1, :f :txn, :value [[:w 1 4]]}
{:index 5,   :time 36827540, :type :invoke,  :process 2, :f :txn, :value []}
{:index 320, :time 37708797, :type :ok,      :process 0, :f :txn, :value [[:r 1 nil]]}
{:index 322, :time 37894295, :type :ok,      :process 1, :f :txn, :value [[:w 1 4]]}
{:index 323, :time 37992467, :type :ok,      :process 2, :f :txn, :value []}
{:index 324, :time 38532405, :type :invoke,  :process 0, :f :txn, :value []}
{:index 325, :time 39475568, :type :ok,      :process 0, :f :txn, :value []}
{:index 326, :time 39956694, :type :invoke,  :process 0, :f :txn, :value [[:r 1 nil]]}
{:index 327, :time 40746079, :type :ok,      :process 0, :f :txn, :value [[:r 1 4]]}]`, check.Serializable, check.Pass},
		// list_append_test.clj: the FaunaDB example, a read that misses the transaction's own
		// append (an internal anomaly).
		{"list-append FaunaDB internal", `[{:type :invoke, :f :txn, :value [[:append 0 6] [:r 0 nil]], :process 1, :index 20, :time 1}
{:type :ok, :f :txn, :value [[:append 0 6] [:r 0 nil]], :process 1, :index 21, :time 2}]`, check.Serializable, check.Fail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := elle.ReadEDN(strings.NewReader(tt.in), "h.edn")
			if err != nil {
				t.Fatal(err)
			}
			rep, err := check.Check(context.Background(), h, tt.level, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != tt.want {
				t.Errorf("Check(%s) = %v, want %v (anomalies %v)", tt.level, rep.Verdict, tt.want, rep.Anomalies)
			}
		})
	}
}
