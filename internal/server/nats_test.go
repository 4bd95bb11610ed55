package server

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/history"
)

// natsURL returns the NATS server for tests, skipping (or failing under
// ISOVET_REQUIRE_SERVICES=1) when none answers.
func natsURL(t *testing.T) string {
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

// publish sends txns order[lo:hi] of h as native batches and waits for the stream's acks.
func publish(t *testing.T, js jetstream.JetStream, subject string, h *history.History, order []history.TxnID, batch int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < len(order); i += batch {
		var buf bytes.Buffer
		enc := native.NewEncoder(&buf)
		for _, id := range order[i:min(i+batch, len(order))] {
			if err := enc.Encode(h, id); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := js.Publish(ctx, subject, buf.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNATSRestart consumes an example from JetStream, stops the checker mid-stream with
// verdicts still pending, publishes the rest while it is down, restarts it, and checks
// that the violations file holds exactly Chronos's violations, each once; with the checker
// in one piece and split by key into two shards.
func TestNATSRestart(t *testing.T) {
	url := natsURL(t)
	for _, shards := range []int{1, 2} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) { testNATSRestart(t, url, shards) })
	}
}

func testNATSRestart(t *testing.T, url string, shards int) {
	h := loadExample(t, "format-kv.json")
	want := offlineIDs(t, h, anomaly.Serializable)
	js, stream, subject := testStream(t, url)
	order := commitOrder(h)
	half := len(order) / 2
	file := t.TempDir() + "/violations.jsonl"
	opts := Options{Level: anomaly.Serializable, Initial: history.Int(0), Settle: 2 * time.Second, Tick: 10 * time.Millisecond,
		ViolationsFile: file, NATS: url, Stream: stream, Subject: subject, Durable: "checker", Shards: shards}

	run := func(until func(*Server) bool) *Server {
		t.Helper()
		s, err := New(opts)
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
		deadline := time.Now().Add(30 * time.Second)
		for !until(s) {
			if time.Now().After(deadline) {
				cancel()
				<-done
				t.Fatalf("timed out; status %+v", s.Status())
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("serve: %v", err)
		}
		return s
	}
	publish(t, js, subject, h, order[:half], 25)
	// First run: stop as soon as the first half is applied and acknowledged, with its
	// verdicts still pending (settle is 2 s).
	a := run(func(s *Server) bool { return s.Status().NATSMessages == int64(half/25) })
	if st := a.Status(); st.Pending == 0 {
		t.Logf("warning: nothing pending at the restart (status %+v)", st)
	}
	publish(t, js, subject, h, order[half:], 25)
	b := run(func(s *Server) bool {
		st := s.Status()
		return st.Ingested == int64(len(order)) && st.Checked == int64(len(order)) && st.NATSMessages == int64((len(order)-half)/25)
	})
	st := b.Status()
	if st.Rebuilt != int64(half) {
		t.Errorf("rebuilt %d transactions, want %d", st.Rebuilt, half)
	}
	got := fileIDs(t, file)
	if c := slices.Compact(slices.Clone(got)); len(c) != len(got) {
		t.Errorf("violations file holds duplicates: %d lines, %d distinct", len(got), len(c))
	}
	if !slices.Equal(want, got) {
		t.Errorf("after a restart: %d violations, offline %d (differences %v)", len(got), len(want), firstDiff(want, got))
	}
	info, err := js.Stream(context.Background(), stream)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := info.Consumer(context.Background(), "checker")
	if err != nil {
		t.Fatal(err)
	}
	ci, _ := cons.Info(context.Background())
	if ci.NumAckPending != 0 || ci.NumPending != 0 {
		t.Errorf("consumer left %d unacknowledged, %d undelivered", ci.NumAckPending, ci.NumPending)
	}
}

// TestServeNATSRedeliveryAfterRestart is what a kill -9 leaves: messages the durable consumer
// delivered and nobody acknowledged. The restarted server re-reads them at start, and
// JetStream delivers them again an ack-wait later, after the checker has forgotten their
// transactions' ids (the ack wait here, 3 s, is past four settle windows, as the default two
// minutes are past the default settle's). Each redelivery must be recognised by its stream
// sequence and acknowledged, not applied again (it used to come back as late, unchecked
// transactions), and the violations must stay the offline check's.
func TestServeNATSRedeliveryAfterRestart(t *testing.T) {
	url := natsURL(t)
	h := loadExample(t, "format-kv.json")
	want := offlineIDs(t, h, anomaly.Serializable)
	js, stream, subject := testStream(t, url)
	order := commitOrder(h)
	publish(t, js, subject, h, order, 25)
	msgs := (len(order) + 24) / 25
	const ackWait = 3 * time.Second
	opts := Options{Level: anomaly.Serializable, Initial: history.Int(0), Settle: 200 * time.Millisecond, Tick: 10 * time.Millisecond,
		ViolationsFile: t.TempDir() + "/violations.jsonl", NATS: url, Stream: stream, Subject: subject, Durable: "checker", AckWait: ackWait}
	// The dead server: the durable consumer, with the server's configuration, delivers a
	// third of the messages, which are never acknowledged.
	st, _ := js.Stream(context.Background(), stream)
	cons, err := st.CreateOrUpdateConsumer(context.Background(), jetstream.ConsumerConfig{Durable: "checker", AckPolicy: jetstream.AckExplicitPolicy,
		FilterSubject: subject, DeliverPolicy: jetstream.DeliverAllPolicy, AckWait: ackWait, MaxDeliver: -1})
	if err != nil {
		t.Fatal(err)
	}
	unacked := msgs / 3
	batch, err := cons.Fetch(unacked, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for range batch.Messages() {
		got++
	}
	if got != unacked {
		t.Fatalf("the dead server's consumer got %d messages, want %d", got, unacked)
	}
	s, err := New(opts)
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
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := s.Status()
		if st.Checked == int64(len(order)) && st.NATSRedelivered == int64(unacked) {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("timed out; status %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	stat := s.Status()
	if stat.Rebuilt != int64(unacked*25) || stat.Late != 0 || stat.Duplicates != 0 || stat.Ingested != int64(len(order)) {
		t.Errorf("status %+v: want %d rebuilt, %d ingested, none late or duplicate", stat, unacked*25, len(order))
	}
	if ids := fileIDs(t, opts.ViolationsFile); !slices.Equal(want, ids) {
		t.Errorf("after redeliveries: %d violations, offline %d (differences %v)", len(ids), len(want), firstDiff(want, ids))
	}
	ci, _ := cons.Info(context.Background())
	if ci.NumAckPending != 0 || ci.NumPending != 0 {
		t.Errorf("consumer left %d unacknowledged, %d undelivered", ci.NumAckPending, ci.NumPending)
	}
}

// testStream connects to the NATS server at url and creates a stream of its own for the
// test, with its subject; both are gone when the test ends.
func testStream(t *testing.T, url string) (jetstream.JetStream, string, string) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	suffix := fmt.Sprint(time.Now().UnixNano())
	stream, subject := "ISOVET_TEST_"+suffix, "isovet.test."+suffix
	if _, err := ensureStream(context.Background(), js, stream, subject); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { js.DeleteStream(context.Background(), stream) })
	return js, stream, subject
}

// commitOrder is h's transactions in commit-timestamp order (stable).
func commitOrder(h *history.History) []history.TxnID {
	order := make([]history.TxnID, len(h.Txns))
	for i := range order {
		order[i] = history.TxnID(i)
	}
	slices.SortStableFunc(order, func(a, b history.TxnID) int { return h.Txns[a].Commit.Compare(h.Txns[b].Commit) })
	return order
}
