package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/check/ts"
	"github.com/isovet/isovet/internal/server"
)

// service is an isovet serve run in-process on a loopback port for a test.
type service struct {
	url, file, token string
	cancel           func()
	done             chan error
}

// startService starts the service with o (on a free loopback port, its violations to a
// file) and stops it when the test ends.
func startService(t *testing.T, o server.Options) *service {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.Addr = ln.Addr().String()
	ln.Close()
	o.ViolationsFile = filepath.Join(t.TempDir(), "violations.jsonl")
	o.Settle, o.Tick, o.MaxMemory, o.GCPercent = 200*time.Millisecond, 10*time.Millisecond, -1, -1
	ctx, cancel := context.WithCancel(context.Background())
	s := &service{url: "http://" + o.Addr, file: o.ViolationsFile, token: o.Token, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- server.Serve(ctx, o) }()
	t.Cleanup(s.stop)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := s.status(); err == nil {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("isovet serve did not answer at %s", s.url)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop stops the service (once) and waits for it.
func (s *service) stop() {
	if s.cancel != nil {
		s.cancel()
		<-s.done
		s.cancel = nil
	}
}

func (s *service) status() (server.Status, error) {
	var st server.Status
	req, err := http.NewRequest(http.MethodGet, s.url+"/v1/status", nil)
	if err != nil {
		return st, err
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("status: %s", resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// violations waits until the service has checked and settled committed transactions,
// stops it, and returns the ids of the violations it wrote to its file, sorted.
func (s *service) violations(t *testing.T, committed int) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := s.status()
		if err == nil && st.Checked >= int64(committed) && st.Pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the service checked %d of %d transactions in 30s (status %+v, %v)", st.Checked, committed, st, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.stop()
	f, err := os.Open(s.file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var v struct{ Kind, ID string }
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("violations file: %v: %s", err, sc.Text())
		}
		if v.Kind == "violation" {
			ids = append(ids, v.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// offline reads the recorded history and returns it with the ids of the timestamp
// checker's violations at level l (what isovet check --method timestamp reports), sorted.
func offline(t *testing.T, path string, l anomaly.Level) (*history.History, []string) {
	t.Helper()
	h, _, err := format.Open(path, "", format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ts.Run(context.Background(), h, l, ts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range res.Violations {
		ids = append(ids, res.Violations[i].ID())
	}
	slices.Sort(ids)
	return h, ids
}

func committedOf(h *history.History) int {
	n := 0
	for i := range h.Txns {
		if h.Txns[i].Committed() {
			n++
		}
	}
	return n
}

// sameViolations fails unless online and offline hold the same violations, and some.
func sameViolations(t *testing.T, online, offline []string) {
	t.Helper()
	if len(offline) == 0 {
		t.Fatal("the offline check found no violation in a write-skew run at serializable: the test proves nothing")
	}
	t.Logf("%d violations online, %d offline", len(online), len(offline))
	if !slices.Equal(online, offline) {
		t.Fatalf("online %d violations, offline %d; online only %v, offline only %v", len(online), len(offline), minus(online, offline), minus(offline, online))
	}
}

// minus is the first few of a not in b.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) && len(out) < 5 {
			out = append(out, x)
		}
	}
	return out
}

// TestRunServeReportsWriteSkewOnline: isovet run on memdb at snapshot isolation streams a
// write-skew workload to an isovet serve checking serializability over HTTP; the service
// reports the write skew as it happens, and its violations are exactly the offline
// timestamp check's on the recorded file; the recording, replayed to a fresh service,
// is accepted whole and gives the same violations.
func TestRunServeReportsWriteSkewOnline(t *testing.T) {
	svc := startService(t, server.Options{Level: anomaly.Serializable, Initial: history.Int(0)})
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "run", "--db", "memdb://si", "--workload", "write-skew", "-n", "300", "--check", "serializable", "--out", out, "--serve", svc.url)
	if code != 1 {
		t.Fatalf("run: exit %d, want 1 (write skew at serializable)\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "streamed ") {
		t.Fatalf("run does not say what it streamed: %s", stderr)
	}
	hist := filepath.Join(out, "history.jsonl")
	h, want := offline(t, hist, anomaly.Serializable)
	sameViolations(t, svc.violations(t, committedOf(h)), want)
	if code, _, _ := runCLI(t, "check", "--method", "timestamp", "--level", "serializable", hist); code != 1 {
		t.Fatalf("isovet check --method timestamp: exit %d, want 1", code)
	}

	// The native recording, replayed, is accepted whole.
	svc2 := startService(t, server.Options{Level: anomaly.Serializable, Initial: history.Int(0)})
	code, stdout, stderr = runCLI(t, "replay", hist, "--to", svc2.url, "--batch", "50")
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if want := fmt.Sprintf("sent %d transactions", committedOf(h)); !strings.Contains(stdout, want) {
		t.Fatalf("replay says %q, want %q", stdout, want)
	}
	sameViolations(t, svc2.violations(t, committedOf(h)), want)
}

// TestReplayRefusals: replay refuses up front, saying why, what the online checker cannot
// check as the offline one would (an Elle history has no timestamps), a service started
// with another initial value than the history's, and stops with the service's reason and
// a non-zero exit when the service refuses a batch.
func TestReplayRefusals(t *testing.T) {
	svc := startService(t, server.Options{Level: anomaly.Serializable, Initial: history.Int(0), MaxBody: 1024})
	edn := filepath.Join("..", "..", "testdata", "examples", "lost-update.edn")
	code, _, stderr := runCLI(t, "replay", edn, "--to", svc.url)
	if code != exitUsage || !strings.Contains(stderr, "nothing was sent") || !strings.Contains(stderr, "no database start and commit timestamps") {
		t.Fatalf("replay of an Elle history: exit %d, %s", code, stderr)
	}

	uneven := writeInput(t, t.TempDir(), "uneven.jsonl", `{"isovet":1,"initial":0,"initial_keys":[["a",1]]}
{"s":0,"sts":[1,0],"cts":[2,0],"ops":[["r","a",1],["w","b",5]]}
`)
	code, _, stderr = runCLI(t, "replay", uneven, "--to", svc.url)
	if code != exitUsage || !strings.Contains(stderr, "start at different values") {
		t.Fatalf("replay of a history whose keys start at different values: exit %d, %s", code, stderr)
	}
	unknown := writeInput(t, t.TempDir(), "unknown.jsonl", `{"isovet":1,"initial":0}
{"s":0,"o":"u","sts":[1,0],"cts":[2,0],"ops":[["w","b",5]]}
{"s":1,"sts":[3,0],"cts":[4,0],"ops":[["r","b",5]]}
`)
	code, _, stderr = runCLI(t, "replay", unknown, "--to", svc.url)
	if code != exitUsage || !strings.Contains(stderr, "unknown outcome") {
		t.Fatalf("replay of a history with an unknown outcome: exit %d, %s", code, stderr)
	}

	out := t.TempDir()
	if code, stdout, stderr := runCLI(t, "run", "--db", "memdb://si", "--workload", "write-skew", "-n", "100", "--check", "snapshot-isolation", "--out", out); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	hist := filepath.Join(out, "history.jsonl")
	code, _, stderr = runCLI(t, "replay", hist, "--to", svc.url, "--batch", "100")
	if code != exitUsage || !strings.Contains(stderr, "413") || !strings.Contains(stderr, "body larger than 1024 bytes") || !strings.Contains(stderr, "accepted 0 transactions") {
		t.Fatalf("replay refused by the service: exit %d, %s", code, stderr)
	}

	other := startService(t, server.Options{Level: anomaly.Serializable})
	code, _, stderr = runCLI(t, "replay", hist, "--to", other.url)
	if code != exitUsage || !strings.Contains(stderr, "restart isovet serve with --initial-value 0") {
		t.Fatalf("replay to a service with another initial value: exit %d, %s", code, stderr)
	}
	if st, _ := other.status(); st.Ingested != 0 {
		t.Fatalf("the service was sent %d transactions before the refusal", st.Ingested)
	}
	code, _, stderr = runCLI(t, "run", "--db", "memdb://si", "--workload", "write-skew", "-n", "50", "--serve", other.url)
	if code != exitUsage || !strings.Contains(stderr, "--initial-value 0") || !strings.Contains(stderr, "nothing was run") {
		t.Fatalf("run --serve to a service with another initial value: exit %d, %s", code, stderr)
	}
}

// natsTestURL returns the NATS JetStream server for tests, skipping visibly (failing
// under ISOVET_REQUIRE_SERVICES=1) when none answers.
func natsTestURL(t *testing.T) string {
	t.Helper()
	url := os.Getenv("ISOVET_NATS_URL")
	if url == "" {
		url = nats.DefaultURL
	}
	nc, err := nats.Connect(url, nats.Timeout(2*time.Second))
	if err == nil {
		var js jetstream.JetStream
		if js, err = jetstream.New(nc); err == nil {
			_, err = js.AccountInfo(context.Background())
		}
		nc.Close()
	}
	if err != nil {
		msg := fmt.Sprintf("NATS JetStream is not reachable at %s (set ISOVET_NATS_URL or start nats-server -js): %v", url, err)
		if os.Getenv("ISOVET_REQUIRE_SERVICES") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return url
}

// testStream creates a stream of its own for a test (deleted at its end) and returns its
// name and subject.
func testStream(t *testing.T, url string) (name, subject string) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	suffix := fmt.Sprint(time.Now().UnixNano())
	name, subject = "ISOVET_STREAM_TEST_"+suffix, "isovet.streamtest."+suffix
	if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{Name: name, Subjects: []string{subject + ".>"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		js.DeleteStream(context.Background(), name)
		nc.Close()
	})
	return name, subject + ".txns"
}

// TestRunNATSReportsWriteSkewOnline is TestRunServeReportsWriteSkewOnline over NATS
// JetStream, through an existing stream of another name than the default; replay uses
// the same stream, and a replay to a stream that does not take the subject is refused.
func TestRunNATSReportsWriteSkewOnline(t *testing.T) {
	url := natsTestURL(t)
	stream, subject := testStream(t, url)
	svc := startService(t, server.Options{Level: anomaly.Serializable, Initial: history.Int(0), NATS: url, Stream: stream, Subject: subject, Durable: "checker"})
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "run", "--db", "memdb://si", "--workload", "write-skew", "-n", "300", "--check", "serializable", "--out", out,
		"--nats", url, "--stream", stream, "--subject", subject)
	if code != 1 {
		t.Fatalf("run: exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "existing stream "+stream) {
		t.Fatalf("run does not say it used the existing stream: %s", stderr)
	}
	hist := filepath.Join(out, "history.jsonl")
	h, want := offline(t, hist, anomaly.Serializable)
	sameViolations(t, svc.violations(t, committedOf(h)), want)

	stream2, subject2 := testStream(t, url)
	svc2 := startService(t, server.Options{Level: anomaly.Serializable, Initial: history.Int(0), NATS: url, Stream: stream2, Subject: subject2, Durable: "checker"})
	code, stdout, stderr = runCLI(t, "replay", hist, "--to", url, "--stream", stream2, "--subject", subject2)
	if code != 0 || !strings.Contains(stdout, "existing stream "+stream2) {
		t.Fatalf("replay over NATS: exit %d\n%s\n%s", code, stdout, stderr)
	}
	sameViolations(t, svc2.violations(t, committedOf(h)), want)

	code, _, stderr = runCLI(t, "replay", hist, "--to", url, "--stream", stream2, "--subject", "isovet.elsewhere")
	if code != exitUsage || !strings.Contains(stderr, "does not take subject isovet.elsewhere") {
		t.Fatalf("replay to a stream that does not take the subject: exit %d, %s", code, stderr)
	}
}

// TestRunServeRefusesUntimedDatabases: a database that gives no timestamps as
// transactions complete is refused before anything runs, with the reason.
func TestRunServeRefusesUntimedDatabases(t *testing.T) {
	code, _, stderr := runCLI(t, "run", "--db", "memdb://si?timestamps=off", "--workload", "write-skew", "-n", "20", "--serve", "http://127.0.0.1:1")
	if code != exitUsage || !strings.Contains(stderr, "timestamps=off") {
		t.Fatalf("run --serve on memdb without timestamps: exit %d, %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "run", "--db", "sqlite://"+filepath.Join(t.TempDir(), "db"), "--workload", "write-skew", "-n", "20", "--serve", "http://127.0.0.1:1")
	if code != exitUsage || !strings.Contains(stderr, "gives no start and commit timestamps") {
		t.Fatalf("run --serve on SQLite: exit %d, %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "run", "--db", "memdb://si", "--workload", "pred-write-skew", "-n", "20", "--serve", "http://127.0.0.1:1")
	if code != exitUsage || !strings.Contains(stderr, "predicate reads and writes") {
		t.Fatalf("run --serve of a row workload: exit %d, %s", code, stderr)
	}

}

// refusingService answers its status as a service checking serializability from 0, takes
// the first accept batches and refuses every later one with reason.
func refusingService(t *testing.T, accept int, reason string) string {
	t.Helper()
	var mu sync.Mutex
	posts := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/v1/status":
			fmt.Fprint(w, `{"schema":1,"kind":"status","level":"serializable","initial_value":0}`)
		case r.Method == http.MethodPost && r.URL.Path == "/v1/txns":
			mu.Lock()
			posts++
			n := posts
			mu.Unlock()
			if n > accept {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintf(w, `{"schema":1,"kind":"error","error":%q,"code":"overloaded"}`, reason)
				return
			}
			fmt.Fprint(w, `{"schema":1,"kind":"accepted"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestReplayStopsAtRefusal: a refusal after some batches were accepted stops replay with
// the service's reason, what it accepted before, and exit 2.
func TestReplayStopsAtRefusal(t *testing.T) {
	out := t.TempDir()
	if code, stdout, stderr := runCLI(t, "run", "--db", "memdb://si", "--workload", "write-skew", "-n", "100", "--check", "snapshot-isolation", "--out", out); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	url := refusingService(t, 2, "the checker is full")
	code, stdout, stderr := runCLI(t, "replay", filepath.Join(out, "history.jsonl"), "--to", url, "--batch", "10")
	if code != exitUsage || !strings.Contains(stderr, "503 Service Unavailable") || !strings.Contains(stderr, "the checker is full") ||
		!strings.Contains(stderr, "accepted 20 transactions in 2 batches") || strings.Contains(stdout, "sent ") {
		t.Fatalf("replay refused after two batches: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}

// TestRunServeFailureKeepsRecording: when the service refuses what run streams, the run
// still records the whole history and checks it, then fails (exit 2) saying so.
func TestRunServeFailureKeepsRecording(t *testing.T) {
	url := refusingService(t, 0, "no room")
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "run", "--db", "memdb://si", "--workload", "write-skew", "-n", "200", "--check", "snapshot-isolation", "--out", out, "--serve", url)
	if code != exitUsage || !strings.Contains(stderr, "streaming to "+url+" failed after it accepted 0 transactions") || !strings.Contains(stderr, "no room") {
		t.Fatalf("run --serve to a refusing service: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "snapshot-isolation, checked by") {
		t.Fatalf("the run did not check its history: %s", stdout)
	}
	h, _, err := format.Open(filepath.Join(out, "history.jsonl"), "", format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("recorded %d transactions", len(h.Txns)); !strings.Contains(stdout, want) || committedOf(h) < 200 {
		t.Fatalf("the recording holds %d transactions (%d committed); the run said: %s", len(h.Txns), committedOf(h), stdout)
	}
}

// pgTestDSN returns the PostgreSQL server for tests, skipping visibly (failing under
// ISOVET_REQUIRE_SERVICES=1) when none answers.
func pgTestDSN(t *testing.T) string {
	t.Helper()
	d := os.Getenv("ISOVET_PG_DSN")
	if d == "" {
		d = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	u, err := neturl.Parse(d)
	if err == nil {
		var c net.Conn
		if c, err = net.DialTimeout("tcp", u.Host, 2*time.Second); err == nil {
			c.Close()
		}
	}
	if err != nil {
		msg := fmt.Sprintf("PostgreSQL not reachable at %s (set ISOVET_PG_DSN): %v", d, err)
		if os.Getenv("ISOVET_REQUIRE_SERVICES") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return d
}

// TestRunServePostgresAndReplay: a PostgreSQL run is not streamed (its timestamps come from the whole
// history's snapshots), and says so before it runs; its recording, replayed, is refused by
// a service checking serializability (whose verdict would rest on a commit order isovet
// chose) and accepted whole by one checking snapshot isolation, with the offline
// timestamp check's violations.
func TestRunServePostgresAndReplay(t *testing.T) {
	dsn := pgTestDSN(t)
	table := fmt.Sprintf("isovet_stream_%d", time.Now().UnixNano()%1_000_000)
	svc := startService(t, server.Options{Level: anomaly.SnapshotIsolation, Initial: history.Int(0)})
	code, _, stderr := runCLI(t, "run", "--db", dsn, "--isolation", "repeatable-read", "--workload", "write-skew", "-n", "20", "--table", table, "--serve", svc.url)
	if code != exitUsage || !strings.Contains(stderr, "PostgreSQL gives snapshots") || !strings.Contains(stderr, "isovet replay") {
		t.Fatalf("run --serve on PostgreSQL: exit %d, %s", code, stderr)
	}
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "run", "--db", dsn, "--isolation", "repeatable-read", "--workload", "write-skew", "-n", "200", "--check", "snapshot-isolation", "--table", table, "--out", out)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	hist := filepath.Join(out, "history.jsonl")
	ser := startService(t, server.Options{Level: anomaly.Serializable, Initial: history.Int(0)})
	code, _, stderr = runCLI(t, "replay", hist, "--to", ser.url)
	if code != exitUsage || !strings.Contains(stderr, "derived from the database's snapshots") {
		t.Fatalf("replay of derived timestamps to a serializable service: exit %d, %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "replay", hist, "--to", "nats://127.0.0.1:1")
	if code != exitUsage || !strings.Contains(stderr, "over NATS replay cannot ask the service's level") {
		t.Fatalf("replay of derived timestamps over NATS: exit %d, %s", code, stderr)
	}
	code, stdout, stderr = runCLI(t, "replay", hist, "--to", svc.url)
	h, want := offline(t, hist, anomaly.SnapshotIsolation)
	if code != 0 || !strings.Contains(stdout, fmt.Sprintf("sent %d transactions", committedOf(h))) {
		t.Fatalf("replay: exit %d\n%s\n%s", code, stdout, stderr)
	}
	got := svc.violations(t, committedOf(h))
	t.Logf("%d violations online, %d offline, of %d committed transactions", len(got), len(want), committedOf(h))
	if !slices.Equal(got, want) {
		t.Fatalf("online %v, offline %v", got, want)
	}
}

// TestRunServeAndReplayWithToken: a service that requires a token takes what run --serve
// and replay send with it, and refuses them without it before anything is sent.
func TestRunServeAndReplayWithToken(t *testing.T) {
	svc := startService(t, server.Options{Level: anomaly.Serializable, Initial: history.Int(0), Token: "s3cret"})
	out := t.TempDir()
	code, _, stderr := runCLI(t, "run", "--db", "memdb://si", "--workload", "write-skew", "-n", "50", "--check", "serializable", "--out", out, "--serve", svc.url)
	if code != exitUsage || !strings.Contains(stderr, "401") || !strings.Contains(stderr, "nothing was run") {
		t.Fatalf("run --serve without the token: exit %d, %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "run", "--db", "memdb://si", "--workload", "write-skew", "-n", "200", "--check", "serializable", "--out", out, "--serve", svc.url, "--token", "s3cret")
	if code != 1 || !strings.Contains(stderr, "streamed ") {
		t.Fatalf("run --serve with the token: exit %d\n%s\n%s", code, stdout, stderr)
	}
	hist := filepath.Join(out, "history.jsonl")
	if code, _, stderr := runCLI(t, "replay", hist, "--to", svc.url); code != exitUsage || !strings.Contains(stderr, "401") {
		t.Fatalf("replay without the token: exit %d, %s", code, stderr)
	}
	h, want := offline(t, hist, anomaly.Serializable)
	sameViolations(t, svc.violations(t, committedOf(h)), want)
}
