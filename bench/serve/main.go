// Command serve measures isovet serve, the online checking service: its sustained ingest
// throughput, CPU per transaction and lag on loopback, over HTTP or NATS JetStream.
//
//	go build -o /tmp/isovet ./cmd/isovet
//	go run ./bench/serve -server-bin /tmp/isovet -via http
//	go run ./bench/serve -server-bin /tmp/isovet -via nats
//
// -server-bin OLD measures another build; -json prints the report as JSON.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/isovet/isovet/internal/cputime"
	"github.com/isovet/isovet/internal/server"
)

// benchServe is the configuration of one measurement.
type benchServe struct {
	via       string // http or nats
	natsURL   string
	duration  time.Duration
	txns      int
	batch     int
	parallel  int
	backlog   int
	settle    time.Duration
	shards    int
	load      server.LoadOptions
	serverBin string
	extra     []string
	json      bool
}

// benchReport is what bench/serve measured. CPU figures are user+system seconds of each
// process over the measured window.
type benchReport struct {
	Via            string    `json:"via"`
	Window         float64   `json:"window_seconds"`
	Sent           int64     `json:"sent"`
	Ingested       int64     `json:"ingested_in_window"`
	Throughput     float64   `json:"txns_per_second"`
	PerSecond      []float64 `json:"txns_per_second_by_second"`
	ServerCPU      float64   `json:"server_cpu_seconds"`
	ClientCPU      float64   `json:"client_cpu_seconds"`
	NATSCPU        float64   `json:"nats_server_cpu_seconds,omitempty"`
	ServerUSPerTxn float64   `json:"server_cpu_us_per_txn"`
	ClientUSPerTxn float64   `json:"client_cpu_us_per_txn"`
	NATSUSPerTxn   float64   `json:"nats_cpu_us_per_txn,omitempty"`
	EncodeUSPerTxn float64   `json:"encode_cpu_us_per_txn"`
	// CheckerCPU is the checker goroutine's CPU over the window (0 where not reported),
	// CheckerBusy the fraction of the window it was working; TotalUSPerTxn is the CPU of
	// the whole pipeline per transaction: server, client sending and encoding, NATS server.
	CheckerCPU      float64   `json:"checker_cpu_seconds"`
	CheckerUSPerTxn float64   `json:"checker_cpu_us_per_txn"`
	CheckerBusy     float64   `json:"checker_busy_fraction"`
	TotalUSPerTxn   float64   `json:"total_cpu_us_per_txn"`
	MaxLag          float64   `json:"max_lag_seconds"`
	MaxBacklog      int64     `json:"max_backlog_txns"`
	Drain           float64   `json:"drain_seconds"`
	Violations      int64     `json:"violations"`
	LoadBefore      string    `json:"loadavg_before"`
	LoadAfter       string    `json:"loadavg_after"`
	ServerRSSBytes  int64     `json:"server_rss_bytes"`
	GeneratedAt     time.Time `json:"at"`
	ServerArguments []string  `json:"server_args"`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it parses args, measures, prints the report and returns
// the exit code (0 done, 1 the measurement failed, 2 a usage error).
func run(args []string, stdout, stderr io.Writer) int {
	var b benchServe
	f := flag.NewFlagSet("serve", flag.ContinueOnError)
	f.SetOutput(stderr)
	f.Usage = func() {
		fmt.Fprint(stderr, usage)
		f.PrintDefaults()
	}
	f.StringVar(&b.via, "via", "http", "http (POST /v1/txns) or nats (JetStream)")
	f.StringVar(&b.natsURL, "nats", "nats://127.0.0.1:4222", "NATS server for -via nats (loopback only)")
	f.DurationVar(&b.duration, "duration", 12*time.Second, "measured window")
	f.IntVar(&b.txns, "txns", 3_000_000, "transactions generated before the run (the run stops early if they are all sent)")
	f.IntVar(&b.batch, "batch", 1000, "transactions per request or message")
	f.IntVar(&b.parallel, "parallel", 3, "HTTP requests in flight")
	f.IntVar(&b.backlog, "max-backlog", 200_000, "NATS: publish no further ahead of the server than this many transactions")
	f.DurationVar(&b.settle, "settle", time.Second, "the server's --settle")
	f.IntVar(&b.shards, "shards", 1, "the server's --shards")
	f.IntVar(&b.load.Sessions, "sessions", 24, "sessions")
	f.IntVar(&b.load.Ops, "ops", 8, "operations per transaction (half reads, half writes)")
	f.IntVar(&b.load.Keys, "keys", 10_000, "keys")
	f.StringVar(&b.serverBin, "server-bin", "isovet", "isovet binary to run as the server (a path, or a name looked up on PATH)")
	f.Func("server-arg", "extra argument for isovet serve, e.g. -server-arg=--cpu-profile=serve.pprof (repeatable)", func(v string) error {
		b.extra = append(b.extra, v)
		return nil
	})
	f.BoolVar(&b.json, "json", false, "print the report as JSON")
	if err := f.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if f.NArg() > 0 || (b.via != "http" && b.via != "nats") {
		fmt.Fprintf(stderr, "serve: -via must be http or nats (got %q), and no arguments are taken (got %q)\n", b.via, f.Args())
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	r, err := b.run(ctx, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "serve: %v\n", err)
		return 1
	}
	if b.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			fmt.Fprintf(stderr, "serve: %v\n", err)
			return 1
		}
		return 0
	}
	printBench(stdout, r)
	return 0
}

const usage = `usage: go run ./bench/serve [flags]

Start isovet serve (the -server-bin binary) as a child process on a loopback port, feed it
a synthetic snapshot-isolation workload (24 sessions, 8 operations per transaction, 10,000
keys, in commit order) over HTTP or through NATS JetStream for -duration, and report the
transactions the server applied per second, its CPU per transaction (and the client's and
the NATS server's, all from the kernel's accounting), the largest checker lag and ingest
backlog seen, and the load average. The transactions are generated and encoded before the
clock starts; their encoding cost is reported separately.

`

func (b *benchServe) run(ctx context.Context, logw io.Writer) (*benchReport, error) {
	br := &benchRun{b: b, r: &benchReport{Via: b.via, GeneratedAt: time.Now().UTC()}}
	br.encode()
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	bin, err := b.binary()
	if err != nil {
		return nil, err
	}
	args := b.serverArgs(addr)
	if b.via == "nats" {
		closeNATS, err := br.openNATS(ctx)
		if err != nil {
			return nil, err
		}
		defer closeNATS()
		args = append(args, "--nats", b.natsURL, "--subject", br.subject, "--stream", br.stream)
	}
	args = append(args, b.extra...)
	br.r.ServerArguments = args
	stop, err := br.startServer(ctx, bin, args, logw)
	if err != nil {
		return nil, err
	}
	defer stop()
	br.base = "http://" + addr
	br.client = &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: b.parallel + 2}}
	if err := br.waitUp(); err != nil {
		return nil, err
	}
	if err := br.measure(ctx); err != nil {
		return nil, err
	}
	if err := br.drain(); err != nil {
		return nil, err
	}
	br.r.ServerRSSBytes = procRSS(br.cmd.Process.Pid)
	return br.r, nil
}

// binary is the isovet binary to run as the server: -server-bin, as a path or found on PATH.
func (b *benchServe) binary() (string, error) {
	p, err := exec.LookPath(b.serverBin)
	if err != nil {
		return "", fmt.Errorf("the isovet binary to serve (go build -o isovet ./cmd/isovet, then -server-bin ./isovet): %w", err)
	}
	return p, nil
}

// benchRun is the state of one bench/serve run, shared by its phases.
type benchRun struct {
	b      *benchServe
	r      *benchReport
	bodies [][]byte // the batches, encoded

	js              jetstream.JetStream // --via nats
	subject, stream string

	cmd    *exec.Cmd // the server
	client *http.Client
	base   string // the server's URL

	st0, st statusLite // the server's status before the window, and the latest

	sent, ingested, next atomic.Int64
	sendErr              error
	errOnce              sync.Once
}

// encode generates and encodes every batch before the clock starts, timing the encoding.
func (br *benchRun) encode() {
	b := br.b
	c0 := cputime.Self()
	g := server.NewLoadGen(b.load)
	for n := 0; n < b.txns; n += b.batch {
		br.bodies = append(br.bodies, g.Append(make([]byte, 0, b.batch*200), min(b.batch, b.txns-n)))
	}
	br.r.EncodeUSPerTxn = (cputime.Self() - c0).Seconds() * 1e6 / float64(b.txns)
}

// freeLoopbackAddr returns a loopback address with a port free a moment ago.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr, nil
}

// serverArgs are the arguments of isovet serve at addr, before the NATS and extra ones.
func (b *benchServe) serverArgs(addr string) []string {
	args := []string{"serve", "--addr", addr, "--settle", b.settle.String(), "--initial-value", "0", "--log-level", "warn"}
	if b.shards != 1 {
		args = append(args, "--shards", strconv.Itoa(b.shards)) // so that older servers can be measured too
	}
	return args
}

// openNATS connects to the NATS server and creates a stream of its own; the returned
// function deletes the stream and closes the connection.
func (br *benchRun) openNATS(ctx context.Context) (func(), error) {
	url := br.b.natsURL
	nc, err := nats.Connect(url, nats.Name("isovet bench/serve"))
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", url, err)
	}
	if br.js, err = jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(64)); err != nil {
		nc.Close()
		return nil, err
	}
	suffix := fmt.Sprintf("%d_%d", os.Getpid(), time.Now().UnixNano())
	br.stream, br.subject = "ISOVET_BENCH_"+suffix, "isovet.bench."+suffix
	if _, err := br.js.CreateStream(ctx, jetstream.StreamConfig{Name: br.stream, Subjects: []string{br.subject}, Storage: jetstream.FileStorage}); err != nil {
		nc.Close()
		return nil, fmt.Errorf("creating stream %s: %w", br.stream, err)
	}
	return func() {
		br.js.DeleteStream(context.WithoutCancel(ctx), br.stream)
		nc.Close()
	}, nil
}

// startServer starts the server; the returned function interrupts it and waits up to 20
// seconds for it to end before killing it.
func (br *benchRun) startServer(ctx context.Context, bin string, args []string, logw io.Writer) (func(), error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = logw, logw
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the server: %w", err)
	}
	br.cmd = cmd
	return func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
		}
	}, nil
}

// waitUp polls the server's status until it answers, for up to about 10 seconds.
func (br *benchRun) waitUp() error {
	for i := 0; ; i++ {
		st, err := fetchStatus(br.client, br.base)
		if err == nil {
			br.st, br.st0 = st, st
			return nil
		}
		if i == 200 {
			return fmt.Errorf("the server did not come up at %s: %w", br.base, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// measure sends the batches for the window while sampling the server's status, and
// fills in the report's throughput and CPU figures.
func (br *benchRun) measure(ctx context.Context) error {
	b, r := br.b, br.r
	natsPID := 0
	if b.via == "nats" {
		natsPID = findProcess("nats-server")
	}
	r.LoadBefore = loadavg()
	srv0, nats0, cli0 := procCPU(br.cmd.Process.Pid), procCPU(natsPID), cputime.Self()
	start := time.Now()
	deadline := start.Add(b.duration)
	var wg sync.WaitGroup
	switch b.via {
	case "http":
		for range b.parallel {
			wg.Go(func() { br.sendHTTP(ctx, deadline) })
		}
	case "nats":
		wg.Go(func() { br.sendNATS(deadline) })
	}
	samples := br.sample(start, deadline)
	srv1, nats1, cli1 := procCPU(br.cmd.Process.Pid), procCPU(natsPID), cputime.Self()
	window := time.Since(start)
	r.LoadAfter = loadavg()
	wg.Wait()
	if br.sendErr != nil {
		return br.sendErr
	}
	r.Window = window.Seconds()
	r.Sent = br.sent.Load()
	r.Ingested = br.st.Ingested
	r.Throughput = float64(r.Ingested) / r.Window
	for i := 1; i < len(samples); i++ {
		d := samples[i].at.Sub(samples[i-1].at).Seconds()
		r.PerSecond = append(r.PerSecond, float64(samples[i].Ingested-samples[i-1].Ingested)/d)
	}
	r.ServerCPU, r.NATSCPU, r.ClientCPU = (srv1 - srv0).Seconds(), (nats1 - nats0).Seconds(), (cli1 - cli0).Seconds()
	br.perTxn()
	return nil
}

// perTxn divides the window's CPU figures by the transactions applied in it.
func (br *benchRun) perTxn() {
	r := br.r
	if r.Ingested <= 0 {
		return
	}
	n := float64(r.Ingested)
	r.ServerUSPerTxn, r.ClientUSPerTxn, r.NATSUSPerTxn = r.ServerCPU*1e6/n, r.ClientCPU*1e6/n, r.NATSCPU*1e6/n
	r.CheckerCPU = br.st.CheckerCPU - br.st0.CheckerCPU
	r.CheckerUSPerTxn = r.CheckerCPU * 1e6 / n
	r.CheckerBusy = (br.st.CheckerBusy - br.st0.CheckerBusy) / r.Window
	r.TotalUSPerTxn = r.ServerUSPerTxn + r.ClientUSPerTxn + r.NATSUSPerTxn + r.EncodeUSPerTxn
}

// fail records the first error of a sender.
func (br *benchRun) fail(err error) { br.errOnce.Do(func() { br.sendErr = err }) }

// sendHTTP posts the next unsent batch until there is none or the deadline has passed;
// several run at once.
func (br *benchRun) sendHTTP(ctx context.Context, deadline time.Time) {
	for time.Now().Before(deadline) {
		i := br.next.Add(1) - 1
		if i >= int64(len(br.bodies)) {
			return
		}
		if err := server.PostBatch(ctx, br.client, br.base+"/v1/txns", br.bodies[i]); err != nil {
			br.fail(err)
			return
		}
		br.sent.Add(int64(bytes.Count(br.bodies[i], []byte{'\n'})))
	}
}

// sendNATS publishes the batches in order until the deadline, staying no more than
// --max-backlog transactions ahead of the server.
func (br *benchRun) sendNATS(deadline time.Time) {
	for i := 0; i < len(br.bodies) && time.Now().Before(deadline); i++ {
		for br.sent.Load()-br.ingested.Load() > int64(br.b.backlog) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		err := br.publish(br.bodies[i], deadline)
		if errors.Is(err, jetstream.ErrTooManyStalledMsgs) && !time.Now().Before(deadline) {
			return // the window is over
		}
		if err != nil {
			br.fail(err)
			return
		}
		br.sent.Add(int64(bytes.Count(br.bodies[i], []byte{'\n'})))
	}
}

// publish publishes one batch, retrying while the NATS server has too many
// unacknowledged messages (a loaded machine), up to 100 times and until the deadline.
func (br *benchRun) publish(body []byte, deadline time.Time) error {
	_, err := br.js.PublishAsync(br.subject, body)
	for try := 0; errors.Is(err, jetstream.ErrTooManyStalledMsgs) && try < 100 && time.Now().Before(deadline); try++ {
		select {
		case <-br.js.PublishAsyncComplete():
		case <-time.After(time.Second):
		}
		_, err = br.js.PublishAsync(br.subject, body)
	}
	return err
}

// sample polls the server's status until the deadline, keeping the largest lag and
// backlog seen, and returns a sample about every second.
func (br *benchRun) sample(start, deadline time.Time) []statusLite {
	r := br.r
	var samples []statusLite
	lastSample := start
	for {
		now := time.Now()
		st, err := fetchStatus(br.client, br.base)
		br.st = st // as it came, even from a failed poll
		if err == nil {
			br.ingested.Store(st.Ingested)
			r.MaxLag = max(r.MaxLag, st.Lag)
			r.MaxBacklog = max(r.MaxBacklog, br.sent.Load()-st.Ingested)
			if now.Sub(lastSample) >= time.Second || len(samples) == 0 {
				st.at = now
				samples = append(samples, st)
				lastSample = now
			}
		}
		if !now.Before(deadline) {
			return samples
		}
		time.Sleep(min(100*time.Millisecond, time.Until(deadline)))
	}
}

// drain waits, for up to 2 minutes, until the server has applied everything sent.
func (br *benchRun) drain() error {
	r := br.r
	if br.js != nil {
		select {
		case <-br.js.PublishAsyncComplete():
		case <-time.After(time.Minute):
		}
	}
	d0 := time.Now()
	st := br.st
	for st.Ingested+st.Duplicates < r.Sent && time.Since(d0) < 2*time.Minute {
		time.Sleep(20 * time.Millisecond)
		var err error
		if st, err = fetchStatus(br.client, br.base); err != nil {
			return err
		}
		r.MaxLag = max(r.MaxLag, st.Lag)
	}
	if st.Ingested+st.Duplicates < r.Sent {
		return fmt.Errorf("the server applied %d of %d transactions within 2 minutes of the end", st.Ingested, r.Sent)
	}
	r.Drain = time.Since(d0).Seconds()
	r.Violations = st.Violations
	return nil
}

func printBench(w io.Writer, r *benchReport) {
	fmt.Fprintf(w, "via %s, %.1f s window (load %s -> %s)\n", r.Via, r.Window, r.LoadBefore, r.LoadAfter)
	fmt.Fprintf(w, "applied   %d of %d sent: %.0f txns/s wall\n", r.Ingested, r.Sent, r.Throughput)
	var per []string
	for _, x := range r.PerSecond {
		per = append(per, strconv.FormatFloat(x/1000, 'f', 0, 64)+"k")
	}
	fmt.Fprintf(w, "per second %s\n", strings.Join(per, " "))
	fmt.Fprintf(w, "server    %.2f CPU-s, %.2f us/txn (%.0f txns/cpu-s); RSS %d MiB\n", r.ServerCPU, r.ServerUSPerTxn, 1e6/max(r.ServerUSPerTxn, 1e-9), r.ServerRSSBytes>>20)
	fmt.Fprintf(w, "client    %.2f CPU-s, %.2f us/txn sending; encoding %.2f us/txn (before the window)\n", r.ClientCPU, r.ClientUSPerTxn, r.EncodeUSPerTxn)
	if r.Via == "nats" {
		fmt.Fprintf(w, "nats      %.2f CPU-s, %.2f us/txn\n", r.NATSCPU, r.NATSUSPerTxn)
	}
	if r.CheckerCPU > 0 {
		fmt.Fprintf(w, "checker   %.2f CPU-s, %.2f us/txn (its goroutine: at most %.0f txns/s on a free core); busy %.0f%% of the window\n",
			r.CheckerCPU, r.CheckerUSPerTxn, 1e6/max(r.CheckerUSPerTxn, 1e-9), 100*r.CheckerBusy)
	}
	fmt.Fprintf(w, "pipeline  %.2f us/txn of CPU in all (server, client sending and encoding%s): %.0f txns/cpu-s\n",
		r.TotalUSPerTxn, map[bool]string{true: ", NATS server", false: ""}[r.Via == "nats"], 1e6/max(r.TotalUSPerTxn, 1e-9))
	fmt.Fprintf(w, "lag       max %.3f s settle lag, max backlog %d txns, drained in %.2f s, %d violations\n", r.MaxLag, r.MaxBacklog, r.Drain, r.Violations)
}

// statusLite is the part of GET /v1/status bench/serve reads.
type statusLite struct {
	Ingested   int64   `json:"ingested"`
	Duplicates int64   `json:"duplicates"`
	Lag        float64 `json:"lag_seconds"`
	Violations int64   `json:"violations"`
	// The checker goroutine's own CPU and busy wall time (see server.Status).
	CheckerCPU  float64 `json:"checker_cpu_seconds"`
	CheckerBusy float64 `json:"checker_busy_seconds"`
	at          time.Time
}

func fetchStatus(c *http.Client, base string) (statusLite, error) {
	var st statusLite
	resp, err := c.Get(base + "/v1/status")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, errors.New("status: " + resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// procCPU is process pid's user+system CPU time from /proc (0 if unknown).
func procCPU(pid int) time.Duration {
	f := procStat(pid)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	stt, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+stt) * time.Second / 100 // USER_HZ is 100 on Linux
}

// procRSS is process pid's resident set size in bytes (0 if unknown).
func procRSS(pid int) int64 {
	f := procStat(pid)
	if len(f) < 22 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[21], 10, 64)
	return pages * int64(os.Getpagesize())
}

// procStat returns the fields of /proc/pid/stat after the command name.
func procStat(pid int) []string {
	if pid <= 0 {
		return nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// findProcess returns the pid of a process named name, or 0.
func findProcess(name string) int {
	ms, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, m := range ms {
		if b, err := os.ReadFile(m); err == nil && strings.TrimSpace(string(b)) == name {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(m)))
			return pid
		}
	}
	return 0
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
