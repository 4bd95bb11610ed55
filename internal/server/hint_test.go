package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
)

// waitViolations polls the status until it counts n violations (or 10 s pass).
func waitViolations(s *Server, n int64) Status {
	deadline := time.Now().Add(10 * time.Second)
	st := s.Status()
	for st.Violations < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		st = s.Status()
	}
	return st
}

// TestInitialValueHint checks the status hint: every EXT NEVER read of 0 with the default
// nil initial value suggests --initial-value 0, every read of nil with initial 0 suggests
// null, and mixed values or a matching initial value suggest nothing.
func TestInitialValueHint(t *testing.T) {
	t.Parallel()
	read := func(tid string, ts int, v string) string {
		return fmt.Sprintf(`{"tid":%q,"sid":1,"sts":{"p":%d,"l":0},"cts":{"p":%d,"l":0},"ops":[{"t":"r","k":%d,"v":%s}]}`, tid, ts, ts+1, ts, v)
	}
	tests := []struct {
		name    string
		initial history.Datum
		values  []string
		want    string
	}{
		{"zeros", history.NilDatum, []string{"0", "0"}, "all 2 reads of a value no transaction wrote (EXT NEVER) read 0: the history probably starts with every key 0; serve it with --initial-value 0"},
		{"nils", history.Int(0), []string{"null", "null", "null"}, "all 3 reads of a value no transaction wrote (EXT NEVER) read nil: the history probably starts with every key absent; serve it with --initial-value null"},
		{"mixed", history.NilDatum, []string{"0", "7"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, hs := newTestServer(t, Options{Initial: tt.initial, Settle: 20 * time.Millisecond, Tick: 5 * time.Millisecond})
			var txns []string
			for i, v := range tt.values {
				txns = append(txns, read(fmt.Sprint("r", i), 10*(i+1), v))
			}
			if status, m := post(t, hs.URL, "["+strings.Join(txns, ",")+"]"); status != 200 {
				t.Fatalf("POST = %d %v", status, m)
			}
			st := waitViolations(s, int64(len(txns)))
			if st.Violations != int64(len(txns)) || st.Hint != tt.want {
				t.Errorf("status hint = %q (%d violations), want %q", st.Hint, st.Violations, tt.want)
			}
		})
	}
}

// TestInitialValueHintChronos posts Chronos's format-kv.json to a server with the
// default (nil) initial value, as a client that does not ask would: the history assumes 0,
// and the status says so. isovet replay asks, and refuses before sending anything.
func TestInitialValueHintChronos(t *testing.T) {
	h := loadExample(t, "format-kv.json")
	s, hs := newTestServer(t, Options{Level: anomaly.Serializable, Settle: 200 * time.Millisecond, Tick: 10 * time.Millisecond})
	_, err := Replay(context.Background(), ReplayOptions{History: h, To: hs.URL, Batch: 100})
	if err == nil || !strings.Contains(err.Error(), "--initial-value 0") {
		t.Fatalf("replay to a server with another initial value: %v, want a refusal naming --initial-value 0", err)
	}
	if n := s.requests.Load(); n != 0 {
		t.Fatalf("replay posted %d requests before refusing", n)
	}
	order, at := schedule(h, ReplayOptions{})
	bodies, _, _, err := encodeBatches(h, order, at, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bodies {
		if err := PostBatch(context.Background(), http.DefaultClient, hs.URL+"/v1/txns", b); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	st := s.Status()
	for (st.Checked < int64(len(h.Txns)) || st.Pending > 0) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		st = s.Status()
	}
	t.Logf("%d violations %v", st.Violations, st.ByKind)
	if st.Violations == 0 || !strings.Contains(st.Hint, "read 0") || !strings.Contains(st.Hint, "--initial-value 0") {
		t.Errorf("status %+v: want violations and a hint to serve with --initial-value 0", st)
	}
}
