package format_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/histtest"
)

func mustFormat(t *testing.T, name string) format.Format {
	t.Helper()
	f, ok := format.Lookup(name)
	if !ok || !f.Writable() {
		t.Fatalf("no writable format %q", name)
	}
	return f
}

// lossSummary renders losses as "feature=count" for comparison.
func lossSummary(ls []format.Loss) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Feature.String()+"="+itoa(l.Count))
	}
	return out
}

func itoa(n int) string {
	var b []byte
	if n == 0 {
		return "0"
	}
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestLosses: one case per loss kind, each a small history and a target format, with the
// losses it must report (and none where the format holds what the history says).
func TestLosses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, to, src string
		want          []string
	}{
		{"unique sources are recovered by value", "elle-edn",
			"s1: T1 w(x,1) c; s2: T2 r(x,1)<-T1 c", nil},
		{"repeated value needs its source", "elle-edn",
			"s1: T1 w(x,1) c; s2: T2 w(x,1) c; s3: T3 r(x,1)<-T1 c", []string{"read-sources=1"}},
		{"source naming a writer of another value", "elle-edn",
			"s1: T1 w(x,1) c; s2: T2 w(x,2) c; s3: T3 r(x,2)<-T1 c", []string{"read-sources=1"}},
		{"read of the initial state named", "elle-edn",
			"s1: T1 w(x,1) c; s2: T2 r(x,nil)<-init c", nil},
		{"initial state named although someone wrote its value", "elle-edn",
			"s1: T1 w(x,nil) c; s2: T2 r(x,nil)<-init c", []string{"read-sources=1"}},
		{"own read named", "elle-edn",
			"s1: T1 w(x,1) r(x,1)<-T1 c", nil},
		{"native holds sources", "native",
			"s1: T1 w(x,1) c; s2: T2 w(x,1) c; s3: T3 r(x,1)<-T1 c", nil},
		{"predicates", "elle-edn",
			`s1: T1 w(x,1) c; s2: T2 pr("v > 0", [x=1]) c`, []string{"predicates=1"}},
		{"insert and delete", "chronos",
			"s1: T1 ins(x,1) del(y) c", []string{"insert-delete=2"}},
		{"failed ops", "elle-edn",
			"s1: T1 w(x,1)! w(y,2) c", []string{"failed-ops=1"}},
		{"aborted in chronos", "chronos",
			"s1: T1 w(x,1) abort; s2: T2 r(x,nil) c", []string{"aborted=1"}},
		{"aborted in elle", "elle-edn",
			"s1: T1 w(x,1) abort; s2: T2 r(x,nil) c", nil},
		{"several aborted in one text session", "text",
			"init 0; s1: T1 w(1,1) abort; T2 w(1,2) abort; T3 r(1,0) c", []string{"aborted-per-session=1"}},
		{"unknown in text", "text",
			"init 0; s1: T1 w(1,1) info; s2: T2 r(1,0) c", []string{"unknown-outcome=1"}},
		{"unknown then more in elle", "elle-edn",
			"s1: T1 w(x,1) info; T2 w(y,1) c", []string{"unknown-then-more=1"}},
		{"unknown nil read in elle", "elle-edn",
			"s1: T1 r(x,nil) w(x,1) info", []string{"unknown-nil-reads=1"}},
		{"unknown ends early in elle", "elle-edn",
			"s1: T1 w(x,1) info @[1,2]; s2: T2 r(x,nil) c @[3,9]", []string{"unknown-end=1"}},
		{"client time in chronos", "chronos",
			"s1: T1 w(x,1) c @[1,2]", []string{"client-time=1"}},
		{"op time in elle", "elle-edn",
			"s1: T1 w(x,1)@[1,2] c @[1,3]", []string{"op-time=1"}},
		{"timestamps in elle", "elle-json",
			"s1: T1 w(x,1) c ts[1,2]", []string{"db-timestamps=1"}},
		{"timestamps in chronos", "chronos",
			"s1: T1 w(x,1) c ts[1,2]", nil},
		{"initial value in elle", "elle-edn",
			"init 0; s1: T1 r(x,0) w(x,1) c", []string{"initial-value=1"}},
		{"initial value 0 in text", "text",
			"init 0; s1: T1 r(1,0) w(1,1) c", nil},
		{"initial nil in text", "text",
			"s1: T1 r(1,nil) w(1,1) c", []string{"non-integers=1", "initial-value=1"}},
		{"initial nil that the text format would read as 0", "text",
			"s1: T1 w(1,0) c; s2: T2 r(1,0) c", []string{"initial-value=1"}},
		{"initial value nobody reads", "elle-edn",
			"init 0; s1: T1 w(x,1) c; s2: T2 r(x,1) c", nil},
		{"initial per key", "chronos",
			"init x=5; s1: T1 r(x,5) c", []string{"initial-per-key=1"}},
		{"initial per key nobody reads", "chronos",
			"init x=5; s1: T1 w(x,6) c; s2: T2 r(x,6) c", nil},
		{"shared session ids in chronos", "chronos",
			"s1: T1 w(x,1) c; s2: T2 w(y,1) c; s1: T3 w(z,1) c", nil},
		{"non-integers in text", "text",
			"init 0; s1: T1 w(x,1) c", []string{"non-integers=1"}},
		{"lists in text", "text",
			"s1: T1 a(1,1) c", []string{"lists=1"}},
		{"registers in veristrong", "veristrong",
			"s1: T1 w(1,1) c", []string{"registers=1"}},
		{"mixed workloads in elle", "elle-edn",
			"s1: T1 a(x,1) a(x,2) c; s2: T2 w(y,1) w(z,1) r(y,1) c", []string{"mixed-workloads=2"}},
		{"empty transactions in text", "text",
			"init 0; s1: T1 c; T2 w(1,1) c", []string{"empty-transactions=1"}},
		{"several losses, broader first", "chronos",
			"s1: T1 w(x,1) abort; T2 w(x,2) abort; T3 r(x,nil) info", []string{"aborted=2", "unknown-outcome=1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := histtest.MustParse(tc.src)
			got := lossSummary(format.Losses(h, mustFormat(t, tc.to)))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Losses(%q, %s) (-want +got):\n%s", tc.src, tc.to, diff)
			}
		})
	}
}

// TestSharedSessionIDs: sessions that share a source id stay apart in every writable
// format (Elle and Chronos number them when ids repeat); a format that merged them would
// lose session order.
func TestSharedSessionIDs(t *testing.T) {
	t.Parallel()
	b := history.NewBuilder()
	for i, oc := range []history.Outcome{history.OutcomeUnknown, history.OutcomeCommitted, history.OutcomeCommitted} {
		s := b.NewSession(history.Int(1))
		b.BeginTxn(s, history.Int(int64(i)), oc)
		b.Write(b.IntKey(int64(i)), b.IntValue(1))
		b.EndTxn()
	}
	h, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	merging := format.Format{Holds: format.Everything &^ format.Holding(format.SharedSessionIDs)}
	if diff := cmp.Diff([]string{"shared-session-ids=2"}, lossSummary(format.Losses(h, merging))); diff != "" {
		t.Errorf("Losses(a merging format) (-want +got):\n%s", diff)
	}
	for _, to := range []string{"elle-edn", "chronos"} {
		f := mustFormat(t, to)
		kept := h
		if ls := format.Losses(h, f); len(ls) > 0 {
			kept = format.Drop(h, ls)
		}
		back := roundTrip(t, f, kept)
		if g, w := shape(back), shape(kept); g != w {
			t.Errorf("%s: read back\n%s\nwant\n%s", to, g, w)
		}
	}
}

// TestPlaceholdersAndNemesis: placeholder writers are a loss outside native and are left
// out by Drop; a session whose id is Elle JSON's "nemesis" is renumbered, not skipped.
func TestPlaceholdersAndNemesis(t *testing.T) {
	t.Parallel()
	b := history.NewBuilder()
	x := b.IntKey(1)
	s := b.Session(history.Str("nemesis"))
	b.BeginTxn(s, history.Int(1), history.OutcomeCommitted)
	b.ReadFrom(x, b.IntValue(5), history.Src{Kind: history.SrcTxn, Txn: 1, Op: 0})
	b.EndTxn()
	b.BeginTxn(b.Session(history.Str(history.PlaceholderSession)), history.Int(2), history.OutcomeCommitted)
	b.Write(x, b.IntValue(5))
	b.EndTxn()
	h, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	f := mustFormat(t, "elle-json")
	ls := format.Losses(h, f)
	if diff := cmp.Diff([]string{"placeholders=1"}, lossSummary(ls)); diff != "" {
		t.Fatalf("Losses (-want +got):\n%s", diff)
	}
	back := roundTrip(t, f, format.Drop(h, ls))
	if len(back.Txns) != 1 || len(back.Txns[0].Ops) != 1 {
		t.Errorf("read back %d txns, want the reader alone:\n%s", len(back.Txns), shape(back))
	}
}

// TestLossExamples: a loss names a transaction and says what it shows.
func TestLossExamples(t *testing.T) {
	t.Parallel()
	h := histtest.MustParse("s1: T1 w(x,1) c; s2: T2 w(x,1) c; s3: T3 r(x,1)<-T1 c")
	ls := format.Losses(h, mustFormat(t, "elle-edn"))
	if len(ls) != 1 {
		t.Fatalf("Losses = %v, want one", ls)
	}
	got := ls[0].String()
	for _, want := range []string{"read-sources: 1 reads", "txn T3 reads x=1 from txn T1 op 0; 2 writes of that value"} {
		if !strings.Contains(got, want) {
			t.Errorf("loss %q does not say %q", got, want)
		}
	}
	if ls[0].Txn != 2 {
		t.Errorf("example txn = %d, want 2 (T3)", ls[0].Txn)
	}
}

// TestDropThenWrite: after Drop, the format holds what is left (no loss remains but the
// ones the format reads differently), the writer accepts it, and reading it back gives the
// history without the dropped parts.
func TestDropThenWrite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, to, src string
		want          string // the expected history after the round trip, in the DSL
	}{
		{"chronos leaves out aborted, unknown and failed", "chronos",
			"s1: T1 w(x,1) abort; T2 w(x,2) w(y,3)! c ts[1,2]; s2: T3 r(x,2) info; T4 r(x,2) c ts[3,4]",
			"s1: T2 w(x,2) c ts[1,2]; s2: T4 r(x,2) c ts[3,4]"},
		{"elle strips sources and op times", "elle-edn",
			"s1: T1 w(x,1)@[1,2] c @[1,3]; s2: T2 w(x,1) c @[4,5]; s3: T3 r(x,1)<-T1 c @[6,7]",
			"s1: T1 w(x,1) c @[1,3]; s2: T2 w(x,1) c @[4,5]; s3: T3 r(x,1) c @[6,7]"},
		{"text merges a session's aborted transactions", "text",
			"init 0; s1: T1 w(1,1) abort; T2 r(1,0) c; T3 w(1,2) abort",
			"init 0; s1: T1 w(1,1) w(1,2) abort; T2 r(1,0) c"},
		{"elle leaves out predicates and the transaction they empty", "elle-edn",
			`s1: T1 w(x,1) c; s2: T2 pr("v > 0", [x=1]) c; T3 r(x,1) c`,
			"s1: T1 w(x,1) c; s2: T2 c; T3 r(x,1) c"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := mustFormat(t, tc.to)
			h := histtest.MustParse(tc.src)
			ls := format.Losses(h, f)
			if len(ls) == 0 {
				t.Fatalf("no losses for %q in %s", tc.src, tc.to)
			}
			d := format.Drop(h, ls)
			if err := history.Validate(d); err != nil {
				t.Fatalf("Drop gives an invalid history: %v", err)
			}
			for _, l := range format.Losses(d, f) {
				switch l.Feature {
				case format.Initial, format.InitialPerKey, format.UnknownThenMore, format.UnknownEnd, format.SharedSessionIDs:
				default:
					t.Errorf("after Drop, %s still loses %v", tc.to, l)
				}
			}
			got := roundTrip(t, f, d)
			want := histtest.MustParse(tc.want)
			if g, w := shape(got), shape(want); g != w {
				t.Errorf("round trip through %s:\n%s\nwant:\n%s", tc.to, g, w)
			}
		})
	}
}

// roundTrip writes h in f and reads it back.
func roundTrip(t *testing.T, f format.Format, h *history.History) *history.History {
	t.Helper()
	p := filepath.Join(t.TempDir(), "h")
	if err := writeTo(p, f, h); err != nil {
		t.Fatalf("writing %s: %v", f.Name, err)
	}
	got, _, err := format.Open(p, f.Name, format.Options{})
	if err != nil {
		t.Fatalf("reading back %s: %v", f.Name, err)
	}
	return got
}

// writeTo writes h in f at path p: a file, or for a directory format a directory of its
// member files.
func writeTo(p string, f format.Format, h *history.History) error {
	if f.WriteDir == nil {
		var buf bytes.Buffer
		if err := f.Write(&buf, h); err != nil {
			return err
		}
		return os.WriteFile(p, buf.Bytes(), 0o644)
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		return err
	}
	files := map[string]*bytes.Buffer{}
	err := f.WriteDir(h, func(name string) (io.Writer, error) {
		files[name] = &bytes.Buffer{}
		return files[name], nil
	})
	for name, b := range files {
		if err == nil {
			err = os.WriteFile(filepath.Join(p, name), b.Bytes(), 0o644)
		}
	}
	return err
}

// shape renders what h says, without source ids and the initial value (which Losses
// judges by the reads that see it): each session with transactions (in
// sorted order, as session order means nothing), each transaction's outcome, ops, client
// interval and timestamps.
func shape(h *history.History) string {
	var blocks []string
	for _, sess := range h.Sessions {
		var b strings.Builder
		for _, id := range sess.Txns {
			t := h.Txn(id)
			fmt.Fprintf(&b, "session: %v", t.Outcome)
			for i, o := range t.Ops {
				if t.Outcome == history.OutcomeAborted && o.Kind == history.OpRead && o.Value == history.Nil {
					// Elle cannot tell it from a read with no result, and no checker reads
					// what an aborted transaction read.
					continue
				}
				fmt.Fprintf(&b, " %v(%s", o.Kind, h.Key(o.Key))
				if o.Kind == history.OpListRead {
					b.WriteString(",[")
					for j, v := range h.List(o) {
						if j > 0 {
							b.WriteByte(' ')
						}
						b.WriteString(history.ShowValue(h.Value(v)))
					}
					b.WriteString("]")
				} else if o.Kind != history.OpDelete {
					fmt.Fprintf(&b, ",%s", history.ShowValue(h.Value(o.Value)))
				}
				b.WriteString(")")
				if o.Failed() {
					b.WriteString("!")
				}
				if o.Src.Kind != history.SrcByValue && !recovered(h, id, i) {
					fmt.Fprintf(&b, "<-%s", srcShape(h, o.Src))
				}
				if t.OpTimes != nil {
					fmt.Fprintf(&b, "@%v", t.OpTimes[i])
				}
			}
			if t.HasTime {
				fmt.Fprintf(&b, " @%v", t.Time)
			}
			if t.HasTimestamps {
				fmt.Fprintf(&b, " ts[%v,%v]", t.Start, t.Commit)
			}
			b.WriteString("\n")
		}
		if b.Len() > 0 {
			blocks = append(blocks, b.String())
		}
	}
	slices.Sort(blocks)
	return strings.Join(blocks, "--\n")
}

// recovered reports whether value matching finds the writer that read i of transaction
// id names, and only it (docs/formats.md, read-sources): a writer named where value
// matching would find it says nothing more, and Cobra's writer names it.
func recovered(h *history.History, id history.TxnID, i int) bool {
	t := h.Txn(id)
	o := t.Ops[i]
	for j := i - 1; j >= 0; j-- {
		if w := t.Ops[j]; w.Kind == history.OpWrite && w.Key == o.Key {
			return o.Src == history.Src{Kind: history.SrcTxn, Txn: id, Op: int32(j)} && w.Value == o.Value
		}
	}
	var found []history.Src
	for wid, w := range h.All() {
		for j, wo := range w.Ops {
			if wid != id && wo.Kind == history.OpWrite && wo.Key == o.Key && wo.Value == o.Value {
				found = append(found, history.Src{Kind: history.SrcTxn, Txn: wid, Op: int32(j)})
			}
		}
	}
	if h.InitialValue(o.Key) == o.Value {
		found = append(found, history.Src{Kind: history.SrcInit})
	}
	return len(found) == 1 && found[0] == o.Src
}

// srcShape renders a source without transaction ids, which writers may change: a
// transaction by its client interval and ops.
func srcShape(h *history.History, s history.Src) string {
	if s.Kind != history.SrcTxn {
		return fmt.Sprint(s.Kind)
	}
	w := h.Txn(s.Txn)
	var b strings.Builder
	fmt.Fprintf(&b, "{%v", w.Outcome)
	if w.HasTime {
		fmt.Fprintf(&b, "@%v", w.Time)
	}
	for _, o := range w.Ops {
		fmt.Fprintf(&b, " %v(%s,%s)", o.Kind, h.Key(o.Key), history.ShowValue(h.Value(o.Value)))
	}
	fmt.Fprintf(&b, "}.%d", s.Op)
	return b.String()
}

// TestHoldsTableInDocs: the table in docs/formats.md ("What each format holds") says what
// the registry says, feature by feature and format by format.
func TestHoldsTableInDocs(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "formats.md"))
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	rows := map[string][]string{}
	for _, ln := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(ln, "| ") {
			continue
		}
		cells := strings.Split(strings.Trim(ln, "| "), " | ")
		switch {
		case cells[0] == "feature":
			cols = cells[1 : len(cells)-1]
		case cols != nil && strings.HasPrefix(cells[0], "`") && len(rows) < len(format.AllFeatures()):
			rows[strings.Trim(cells[0], "`")] = cells[1:]
		}
	}
	if len(cols) == 0 {
		t.Fatal("no holds table in docs/formats.md")
	}
	for _, ft := range format.AllFeatures() {
		row, ok := rows[ft.String()]
		if !ok {
			t.Errorf("docs/formats.md: no row for %s", ft)
			continue
		}
		for i, col := range cols {
			f := mustFormat(t, strings.Split(col, ",")[0])
			if got, want := strings.HasPrefix(row[i], "yes"), f.Holds.Has(ft); got != want {
				t.Errorf("docs/formats.md: %s / %s says %q; the registry says holds=%v", ft, col, row[i], want)
			}
		}
		want := ft.Info().Drop
		if want == "" {
			want = "refuses"
		}
		if got := row[len(row)-1]; got != want {
			t.Errorf("docs/formats.md: %s with --lossy says %q, the table %q", ft, got, want)
		}
	}
	for _, f := range format.Formats() {
		if f.Writable() && !slicesContainsPrefix(cols, f.Name) {
			t.Errorf("docs/formats.md: no column for writable format %s", f.Name)
		}
	}
}

func slicesContainsPrefix(cols []string, name string) bool {
	for _, c := range cols {
		for _, n := range strings.Split(c, ", ") {
			if n == name {
				return true
			}
		}
	}
	return false
}

// TestSnapshotsKeepDerivedTimestamps: snapshots are a loss outside native; dropping them
// for Chronos keeps the timestamps derived from them, and Elle loses both.
func TestSnapshotsKeepDerivedTimestamps(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "h.jsonl")
	src := `{"isovet":1}
{"s":1,"id":10,"snap":"10:10:","ops":[["w",1,5]]}
{"s":2,"id":11,"snap":"11:11:","ops":[["r",1,5]]}
`
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	h, _, err := format.Open(p, "native", format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !h.HasTimestamps() {
		t.Fatalf("no timestamps derived from the snapshots: %v", h.SnapshotErr)
	}
	for _, tc := range []struct {
		to   string
		want []string
	}{
		{"native", nil},
		{"chronos", []string{"snapshots=2"}},
		{"elle-edn", []string{"db-timestamps=2", "snapshots=2"}},
	} {
		f := mustFormat(t, tc.to)
		ls := format.Losses(h, f)
		if diff := cmp.Diff(tc.want, lossSummary(ls)); diff != "" {
			t.Errorf("Losses(%s) (-want +got):\n%s", tc.to, diff)
		}
		back := roundTrip(t, f, format.Drop(h, ls))
		if got, want := back.HasTimestamps(), f.Holds.Has(format.Timestamps); got != want {
			t.Errorf("%s: timestamps read back = %v, want %v", tc.to, got, want)
		}
	}
}

// TestGeneratedRoundTrips: on generated histories of every shape, a conversion Losses
// finds nothing wrong with reads back as the same history (sessions, outcomes, ops, times,
// timestamps; ids aside), and after Drop the writer accepts what is left.
func TestGeneratedRoundTrips(t *testing.T) {
	t.Parallel()
	shapes := []histtest.GenOptions{
		{},
		{ListAppend: true},
		{Intervals: true, UnknownRatio: 0.2, AbortRatio: 0.2},
		{ListAppend: true, Intervals: true, UnknownRatio: 0.2, AbortRatio: 0.2},
		{Timestamps: true, DupRatio: 0.3},
		{Timestamps: true, ListAppend: true, AbortRatio: 0.1},
		{Intervals: true, Timestamps: true, UnknownRatio: 0.3, AbortRatio: 0.3, DupRatio: 0.3, Perturb: 0.2},
	}
	var writable []format.Format
	for _, f := range format.Formats() {
		if f.Writable() {
			writable = append(writable, f)
		}
	}
	kept := 0
	for i, o := range shapes {
		for seed := uint64(1); seed <= 8; seed++ {
			h := histtest.Gen(seed, o)
			for _, f := range writable {
				ls := format.Losses(h, f)
				if len(ls) > 0 {
					if _, bad := format.Undroppable(ls); !bad {
						d := format.Drop(h, ls)
						if err := history.Validate(d); err != nil {
							t.Errorf("shape %d seed %d: Drop for %s gives an invalid history: %v", i, seed, f.Name, err)
							continue
						}
						if err := writeTo(filepath.Join(t.TempDir(), "h"), f, d); err != nil {
							t.Errorf("shape %d seed %d: %s refuses what Drop left: %v (losses %v)", i, seed, f.Name, err, lossSummary(ls))
						} else if !readDifferently(ls) {
							if g, w := shape(roundTrip(t, f, d)), shape(d); g != w {
								t.Errorf("shape %d seed %d: %s: what Drop left (losses %v) reads back differently:\n%s\nwant:\n%s", i, seed, f.Name, lossSummary(ls), g, w)
							}
						}
					}
					continue
				}
				kept++
				if g, w := shape(roundTrip(t, f, h)), shape(h); g != w {
					t.Errorf("shape %d seed %d: %s found no loss, but the history read back differs:\n%s\nwant:\n%s", i, seed, f.Name, g, w)
				}
			}
		}
	}
	if kept == 0 {
		t.Error("no generated history converted without loss")
	}
	t.Logf("%d conversions without loss read back the same", kept)
}

// readDifferently reports whether some loss in ls is one that Drop leaves in the history
// for the format to read back differently.
func readDifferently(ls []format.Loss) bool {
	for _, l := range ls {
		switch l.Feature {
		case format.UnknownThenMore, format.UnknownEnd, format.SharedSessionIDs:
			return true
		}
	}
	return false
}
