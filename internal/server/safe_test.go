package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/cputime"
)

// bigTxn is one native JSON line: a transaction of n operations, a write and then a read
// of each of n/2 distinct keys (the read is internal, checked against the write).
func bigTxn(id, n int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"s":1,"id":%d,"sts":[1,0],"cts":[2,0],"ops":[`, id)
	for k := range n / 2 {
		if k > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `["w",%d,%d],["r",%d,%d]`, k, k+1, k, k+1)
	}
	b.WriteString("]}\n")
	return b.Bytes()
}

// TestServeLargeTransaction posts one transaction of 150,000 operations on 75,000 keys:
// its cost must be linear in its operations (a scan of the keys touched so far per
// operation made it 26 CPU-seconds), so it is answered in well under a second of CPU.
func TestServeLargeTransaction(t *testing.T) {
	srv, hs := newTestServer(t, Options{Initial: history.Int(0), Settle: 50 * time.Millisecond})
	body := bigTxn(1, 150_000)
	c0, w0 := cputime.Self(), time.Now()
	resp, err := http.Post(hs.URL+"/v1/txns", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cpu, wall := cputime.Self()-c0, time.Since(w0)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST of a 150,000-operation transaction: %d", resp.StatusCode)
	}
	t.Logf("150,000 operations: %v CPU, %v wall", cpu, wall)
	limit := time.Second
	if raceEnabled {
		limit = 10 * time.Second
	}
	if cpu > limit || wall > 10*limit {
		t.Errorf("150,000 operations took %v CPU (%v wall), want under %v", cpu, wall, limit)
	}
	// Its reads are internal and agree with its writes: nothing to report.
	time.Sleep(200 * time.Millisecond)
	st := srv.Status()
	if st.Violations != 0 || st.Ingested != 1 {
		t.Errorf("status after the large transaction: %d violations, %d ingested; want 0 and 1", st.Violations, st.Ingested)
	}
}

// startServe runs s.serve on a loopback port, as Serve does, and returns its address.
func startServe(t *testing.T, o Options) (*Server, string) {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return s, ln.Addr().String()
}

// slowBody opens a connection to addr and sends the header of a POST declaring a body of
// n bytes, and one byte of it.
func slowBody(t *testing.T, addr string, n int64) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "POST /v1/txns HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n[", addr, n)
	return c
}

// TestServeSlowBodies is the slow-body attack: connections that declare large bodies and
// send them a byte at a time. Memory is charged as bytes arrive, so they hold almost
// nothing (a declared 30 MB reserved 30 MB before); bodies declared over the largest
// accepted are refused at once; other clients are answered promptly meanwhile; and the
// request deadline closes the slow ones.
func TestServeSlowBodies(t *testing.T) {
	const bound = 256 << 20
	readTimeout := 3 * time.Second
	s, addr := startServe(t, Options{Initial: history.Int(0), MaxMemory: bound, GCPercent: -1, Settle: 100 * time.Millisecond, ReadTimeout: readTimeout})
	if s.maxBody != bodyBudget(bound) {
		t.Fatalf("largest body %d under a %d MiB bound, want its budget %d", s.maxBody, bound>>20, bodyBudget(bound))
	}
	runtime.GC()
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	const slow = 100
	var conns []net.Conn
	for range slow {
		conns = append(conns, slowBody(t, addr, 30_000_000))
	}
	// Declared over the largest body: refused before any of it is read.
	for range 20 {
		c := slowBody(t, addr, 64<<20)
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("a body declared at 64 MiB: no answer: %v", err)
		}
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("a body declared at 64 MiB: %d, want 413", resp.StatusCode)
		}
		c.Close()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			for _, c := range conns {
				c.Write([]byte(" "))
			}
		}
	})
	defer func() {
		close(stop)
		wg.Wait()
	}()
	time.Sleep(time.Second)
	var m1 runtime.MemStats
	runtime.ReadMemStats(&m1)
	held := s.bodies.used.Load()
	t.Logf("%d slow bodies declared at 30 MB hold %d KiB charged; heap in use grew by %d MiB", slow, held>>10, (int64(m1.HeapInuse)-int64(m0.HeapInuse))>>20)
	if held > slow*64<<10 {
		t.Errorf("%d slow bodies hold %d KiB, want at most 64 KiB each", slow, held>>10)
	}
	if grew := int64(m1.HeapInuse) - int64(m0.HeapInuse); grew > 64<<20 {
		t.Errorf("heap in use grew by %d MiB with %d slow bodies, want under 64 MiB", grew>>20, slow)
	}
	// Another client is answered promptly.
	t0 := time.Now()
	status, m := post(t, "http://"+addr, goodChronos)
	if status != http.StatusOK || time.Since(t0) > 2*time.Second {
		t.Errorf("a good batch during the attack: %d %v after %v, want 200 within 2 s (it takes milliseconds)", status, m, time.Since(t0))
	}
	t.Logf("a good batch during the attack answered in %v", time.Since(t0))
	// The request deadline ends the slow bodies.
	deadline := time.Now().Add(readTimeout + 2*time.Second)
	for i, c := range conns {
		c.SetReadDeadline(deadline)
		if _, err := io.ReadAll(c); err != nil {
			t.Fatalf("slow connection %d still open %v after the read timeout: %v", i, readTimeout+2*time.Second, err)
		}
		c.Close()
	}
	for t1 := time.Now(); s.bodies.used.Load() != 0 && time.Since(t1) < time.Second; {
		time.Sleep(10 * time.Millisecond)
	}
	if n := s.bodies.used.Load(); n != 0 {
		t.Errorf("%d bytes still charged after the slow bodies ended", n)
	}
}

// TestServeBodyBudget reads bodies against a small budget: one past the largest accepted is
// too large, and one that would pass the budget is refused as busy, charging nothing.
func TestServeBodyBudget(t *testing.T) {
	bud := &budget{limit: 2 << 20}
	bd, err := readBody(bytes.NewReader(make([]byte, 300<<10)), 256<<10, -1, bud)
	if !errors.Is(err, errTooLarge) {
		t.Errorf("a 300 KiB body with a 256 KiB limit: %v, want too large", err)
	}
	bd.release()
	held, err := readBody(bytes.NewReader(make([]byte, 700<<10)), 800<<10, -1, bud)
	if err != nil || len(held.b) != 700<<10 {
		t.Fatalf("a 700 KiB body within the budget: %v", err)
	}
	bd, err = readBody(bytes.NewReader(make([]byte, 600<<10)), 800<<10, -1, bud)
	if !errors.Is(err, errBusy) {
		t.Errorf("a second body past the budget: %v, want busy", err)
	}
	bd.release()
	held.release()
	if n := bud.used.Load(); n != 0 {
		t.Errorf("%d bytes charged after every body was released", n)
	}
}

// request sends method path with the given headers to base and returns the status and
// the error code of the answer.
func request(t *testing.T, base, method, path, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m struct{ Code string }
	json.NewDecoder(resp.Body).Decode(&m)
	if resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("%s %s answered with Access-Control-Allow-Origin %q: no CORS is allowed", method, path, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	return resp.StatusCode, m.Code
}

// TestServeCrossOrigin: what a web page elsewhere can send is refused: a simple-request
// text/plain POST (415, and nothing is ingested), any request with another Origin (403), a
// request naming another host without a token (DNS rebinding, 403); the server's own
// origin, and no origin, are served.
func TestServeCrossOrigin(t *testing.T) {
	s, hs := newTestServer(t, Options{Initial: history.Int(0), Settle: time.Hour})
	ctJSON := map[string]string{"Content-Type": "application/json"}
	for _, tc := range []struct {
		name, method, path string
		hdr                map[string]string
		status             int
		code               string
	}{
		{"text/plain POST", "POST", "/v1/txns", map[string]string{"Content-Type": "text/plain"}, 415, "bad_content_type"},
		{"form POST", "POST", "/v1/txns", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, "bad_content_type"},
		{"no content type", "POST", "/v1/txns", map[string]string{"Content-Type": ""}, 415, "bad_content_type"},
		{"cross-origin text/plain POST", "POST", "/v1/txns", map[string]string{"Content-Type": "text/plain", "Origin": "http://evil.example"}, 403, "cross_origin"},
		{"cross-origin JSON POST", "POST", "/v1/txns", map[string]string{"Content-Type": "application/json", "Origin": "http://evil.example"}, 403, "cross_origin"},
		{"cross-origin status", "GET", "/v1/status", map[string]string{"Origin": "http://evil.example"}, 403, "cross_origin"},
		{"null origin", "POST", "/v1/txns", map[string]string{"Content-Type": "application/json", "Origin": "null"}, 403, "cross_origin"},
		{"preflight", "OPTIONS", "/v1/txns", map[string]string{"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}, 403, "cross_origin"},
		{"rebound host", "POST", "/v1/txns", map[string]string{"Content-Type": "application/json", "Host": "evil.example:7474", "Origin": "http://evil.example:7474"}, 403, "bad_host"},
		{"own origin", "POST", "/v1/txns", map[string]string{"Content-Type": "application/json", "Origin": hs.URL}, 200, ""},
		{"no origin", "POST", "/v1/txns", ctJSON, 200, ""},
		{"JSON lines", "POST", "/v1/txns", map[string]string{"Content-Type": "application/x-ndjson"}, 200, ""},
	} {
		body := goodChronos
		if tc.hdr["Content-Type"] == "application/x-ndjson" {
			body = `{"s":1,"id":"n1","sts":[1,0],"cts":[2,0],"ops":[["w",2,1]]}`
		}
		req, _ := http.NewRequest(tc.method, hs.URL+tc.path, strings.NewReader(body))
		for k, v := range tc.hdr {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ Code string }
		_ = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if resp.StatusCode != tc.status || m.Code != tc.code {
			t.Errorf("%s: %d %q, want %d %q", tc.name, resp.StatusCode, m.Code, tc.status, tc.code)
		}
		if h := resp.Header.Get("Access-Control-Allow-Origin"); h != "" {
			t.Errorf("%s: Access-Control-Allow-Origin %q; no CORS is allowed", tc.name, h)
		}
	}
	time.Sleep(3 * s.opts.Tick)
	if st := s.Status(); st.Ingested != 2 {
		t.Errorf("%d transactions ingested, want 2: only the same-origin and origin-less posts", st.Ingested)
	}
}

// TestServeToken: with a token, every request must carry it (as a bearer token, or in the
// query for the status page); any Host is then served.
func TestServeToken(t *testing.T) {
	_, hs := newTestServer(t, Options{Initial: history.Int(0), Token: "s3cret"})
	ctJSON := map[string]string{"Content-Type": "application/json"}
	withTok := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer s3cret"}
	for _, tc := range []struct {
		name, method, path string
		hdr                map[string]string
		status             int
	}{
		{"post without", "POST", "/v1/txns", ctJSON, 401},
		{"post wrong", "POST", "/v1/txns", map[string]string{"Content-Type": "application/json", "Authorization": "Bearer s3cre"}, 401},
		{"post with", "POST", "/v1/txns", withTok, 200},
		{"status without", "GET", "/v1/status", nil, 401},
		{"status with", "GET", "/v1/status", withTok, 200},
		{"status in query", "GET", "/v1/status?token=s3cret", nil, 200},
		{"metrics without", "GET", "/metrics", nil, 401},
		{"page without", "GET", "/", nil, 401},
		{"page in query", "GET", "/?token=s3cret", nil, 200},
		{"other host with", "GET", "/v1/status", map[string]string{"Authorization": "Bearer s3cret", "Host": "checker.example:7474"}, 200},
	} {
		status, _ := request(t, hs.URL, tc.method, tc.path, goodChronos, tc.hdr)
		if status != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, status, tc.status)
		}
	}
}

// TestServeExposure: listening beyond the loopback interface needs a token, or an explicit
// Insecure; loopback needs neither.
func TestServeExposure(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := Serve(ctx, Options{Addr: "0.0.0.0:0", GCPercent: -1, MaxMemory: -1})
	if !errors.Is(err, ErrNoToken) {
		t.Errorf("Serve on 0.0.0.0 without a token: %v, want %v", err, ErrNoToken)
	}
	for _, o := range []Options{
		{Addr: "0.0.0.0:0", Token: "t"},
		{Addr: "0.0.0.0:0", Insecure: true},
		{Addr: "127.0.0.1:0"},
		{Addr: "localhost:0"},
	} {
		o.GCPercent, o.MaxMemory = -1, -1
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := Serve(ctx, o)
		cancel()
		if err != nil {
			t.Errorf("Serve on %s (token %q, insecure %v): %v, want it to start", o.Addr, o.Token, o.Insecure, err)
		}
	}
	for addr, want := range map[string]bool{"127.0.0.1:1": true, "[::1]:1": true, "localhost:1": true, "0.0.0.0:1": false, ":1": false, "192.168.1.2:1": false, "[::]:1": false} {
		if got := loopbackAddr(addr); got != want {
			t.Errorf("loopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestServeViolationsFileRepair: a violations file whose last line was torn (the server was
// killed while writing it) is cut back to its last complete line at start, with a warning
// naming the bytes dropped; the violations of the complete lines are not reported again,
// and new ones are appended as whole lines.
func TestServeViolationsFileRepair(t *testing.T) {
	file := t.TempDir() + "/violations.jsonl"
	good := `{"schema":1,"kind":"violation","id":"EXT:x","anomaly":"EXT"}` + "\n" + `{"schema":1,"kind":"violation","id":"EXT:y","anomaly":"EXT"}` + "\n"
	torn := `{"schema":1,"kind":"violation","id":"EXT:z","ano`
	if err := os.WriteFile(file, []byte(good+torn), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	s, hs := newTestServer(t, Options{Initial: history.Int(0), Settle: 50 * time.Millisecond, Tick: 10 * time.Millisecond, ViolationsFile: file,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if data, _ := os.ReadFile(file); string(data) != good {
		t.Errorf("after repair the file holds %q, want its two complete lines", data)
	}
	if want := fmt.Sprintf("bytes_dropped=%d", len(torn)); !strings.Contains(logs.String(), want) {
		t.Errorf("no warning with %s in the logs: %s", want, logs.String())
	}
	if st := s.Status(); st.Previous != 2 {
		t.Errorf("%d violations read back, want 2", st.Previous)
	}
	// A stale read: an EXT violation, appended after the repaired lines.
	post(t, hs.URL, `[{"tid":"w","sid":1,"sts":{"p":1,"l":0},"cts":{"p":2,"l":0},"ops":[{"t":"w","k":1,"v":5}]},`+
		`{"tid":"r","sid":2,"sts":{"p":3,"l":0},"cts":{"p":4,"l":0},"ops":[{"t":"r","k":1,"v":0}]}]`)
	waitViolations(s, 1)
	s.Close()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 || !strings.HasSuffix(string(data), "\n") {
		t.Fatalf("file after a new violation: %q, want three whole lines", data)
	}
	for i, l := range lines {
		var v struct{ ID string }
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.ID == "" {
			t.Errorf("line %d does not parse: %q", i+1, l)
		}
	}
}

// TestServeStreamOutlivesReadTimeout: the read timeout bounds reading a request, not a
// violation stream, which must keep delivering after it.
func TestServeStreamOutlivesReadTimeout(t *testing.T) {
	s, addr := startServe(t, Options{Initial: history.Int(0), Settle: 50 * time.Millisecond, Tick: 10 * time.Millisecond, ReadTimeout: 300 * time.Millisecond, MaxMemory: -1, GCPercent: -1})
	resp, err := http.Get("http://" + addr + "/v1/violations")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	time.Sleep(time.Second)
	status, m := post(t, "http://"+addr, `[{"tid":"r1","sid":2,"sts":{"p":10,"l":0},"cts":{"p":11,"l":0},"ops":[{"t":"r","k":99,"v":42}]}]`)
	if status != http.StatusOK {
		t.Fatalf("POST: %d %v", status, m)
	}
	waitViolations(s, 1)
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(resp.Body).ReadString('\n')
		line <- l
	}()
	select {
	case l := <-line:
		if !strings.Contains(l, `"kind":"violation"`) {
			t.Errorf("stream after the read timeout sent %q, want a violation", l)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("no violation on a stream opened before the read timeout")
	}
}
