package server

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/isovet/isovet/history"
)

// FuzzDecodeBatch: no input makes the decoder panic, and whatever it accepts the checker
// can apply.
func FuzzDecodeBatch(f *testing.F) {
	for _, s := range []string{
		goodChronos,
		`[{"tid":"x","sid":"s","sno":3,"sts":{"p":"7","l":1},"cts":{"p":8,"l":0},"ops":[{"t":"r","k":1,"v":[1,2]},{"t":"a","k":1,"v":3}],"rtts":5}]`,
		`{"s":1,"id":7,"sts":[1,0],"cts":[2,0],"ops":[["w","x",1],["r","y",null]]}` + "\n" + `{"s":2,"id":8,"sts":[3,0],"cts":[4,1],"ops":[["a",3,7],["r",3,[1,7]]]}`,
		`[`, `[{}]`, `[{"tid":null}]`, `{"isovet":1,"initial":0}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		txs, err := decodeBatch(data)
		if err != nil {
			return
		}
		s, err := New(Options{Initial: history.Int(0)})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range txs {
			s.on.Observe(x)
		}
		s.on.Flush()
	})
}

// TestServeShutdown: cancelling Serve ends streaming clients and returns promptly.
func TestServeShutdown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Initial: history.Int(0), ViolationsFile: t.TempDir() + "/v.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.serve(ctx, ln) }()
	url := "http://" + ln.Addr().String()
	var resp *http.Response
	for range 100 {
		if resp, err = http.Get(url + "/v1/violations?format=sse"); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if r, err := http.Post(url+"/v1/txns", "application/json", strings.NewReader(goodChronos)); err != nil || r.StatusCode != 200 {
		t.Fatalf("POST: %v %v", r, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not shut down")
	}
	buf := make([]byte, 1)
	for {
		if _, err := resp.Body.Read(buf); err != nil {
			break // the stream ended
		}
	}
}
