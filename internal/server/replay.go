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

// ReplayStats say what a replay sent. Txns and Batches count what the server accepted:
// after a refusal, what it accepted before it.
type ReplayStats struct {
	Txns, Batches int
	// NotSent counts the transactions not sent because the online checker takes committed
	// transactions only (aborted ones).
	NotSent int
	// Stream says, over NATS, which JetStream stream took the transactions and whether
	// replay created it.
	Stream        string
	CreatedStream bool
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
	if o.History == nil {
		return ReplayStats{}, errors.New("replay: no history to send")
	}
	if err := OnlineReady(o.History); err != nil {
		return ReplayStats{}, err
	}
	h, err := WithIDs(o.History)
	if err != nil {
		return ReplayStats{}, err
	}
	if strings.HasPrefix(o.To, "nats://") && h.DerivedTimestamps() {
		return ReplayStats{}, errors.New("the history's timestamps were derived from the database's snapshots, which do not say in which order concurrent transactions committed: a service checking serializability would report violations of the order isovet chose, which the offline check withdraws, and over NATS replay cannot ask the service's level; replay it over HTTP (--to http://...), where replay asks, to a service at snapshot-isolation")
	}
	order, at := schedule(h, o)
	// Encode batches up front so that sending measures the receiver, not the encoder.
	bodies, sizes, starts, err := encodeBatches(h, order, at, o.Batch)
	if err != nil {
		return ReplayStats{}, err
	}
	snd, err := o.sender(ctx)
	if err != nil {
		return ReplayStats{}, err
	}
	if err := snd.agree(ctx, h); err != nil {
		snd.done()
		return ReplayStats{}, err
	}
	st, err := o.sendAll(ctx, snd.send, bodies, sizes, starts)
	if derr := snd.done(); err == nil && derr != nil {
		err = derr
		st.Txns, st.Batches = 0, 0 // JetStream did not confirm them
	}
	st.NotSent = len(h.Txns) - len(order)
	st.Stream, st.CreatedStream = snd.stream, snd.created
	return st, err
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

// encodeBatches encodes order in batches of native JSON lines; sizes[i] is the number of
// transactions of batch i and starts[i] when it is due.
func encodeBatches(h *history.History, order []history.TxnID, at []time.Duration, batch int) (bodies [][]byte, sizes []int, starts []time.Duration, _ error) {
	for i := 0; i < len(order); i += batch {
		var buf bytes.Buffer
		enc := native.NewEncoder(&buf)
		enc.DerivedTimestamps = true // the server checks line by line: it needs timestamps
		end := min(i+batch, len(order))
		for _, t := range order[i:end] {
			if err := enc.Encode(h, t); err != nil {
				return nil, nil, nil, fmt.Errorf("encoding %s: %w", h.Name(t), err)
			}
		}
		bodies = append(bodies, buf.Bytes())
		sizes = append(sizes, end-i)
		starts = append(starts, at[i])
	}
	return bodies, sizes, starts, nil
}

// sender sends batches to a service: send sends one, agree checks before anything is sent
// that the service reads the history as it was recorded (its initial value), done waits
// for what is pending and disconnects (over NATS, the stream's acknowledgements: an error
// says some were not confirmed). stream names the JetStream stream and created says
// whether it was created.
type sender struct {
	send    func(context.Context, []byte) error
	agree   func(context.Context, *history.History) error
	done    func() error
	stream  string
	created bool
}

// sender returns the sender to o.To (HTTP or NATS). Over NATS, batches are published one at
// a time (o.Parallel is 1).
func (o *ReplayOptions) sender(ctx context.Context) (*sender, error) {
	switch {
	case strings.HasPrefix(o.To, "http://") || strings.HasPrefix(o.To, "https://"):
		client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: o.Parallel + 1}}
		base := strings.TrimSuffix(o.To, "/")
		return &sender{
			send: func(ctx context.Context, body []byte) error {
				return PostBatchToken(ctx, client, base+"/v1/txns", o.Token, body)
			},
			agree: func(ctx context.Context, h *history.History) error {
				want, _ := uniformInitial(h)
				return agree(ctx, client, base, o.Token, want, h.DerivedTimestamps(), o.Logger)
			},
			done: func() error { return nil },
		}, nil
	case strings.HasPrefix(o.To, "nats://"):
		return o.natsSender(ctx)
	default:
		return nil, fmt.Errorf("replay: --to must be http://host:port or nats://host:port, not %q", o.To)
	}
}

// natsSender publishes batches to o.Subject of the JetStream stream o.Stream (created only
// if no stream takes the subject); done waits (at most a minute) for the stream to confirm
// the publications and disconnects.
func (o *ReplayOptions) natsSender(ctx context.Context) (*sender, error) {
	nc, err := nats.Connect(o.To, nats.Name("isovet replay"))
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", o.To, err)
	}
	var mu sync.Mutex
	var pubErr error
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(256),
		jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, _ *nats.Msg, err error) {
			mu.Lock()
			defer mu.Unlock()
			if pubErr == nil {
				pubErr = fmt.Errorf("JetStream refused a publication: %w", err)
			}
		}))
	if err != nil {
		nc.Close()
		return nil, err
	}
	_, created, err := OpenStream(ctx, js, o.Stream, o.Subject)
	if err != nil {
		nc.Close()
		return nil, err
	}
	if created {
		o.Logger.Info("created stream", "stream", o.Stream, "subject", o.Subject)
	} else {
		o.Logger.Info("using existing stream", "stream", o.Stream, "subject", o.Subject)
	}
	o.Parallel = 1
	s := &sender{stream: o.Stream, created: created}
	s.send = func(ctx context.Context, body []byte) error {
		_, err := js.PublishAsync(o.Subject, body)
		return err
	}
	s.agree = func(_ context.Context, h *history.History) error {
		if d, ok := uniformInitial(h); ok {
			o.Logger.Info("the service must run with this --initial-value (over NATS replay cannot ask it)", "initial_value", d.String())
		}
		return nil
	}
	s.done = func() error {
		defer nc.Close()
		select {
		case <-js.PublishAsyncComplete():
		case <-time.After(time.Minute):
			return fmt.Errorf("JetStream did not confirm %d publications within a minute", js.PublishAsyncPending())
		}
		mu.Lock()
		defer mu.Unlock()
		return pubErr
	}
	return s, nil
}

// sendAll sends the batches, each when due (with o.Rate set), at most o.Parallel at once,
// stopping at the first error; sizes[i] is the number of transactions of batch i. The
// stats count the batches the server accepted. If ctx ends, it returns at once with the
// batches accepted so far.
func (o *ReplayOptions) sendAll(ctx context.Context, send func(context.Context, []byte) error, bodies [][]byte, sizes []int, starts []time.Duration) (ReplayStats, error) {
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
	stats := func() ReplayStats {
		mu.Lock()
		defer mu.Unlock()
		return st
	}
	for i, body := range bodies {
		if err := o.waitDue(ctx, begin.Add(starts[i])); err != nil {
			wg.Wait()
			return stats(), err
		}
		sem <- struct{}{}
		if failed() != nil {
			<-sem
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			err := send(ctx, body)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				st.Batches++
				st.Txns += sizes[i]
			case firstErr == nil:
				firstErr = err
			}
		})
	}
	wg.Wait()
	st.Elapsed = time.Since(begin)
	if firstErr != nil {
		o.Logger.Warn("replay stopped", "accepted_txns", st.Txns, "accepted_batches", st.Batches, "err", firstErr)
		return st, firstErr
	}
	o.Logger.Info("replayed", "txns", st.Txns, "batches", st.Batches, "elapsed", st.Elapsed, "rate", st.Rate())
	return st, nil
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

// schedule orders the committed transactions by commit timestamp (every one has them:
// [OnlineReady]), then reorders them (shuffle or bounded delay); at[i] is when order[i] is
// due relative to the start.
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
		return &RefusedError{Status: resp.Status, Reason: strings.TrimSpace(string(msg))}
	}
	return nil
}

// RefusedError is a service's refusal of a batch, with its HTTP status and its reason (the
// body it answered).
type RefusedError struct{ Status, Reason string }

func (e *RefusedError) Error() string {
	return "the service refused a batch: " + e.Status + ": " + e.Reason
}
