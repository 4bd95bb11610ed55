package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/server"
)

func init() { extraCommands = append(extraCommands, newServeCmd, newReplayCmd) }

// newLogger returns a text slog handler on w at the named level.
func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("unknown log level %q (debug, info, warn, error)", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// parseDatum reads an initial value: null, an integer, or a string.
func parseDatum(s string) history.Datum {
	switch s {
	case "null", "nil", "":
		return history.NilDatum
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return history.Int(i)
	}
	return history.Str(s)
}

func newServeCmd() *cobra.Command {
	var o server.Options
	var level, initial, logLevel string
	var maxMemory, maxBody, cpuProfile string
	c := &cobra.Command{
		Use:   "serve",
		Short: "Check a live database online from its start/commit timestamps (Aion), over HTTP and NATS",
		Long: `Run the online timestamp checker as a service. Clients post transactions with the
database's start and commit timestamps (POST /v1/txns, native JSONL or Chronos JSON), or
publish them to a NATS JetStream subject; violations stream from GET /v1/violations and to
--violations-file; GET /metrics exposes Prometheus counters and GET / a live status page.
Late and out-of-order transactions are re-checked; a read's verdict is provisional for
--settle.

Safe by default: it listens on loopback; beyond it, it needs --token (or ISOVET_TOKEN) or an
explicit --insecure. Ingest takes JSON content types only and refuses other origins. Bodies
are charged against the memory bound as they arrive, and requests must arrive within
--read-timeout. HTTP ingest is not durable (a restart starts from nothing); NATS ingest is.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			l, err := check.ParseLevel(level)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			o.Level = l
			o.Initial = parseDatum(initial)
			o.Token = cmp.Or(o.Token, os.Getenv("ISOVET_TOKEN"))
			if o.MaxBody, err = parseBytes(maxBody); err != nil {
				return &exitError{code: exitUsage, err: fmt.Errorf("--max-body: %w", err)}
			}
			if o.MaxMemory, err = parseMaxMemory(maxMemory); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			if o.Logger, err = newLogger(c.ErrOrStderr(), logLevel); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			if cpuProfile != "" {
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return &exitError{code: exitUsage, err: err}
				}
				defer stop()
			}
			if err := server.Serve(c.Context(), o); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&o.Addr, "addr", "127.0.0.1:7474", "HTTP listen address; beyond the loopback interface it needs --token (or --insecure)")
	f.StringVar(&o.Token, "token", "", "require this token of every request (Authorization: Bearer TOKEN, or ?token= for the status page); default $ISOVET_TOKEN")
	f.BoolVar(&o.Insecure, "insecure", false, "serve beyond the loopback interface without a token (anyone who can connect may post transactions); logs a warning")
	f.StringVar(&maxBody, "max-body", "64MiB", "largest POST body; at most the bodies' budget, an eighth of --max-memory (bodies are charged as their bytes arrive, and refused with 503 past the budget)")
	f.DurationVar(&o.ReadHeaderTimeout, "read-header-timeout", 10*time.Second, "time allowed to read a request's header")
	f.DurationVar(&o.ReadTimeout, "read-timeout", time.Minute, "time allowed to read a whole request, body included (a 64 MiB body needs about 1 MB/s)")
	f.DurationVar(&o.IdleTimeout, "idle-timeout", 2*time.Minute, "how long a kept-alive connection may wait for its next request")
	f.StringVarP(&level, "level", "l", "snapshot-isolation", "level to check: snapshot-isolation, strong-session-snapshot-isolation, serializable, strong-session-serializable")
	f.StringVar(&initial, "initial-value", "null", "every key's initial value: null, an integer or a string")
	f.DurationVar(&o.Settle, "settle", 0, "how long a read's verdict stays provisional (default 5s)")
	f.StringVar(&maxMemory, "max-memory", "auto", "bound on the server's memory, e.g. 2GiB; auto: a quarter of the machine's or cgroup's memory, 256MiB to 3GiB; none: unbounded. The checker keeps under half of it and drops old unsettled transactions unchecked, with a warning, beyond")
	f.StringVar(&o.ViolationsFile, "violations-file", "", "append every violation as a JSON line to this file (whole lines, written before the batch is answered; a torn last line is cut off at start)")
	f.BoolVar(&o.SyncViolations, "violations-fsync", false, "sync the violations file after each write, so that a crash of the machine loses nothing written either")
	f.StringVar(&o.NATS, "nats", "", "consume transactions from this NATS JetStream server, e.g. nats://127.0.0.1:4222")
	f.StringVar(&o.Subject, "subject", "isovet.txns", "NATS subject to consume")
	f.StringVar(&o.Stream, "stream", "ISOVET", "JetStream stream name")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	f.IntVar(&o.Shards, "shards", 1, "split the checker by key over this many goroutines (helps only with idle cores)")
	f.StringVar(&cpuProfile, "cpu-profile", "", "write a Go CPU profile of the whole run to this file")
	return c
}

// parseMaxMemory reads --max-memory as server.Options.MaxMemory: auto (or empty) is 0,
// the server's default bound; none (or a size of 0) is -1, unbounded; else a size.
func parseMaxMemory(s string) (int64, error) {
	switch s {
	case "auto", "":
		return 0, nil
	case "none", "0":
		return -1, nil
	}
	n, err := parseBytes(s)
	if err != nil {
		return 0, fmt.Errorf("--max-memory: %w (or auto, none)", err)
	}
	if n == 0 {
		return -1, nil // 0 bytes, however written: unbounded, as 0 always meant
	}
	return n, nil
}

// parseBytes parses sizes like 512MiB, 2GB, 1048576.
func parseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("bad size %q (want e.g. 512MiB or 2GB)", s)
			}
			return int64(n * float64(u.mult)), nil
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q (want e.g. 512MiB or 2GB)", s)
	}
	return n, nil
}

func newReplayCmd() *cobra.Command {
	var in inputFlags
	var o server.ReplayOptions
	var logLevel string
	var asJSON bool
	c := &cobra.Command{
		Use:   "replay HISTORY --to URL",
		Short: "Send a recorded history to a running isovet serve over HTTP or NATS, at a chosen rate",
		Long: `Send a recorded history to a running isovet serve over HTTP or NATS, at a chosen rate,
and say how many transactions went in how many batches and how fast. With --json that is
one JSON document, {"schema": 1, "kind": "replay", "results": [...]}, with one result naming
the file (docs/json.md).

Every format isovet check reads is taken. A transaction without an id is sent as "T<n>",
n its position in the history (how reports name it). The committed transactions are sent
with their database timestamps; a history the online checker cannot judge as the offline
check does (no timestamps, outcomes unknown, predicates, keys starting at different
values, a service with another --initial-value) is refused before anything is sent, saying
why. A batch the service refuses stops the replay with the service's reason and exit 2.
Over NATS, --stream names the JetStream stream: used if it exists and takes --subject,
created if no stream does (docs/timestamp.md, "Recipes").`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if o.To == "" {
				return &exitError{code: exitUsage, err: fmt.Errorf("--to is required (http://127.0.0.1:7474 or nats://127.0.0.1:4222)")}
			}
			h, _, err := in.open(args[0])
			if err != nil {
				return err
			}
			o.History = h
			o.Token = cmp.Or(o.Token, os.Getenv("ISOVET_TOKEN"))
			if o.Logger, err = newLogger(c.ErrOrStderr(), logLevel); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			st, err := server.Replay(c.Context(), o)
			if err != nil {
				return &exitError{code: exitUsage, err: replayError(args[0], st, err)}
			}
			if asJSON {
				return replayJSON(c.OutOrStdout(), displayName(args[0]), o.To, st)
			}
			fmt.Fprintf(c.OutOrStdout(), "sent %d transactions in %d batches in %v (%.0f txns/s)%s\n", st.Txns, st.Batches, st.Elapsed.Round(1e6), st.Rate(), replayNotes(st))
			return nil
		},
	}
	in.register(c)
	f := c.Flags()
	f.StringVar(&o.To, "to", "", "http://host:port of isovet serve, or nats://host:port")
	f.StringVar(&o.Subject, "subject", "isovet.txns", "NATS subject to publish to")
	f.StringVar(&o.Stream, "stream", "ISOVET", "JetStream stream: used if it exists and takes --subject, created if no stream does")
	f.StringVar(&o.Token, "token", "", "token of a server that requires one (default $ISOVET_TOKEN)")
	f.Float64Var(&o.Rate, "rate", 0, "transactions per second (0: as fast as possible)")
	f.BoolVar(&o.Shuffle, "shuffle", false, "send the transactions in a random order")
	f.DurationVar(&o.Delay, "delay", 0, "hold each transaction back by a random delay up to this (bounded reordering)")
	f.IntVar(&o.Batch, "batch", 500, "transactions per request or message")
	f.Uint64Var(&o.Seed, "seed", 1, "seed for shuffling and delays")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	f.BoolVar(&asJSON, "json", false, `print what was sent as one JSON document, {"schema": 1, "kind": "replay", "results": [...]} (docs/json.md)`)
	return c
}

// replayError says why the replay of file stopped: refused up front (nothing sent), or
// by the service after it accepted what st counts.
func replayError(file string, st server.ReplayStats, err error) error {
	var ref *server.RefusedError
	if errors.As(err, &ref) {
		return fmt.Errorf("%s: replay stopped: %w (it accepted %d transactions in %d batches before)", displayName(file), err, st.Txns, st.Batches)
	}
	if st.Txns > 0 {
		return fmt.Errorf("%s: replay stopped after %d transactions were accepted: %w", displayName(file), st.Txns, err)
	}
	return fmt.Errorf("%s: nothing was sent: %w", displayName(file), err)
}

// replayNotes says what a replay left out, and over NATS which stream took it.
func replayNotes(st server.ReplayStats) string {
	var s string
	if st.NotSent > 0 {
		s += fmt.Sprintf("; %d aborted transactions not sent (the online checker takes committed ones)", st.NotSent)
	}
	if st.Stream != "" {
		how := "existing stream"
		if st.CreatedStream {
			how = "created stream"
		}
		s += fmt.Sprintf("; %s %s", how, st.Stream)
	}
	return s
}

// replayResult is the replay document's result: the history sent, where, and how fast.
type replayResult struct {
	File      string  `json:"file"`
	To        string  `json:"to"`
	Txns      int     `json:"txns"`
	Batches   int     `json:"batches"`
	ElapsedNS int64   `json:"elapsed_ns"`
	Rate      float64 `json:"txns_per_second"`
}

// replayJSON prints the replay document of st, the replay of file to the server at to.
func replayJSON(w io.Writer, file, to string, st server.ReplayStats) error {
	doc := struct {
		jsonHead
		Results []replayResult `json:"results"`
	}{newHead("replay"), []replayResult{{File: file, To: to, Txns: st.Txns, Batches: st.Batches, ElapsedNS: st.Elapsed.Nanoseconds(), Rate: st.Rate()}}}
	return writeJSONDoc(w, doc)
}
