package server

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/history"
)

// ReplayOptions configure [Replay]. History and To are required.
type ReplayOptions struct {
	// History is the recorded history to send (the CLI reads it with format.Open).
	History *history.History
	// To is http://host:port (POST /v1/txns) or nats://host:port (publish to Subject).
	To      string
	Subject string // default "isovet.txns"
	Stream  string // default "ISOVET" (created if missing)
	// Rate is the target transactions per second (0: as fast as possible).
	Rate float64
	// Shuffle sends the transactions in a random order; Delay instead holds each one back
	// by a random amount up to Delay, a bounded reordering of commit order.
	Shuffle bool
	Delay   time.Duration
	Batch   int    // transactions per request or message (default 500)
	Seed    uint64 // for shuffling and delays (0: 1)
	// Parallel is the number of requests in flight over HTTP (default 1, which keeps
	// session order within the reordering chosen).
	Parallel int
	// Token is sent to a server that requires one (Authorization: Bearer).
	Token  string
	Logger *slog.Logger
	_      struct{}
}

// ReplayStats say what a replay sent.
type ReplayStats struct {
	Txns, Batches int
	Elapsed       time.Duration
}

// Rate is transactions per second achieved.
func (r ReplayStats) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Txns) / r.Elapsed.Seconds()
}

// Replay runs `isovet replay`: it sends a recorded history to a running server, in commit
// order or reordered, at a chosen rate, as native JSON-lines batches.
func Replay(ctx context.Context, o ReplayOptions) (ReplayStats, error) {
	o.setDefaults()
	h := o.History
	if h == nil {
		return ReplayStats{}, errors.New("replay: no history to send")
	}
	order, at := schedule(h, o)
	// Encode batches up front so that sending measures the receiver, not the encoder.
	bodies, starts, err := encodeBatches(h, order, at, o.Batch)
	if err != nil {
		return ReplayStats{}, err
	}
	send, done, err := o.sender(ctx)
	if err != nil {
		return ReplayStats{}, err
	}
	defer done()
	return o.sendAll(ctx, send, bodies, starts, len(order))
}

// setDefaults fills in the options left zero.
func (o *ReplayOptions) setDefaults() {
	if o.Batch <= 0 {
		o.Batch = 500
	}
	if o.Subject == "" {
		o.Subject = "isovet.txns"
	}
	if o.Stream == "" {
		o.Stream = "ISOVET"
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Parallel <= 0 {
		o.Parallel = 1
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// encodeBatches encodes order in batches of native JSON lines; starts[i] is when batch i
// is due.
func encodeBatches(h *history.History, order []history.TxnID, at []time.Duration, batch int) (bodies [][]byte, starts []time.Duration, _ error) {
	for i := 0; i < len(order); i += batch {
		var buf bytes.Buffer
		enc := native.NewEncoder(&buf)
		enc.DerivedTimestamps = true // the server checks line by line: it needs timestamps
		end := min(i+batch, len(order))
		for _, t := range order[i:end] {
			if err := enc.Encode(h, t); err != nil {
				return nil, nil, fmt.Errorf("encoding %s: %w", h.Name(t), err)
			}
		}
		bodies = append(bodies, buf.Bytes())
		starts = append(starts, at[i])
	}
	return bodies, starts, nil
}

// sender returns the function that sends a batch to o.To (HTTP or NATS) and the one to call
// when done sending. Over NATS, batches are published one at a time (o.Parallel is 1).
func (o *ReplayOptions) sender(ctx context.Context) (send func(context.Context, []byte) error, done func(), _ error) {
	switch {
	case strings.HasPrefix(o.To, "http://") || strings.HasPrefix(o.To, "https://"):
		client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: o.Parallel + 1}}
		url := strings.TrimSuffix(o.To, "/") + "/v1/txns"
		return func(ctx context.Context, body []byte) error { return PostBatchToken(ctx, client, url, o.Token, body) }, func() {}, nil
	case strings.HasPrefix(o.To, "nats://"):
		return o.natsSender(ctx)
	default:
		return nil, nil, fmt.Errorf("replay: --to must be http://host:port or nats://host:port, not %q", o.To)
	}
}

// natsSender publishes batches to o.Subject of the JetStream stream o.Stream (created if
// missing); done waits (at most a minute) for the pending publications and disconnects.
func (o *ReplayOptions) natsSender(ctx context.Context) (send func(context.Context, []byte) error, done func(), _ error) {
	nc, err := nats.Connect(o.To, nats.Name("isovet replay"))
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to %s: %w", o.To, err)
	}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(256))
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	if _, err := ensureStream(ctx, js, o.Stream, o.Subject); err != nil {
		nc.Close()
		return nil, nil, err
	}
	o.Parallel = 1
	send = func(ctx context.Context, body []byte) error {
		_, err := js.PublishAsync(o.Subject, body)
		return err
	}
	done = func() {
		select {
		case <-js.PublishAsyncComplete():
		case <-time.After(time.Minute):
		}
		nc.Close()
	}
	return send, done, nil
}

// sendAll sends the batches, each when due (with o.Rate set), at most o.Parallel at once,
// stopping at the first error; n is the number of transactions. If ctx ends, it returns
// at once with the batches started so far.
func (o *ReplayOptions) sendAll(ctx context.Context, send func(context.Context, []byte) error, bodies [][]byte, starts []time.Duration, n int) (ReplayStats, error) {
	var st ReplayStats
	begin := time.Now()
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	failed := func() error {
		mu.Lock()
		defer mu.Unlock()
		return firstErr
	}
	for i, body := range bodies {
		if err := o.waitDue(ctx, begin.Add(starts[i])); err != nil {
			return st, err
		}
		sem <- struct{}{}
		if failed() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := send(ctx, body); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
		st.Batches++
		st.Txns += min(o.Batch, n-i*o.Batch)
	}
	wg.Wait()
	st.Elapsed = time.Since(begin)
	o.Logger.Info("replayed", "txns", st.Txns, "batches", st.Batches, "elapsed", st.Elapsed, "rate", st.Rate())
	return st, firstErr
}

// waitDue waits until due when a rate is set; it fails if ctx ends first.
func (o *ReplayOptions) waitDue(ctx context.Context, due time.Time) error {
	if o.Rate > 0 {
		if d := time.Until(due); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// schedule orders committed, timestamped transactions by commit timestamp, then reorders
// them (shuffle or bounded delay); at[i] is when order[i] is due relative to the start.
func schedule(h *history.History, o ReplayOptions) ([]history.TxnID, []time.Duration) {
	var order []history.TxnID
	for i := range h.Txns {
		if h.Txns[i].Committed() && h.Txns[i].HasTimestamps {
			order = append(order, history.TxnID(i))
		}
	}
	slices.SortStableFunc(order, func(a, b history.TxnID) int { return h.Txns[a].Commit.Compare(h.Txns[b].Commit) })
	rng := rand.New(rand.NewPCG(o.Seed, 0x15071))
	rate := o.Rate
	if rate <= 0 {
		rate = 100_000 // nominal spacing for bounded reordering
	}
	step := time.Duration(float64(time.Second) / rate)
	at := make([]time.Duration, len(order))
	for i := range order {
		at[i] = time.Duration(i) * step
	}
	switch {
	case o.Shuffle:
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	case o.Delay > 0:
		type due struct {
			t  history.TxnID
			at time.Duration
		}
		ds := make([]due, len(order))
		for i, t := range order {
			ds[i] = due{t, at[i] + time.Duration(rng.Int64N(int64(o.Delay)))}
		}
		slices.SortStableFunc(ds, func(a, b due) int { return cmp.Compare(a.at, b.at) })
		for i := range ds {
			order[i] = ds[i].t
			at[i] = ds[i].at
		}
	}
	return order, at
}

// PostBatch posts one batch of transactions (JSON lines) to the service's url with c, and
// returns the server's refusal, with its reason, as an error.
func PostBatch(ctx context.Context, c *http.Client, url string, body []byte) error {
	return PostBatchToken(ctx, c, url, "", body)
}

// PostBatchToken is [PostBatch] to a server that requires a token (none if empty).
func PostBatchToken(ctx context.Context, c *http.Client, url, token string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return errors.New("server refused a batch: " + resp.Status + ": " + strings.TrimSpace(string(msg)))
	}
	return nil
}
