package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// consumeNATS applies the transactions of opts.Subject from JetStream.
//
// Each message is a batch (a Chronos JSON array or native JSON lines). A message is
// acknowledged only after its transactions are applied, so a crash loses nothing: JetStream
// redelivers what was not acknowledged. The checker's state lives in memory, so at start
// the part of the stream the durable consumer has already seen is read again through an
// ordered consumer to rebuild it; redelivered and re-read transactions are recognised by
// id and ignored, and violations already in the violations file are not reported again, so
// nothing is counted twice.
func (s *Server) consumeNATS(ctx context.Context) error {
	nc, err := nats.Connect(s.opts.NATS, nats.Name("isovet serve"), nats.MaxReconnects(-1))
	if err != nil {
		return fmt.Errorf("connecting to NATS at %s: %w", s.opts.NATS, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	cons, err := s.openConsumer(ctx, js)
	if err != nil {
		return err
	}
	a := s.startAcker()
	defer func() {
		a.stop()
		nc.Flush()
	}()
	for ctx.Err() == nil {
		if !s.fetch(ctx, cons, a) {
			return nil
		}
	}
	return nil
}

// fetch fetches a batch of messages from cons and submits them; it returns false when the
// server stops taking them. A failed fetch is logged and retried after a pause.
func (s *Server) fetch(ctx context.Context, cons jetstream.Consumer, a *natsAcker) bool {
	msgs, err := cons.Fetch(256, jetstream.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("fetch failed", "err", err)
			time.Sleep(200 * time.Millisecond)
		}
		return true
	}
	for msg := range msgs.Messages() {
		if !s.submitMsg(msg, a) {
			return false
		}
	}
	if err := msgs.Error(); err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
		s.log.Warn("fetch ended", "err", err)
	}
	return true
}

// openConsumer creates (or updates) the durable consumer on the stream, creating the stream
// if missing, and rebuilds the checker's state from what it has already delivered.
func (s *Server) openConsumer(ctx context.Context, js jetstream.JetStream) (jetstream.Consumer, error) {
	stream, created, err := OpenStream(ctx, js, s.opts.Stream, s.opts.Subject)
	if err != nil {
		return nil, err
	}
	if created {
		s.log.Info("created stream", "stream", s.opts.Stream, "subject", s.opts.Subject)
	} else {
		s.log.Info("using existing stream", "stream", s.opts.Stream, "subject", s.opts.Subject)
	}
	// MaxDeliver is left unlimited: a message is redelivered until it is acknowledged, and
	// a redelivery of one already applied is recognised by its stream sequence (see
	// [redeliveries]), however long after.
	cons, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: s.opts.Durable, AckPolicy: jetstream.AckExplicitPolicy, FilterSubject: s.opts.Subject,
		DeliverPolicy: jetstream.DeliverAllPolicy, MaxAckPending: 20000, AckWait: s.opts.AckWait, MaxDeliver: -1,
	})
	if err != nil {
		return nil, fmt.Errorf("creating consumer %s: %w", s.opts.Durable, err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("consumer info: %w", err)
	}
	if !s.opts.NoRebuild && info.Delivered.Stream > 0 {
		if err := s.rebuild(ctx, js, info.Delivered.Stream); err != nil {
			return nil, err
		}
		s.redelivered.rebuilt(info.Delivered.Stream)
	}
	s.log.Info("consuming", "stream", s.opts.Stream, "subject", s.opts.Subject, "durable", s.opts.Durable, "ack_floor", info.AckFloor.Stream)
	return cons, nil
}

// pendingMsg is a message handed to the checker, waiting for its batch to be applied.
type pendingMsg struct {
	msg   jetstream.Msg
	seq   uint64 // stream sequence (0 if unknown)
	reply chan applied
	buf   *batchBuf
}

// redeliveries knows which messages JetStream may deliver again after they were applied:
// those up to the stream sequence the durable consumer had delivered when the server
// started (re-read and applied at start, see [Server.rebuild]; the previous process may
// have died before acknowledging them, and JetStream redelivers them an ack-wait after it
// delivered them, two minutes by default), and those whose acknowledgement failed. A
// redelivery of one of these is acknowledged without being applied again: recognising it
// by its transactions' ids would only work while the checker still remembers them (a few
// settle windows), which is shorter than the ack wait.
type redeliveries struct {
	mu       sync.Mutex
	upTo     uint64
	ackFails map[uint64]struct{}
}

func (r *redeliveries) rebuilt(upTo uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.upTo = upTo
}

func (r *redeliveries) ackFailed(seq uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ackFails == nil {
		r.ackFails = map[uint64]struct{}{}
	}
	r.ackFails[seq] = struct{}{}
}

// applied says whether the message at stream sequence seq was applied already; a
// message whose failed acknowledgement it remembered is forgotten once asked about (its
// redelivery is acknowledged in turn).
func (r *redeliveries) applied(seq uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if seq <= r.upTo {
		return true
	}
	if _, ok := r.ackFails[seq]; ok {
		delete(r.ackFails, seq)
		return true
	}
	return false
}

// maxInFlight bounds the batches that wait for the checker: the backlog stays in the stream
// (durable, and visible as the consumer's pending count), not in the checker's queue, so a
// checker that falls behind does not also fall behind in settling what it holds.
const maxInFlight = 4

// natsAcker acknowledges messages, in order, once their batches are applied.
type natsAcker struct {
	acks     chan pendingMsg
	done     chan struct{}
	inFlight chan struct{}
}

func (s *Server) startAcker() *natsAcker {
	a := &natsAcker{acks: make(chan pendingMsg, maxInFlight), done: make(chan struct{}), inFlight: make(chan struct{}, maxInFlight)}
	go func() {
		defer close(a.done)
		for p := range a.acks {
			select {
			case <-p.reply:
				p.buf.release()
				<-a.inFlight
				if err := p.msg.Ack(); err != nil {
					s.log.Warn("ack failed; the message will be redelivered and acknowledged without being applied again", "err", err)
					if p.seq > 0 {
						s.redelivered.ackFailed(p.seq)
					}
				}
				s.natsMsgs.Add(1)
			case <-s.stopped:
				return // not applied: left unacknowledged for redelivery
			}
		}
	}()
	return a
}

// stop waits for the acknowledgements of the messages handed over.
func (a *natsAcker) stop() {
	close(a.acks)
	<-a.done
}

// submitMsg decodes a message and hands its batch to the checker (a bad message is refused
// for good); it returns false if the server stopped.
func (s *Server) submitMsg(msg jetstream.Msg, a *natsAcker) bool {
	var seq uint64
	if md, err := msg.Metadata(); err == nil {
		seq = md.Sequence.Stream
		if md.NumDelivered > 1 && s.redelivered.applied(seq) {
			s.natsRedelivered.Add(1)
			if err := msg.Ack(); err != nil {
				s.log.Warn("ack of a redelivered message failed", "seq", seq, "err", err)
			}
			return true
		}
	}
	buf, err := decodeBuf(msg.Data())
	if err != nil {
		s.natsBad.Add(1)
		s.log.Warn("bad message refused", "subject", msg.Subject(), "err", err)
		msg.Term()
		return true
	}
	select {
	case a.inFlight <- struct{}{}:
	case <-s.stopped:
		return false
	}
	b := &batch{txs: buf.txs, comp: s.compile(buf), queued: s.opts.Now(), reply: make(chan applied, 1)}
	select {
	case s.in <- b:
	case <-s.stopped:
		return false
	}
	a.acks <- pendingMsg{msg, seq, b.reply, buf}
	return true
}

// ensureStream is [OpenStream] for the server, which logs which stream it consumes.
func ensureStream(ctx context.Context, js jetstream.JetStream, name, subject string) (jetstream.Stream, error) {
	st, _, err := OpenStream(ctx, js, name, subject)
	return st, err
}

// OpenStream returns the JetStream stream name, which must take subject: an existing
// stream of that name whose subjects cover subject, or, when there is none of that name,
// one created for subject (created is then true). A stream of that name that does not take
// subject, or another stream that already takes it (JetStream lets one stream only take a
// subject), is an error naming what to pass instead.
func OpenStream(ctx context.Context, js jetstream.JetStream, name, subject string) (st jetstream.Stream, created bool, err error) {
	st, err = js.Stream(ctx, name)
	if err == nil {
		info, err := st.Info(ctx)
		if err != nil {
			return nil, false, fmt.Errorf("reading stream %s: %w", name, err)
		}
		if !slices.ContainsFunc(info.Config.Subjects, func(p string) bool { return subjectCovers(p, subject) }) {
			return nil, false, fmt.Errorf("stream %s exists but does not take subject %s (its subjects: %s): pass --subject with one of them, or another --stream", name, subject, strings.Join(info.Config.Subjects, ", "))
		}
		return st, false, nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, false, fmt.Errorf("looking up stream %s: %w", name, err)
	}
	if other, err := js.StreamNameBySubject(ctx, subject); err == nil && other != "" {
		return nil, false, fmt.Errorf("there is no stream %s, and stream %s already takes subject %s: pass --stream %s", name, other, subject, other)
	}
	st, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subject}, Storage: jetstream.FileStorage})
	if err != nil {
		return nil, false, fmt.Errorf("creating stream %s for subject %s: %w", name, subject, err)
	}
	return st, true, nil
}

// subjectCovers reports whether the NATS subject pattern p (with * and > wildcards)
// matches every subject that the subject s matches.
func subjectCovers(p, s string) bool {
	pt, st := strings.Split(p, "."), strings.Split(s, ".")
	for i, t := range pt {
		switch {
		case t == ">":
			return i < len(st)
		case i >= len(st):
			return false
		case t == "*" && st[i] != ">":
		case t != st[i]:
			return false
		}
	}
	return len(pt) == len(st)
}

// reapply applies again, while rebuilding, a message the durable consumer was given: one
// at stream sequence last or before it that decodes (applied); end says the message is
// the last one to re-read or after it.
func (s *Server) reapply(ctx context.Context, msg jetstream.Msg, last uint64) (applied, end bool, err error) {
	md, err := msg.Metadata()
	if err != nil {
		return false, false, fmt.Errorf("rebuild metadata: %w", err)
	}
	if md.Sequence.Stream > last {
		return false, true, nil
	}
	if buf, err := decodeBuf(msg.Data()); err == nil {
		if _, err := s.submit(ctx, &batch{txs: buf.txs, comp: s.compile(buf), rebuild: true}); err != nil {
			return false, false, err
		}
		buf.release()
		applied = true
	}
	return applied, md.Sequence.Stream == last, nil
}

// rebuild re-reads the stream up to sequence last (what the durable consumer has already
// been given) to restore the checker's state after a restart.
func (s *Server) rebuild(ctx context.Context, js jetstream.JetStream, last uint64) error {
	start := time.Now()
	oc, err := js.OrderedConsumer(ctx, s.opts.Stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{s.opts.Subject}, DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return fmt.Errorf("rebuild consumer: %w", err)
	}
	n := 0
	for ctx.Err() == nil {
		msgs, err := oc.Fetch(512, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return fmt.Errorf("rebuild fetch: %w", err)
		}
		got := 0
		done := false
		for msg := range msgs.Messages() {
			got++
			applied, end, err := s.reapply(ctx, msg, last)
			if err != nil {
				return err
			}
			if applied {
				n++
			}
			done = done || end
		}
		if done || got == 0 {
			break
		}
	}
	s.log.Info("rebuilt state from the stream", "messages", n, "up_to_seq", last, "elapsed", time.Since(start))
	return nil
}
