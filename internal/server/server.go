// Package server runs the online timestamp checker ([ts.Online], Aion) as a service: it
// ingests committed transactions over HTTP (POST /v1/txns) and from a NATS JetStream
// subject, streams violations to clients (GET /v1/violations) and to a file, and exposes
// Prometheus metrics (GET /metrics) and a status page (GET /). It also holds the logic of
// `isovet serve` ([Serve]) and `isovet replay` ([Replay]).
//
// One goroutine owns the checker; HTTP handlers and the NATS consumer decode in their own
// goroutines and hand it whole, validated batches, waiting until they are applied. The
// package holds no checker logic.
package server

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/check/ts"
	"github.com/isovet/isovet/internal/jsonscan"
)

// Options configure the server. The zero value serves snapshot isolation on
// 127.0.0.1:7474 over HTTP only.
type Options struct {
	Addr string // listen address (default 127.0.0.1:7474)
	// Level is the level checked (default snapshot isolation).
	Level anomaly.Level
	// Initial is every key's initial value (the history's ⊥ transaction).
	Initial history.Datum
	// Settle is how long EXT verdicts stay provisional (default 5 s); Retain how long a
	// settled transaction's snapshot keeps old versions (default Settle).
	Settle, Retain time.Duration
	// MaxMemory bounds the server's memory in bytes (0: [DefaultMaxMemory]; negative:
	// unbounded). [Serve] sets the Go runtime's soft memory limit 1/16 below it (at least
	// 32 MiB below), and the checker keeps its estimated size under half of it: the other
	// half is room for garbage between collections and for batches in flight. Over its
	// half, the checker drops the oldest unsettled transactions unchecked and says so (a
	// warning event, isovet_txns_dropped_total).
	MaxMemory int64
	// ViolationsFile, if set, receives every violation as a JSON line, written whole
	// before the batch that found it is answered. Violations already in it (from before a
	// restart) are not reported again; a torn last line (the process was killed while
	// writing) is cut off at start, with a warning. SyncViolations syncs the file after
	// each write, so that a crash of the machine loses nothing written either.
	ViolationsFile string
	SyncViolations bool
	// NATS is a server URL (nats://127.0.0.1:4222); empty disables the consumer.
	NATS    string
	Subject string // default "isovet.txns"
	Stream  string // default "ISOVET"
	Durable string // durable consumer name (default "isovet-checker")
	// NoRebuild skips re-reading the already acknowledged part of the stream at start.
	NoRebuild bool
	// AckWait is how long JetStream waits for a message's acknowledgement before it
	// delivers it again (default 2 min).
	AckWait time.Duration
	// MaxBody bounds a POST body (default 64 MiB, and at most the bodies' budget: an
	// eighth of MaxMemory, at least 4 MiB). Bodies are charged against that budget as
	// their bytes arrive; a request that would pass it is refused (503, code "busy").
	MaxBody int64
	// Token, if set, is required of every request (Authorization: Bearer TOKEN, or
	// ?token=TOKEN). [Serve] refuses to listen beyond the loopback interface without one,
	// unless Insecure is set (then it logs a warning). Without a token, requests must
	// name a loopback host (Host header), unless Insecure is set.
	Token    string
	Insecure bool
	// ReadHeaderTimeout bounds reading a request's header (default 10 s), ReadTimeout the
	// whole request, body included (default 1 min: a 64 MiB body needs about 1 MB/s), and
	// IdleTimeout how long a kept-alive connection waits for its next request (default
	// 2 min).
	ReadHeaderTimeout, ReadTimeout, IdleTimeout time.Duration
	// Tick is how often time advances in the checker (default 50 ms).
	Tick time.Duration
	// Shards splits the checker by key over this many goroutines (default 1). Each batch
	// goes to every shard; they check their own keys in parallel and the batch is
	// answered when all are done. The checker's part of MaxMemory is divided among them.
	Shards int
	// Logger receives the server's logs (default: discarded).
	Logger *slog.Logger
	// GCPercent is the Go GC target while [Serve] runs (0: 400, unless GOGC is set in the
	// environment; negative: leave the runtime alone). The checker allocates steadily and
	// spends a quarter of its CPU in GC at the runtime's default of 100; the memory limit
	// (see MaxMemory) makes it collect sooner when the heap nears the bound.
	GCPercent int
	// Now is the clock (default time.Now), replaceable in tests.
	Now func() time.Time
	_   struct{}
}

func (o *Options) ensureDefaults() {
	o.Addr = cmp.Or(o.Addr, "127.0.0.1:7474")
	o.Level = cmp.Or(o.Level, anomaly.SnapshotIsolation)
	o.Subject = cmp.Or(o.Subject, "isovet.txns")
	o.Stream = cmp.Or(o.Stream, "ISOVET")
	o.Durable = cmp.Or(o.Durable, "isovet-checker")
	if o.Settle <= 0 {
		o.Settle = 5 * time.Second
	}
	if o.MaxBody <= 0 {
		o.MaxBody = 64 << 20
	}
	o.ReadHeaderTimeout = cmp.Or(o.ReadHeaderTimeout, defaultReadHeaderTimeout)
	o.ReadTimeout = cmp.Or(o.ReadTimeout, defaultReadTimeout)
	o.IdleTimeout = cmp.Or(o.IdleTimeout, defaultIdleTimeout)
	o.AckWait = cmp.Or(o.AckWait, 2*time.Minute)
	if o.Tick <= 0 {
		o.Tick = 50 * time.Millisecond
	}
	if o.Shards <= 0 {
		o.Shards = 1
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxMemory == 0 {
		o.MaxMemory = DefaultMaxMemory()
	}
}

// Server is a running online checker. Create it with [New], start it with [Server.Start],
// serve [Server.Handler], and stop it with [Server.Close].
type Server struct {
	opts     Options
	log      *slog.Logger
	on       *ts.Online   // shard 0
	shards   []*ts.Online // owned by the checker goroutine
	evs      [][]ts.Event // per shard, while a batch is applied
	observed []int        // per shard: violations reported by Observe for the batch

	in      chan *batch
	stopped chan struct{} // closed when the checker goroutine exits
	streams chan struct{} // closed to end streaming responses
	hub     hub
	status  atomic.Pointer[Status]

	vfile    *violationsFile     // nil without Options.ViolationsFile
	reported map[string]struct{} // owned by the checker goroutine
	previous int                 // violations read back from the file at start
	// never counts the EXT NEVER violations reported since start (reads of a value no
	// transaction wrote) by the value read, for the initial-value hint; hinted says the hint
	// was logged. Both are owned by the checker goroutine.
	never  neverCounts
	hinted bool

	// checkerCPU and checkerBusy are the checker goroutine's own CPU time (its thread's,
	// where the system reports it, else zero) and the wall time it spent working, in ns.
	checkerCPU, checkerBusy atomic.Int64

	// bodies is the budget of request bodies held at once, maxBody the largest accepted
	// (Options.MaxBody, at most the budget).
	bodies  budget
	maxBody int64

	requests, badRequests  atomic.Int64
	natsMsgs, natsBad      atomic.Int64
	natsRedelivered        atomic.Int64
	redelivered            redeliveries
	rebuilt                atomic.Int64
	started                time.Time
	closeOnce, streamsOnce sync.Once
	cancel                 context.CancelFunc
}

// batch is a validated set of transactions on its way to the checker.
type batch struct {
	txs     []ts.Txn
	comp    [][]ts.Compiled // per shard, compiled by the sender (see [Server.compile]); nil: compile in the checker
	rebuild bool            // re-read after a restart
	queued  time.Time
	reply   chan applied
}

// applied is what became of a batch.
type applied struct {
	Schema     int    `json:"schema"` // SchemaVersion
	Kind       string `json:"kind"`   // "accepted"
	Accepted   int    `json:"accepted"`
	Duplicates int    `json:"duplicates"`
	Late       int    `json:"late"`
	Violations int    `json:"violations"`
}

// SchemaVersion is the version of docs/report.schema.json the API's JSON follows (the
// "schema" field of every answer and violation line), the same as the reports'
// (explain.SchemaVersion; a cmd/isovet test keeps the two equal). Each names its kind:
// status, accepted, error, violation or warning.
const SchemaVersion = 1

// Status is the server's state, as GET /v1/status returns it.
type Status struct {
	Schema         int              `json:"schema"` // SchemaVersion
	Kind           string           `json:"kind"`   // "status"
	Level          string           `json:"level"`
	Uptime         float64          `json:"uptime_seconds"`
	Ingested       int64            `json:"ingested"`
	Checked        int64            `json:"checked"`
	Pending        int              `json:"pending"`
	InMemory       int              `json:"in_memory"`
	Keys           int              `json:"keys"`
	Versions       int              `json:"versions"`
	Duplicates     int64            `json:"duplicates"`
	Late           int64            `json:"late"`
	Dropped        int64            `json:"dropped"`
	Flips          int64            `json:"flips"`
	Violations     int64            `json:"violations"`
	Previous       int              `json:"violations_before_start"`
	ByKind         map[string]int64 `json:"violations_by_kind"`
	MemoryEstimate int64            `json:"memory_estimate_bytes"`
	// MemoryBound is the server's memory bound ([Options.MaxMemory]), 0 if unbounded.
	MemoryBound int64   `json:"memory_bound_bytes"`
	LagSeconds  float64 `json:"lag_seconds"`
	QueueDelay  float64 `json:"queue_delay_seconds"`
	Queue       int     `json:"queue"`
	Rebuilt     int64   `json:"rebuilt"`
	// CheckerCPU is the CPU time of the checker goroutine (0 where the system does not
	// report a thread's CPU time) and CheckerBusy the wall time it spent working: with one
	// shard, the checker is the service's serial stage, so transactions over CheckerCPU is
	// the most one free core can sustain.
	CheckerCPU   float64 `json:"checker_cpu_seconds"`
	CheckerBusy  float64 `json:"checker_busy_seconds"`
	Requests     int64   `json:"http_requests"`
	BadRequests  int64   `json:"http_bad_requests"`
	NATSMessages int64   `json:"nats_messages"`
	NATSBad      int64   `json:"nats_bad_messages"`
	// NATSRedelivered counts JetStream redeliveries of messages already applied,
	// acknowledged without being applied again.
	NATSRedelivered int64 `json:"nats_redelivered"`
	// Durable says whether what was ingested survives a restart: false with HTTP ingest
	// only; Durability says so in words.
	Durable     bool   `json:"durable"`
	Durability  string `json:"durability"`
	Subscribers int    `json:"subscribers"`
	// Hint names a known pitfall the violations point to: every read of a value that no
	// transaction wrote read 0 (the server was started with another initial value than 0),
	// or every one read nil. Empty when there is none.
	Hint string `json:"hint,omitempty"`
	// Initial is every key's initial value (--initial-value) as JSON: 0, null, "x".
	// Clients compare it with the history they send.
	Initial json.RawMessage `json:"initial_value"`
}

// New prepares a server: the checker, and the violations file (read for violations
// already reported, then opened for appending).
func New(opts Options) (*Server, error) {
	opts.ensureDefaults()
	s := &Server{opts: opts, log: opts.Logger, in: make(chan *batch, 64), stopped: make(chan struct{}), streams: make(chan struct{}),
		reported: map[string]struct{}{}, started: opts.Now(), evs: make([][]ts.Event, opts.Shards), observed: make([]int, opts.Shards)}
	for i := range opts.Shards {
		on, err := ts.NewOnline(ts.OnlineOptions{Level: opts.Level, Initial: opts.Initial, Settle: opts.Settle, Retain: opts.Retain,
			MaxBytes: max(checkerBytes(opts.MaxMemory)/int64(opts.Shards), 0), Shard: i, Shards: opts.Shards})
		if err != nil {
			return nil, err
		}
		s.shards = append(s.shards, on)
	}
	s.on = s.shards[0]
	s.bodies.limit = bodyBudget(opts.MaxMemory)
	s.maxBody = opts.MaxBody
	if s.bodies.limit > 0 {
		s.maxBody = min(s.maxBody, s.bodies.limit)
	}
	s.hub.init()
	if opts.ViolationsFile != "" {
		if err := s.openViolations(opts.ViolationsFile); err != nil {
			return nil, err
		}
	}
	s.publishStatus(0, 0)
	return s, nil
}

func (s *Server) openViolations(path string) error {
	vf, cut, bad, err := openViolationsFile(path, s.opts.SyncViolations, func(id string) { s.reported[id] = struct{}{} })
	if err != nil {
		return err
	}
	s.vfile = vf
	if cut > 0 {
		s.log.Warn("violations file ended in a torn line (the server was killed while writing it): cut it off", "file", path, "bytes_dropped", cut)
	}
	if bad > 0 {
		s.log.Warn("violations file holds lines that are not violations; left as they are", "file", path, "lines", bad)
	}
	s.previous = len(s.reported)
	if len(s.reported) > 0 {
		s.log.Info("violations already reported", "file", path, "count", len(s.reported))
	}
	return nil
}

// Start runs the checker goroutine until ctx ends or Close is called.
func (s *Server) Start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(ctx)
	go s.run(ctx)
}

// Close stops the checker, ends streaming responses and flushes the violations file.
// Transactions still pending are not reported (their verdicts are not final).
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.closeStreams()
		if s.cancel != nil {
			s.cancel()
			<-s.stopped
		}
		if s.vfile != nil {
			err = s.vfile.close()
		}
	})
	return err
}

// Status returns the latest status snapshot.
func (s *Server) Status() Status { return *s.status.Load() }

// submit hands a batch to the checker and waits until it is applied.
func (s *Server) submit(ctx context.Context, b *batch) (applied, error) {
	b.queued = s.opts.Now()
	b.reply = make(chan applied, 1)
	select {
	case s.in <- b:
	case <-ctx.Done():
		return applied{}, context.Cause(ctx)
	case <-s.stopped:
		return applied{}, errStopped
	}
	select {
	case a := <-b.reply:
		return a, nil
	case <-s.stopped:
		return applied{}, errStopped
	}
}

var errStopped = errors.New("server: checker stopped")

// run is the checker goroutine: the only one touching the shards (directly or through
// [Server.each]) and s.reported.
func (s *Server) run(ctx context.Context) {
	defer close(s.stopped)
	// The checker keeps its OS thread, so that the thread's CPU time is its own.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := newCPUClock()
	tick := time.NewTicker(s.opts.Tick)
	defer tick.Stop()
	var delay time.Duration
	var published time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case b := <-s.in:
			// The batch arrived when it was queued: a checker that fell behind must not
			// let time run past batches still waiting for it (their transactions would
			// find the versions they need collected and be reported late).
			delay = s.opts.Now().Sub(b.queued)
			s.apply(b, cpu)
			// Drain what else is queued before publishing status, but publish at least
			// once a tick.
			if len(s.in) > 0 && s.opts.Now().Sub(published) < s.opts.Tick {
				continue
			}
		case <-tick.C:
			// With batches waiting, they advance time (to when they were queued).
			if len(s.in) == 0 {
				s.advanceIdle(cpu)
			}
		}
		published = s.opts.Now()
		s.publishStatus(delay, len(s.in))
	}
}

// cpuClock reads the checker thread's CPU time since the checker started, where the system
// tells it.
type cpuClock struct {
	start time.Duration
	ok    bool
}

func newCPUClock() cpuClock {
	c, ok := threadCPU()
	return cpuClock{start: c, ok: ok}
}

// record adds the wall time since w0 to the checker's busy time and stores its CPU time.
func (s *Server) record(w0 time.Time, cpu cpuClock) {
	s.checkerBusy.Add(int64(time.Since(w0)))
	if cpu.ok {
		if c, ok := threadCPU(); ok {
			s.checkerCPU.Store(int64(c - cpu.start))
		}
	}
}

// apply advances time to the batch, then applies it, in one pass over the shards, handles
// the events and replies with what was accepted. Only what Observe reports counts in the
// reply.
func (s *Server) apply(b *batch, cpu cpuClock) {
	w0 := time.Now()
	clear(s.observed)
	evs := s.each(func(i int, on *ts.Online, evs []ts.Event) []ts.Event {
		evs = append(evs, on.Advance(b.queued)...)
		for j := range b.txs {
			var got []ts.Event
			if b.comp != nil {
				got = on.ObserveCompiled(&b.comp[i][j])
			} else {
				got = on.Observe(b.txs[j])
			}
			s.observed[i] += countViolations(got)
			evs = append(evs, got...)
		}
		return evs
	})
	var a applied
	for _, n := range s.observed {
		a.Violations += n
	}
	for _, e := range evs {
		switch e.Kind {
		case ts.EventDuplicate:
			a.Duplicates++
		case ts.EventLate:
			a.Late++
		}
	}
	if b.rebuild {
		s.rebuilt.Add(int64(len(b.txs) - a.Duplicates))
	}
	s.handle(evs)
	a.Accepted = len(b.txs) - a.Duplicates - a.Late
	b.reply <- a
	s.record(w0, cpu)
}

func countViolations(evs []ts.Event) int {
	n := 0
	for _, e := range evs {
		if e.Kind == ts.EventViolation {
			n++
		}
	}
	return n
}

// advanceIdle advances every shard's time to now, with no batch waiting.
func (s *Server) advanceIdle(cpu cpuClock) {
	w0 := time.Now()
	now := s.opts.Now()
	s.handle(s.each(func(_ int, on *ts.Online, evs []ts.Event) []ts.Event { return append(evs, on.Advance(now)...) }))
	s.record(w0, cpu)
}

// each runs f on every shard, appending to that shard's event buffer (shard 0 on this
// goroutine, the others in parallel), and returns the events in shard order. A late
// transaction is reported once, however many shards found it late. The result is valid
// until the next call.
func (s *Server) each(f func(i int, on *ts.Online, evs []ts.Event) []ts.Event) []ts.Event {
	if len(s.shards) == 1 {
		s.evs[0] = f(0, s.on, s.evs[0][:0])
		return s.evs[0]
	}
	var wg sync.WaitGroup
	for i := 1; i < len(s.shards); i++ {
		wg.Go(func() { s.evs[i] = f(i, s.shards[i], s.evs[i][:0]) })
	}
	s.evs[0] = f(0, s.on, s.evs[0][:0])
	wg.Wait()
	out := s.evs[0]
	var late map[string]bool
	for i := range s.evs {
		for j, e := range s.evs[i] {
			if e.Kind == ts.EventLate {
				if late == nil {
					late = map[string]bool{}
				}
				if late[e.Txn] {
					continue
				}
				late[e.Txn] = true
			}
			if i > 0 {
				out = append(out, s.evs[i][j])
			}
		}
	}
	s.evs[0] = out
	return out
}

// stats pools the shards' counters: per-transaction ones come from shard 0 (every shard
// sees every transaction), per-key ones are summed.
func (s *Server) stats() ts.OnlineStats {
	st := s.on.Stats()
	for _, on := range s.shards[1:] {
		x := on.Stats()
		st.Late = max(st.Late, x.Late)
		st.Dropped += x.Dropped
		st.Violations += x.Violations
		st.Flips += x.Flips
		st.Keys += x.Keys
		st.Versions += x.Versions
		st.Reads += x.Reads
		st.Bytes += x.Bytes
	}
	return st
}

// handle reports events: violations not reported before go to the file and subscribers.
func (s *Server) handle(evs []ts.Event) {
	for i := range evs {
		e := &evs[i]
		switch e.Kind {
		case ts.EventViolation, ts.EventRejected:
			s.report(&e.Violation)
		case ts.EventDropped, ts.EventLate:
			s.log.Warn("transactions not checked", "event", e.Kind.String(), "count", e.Count, "txn_id", e.Txn, "message", e.Message)
			line, _ := json.Marshal(warningJSON{Schema: SchemaVersion, Kind: "warning", Event: e.Kind.String(), Count: e.Count, Txn: e.Txn, Message: e.Message})
			s.hub.publish("", line)
		}
	}
	// Written before the batch is answered or acknowledged: see [violationsFile].
	if s.vfile != nil {
		if err := s.vfile.write(); err != nil {
			s.log.Error("writing violations file", "err", err)
		}
	}
}

// report writes v to the violations file and publishes it to subscribers, unless it was
// reported before (by id).
func (s *Server) report(v *ts.Violation) {
	id := v.ID()
	if _, ok := s.reported[id]; ok {
		return
	}
	s.reported[id] = struct{}{}
	s.never.count(v)
	line := violationLine(v, s.opts.Now())
	if s.vfile != nil {
		s.vfile.add(line)
	}
	s.hub.publish(v.Kind.String(), line)
}

// violationJSON is a violation line: the document kind "violation", then the anomaly.
type violationJSON struct {
	Schema      int     `json:"schema"` // SchemaVersion
	Kind        string  `json:"kind"`   // "violation"
	ID          string  `json:"id"`
	Anomaly     string  `json:"anomaly"`
	Ext         string  `json:"ext,omitempty"`
	Txn         string  `json:"txn"`
	Other       string  `json:"other,omitempty"`
	Key         *string `json:"key,omitempty"` // the key's text, as the history wrote it`
	Observed    string  `json:"observed,omitempty"`
	Expected    string  `json:"expected,omitempty"`
	Writer      string  `json:"writer,omitempty"`
	TxnStart    []int64 `json:"txn_start"`
	TxnCommit   []int64 `json:"txn_commit"`
	OtherStart  []int64 `json:"other_start,omitempty"`
	OtherCommit []int64 `json:"other_commit,omitempty"`
	Message     string  `json:"message"`
	At          string  `json:"at"`
}

func tsJSON(t history.Timestamp) []int64 { return []int64{t.Physical, t.Logical} }

// keyText is a key as the JSON documents write every key: its text, as the history wrote
// it (the integer key 99 is "99").
func keyText(d history.Datum) string {
	if i, ok := d.Int(); ok {
		return strconv.FormatInt(i, 10)
	}
	if s, ok := d.Str(); ok {
		return s
	}
	return d.String()
}

func violationLine(v *ts.Violation, at time.Time) []byte {
	j := violationJSON{Schema: SchemaVersion, Kind: "violation", ID: v.ID(), Anomaly: v.Kind.String(), Txn: v.Txn, Other: v.Other, Observed: v.Observed, Expected: v.Expected,
		Writer: v.Writer, TxnStart: tsJSON(v.TxnStart), TxnCommit: tsJSON(v.TxnCommit), Message: v.String(), At: at.UTC().Format(time.RFC3339Nano)}
	if v.Ext != ts.ExtNone {
		j.Ext = v.Ext.String()
	}
	if v.HasKey {
		k := keyText(v.Key)
		j.Key = &k
	}
	if v.Other != "" && v.Other != ts.Initial {
		j.OtherStart, j.OtherCommit = tsJSON(v.OtherStart), tsJSON(v.OtherCommit)
	}
	b, _ := json.Marshal(j)
	return b
}

// neverCounts counts EXT NEVER violations by the value read.
type neverCounts struct{ zero, null, other int64 }

func (n *neverCounts) count(v *ts.Violation) {
	if v.Kind != anomaly.ExtViolation || v.Ext != ts.ExtNever {
		return
	}
	switch v.Observed {
	case "0":
		n.zero++
	case "nil":
		n.null++
	default:
		n.other++
	}
}

// hint says which --initial-value the history probably needs when every read of a value
// no transaction wrote read 0, or every one read nil, and the server's initial value is
// not that one; else "".
func (n neverCounts) hint(initial history.Datum) string {
	total := n.zero + n.null + n.other
	switch {
	case total == 0:
		return ""
	case n.zero == total && initial != history.Int(0):
		return fmt.Sprintf("all %d reads of a value no transaction wrote (EXT NEVER) read 0: the history probably starts with every key 0; serve it with --initial-value 0", total)
	case n.null == total && !initial.IsNil():
		return fmt.Sprintf("all %d reads of a value no transaction wrote (EXT NEVER) read nil: the history probably starts with every key absent; serve it with --initial-value null", total)
	}
	return ""
}

func (s *Server) publishStatus(delay time.Duration, queue int) {
	st := s.stats()
	hint := s.never.hint(s.opts.Initial)
	if hint != "" && !s.hinted {
		s.hinted = true
		s.log.Warn("initial value", "hint", hint)
	}
	now := s.opts.Now()
	by := s.hub.kinds()
	lag := 0.0
	if !st.OldestPending.IsZero() {
		lag = max(0, now.Sub(st.OldestPending).Seconds()-s.opts.Settle.Seconds())
	}
	s.status.Store(&Status{
		Schema: SchemaVersion, Kind: "status", Level: s.opts.Level.String(), Uptime: now.Sub(s.started).Seconds(),
		Ingested: st.Observed, Checked: st.Settled, Pending: st.Pending, InMemory: st.InMemory, Keys: st.Keys, Versions: st.Versions,
		Duplicates: st.Duplicates, Late: st.Late, Dropped: st.Dropped, Flips: st.Flips, Violations: sum(by), Previous: s.previous,
		ByKind: by, MemoryEstimate: st.Bytes, MemoryBound: max(s.opts.MaxMemory, 0), LagSeconds: lag, QueueDelay: delay.Seconds(), Queue: queue,
		Rebuilt: s.rebuilt.Load(), CheckerCPU: time.Duration(s.checkerCPU.Load()).Seconds(), CheckerBusy: time.Duration(s.checkerBusy.Load()).Seconds(), Requests: s.requests.Load(), BadRequests: s.badRequests.Load(),
		NATSMessages: s.natsMsgs.Load(), NATSBad: s.natsBad.Load(), NATSRedelivered: s.natsRedelivered.Load(), Subscribers: s.hub.count(), Hint: hint,
		Durable: s.opts.NATS != "", Durability: s.durability(),
		Initial: jsonscan.AppendDatum(nil, s.opts.Initial),
	})
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// Handler returns the HTTP API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/txns", s.postTxns)
	mux.HandleFunc("GET /v1/violations", s.getViolations)
	mux.HandleFunc("GET /v1/status", s.getStatus)
	mux.HandleFunc("GET /metrics", s.getMetrics)
	mux.HandleFunc("GET /{$}", s.getIndex)
	return s.guard(mux)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// errorJSON is the answer to a request the server refuses.
type errorJSON struct {
	Schema int    `json:"schema"` // SchemaVersion
	Kind   string `json:"kind"`   // "error"
	Error  string `json:"error"`
	Code   string `json:"code"`
}

// warningJSON is a line of the violations stream saying transactions went unchecked.
type warningJSON struct {
	Schema  int    `json:"schema"` // SchemaVersion
	Kind    string `json:"kind"`   // "warning"
	Event   string `json:"event"`
	Count   int    `json:"count"`
	Txn     string `json:"txn"`
	Message string `json:"message"`
}

func (s *Server) fail(w http.ResponseWriter, status int, code string, err error) {
	s.badRequests.Add(1)
	writeJSON(w, status, errorJSON{Schema: SchemaVersion, Kind: "error", Error: err.Error(), Code: code})
}

func (s *Server) postTxns(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	if err := checkIngestType(r); err != nil {
		w.Header().Set("Connection", "close")
		s.fail(w, http.StatusUnsupportedMediaType, "bad_content_type", err)
		return
	}
	if r.ContentLength > s.maxBody {
		s.failBody(w, errTooLarge)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	bd, err := readBody(r.Body, s.maxBody, r.ContentLength, &s.bodies)
	defer bd.release()
	if err != nil {
		s.failBody(w, err)
		return
	}
	buf, err := decodeBuf(bd.b)
	if err != nil {
		var ie *inputError
		if errors.As(err, &ie) {
			s.fail(w, ie.status, ie.code, ie.err)
			return
		}
		s.fail(w, http.StatusBadRequest, "bad_input", err)
		return
	}
	a, err := s.submit(ctx, &batch{txs: buf.txs, comp: s.compile(buf)})
	if err != nil {
		// The checker may still hold the batch: leave its buffer to the garbage collector.
		s.fail(w, http.StatusServiceUnavailable, "unavailable", err)
		return
	}
	buf.release()
	a.Schema, a.Kind = SchemaVersion, "accepted"
	writeJSON(w, http.StatusOK, a)
}

// compile compiles buf's transactions for every shard on the calling goroutine (an HTTP
// handler or the NATS consumer), so that the checker's goroutine, the service's
// bottleneck, does only the work that needs the checker's state.
func (s *Server) compile(buf *batchBuf) [][]ts.Compiled {
	n := len(s.shards)
	if len(buf.comp) < n {
		buf.comp, buf.compilers = make([][]ts.Compiled, n), make([]ts.Compiler, n)
	}
	for i := range n {
		buf.comp[i] = buf.compilers[i].Compile(buf.txs, i, n, buf.comp[i])
	}
	return buf.comp[:n]
}

func (s *Server) getStatus(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.Status())
}

// getViolations streams violations: server-sent events when the client accepts
// text/event-stream (or ?format=sse), JSON lines otherwise. ?replay=1 first sends the
// most recent ones (up to 1,000).
func (s *Server) getViolations(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		s.fail(w, http.StatusInternalServerError, "no_streaming", errors.New("streaming unsupported"))
		return
	}
	// A stream outlives the request's read deadline: without clearing it, the server's
	// read of the connection (watching for the client to leave) would end the stream.
	http.NewResponseController(w).SetReadDeadline(time.Time{})
	ch, backlog := s.hub.subscribe(r.URL.Query().Get("replay") == "1")
	defer s.hub.unsubscribe(ch)
	vs := violationStream{sse: r.URL.Query().Get("format") == "sse" || acceptsSSE(r.Header.Get("Accept")), fl: fl}
	if vs.sse {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
	} else {
		w.Header().Set("Content-Type", "application/x-ndjson")
	}
	w.WriteHeader(http.StatusOK)
	vs.bw = bufio.NewWriter(w)
	for _, l := range backlog {
		vs.send(l)
	}
	vs.flush()
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.streams:
			return
		case <-keep.C:
			if vs.sse {
				vs.bw.WriteString(": keep-alive\n\n")
				vs.flush()
			}
		case line := <-ch:
			vs.send(line)
			for n := len(ch); n > 0; n-- {
				vs.send(<-ch)
			}
			if vs.flush() != nil {
				return
			}
		}
	}
}

// violationStream writes violations to one client: as server-sent events (sse) or as
// JSON lines.
type violationStream struct {
	sse bool
	bw  *bufio.Writer
	fl  http.Flusher
}

// send writes one violation's JSON line.
func (vs *violationStream) send(line []byte) {
	if vs.sse {
		vs.bw.WriteString("data: ")
		vs.bw.Write(line)
		vs.bw.WriteString("\n\n")
	} else {
		vs.bw.Write(line)
		vs.bw.WriteByte('\n')
	}
}

// flush sends what was written to the client; an error means it is gone.
func (vs *violationStream) flush() error {
	if err := vs.bw.Flush(); err != nil {
		return err
	}
	vs.fl.Flush()
	return nil
}

func acceptsSSE(accept string) bool {
	return strings.Contains(accept, "text/event-stream")
}

// Serve runs `isovet serve`: the HTTP API on opts.Addr and, if opts.NATS is set, the
// JetStream consumer, until ctx ends; then it shuts down gracefully (in-flight requests
// finish, the consumer stops, the violations file is flushed).
func Serve(ctx context.Context, opts Options) error {
	s, err := New(opts)
	if err != nil {
		return err
	}
	if err := s.checkExposure(s.opts.Addr); err != nil {
		s.Close()
		return err
	}
	defer s.tuneRuntime()()
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		s.Close()
		return fmt.Errorf("listening on %s: %w", s.opts.Addr, err)
	}
	return s.serve(ctx, ln)
}

// tuneRuntime sets the Go runtime's GC target ([Options.GCPercent]) and its soft memory
// limit (just below [Options.MaxMemory]) for the server's life, and returns what restores
// them. Both are process-wide: [Serve] calls it, [New] does not.
func (s *Server) tuneRuntime() (restore func()) {
	var undo []func()
	if gc := s.opts.GCPercent; gc >= 0 && (gc > 0 || os.Getenv("GOGC") == "") {
		if gc == 0 {
			gc = 400
		}
		prev := debug.SetGCPercent(gc)
		undo = append(undo, func() { debug.SetGCPercent(prev) })
	}
	if b := s.opts.MaxMemory; b > 0 {
		prev := debug.SetMemoryLimit(goMemoryLimit(b))
		undo = append(undo, func() { debug.SetMemoryLimit(prev) })
		s.log.Info("memory bound", "max_memory", b, "go_memory_limit", goMemoryLimit(b), "checker_bytes", checkerBytes(b))
	}
	return func() {
		for _, f := range undo {
			f()
		}
	}
}

func (s *Server) serve(ctx context.Context, ln net.Listener) error {
	s.Start(context.WithoutCancel(ctx))
	srv := s.httpServer()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	s.log.Info("serving", "addr", ln.Addr().String(), "level", s.opts.Level.String(), "settle", s.opts.Settle)
	s.log.Warn(s.durability())
	natsCtx, stopNATS := context.WithCancel(ctx)
	defer stopNATS()
	var natsDone chan error
	if s.opts.NATS != "" {
		natsDone = make(chan error, 1)
		go func() { natsDone <- s.consumeNATS(natsCtx) }()
	}
	var runErr error
	select {
	case <-ctx.Done():
	case err := <-errc:
		runErr = err
	case err := <-natsDone:
		runErr, natsDone = err, nil
	}
	stopNATS()
	if natsDone != nil {
		if err := <-natsDone; err != nil && !errors.Is(err, context.Canceled) {
			runErr = errors.Join(runErr, err)
		}
	}
	s.log.Info("shutting down")
	s.closeStreams()
	shCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	shErr := srv.Shutdown(shCtx)
	return errors.Join(runErr, shErr, s.Close())
}

// httpServer is the HTTP server of the API, with the timeouts of the options: a client
// cannot hold a connection by sending its request slowly, nor idle forever between
// requests.
func (s *Server) httpServer() *http.Server {
	return &http.Server{Handler: s.Handler(), ReadHeaderTimeout: s.opts.ReadHeaderTimeout, ReadTimeout: s.opts.ReadTimeout,
		IdleTimeout: s.opts.IdleTimeout, MaxHeaderBytes: maxHeaderBytes, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
}

// durability says in words what survives a restart of the server.
func (s *Server) durability() string {
	if s.opts.NATS == "" {
		return "HTTP ingest is not durable: a restart starts from nothing (the checker's state is in memory); send the history again after a restart, or ingest through NATS JetStream. Violations already in the violations file are not reported twice"
	}
	return "NATS ingest is durable: at start the stream is re-read to rebuild the checker's state, and messages are acknowledged only once applied; transactions posted over HTTP are not kept"
}

func (s *Server) closeStreams() {
	s.streamsOnce.Do(func() { close(s.streams) })
}
