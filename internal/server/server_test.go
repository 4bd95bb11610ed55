package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/check/ts"
	"github.com/isovet/isovet/internal/corpus"
)

// historyOf builds a history from decoded transactions (session order = slice order).
func historyOf(t testing.TB, txs []ts.Txn, initial history.Datum) *history.History {
	t.Helper()
	b := history.NewBuilder()
	b.SetInitial(b.Value(initial))
	for _, x := range txs {
		id := b.BeginTxn(b.Session(x.Session), x.ID, history.OutcomeCommitted)
		cur := b.Txn(id)
		cur.Start, cur.Commit, cur.HasTimestamps = x.Start, x.Commit, true
		for _, o := range x.Ops {
			k := b.Key(o.Key)
			switch o.Kind {
			case history.OpRead:
				b.Read(k, b.Value(o.Value))
			case history.OpWrite:
				b.Write(k, b.Value(o.Value))
			case history.OpAppend:
				b.Append(k, b.Value(o.Value))
			case history.OpListRead:
				vs := make([]history.Value, len(o.List))
				for i, v := range o.List {
					vs[i] = b.Value(v)
				}
				b.ReadList(k, vs)
			}
		}
	}
	h, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func loadExample(t testing.TB, name string) *history.History {
	t.Helper()
	data, err := os.ReadFile(corpus.Path(t, "chronos/"+name))
	if err != nil {
		t.Fatal(err)
	}
	txs, err := decodeBatch(data)
	if err != nil {
		t.Fatal(err)
	}
	return historyOf(t, txs, history.Int(0))
}

func offlineIDs(t testing.TB, h *history.History, l anomaly.Level) []string {
	t.Helper()
	res, err := ts.Run(context.Background(), h, l, ts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := range res.Violations {
		out = append(out, res.Violations[i].ID())
	}
	slices.Sort(out)
	return out
}

func newTestServer(t *testing.T, o Options) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	s.Start(context.Background())
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.Close()
		s.Close()
	})
	return s, hs
}

func post(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url+"/v1/txns", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("response is not JSON: %v", err)
	}
	return resp.StatusCode, m
}

const goodChronos = `[{"tid":"a1","sid":1,"sts":{"p":1,"l":0},"cts":{"p":2,"l":0},"ops":[{"t":"w","k":1,"v":5}]}]`

func TestBadInput(t *testing.T) {
	_, hs := newTestServer(t, Options{Initial: history.Int(0), MaxBody: 4096, Settle: time.Hour})
	big := "[" + strings.Repeat(" ", 5000) + "]"
	tests := []struct {
		name, body string
		status     int
		code       string
	}{
		{"malformed", `[{"tid":1,`, 400, "bad_json"},
		{"garbage", `}{`, 400, "bad_json"},
		{"empty", ``, 400, "empty"},
		{"unknown field chronos", `[{"tid":1,"sid":1,"sts":{"p":1,"l":0},"cts":{"p":2,"l":0},"ops":[],"bogus":1}]`, 400, "unknown_field"},
		{"unknown field native", `{"s":1,"id":1,"sts":[1,0],"cts":[2,0],"ops":[],"bogus":1}`, 400, "unknown_field"},
		{"wrong type", `[{"tid":1,"sid":1,"sts":{"p":1,"l":0},"cts":{"p":2,"l":0},"ops":"x"}]`, 400, "bad_field"},
		{"bad op", `[{"tid":1,"sid":1,"sts":{"p":1,"l":0},"cts":{"p":2,"l":0},"ops":[{"t":"z","k":1,"v":1}]}]`, 400, "bad_field"},
		{"no timestamps", `[{"tid":1,"sid":1,"ops":[]}]`, 400, "bad_field"},
		{"no timestamps native", `{"s":1,"id":3,"ops":[]}`, 400, "missing_timestamps"},
		{"snapshots only", `{"s":1,"id":3,"snap":"3:3:","ops":[["w",1,2]]}` + "\n" + `{"s":2,"snap":"4:4:","ops":[["r",1,2]]}`, 400, "missing_timestamps"},
		{"backwards chronos", `[{"tid":1,"sid":1,"sts":{"p":5,"l":0},"cts":{"p":2,"l":0},"ops":[]}]`, 422, "timestamps_backwards"},
		{"backwards native", `{"s":1,"id":7,"sts":[5,0],"cts":[2,0],"ops":[]}`, 422, "timestamps_backwards"},
		{"no id native", `{"s":1,"sts":[1,0],"cts":[2,0],"ops":[]}`, 400, "missing_id"},
		{"oversized", big, 413, "too_large"},
		{"failed statement", `{"s":1,"id":8,"sts":[1,0],"cts":[2,0],"ops":[["w",1,2],["w",2,3,{"failed":true}]]}`, 422, "failed_statement"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, m := post(t, hs.URL, tc.body)
			if status != tc.status || m["code"] != tc.code || m["error"] == "" {
				t.Errorf("POST %s = %d %v, want %d code %s", tc.name, status, m, tc.status, tc.code)
			}
			// Other clients are not disturbed.
			if status, m := post(t, hs.URL, goodChronos); status != 200 {
				t.Fatalf("good batch after %s = %d %v", tc.name, status, m)
			}
		})
	}
}

func TestStatusMetricsAndIndex(t *testing.T) {
	_, hs := newTestServer(t, Options{Initial: history.Int(0)})
	if status, m := post(t, hs.URL, goodChronos); status != 200 || m["accepted"] != float64(1) {
		t.Fatalf("POST = %d %v", status, m)
	}
	if _, m := post(t, hs.URL, goodChronos); m["duplicates"] != float64(1) {
		t.Fatalf("second POST = %v, want a duplicate", m)
	}
	resp, err := http.Get(hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"isovet_txns_ingested_total 1", "isovet_txns_pending", "isovet_violations_total", "isovet_heap_bytes", "isovet_lag_seconds", "isovet_txns_checked_total", fmt.Sprintf("isovet_memory_bound_bytes %d", DefaultMaxMemory())} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	resp, err = http.Get(hs.URL + "/")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET / = %v %v", resp, err)
	}
	resp.Body.Close()
}

// readLines collects n lines from a violations stream.
func readLines(t *testing.T, url string, sse bool, n int, timeout time.Duration) []map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if sse {
		req.Header.Set("Accept", "text/event-stream")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for len(out) < n && sc.Scan() {
		line := sc.Text()
		if sse {
			if !strings.HasPrefix(line, "data: ") {
				continue
			}
			line = strings.TrimPrefix(line, "data: ")
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("bad line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestViolationStreams(t *testing.T) {
	s, hs := newTestServer(t, Options{Initial: history.Int(0), Settle: 50 * time.Millisecond, Tick: 10 * time.Millisecond})
	for _, sse := range []bool{true, false} {
		t.Run(fmt.Sprint("sse=", sse), func(t *testing.T) {
			done := make(chan []map[string]any)
			go func() { done <- readLines(t, hs.URL+"/v1/violations", sse, 1, 5*time.Second) }()
			for s.Status().Subscribers == 0 {
				time.Sleep(5 * time.Millisecond)
			}
			tid := fmt.Sprint(`"r-`, sse, `"`)
			body := `[{"tid":` + tid + `,"sid":2,"sts":{"p":10,"l":0},"cts":{"p":11,"l":0},"ops":[{"t":"r","k":99,"v":42}]}]`
			if status, m := post(t, hs.URL, body); status != 200 {
				t.Fatalf("POST = %d %v", status, m)
			}
			got := <-done
			if len(got) != 1 || got[0]["kind"] != "violation" || got[0]["anomaly"] != "EXT" || got[0]["ext"] != "NEVER" || got[0]["key"] != "99" {
				t.Fatalf("stream = %v, want one EXT NEVER on key 99", got)
			}
		})
	}
}

// TestHTTPReplayMatchesOffline replays an authors' example over HTTP with bounded
// reordering and compares the violations file with Chronos.
func TestHTTPReplayMatchesOffline(t *testing.T) {
	h := loadExample(t, "format-kv.json")
	want := offlineIDs(t, h, anomaly.Serializable)
	for _, shards := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			file := t.TempDir() + "/violations.jsonl"
			s, hs := newTestServer(t, Options{Level: anomaly.Serializable, Initial: history.Int(0), Settle: 2 * time.Second, Tick: 10 * time.Millisecond, ViolationsFile: file, Shards: shards})
			st, err := Replay(context.Background(), ReplayOptions{History: h, To: hs.URL, Batch: 50, Delay: 10 * time.Millisecond, Rate: 20000})
			if err != nil {
				t.Fatal(err)
			}
			if st.Txns != len(h.Txns) {
				t.Fatalf("replayed %d of %d", st.Txns, len(h.Txns))
			}
			deadline := time.Now().Add(10 * time.Second)
			for s.Status().Checked < int64(len(h.Txns)) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			status := s.Status()
			t.Logf("status %+v", status)
			s.Close()
			got := fileIDs(t, file)
			if len(want) != 101 || !slices.Equal(want, got) {
				t.Errorf("online over HTTP found %d violations, offline %d (first differences: %v)", len(got), len(want), firstDiff(want, got))
			}
			if status.Ingested != int64(len(h.Txns)) || status.Violations != 101 || status.Late != 0 || status.Duplicates != 0 {
				t.Errorf("status %+v, want %d ingested, 101 violations, none late or duplicate", status, len(h.Txns))
			}
		})
	}
}

func fileIDs(t testing.TB, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var v struct{ ID string }
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("violations file line %q: %v", sc.Text(), err)
		}
		out = append(out, v.ID)
	}
	slices.Sort(out)
	return out
}

func firstDiff(a, b []string) []string {
	var d []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			d = append(d, "-"+x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			d = append(d, "+"+x)
		}
	}
	return d[:min(len(d), 6)]
}
