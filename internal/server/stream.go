package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/isovet/isovet/history"
)

// StreamOptions configure a [Streamer]. To is required.
type StreamOptions struct {
	// To is http://host:port (POST /v1/txns) or nats://host:port (publish to Subject of
	// Stream, which is used if it exists and created if no stream takes Subject).
	To      string
	Subject string // default "isovet.txns"
	Stream  string // default "ISOVET"
	// Token is sent to a service that requires one (Authorization: Bearer).
	Token string
	// Batch is the most transactions per request or message (default 500).
	Batch int
	// Buffer bounds the bytes waiting to be sent (default 16 MiB). A transaction that
	// finds it full waits at most Wait (default 10 s) for room; after that the stream
	// has failed, and the transactions that follow are counted, not sent.
	Buffer int
	Wait   time.Duration
	Logger *slog.Logger
	_      struct{}
}

// StreamStats say what a [Streamer] sent.
type StreamStats struct {
	// Sent counts the transactions the service accepted; NotSent those added but not sent
	// (after a failure, or still buffered when Close gave up).
	Sent, NotSent int
	// Stream names, over NATS, the JetStream stream, and Created says whether it was
	// created.
	Stream  string
	Created bool
}

// Streamer sends transactions to the service as a recorder produces them: [Streamer.Add]
// queues one native JSON line in a bounded buffer and returns, and one goroutine sends
// what is queued in batches, in the order added (so each session's order holds). The
// first failure stops the sending and is returned by [Streamer.Close]; adding never
// blocks longer than StreamOptions.Wait.
type Streamer struct {
	o    StreamOptions
	snd  *sender
	kick chan struct{}
	stop chan struct{} // closed by Close: send what is left, then end
	end  chan struct{} // closed when the sending goroutine has ended

	cancel context.CancelFunc // ends a send in progress when Close gives up

	mu       sync.Mutex
	progress time.Time // when the service last accepted a batch (or the stream opened)
	lines    [][]byte
	bytes    int
	err      error
	stats    StreamStats
	started  bool
}

// NewStreamer returns a streamer to o.To; [Streamer.Open] connects it.
func NewStreamer(o StreamOptions) *Streamer {
	if o.Batch <= 0 {
		o.Batch = 500
	}
	if o.Buffer <= 0 {
		o.Buffer = 16 << 20
	}
	if o.Wait <= 0 {
		o.Wait = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Streamer{o: o, kick: make(chan struct{}, 1), stop: make(chan struct{}), end: make(chan struct{})}
}

// Open connects to the service and, over HTTP, checks that it starts every key at initial,
// the value the recorded history starts every key at; then it starts sending. An error
// says why nothing can be sent.
func (s *Streamer) Open(ctx context.Context, initial history.Datum) error {
	ro := ReplayOptions{To: s.o.To, Subject: s.o.Subject, Stream: s.o.Stream, Token: s.o.Token, Logger: s.o.Logger}
	ro.setDefaults()
	snd, err := ro.sender(ctx)
	if err != nil {
		return err
	}
	if strings.HasPrefix(s.o.To, "http") {
		client := &http.Client{Timeout: 10 * time.Second}
		if err := agree(ctx, client, strings.TrimSuffix(s.o.To, "/"), s.o.Token, initial, false, s.o.Logger); err != nil {
			snd.done()
			return err
		}
	} else {
		s.o.Logger.Warn("over NATS the service cannot be asked its initial value: it must run with this --initial-value", "initial_value", initial.String())
	}
	s.snd = snd
	s.stats.Stream, s.stats.Created = snd.stream, snd.created
	s.started = true
	s.progress = time.Now()
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	go s.loop(lctx)
	return nil
}

// Add queues line, one transaction as a native JSON line ending in a newline; it keeps a
// copy. It waits for room in the buffer at most StreamOptions.Wait.
func (s *Streamer) Add(line []byte) {
	deadline := time.Now().Add(s.o.Wait)
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.err == nil && s.bytes > 0 && s.bytes+len(line) > s.o.Buffer {
		if time.Now().After(deadline) {
			s.err = fmt.Errorf("the service took nothing for %v while %d bytes of transactions waited to be sent", s.o.Wait, s.bytes)
			s.drop()
			break
		}
		s.mu.Unlock()
		time.Sleep(time.Millisecond)
		s.mu.Lock()
	}
	if s.err != nil || !s.started {
		s.stats.NotSent++
		return
	}
	s.lines = append(s.lines, append([]byte(nil), line...))
	s.bytes += len(line)
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// drop counts what is queued as not sent and forgets it; s.mu is held.
func (s *Streamer) drop() {
	s.stats.NotSent += len(s.lines)
	s.lines, s.bytes = nil, 0
}

// loop sends what is queued until Close is called and nothing is left, or a send fails.
func (s *Streamer) loop(ctx context.Context) {
	defer close(s.end)
	for {
		body, n := s.take()
		if n == 0 {
			select {
			case <-s.kick:
				continue
			case <-s.stop:
				if body, n = s.take(); n == 0 {
					return
				}
			}
		}
		err := s.snd.send(ctx, body)
		s.mu.Lock()
		if err != nil {
			if s.err == nil {
				s.err = err
			}
			s.stats.NotSent += n
			s.drop()
			s.mu.Unlock()
			return
		}
		s.stats.Sent += n
		s.progress = time.Now()
		s.mu.Unlock()
	}
}

// take removes up to a batch of queued lines and returns them as one body.
func (s *Streamer) take() (body []byte, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n = min(len(s.lines), s.o.Batch)
	for _, l := range s.lines[:n] {
		body = append(body, l...)
		s.bytes -= len(l)
	}
	s.lines = s.lines[n:]
	return body, n
}

// drain waits for the sending goroutine to send what is queued and end, as long as the
// service keeps accepting batches: once it has accepted none for StreamOptions.Wait, the
// send in progress is cancelled and what is left is not sent.
func (s *Streamer) drain() {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.end:
			return
		case <-tick.C:
		}
		s.mu.Lock()
		stalled := time.Since(s.progress) > s.o.Wait
		if stalled && s.err == nil {
			s.err = fmt.Errorf("the service accepted nothing for %v", s.o.Wait)
		}
		s.mu.Unlock()
		if stalled {
			s.cancel()
			<-s.end
			s.mu.Lock()
			s.drop()
			s.mu.Unlock()
			return
		}
	}
}

// Close sends what is queued, waits for the service (over NATS, for the stream to confirm
// the messages) and disconnects; it returns what was sent and the first failure.
func (s *Streamer) Close() (StreamStats, error) {
	if !s.started {
		return s.stats, nil
	}
	close(s.stop)
	s.drain()
	derr := s.snd.done()
	s.cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.err
	if err == nil && derr != nil {
		err = derr
	}
	return s.stats, err
}
