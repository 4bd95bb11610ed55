package elle_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/format/elle"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/corpus"
	"github.com/isovet/isovet/internal/parse"
)

// needShared returns the public corpora's directory, or skips t when they (or their Elle
// histories) are missing.
func needShared(t testing.TB) string {
	t.Helper()
	corpus.Path(t, "elle")
	return corpus.Dir(t)
}

func read(name string, data []byte) (*history.History, error) {
	if strings.HasSuffix(name, ".json") {
		return elle.ReadJSON(bytes.NewReader(data), name)
	}
	return elle.ReadEDN(bytes.NewReader(data), name)
}

func readFile(t testing.TB, path string) (*history.History, error) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return read(path, data)
}

var (
	processRE       = regexp.MustCompile(`process=\S+`)
	dumpWithSources = dump
)

// dump renders h canonically, one line per session and per transaction. With sources
// false, transaction source ids are left out.
func dump(h *history.History, sources bool) string {
	var b strings.Builder
	for _, s := range h.Sessions {
		fmt.Fprintf(&b, "S%d process=%#v txns=%v\n", s.ID, s.Source, s.Txns)
	}
	for i := range h.Txns {
		t := &h.Txns[i]
		fmt.Fprintf(&b, "T%d S%d.%d %v", t.ID, t.Session, t.Seq, t.Outcome)
		if sources {
			fmt.Fprintf(&b, " src=%#v", t.Source)
		}
		if t.HasTime {
			fmt.Fprintf(&b, " time=[%d,%d]", t.Time.Begin, t.Time.End)
		}
		b.WriteString(":")
		for _, o := range t.Ops {
			switch o.Kind {
			case history.OpListRead:
				fmt.Fprintf(&b, " r(%#v)=[", h.Key(o.Key))
				for j, v := range h.List(o) {
					if j > 0 {
						b.WriteString(" ")
					}
					fmt.Fprintf(&b, "%#v", h.Value(v))
				}
				b.WriteString("]")
			case history.OpRead:
				fmt.Fprintf(&b, " r(%#v)=%#v", h.Key(o.Key), h.Value(o.Value))
			default:
				fmt.Fprintf(&b, " %v(%#v,%#v)", o.Kind, h.Key(o.Key), h.Value(o.Value))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

type counts struct {
	Txns, Committed, Aborted, Unknown, Sessions, Ops, Keys int
	Timed                                                  bool
}

func count(h *history.History) counts {
	c := counts{Txns: len(h.Txns), Sessions: len(h.Sessions), Keys: len(h.Keys), Timed: h.HasTime()}
	for i := range h.Txns {
		t := &h.Txns[i]
		c.Ops += len(t.Ops)
		switch t.Outcome {
		case history.OutcomeCommitted:
			c.Committed++
		case history.OutcomeAborted:
			c.Aborted++
		default:
			c.Unknown++
		}
	}
	return c
}

// TestSharedFiles reads every shared Elle history. The counts were checked by hand (and,
// for huge-scc.edn, by an independent line count of its :type and :process fields).
func TestSharedFiles(t *testing.T) {
	shared := needShared(t)
	t.Parallel()
	tests := []struct {
		path    string
		want    counts
		wantErr string
	}{
		{path: "elle/elle/paper-example.edn", want: counts{Txns: 4, Committed: 4, Sessions: 1, Ops: 19, Keys: 4, Timed: true}},
		{path: "elle/elle/si-without-g-single.edn", want: counts{Txns: 4, Committed: 4, Sessions: 4, Ops: 8, Keys: 3, Timed: true}},
		{path: "elle/elle/huge-scc.edn", want: counts{Txns: 10254, Committed: 3036, Aborted: 7070, Unknown: 148, Sessions: 173, Ops: 16400, Keys: 106, Timed: true}},
		{path: "elle/elle-cli/elle/paper-example.edn", want: counts{Txns: 4, Committed: 4, Sessions: 1, Ops: 19, Keys: 4, Timed: true}},
		{path: "elle/elle-cli/elle/paper-example.json", want: counts{Txns: 4, Committed: 4, Sessions: 1, Ops: 19, Keys: 4, Timed: true}},
		{path: "elle/elle-cli/elle/rw-register.edn", want: counts{Txns: 3, Committed: 3, Sessions: 1, Ops: 3, Keys: 1, Timed: true}},
		{path: "elle/elle-cli/elle/rw-register.json", want: counts{Txns: 3, Committed: 3, Sessions: 1, Ops: 3, Keys: 1, Timed: true}},
		{path: "elle/elle-cli/elle/list-append-gh-30.edn", want: counts{Txns: 5, Committed: 5, Sessions: 3, Ops: 11, Keys: 4, Timed: true}},
		{path: "elle/elle-cli/jepsen/long-fork.edn", want: counts{Txns: 2, Committed: 2, Sessions: 1, Ops: 6, Keys: 3, Timed: true}},
		{path: "elle/elle-cli/custom/comments.edn", wantErr: "comments.edn:1:1: elle-edn: not a transactional history: :f :read, :write (register workload)"},
		{path: "elle/elle-cli/jepsen/bank.edn", wantErr: "bank.edn:1:1: elle-edn: not a transactional history: :f :read, :transfer (bank workload)"},
		{path: "elle/elle-cli/jepsen/bank.json", wantErr: `bank.json:1:2 (byte 1): elle-json: not a transactional history: "f": "read", "transfer" (bank workload)`},
		{path: "elle/elle-cli/jepsen/bank-neg.edn", wantErr: "bank-neg.edn:1:1: elle-edn: not a transactional history: :f :read (bank workload)"},
		{path: "elle/elle-cli/jepsen/bank-negative-balances.json", wantErr: `(bank workload)`},
		{path: "elle/elle-cli/jepsen/bank-tidb.edn", wantErr: "(bank workload)"},
		{path: "elle/elle-cli/jepsen/counter.edn", wantErr: "counter.edn:1:1: elle-edn: not a transactional history: :f :add (counter or set workload)"},
		{path: "elle/elle-cli/jepsen/counter.json", wantErr: `not a transactional history: "f": "add" (counter or set workload)`},
		{path: "elle/elle-cli/jepsen/set.edn", wantErr: "set.edn:1:2 (byte 1): elle-edn: not a transactional history: :f :add, :read (counter or set workload)"},
		{path: "elle/elle-cli/jepsen/set_full.edn", wantErr: "(counter or set workload)"},
		{path: "elle/elle-cli/jepsen/set_full.json", wantErr: "(counter or set workload)"},
		{path: "elle/elle-cli/knossos/cas-register/good/memstress3-9.edn", wantErr: "memstress3-9.edn:1:2 (byte 1): elle-edn: not a transactional history: :f :read, :cas, :write (cas-register workload)"},
		{path: "elle/elle-cli/knossos/cas-register/good/memstress3-9.json", wantErr: "(cas-register workload)"},
		{path: "elle/elle-cli/knossos/cas-register/bad/bad-analysis.edn", wantErr: "not a transactional history: :f :write, :read (register workload)"},
		{path: "elle/elle-cli/knossos/cas-register/bad/cas-failure.edn", wantErr: "(cas-register workload)"},
		{path: "elle/elle-cli/knossos/cas-register/bad/mongodb-v0-ack-rollback-6.edn", wantErr: "mongodb-v0-ack-rollback-6.edn:2:2 (byte 63): elle-edn: not a transactional history: :f :read, :cas, :write (cas-register workload)"},
		{path: "elle/elle-cli/knossos/cas-register/bad/rethink-fail.edn", wantErr: "(cas-register workload)"},
		{path: "elle/elle-cli/knossos/cas-register/bad/rethink-fail-smaller.edn", wantErr: "(cas-register workload)"},
		{path: "elle/elle-cli/knossos/cas-register/bad/rethink-fail-minimal.edn", wantErr: "(register workload)"},
		{path: "elle/elle-cli/knossos/mutex/bad/etcd.edn", wantErr: "etcd.edn:1:2 (byte 1): elle-edn: not a transactional history: :f :release, :acquire (mutex workload)"},
		{path: "elle/elle-cli/knossos/mutex/bad/etcd.json", wantErr: "(mutex workload)"},
		// Plume's fixtures: completions without invokes, no real time.
		{path: "plume/testcase/elle/tap-a.edn", want: counts{Txns: 1, Committed: 1, Sessions: 1, Ops: 2, Keys: 2}},
		{path: "plume/testcase/elle/tap-b.edn", want: counts{Txns: 2, Committed: 1, Aborted: 1, Sessions: 2, Ops: 3, Keys: 2}},
		{path: "plume/testcase/elle/tap-c.edn", want: counts{Txns: 1, Committed: 1, Sessions: 1, Ops: 2, Keys: 1}},
		{path: "plume/testcase/elle/tap-d.edn", want: counts{Txns: 2, Committed: 2, Sessions: 2, Ops: 3, Keys: 1}},
		{path: "plume/testcase/elle/tap-e.edn", want: counts{Txns: 1, Committed: 1, Sessions: 1, Ops: 3, Keys: 1}},
		{path: "plume/testcase/elle/tap-f.edn", want: counts{Txns: 2, Committed: 2, Sessions: 2, Ops: 3, Keys: 1}},
		{path: "plume/testcase/elle/tap-g.edn", want: counts{Txns: 3, Committed: 3, Sessions: 2, Ops: 4, Keys: 2}},
		{path: "plume/testcase/elle/tap-h.edn", want: counts{Txns: 4, Committed: 4, Sessions: 3, Ops: 6, Keys: 2}},
		{path: "plume/testcase/elle/tap-i.edn", want: counts{Txns: 3, Committed: 3, Sessions: 2, Ops: 6, Keys: 2}},
		{path: "plume/testcase/elle/tap-j.edn", want: counts{Txns: 2, Committed: 2, Sessions: 2, Ops: 4, Keys: 1}},
		{path: "plume/testcase/elle/tap-k.edn", want: counts{Txns: 4, Committed: 4, Sessions: 3, Ops: 6, Keys: 2}},
		{path: "plume/testcase/elle/tap-l.edn", want: counts{Txns: 3, Committed: 3, Sessions: 2, Ops: 6, Keys: 2}},
		{path: "plume/testcase/elle/tap-m.edn", want: counts{Txns: 5, Committed: 5, Sessions: 3, Ops: 6, Keys: 2}},
		{path: "plume/testcase/elle/tap-n.edn", want: counts{Txns: 6, Committed: 6, Sessions: 4, Ops: 8, Keys: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			h, err := readFile(t, filepath.Join(shared, tt.path))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Read(%s) = %v, want an error containing %q", tt.path, err, tt.wantErr)
				}
				if !errors.Is(err, elle.ErrNotTransactional) {
					t.Errorf("Read(%s) = %v, want ErrNotTransactional", tt.path, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Read(%s) = %v", tt.path, err)
			}
			if diff := cmp.Diff(tt.want, count(h)); diff != "" {
				t.Errorf("Read(%s) counts (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}

// TestPaperExample pins the whole model of the Elle paper's example.
func TestPaperExample(t *testing.T) {
	shared := needShared(t)
	t.Parallel()
	h, err := readFile(t, shared+"/elle/elle/paper-example.edn")
	if err != nil {
		t.Fatal(err)
	}
	want := `S0 process=nil txns=[0 1 2 3]
T0 S0.0 committed src=0 time=[0,1]: append(253,1) append(253,3) append(253,4) append(255,2) append(255,3) append(255,4) append(255,5) append(256,1) append(256,2)
T1 S0.1 committed src=2 time=[2,3]: append(255,8) r(253)=[1 3 4]
T2 S0.2 committed src=4 time=[4,5]: append(256,4) r(255)=[2 3 4 5 8] r(256)=[1 2 4] r(253)=[1 3 4]
T3 S0.3 committed src=6 time=[6,7]: append(250,10) r(253)=[1 3 4] r(255)=[2 3 4 5] append(256,3)
`
	if diff := cmp.Diff(want, dump(h, true)); diff != "" {
		t.Errorf("paper-example (-want +got):\n%s", diff)
	}
}

// stripColons maps keyword datums (":x") to plain strings ("x"): elle-cli's JSON copies
// write keyword keys as strings.
func stripColons(s string) string { return strings.ReplaceAll(s, `":`, `"`) }

func TestEDNAndJSONAgree(t *testing.T) {
	shared := needShared(t)
	t.Parallel()
	dir := shared + "/elle/elle-cli/"
	for _, base := range []string{"elle/paper-example", "elle/rw-register", "jepsen/bank", "jepsen/counter", "jepsen/set_full", "knossos/cas-register/good/memstress3-9", "knossos/mutex/bad/etcd"} {
		t.Run(base, func(t *testing.T) {
			he, errE := readFile(t, dir+base+".edn")
			hj, errJ := readFile(t, dir+base+".json")
			if (errE == nil) != (errJ == nil) || errE != nil && errors.Is(errE, elle.ErrNotTransactional) != errors.Is(errJ, elle.ErrNotTransactional) {
				t.Fatalf("EDN error %v, JSON error %v: want both or neither", errE, errJ)
			}
			if errE != nil {
				return
			}
			if diff := cmp.Diff(stripColons(dump(he, true)), dump(hj, true)); diff != "" {
				t.Errorf("EDN and JSON models differ (-edn +json):\n%s", diff)
			}
		})
	}
}

// sourcesKept reports whether the writers keep h's source ids (see the package doc).
func sourcesKept(h *history.History) bool {
	prev := int64(-2)
	allNil := true
	for i := range h.Txns {
		if !h.Txns[i].Source.IsNil() {
			allNil = false
		}
	}
	if allNil {
		return true
	}
	for i := range h.Txns {
		n, ok := h.Txns[i].Source.Int()
		if !ok || n < 0 || n < prev+2 {
			return false
		}
		prev = n
	}
	return true
}

// roundTrip writes h with both writers and reads it back, failing t unless the model is
// unchanged (source ids aside when the writers cannot keep them).
func roundTrip(t testing.TB, h *history.History) {
	t.Helper()
	keep := sourcesKept(h)
	// The writer gives a fresh process to a session that shares its process with an earlier
	// one it would otherwise join (see processes in write.go): compare sessions, not their
	// process ids, then.
	dump := dump
	seen := map[history.Datum]bool{}
	for _, s := range h.Sessions {
		if seen[s.Source] {
			dump = func(h *history.History, sources bool) string {
				return processRE.ReplaceAllString(dumpWithSources(h, sources), "process=?")
			}
			break
		}
		seen[s.Source] = true
	}
	want := dump(h, keep)
	for _, w := range []struct {
		name  string
		write func(*bytes.Buffer, *history.History) error
	}{
		{"out.edn", func(b *bytes.Buffer, h *history.History) error { return elle.WriteEDN(b, h) }},
		{"out.json", func(b *bytes.Buffer, h *history.History) error { return elle.WriteJSON(b, h) }},
	} {
		var buf bytes.Buffer
		if err := w.write(&buf, h); err != nil {
			t.Fatalf("write %s: %v", w.name, err)
		}
		back, err := read(w.name, buf.Bytes())
		if err != nil {
			t.Fatalf("reading back %s: %v\n%s", w.name, err, buf.String())
		}
		if diff := cmp.Diff(want, dump(back, keep)); diff != "" {
			t.Fatalf("%s round trip (-want +got):\n%s\n%s", w.name, diff, buf.String())
		}
		// The other layouts Jepsen and elle-cli use must read the same: EDN wrapped in a
		// vector or a list, JSON as one object per line.
		var variants [][]byte
		if w.name == "out.edn" {
			variants = append(variants, append(append([]byte("[\n"), buf.Bytes()...), ']'), append(append([]byte("("), buf.Bytes()...), ')'))
		} else {
			lines := bytes.TrimSuffix(bytes.TrimPrefix(buf.Bytes(), []byte("[\n")), []byte("\n]\n"))
			variants = append(variants, bytes.ReplaceAll(lines, []byte("},\n{"), []byte("}\n{")))
		}
		for _, v := range variants {
			back, err := read(w.name, v)
			if err != nil {
				t.Fatalf("reading back %s in another layout: %v\n%s", w.name, err, v)
			}
			if diff := cmp.Diff(want, dump(back, keep)); diff != "" {
				t.Fatalf("%s round trip in another layout (-want +got):\n%s\n%s", w.name, diff, v)
			}
		}
	}
}

func TestRoundTripSharedFiles(t *testing.T) {
	shared := needShared(t)
	t.Parallel()
	var files []string
	for _, g := range []string{"/elle/elle/*.edn", "/elle/elle-cli/elle/*", "/elle/elle-cli/jepsen/long-fork.edn", "/plume/testcase/elle/*.edn"} {
		m, _ := filepath.Glob(shared + g)
		files = append(files, m...)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			h, err := readFile(t, f)
			if err != nil {
				t.Fatal(err)
			}
			roundTrip(t, h)
		})
	}
}

func TestPairing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{
			name: "invoke ok fail info",
			in: `{:type :invoke, :f :txn, :value [[:append 1 1] [:r 2 nil]], :process 0, :time 10, :index 0}
{:type :invoke, :f :txn, :value [[:append 2 1]], :process 1, :time 11, :index 1}
{:type :ok, :f :txn, :value [[:append 1 1] [:r 2 [5]]], :process 0, :time 20, :index 2}
{:type :fail, :f :txn, :value [[:append 2 1]], :process 1, :time 21, :index 3}
{:type :invoke, :f :txn, :value [[:append 3 1] [:r 3 nil]], :process 0, :time 30, :index 4}
{:type :info, :f :txn, :value [[:append 3 1] [:r 3 nil]], :process 0, :time 31, :index 5}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 0, :time 40, :index 6}
{:type :ok, :f :txn, :value [[:r 1 nil]], :process 0, :time 50, :index 7}
{:type :invoke, :f :txn, :value [[:append 4 4]], :process 1, :time 60, :index 8}
`,
			want: `S0 process=0 txns=[0 2]
S1 process=1 txns=[1 4]
S2 process=0 txns=[3]
T0 S0.0 committed src=0 time=[10,20]: append(1,1) r(2)=[5]
T1 S1.0 aborted src=1 time=[11,21]: append(2,1)
T2 S0.1 unknown src=4 time=[30,60]: append(3,1)
T3 S2.0 committed src=6 time=[40,50]: r(1)=[]
T4 S1.1 unknown src=8 time=[60,60]: append(4,4)
`,
		},
		{
			name: "register reads and completions without invokes",
			in: `{:type :ok, :value [[:w :x 1] [:r :y nil]], :process 3, :index 7}
{:type :fail, :value [[:w :x 2]], :process 3, :index 8}
{:type :ok, :value [[:r :x 1]], :process 4, :index 9}
`,
			want: `S0 process=3 txns=[0 1]
S1 process=4 txns=[2]
T0 S0.0 committed src=7: write(":x",1) r(":y")=nil
T1 S0.1 aborted src=8: write(":x",2)
T2 S1.0 committed src=9: r(":x")=1
`,
		},
		{
			name: "nil read before the workload is known",
			in: `[{:type :ok, :value [[:r 9 nil]], :process 0}
 #jepsen.history.Op{:type :ok, :value [[:append 9 1]], :process 0}
 {:type :info, :f :start, :process :nemesis}]
`,
			want: `S0 process=0 txns=[0 1]
T0 S0.0 committed src=nil: r(9)=[]
T1 S0.1 committed src=nil: append(9,1)
`,
		},
		{
			name: "long-fork :f :read with micro-ops, completion without value",
			in: `{:type :invoke, :f :read, :value [[:r 0 nil] [:r 1 nil]], :process 0}
{:type :ok, :f :read, :value [[:r 0 1] [:r 1 nil]], :process 0}
{:type :invoke, :f :write, :value [[:w 0 2]], :process 1}
{:type :ok, :f :write, :process 1}
`,
			want: `S0 process=0 txns=[0]
S1 process=1 txns=[1]
T0 S0.0 committed src=nil time=[0,1]: r(0)=1 r(1)=nil
T1 S1.0 committed src=nil time=[2,3]: write(0,2)
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

func TestMalformedInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, in, want string
	}{
		{"truncated map", "h.edn", "{:type :invoke, :f :txn, :value [[:append 1 2]]}\n{:type :ok, :value [[:append 1 2]",
			"h.edn:2:34 (byte 82): elle-edn: unexpected end of input: expected ']' to close the vector opened at line 2, column 20"},
		{"not a map", "h.edn", "{:type :ok, :value []}\n[1 2]\n",
			"h.edn:2:2 (byte 24): elle-edn: expected an operation map like {:type :invoke, :f :txn, :value [[:append 1 2]], :process 0}, found a integer"},
		{"bad type", "h.edn", "{:type :done, :value []}",
			"h.edn:1:8 (byte 7): elle-edn: expected :type to be one of :invoke, :ok, :fail or :info, found :done"},
		{"missing type", "h.edn", "\n{:value []}",
			"h.edn:2:1 (byte 1): elle-edn: expected a :type (:invoke, :ok, :fail or :info) in the operation"},
		{"bad mop", "h.edn", "{:type :ok, :value [[:append 1]]}",
			"h.edn:1:21 (byte 20): elle-edn: expected a micro-op [f k v] like [:append 1 2] or [:r 1 [2]], found [:append 1]"},
		{"bad mop f", "h.edn", "{:type :ok, :value [[:cas 1 2]]}",
			"h.edn:1:22 (byte 21): elle-edn: expected a micro-op function (:append, :r or :w), found :cas"},
		{"bad key", "h.edn", "{:type :ok, :value [[:r 1.5 nil]]}",
			"h.edn:1:25 (byte 24): elle-edn: expected a key: any EDN value but a non-integer number, found 1.5"},
		{"bad list element", "h.edn", "{:type :ok, :value [[:r 1 [2 nil]]]}",
			"h.edn:1:30 (byte 29): elle-edn: expected the element of a list read to be a value other than nil (nil is the absent value), found nil"},
		{"mixed workloads", "h.edn", "{:type :ok, :value [[:append 1 2]]}\n{:type :ok, :value [[:w 1 2]]}",
			"h.edn:2:21 (byte 56): elle-edn: history mixes list-append and rw-register micro-ops: [:w 1 2] is rw-register but the history is list-append (since line 1, column 21): expected one workload per history"},
		{"completion of no open invoke", "h.edn", "{:type :invoke, :value [[:w 1 1]], :process 1}\n{:type :invoke, :value [[:w 1 2]], :process 1}\n{:type :ok, :value [[:w 1 3]], :process 1}",
			"h.edn:3:1 (byte 94): elle-edn: process 1 has 2 open invokes (lines 1, 2) and this completion repeats the micro-ops of none of them: expected a completion with an invoke's functions, keys and written values"},
		{"ambiguous completion without value", "h.edn", "{:type :invoke, :value [[:w 1 1]], :process 1}\n{:type :invoke, :value [[:w 1 2]], :process 1}\n{:type :ok, :process 1}",
			"h.edn:3:1 (byte 94): elle-edn: process 1 has 2 open invokes (lines 1, 2) and this completion has no :value to tell which one it completes: expected the transaction's micro-ops"},
		{"float key", "h.edn", "{:type :ok, :value [[:r [:a 1.5] nil]]}",
			"h.edn:1:29 (byte 28): elle-edn: expected a key: any EDN value but a non-integer number, found 1.5"},
		{"tagged key", "h.edn", `{:type :ok, :value [[:r #uuid "00000000-0000-0000-0000-000000000000" nil]]}`,
			`h.edn:1:25 (byte 24): elle-edn: expected a key: any EDN value but a tagged literal, found #uuid "00000000-0000-0000-0000-000000000000"`},
		{"repeated map key", "h.edn", "{:type :ok, :value [[:r {:a 1 :a 2} nil]]}",
			"h.edn:1:25 (byte 24): elle-edn: expected a key: any EDN value but a map with a repeated key, found {:a 1, :a 2}"},
		{"string and keyword key", "h.edn", `{:type :ok, :value [[:w :x 1] [:w ":x" 2]]}`,
			`h.edn:1:35 (byte 34): elle-edn: two different EDN values share one rendering: key ":x" is a string, and a keyword earlier in the history renders as the same key: expected keys that differ as text`},
		{"string and vector value", "h.edn", `{:type :ok, :value [[:append 1 [:a 1]] [:append 1 "[:a 1]"]]}`,
			`h.edn:1:51 (byte 50): elle-edn: two different EDN values share one rendering: value "[:a 1]" is a string, and a composite value earlier in the history renders as the same value: expected values that differ as text`},
		{"time backwards", "h.edn", "{:type :invoke, :value [], :process 1, :time 9}\n{:type :ok, :value [], :process 1, :time 5}",
			"h.edn:2:42 (byte 89): elle-edn: completion :time 5 is before its invoke's :time 9 (line 1): expected time to go forward within a process"},
		{"completion without value", "h.edn", "{:type :ok, :process 1}",
			"h.edn:1:1: elle-edn: expected :value with the transaction's micro-ops: this completion has none and no invoke of process 1 precedes it"},
		{"bad process", "h.edn", "{:type :ok, :value [], :process [1]}",
			"h.edn:1:33 (byte 32): elle-edn: expected :process to be an integer, found [1]"},
		{"json missing comma", "h.json", `[{"type":"ok","value":[["append",1,2]]} {"type":"ok"}]`,
			`h.json:1:41 (byte 40): elle-json: expected ',' or ']' after an array element, found '{'`},
		{"json bad type", "h.json", `{"type":"done","value":[]}`,
			`h.json:1:9 (byte 8): elle-json: expected "type" to be one of "invoke", "ok", "fail" or "info", found "done"`},
		{"json bad mop", "h.json", `{"type":"ok","value":[["append",1]]}`,
			`h.json:1:23 (byte 22): elle-json: expected a micro-op [f k v] like ["append",1,2] or ["r",1,[2]], found ["append",1]`},
		{"json refusal", "h.json", `{"type":"invoke","f":"transfer","value":{"from":1,"to":2,"amount":5}}`,
			`h.json:1:1: elle-json: not a transactional history: "f": "transfer" (bank workload); expected "f": "txn" with a vector of micro-ops (list-append or rw-register)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := read(tt.file, []byte(tt.in))
			var pe *parse.Error
			if !errors.As(err, &pe) {
				t.Fatalf("Read(%q) = %v, want a *parse.Error", tt.in, err)
			}
			if pe.File != tt.file || pe.Line == 0 || pe.Col == 0 {
				t.Errorf("Read(%q) located at %q:%d:%d, want file, line and column", tt.in, pe.File, pe.Line, pe.Col)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Read(%q) error:\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestSniff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		head       string
		edn, json  bool
		skipShared bool
	}{
		{head: "{:index 0 :type :invoke :value [[:append 1 2]]}", edn: true},
		{head: "; comment\n\n{:type :ok, :f :txn, :value []}", edn: true},
		{head: "[{:type :invoke, :f :read, :process 0}\n", edn: true},
		{head: "({:type :invoke, :f :cas, :value [1 4]}", edn: true},
		{head: "#jepsen.history.Op{:index 0, :type :invoke, :value []}", edn: true},
		{head: `{"type":"ok","f":"txn","value":[["append",3,7]],"process":1}`, json: true},
		{head: `[{"index":0,"process":1,"type":"invoke","value":[]},`, json: true},
		{head: `[{"type": "invoke", "f": "read"}`, json: true},
		{head: `{"isovet":1,"sessions":2}`},
		{head: `{"s":0,"id":1,"o":[]}`},
		{head: `[{"events":[{"variable":1,"Write":2}]}]`},
		{head: "r(1,1,0,0)\nw(2,1,0,0)\n"},
		{head: "{:a 1}"},
		{head: ""},
	}
	for _, tt := range tests {
		if got := elle.SniffEDN("h", []byte(tt.head)); got != tt.edn {
			t.Errorf("SniffEDN(%q) = %v, want %v", tt.head, got, tt.edn)
		}
		if got := elle.SniffJSON("h", []byte(tt.head)); got != tt.json {
			t.Errorf("SniffJSON(%q) = %v, want %v", tt.head, got, tt.json)
		}
	}
}

func TestWriteRefusesWhatElleCannotSay(t *testing.T) {
	t.Parallel()
	b := history.NewBuilder()
	s := b.Session(history.Int(0))
	b.BeginTxn(s, history.NilDatum, history.OutcomeCommitted)
	b.Insert(b.IntKey(1), b.IntValue(2))
	h, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := elle.WriteEDN(&bytes.Buffer{}, h); err == nil || !strings.Contains(err.Error(), "is of kind insert") {
		t.Errorf("WriteEDN(insert) = %v, want an error naming the op", err)
	}
	b = history.NewBuilder()
	s = b.Session(history.Int(0))
	b.BeginTxn(s, history.NilDatum, history.OutcomeCommitted)
	b.Append(b.IntKey(1), b.IntValue(2))
	b.Write(b.IntKey(2), b.IntValue(2))
	h, _ = b.Build()
	if err := elle.WriteJSON(&bytes.Buffer{}, h); !errors.Is(err, elle.ErrMixedWorkloads) {
		t.Errorf("WriteJSON(append+write) = %v, want ErrMixedWorkloads", err)
	}
}

func ExampleReadEDN() {
	in := `{:type :invoke, :f :txn, :value [[:append :x 1] [:r :y nil]], :process 0, :time 5, :index 0}
{:type :ok, :f :txn, :value [[:append :x 1] [:r :y [7]]], :process 0, :time 9, :index 1}
`
	h, err := elle.ReadEDN(strings.NewReader(in), "example.edn")
	if err != nil {
		fmt.Println(err)
		return
	}
	t := h.Txn(0)
	fmt.Println(h.Name(0), t.Outcome, t.Time, len(t.Ops), h.Key(t.Ops[1].Key))
	var out bytes.Buffer
	_ = elle.WriteJSON(&out, h)
	fmt.Print(out.String())
	// Output:
	// T0 committed {5 9} 2 :y
	// [
	// {"index":0,"time":5,"type":"invoke","process":0,"f":"txn","value":[["append",":x",1],["r",":y",null]]},
	// {"index":1,"time":9,"type":"ok","process":0,"f":"txn","value":[["append",":x",1],["r",":y",[7]]]}
	// ]
}

// TestOpenSniffs checks that format.Open finds the Elle formats by sniffing, and that the
// Elle sniffers claim none of the other shared histories.
func TestOpenSniffs(t *testing.T) {
	shared := needShared(t)
	t.Parallel()
	for _, tt := range []struct{ path, want string }{
		{"elle/elle/huge-scc.edn", elle.EDN},
		{"elle/elle-cli/elle/paper-example.json", elle.JSON},
		{"elle/elle-cli/elle/list-append-gh-30.edn", elle.EDN},
		{"plume/testcase/elle/tap-a.edn", elle.EDN},
	} {
		h, f, err := format.Open(filepath.Join(shared, tt.path), format.Auto, format.Options{})
		if err != nil || f.Name != tt.want || len(h.Txns) == 0 {
			t.Errorf("Open(%s) = format %q, %v; want %s", tt.path, f.Name, err, tt.want)
		}
	}
	var others []string
	for _, g := range []string{"/plume/testcase/text/*", "/plume/testcase/dbcop/*/*", "/plume/testcase/viper/*/*", "/chronos/*", "/polysi/violations/*/*"} {
		m, _ := filepath.Glob(shared + g)
		others = append(others, m...)
	}
	for _, p := range others {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		head := data[:min(len(data), 4096)]
		if elle.SniffEDN(filepath.Base(p), head) || elle.SniffJSON(filepath.Base(p), head) {
			t.Errorf("an Elle sniffer claims %s", p)
		}
	}
}
