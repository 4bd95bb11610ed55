package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/isovet/isovet/history"
)

// TestStreamerNeverBlocksOnAStuckService: a service that answers its status and then
// never answers a batch holds neither the recorder (Add returns within the wait once the
// buffer is full) nor its end (Close gives up after the wait), and Close says what was not
// sent.
func TestStreamerNeverBlocksOnAStuckService(t *testing.T) {
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			fmt.Fprint(w, `{"level":"serializable","initial_value":0}`)
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hs.Close()
	defer close(release)
	const wait = 300 * time.Millisecond
	s := NewStreamer(StreamOptions{To: hs.URL, Batch: 10, Buffer: 4 << 10, Wait: wait})
	if err := s.Open(context.Background(), history.Int(0)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	const n = 2000
	for i := range n {
		s.Add(fmt.Appendf(nil, `{"s":0,"id":"T%d","sts":[%d,0],"cts":[%d,0],"ops":[["w","x",%d]]}`+"\n", i, 2*i+1, 2*i+2, i))
	}
	if el := time.Since(start); el > 3*wait {
		t.Fatalf("adding %d transactions to a stuck service took %v, want at most about %v", n, el, wait)
	}
	st, err := s.Close()
	if el := time.Since(start); el > 6*wait {
		t.Fatalf("closing took until %v", el)
	}
	if err == nil || !strings.Contains(err.Error(), "took nothing") {
		t.Fatalf("Close: %v, want the service's stall", err)
	}
	if st.Sent != 0 || st.NotSent != n {
		t.Fatalf("sent %d, not sent %d; want 0 and %d", st.Sent, st.NotSent, n)
	}
}

// TestStreamerSendsInOrder: what is added reaches the service whole, in the order added,
// in batches of at most Batch.
func TestStreamerSendsInOrder(t *testing.T) {
	s, hs := newTestServer(t, Options{Initial: history.Int(0)})
	st := NewStreamer(StreamOptions{To: hs.URL, Batch: 7})
	if err := st.Open(context.Background(), history.Int(0)); err != nil {
		t.Fatal(err)
	}
	const n = 100
	for i := range n {
		st.Add(fmt.Appendf(nil, `{"s":0,"id":"T%d","sts":[%d,0],"cts":[%d,0],"ops":[["r","x",%d],["w","x",%d]]}`+"\n", i, 2*i+1, 2*i+2, i, i+1))
	}
	stats, err := st.Close()
	if err != nil || stats.Sent != n || stats.NotSent != 0 {
		t.Fatalf("Close: %+v, %v", stats, err)
	}
	if got := s.Status(); got.Ingested != n {
		t.Fatalf("the service ingested %d of %d", got.Ingested, n)
	}
}
