package server

import (
	"bytes"
	"fmt"
	"net/http"
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
