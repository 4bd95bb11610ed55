package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/check/ts"
	"github.com/isovet/isovet/internal/server"
)

// staleReads is a history of n transactions one after another in time, each writing key
// i%50; every third also reads a key, a stale value of it every time i%9 == 0 (an EXT
// violation under snapshot isolation), so that violations are found all along.
func staleReads(t *testing.T, n int) *history.History {
	t.Helper()
	b := history.NewBuilder()
	b.SetInitial(b.Value(history.Int(0)))
	last := map[int64][2]int64{} // key: last two values written
	for i := range int64(n) {
		id := b.BeginTxn(b.Session(history.Int(i%8)), history.Int(i+1), history.OutcomeCommitted)
		tx := b.Txn(id)
		tx.Start, tx.Commit, tx.HasTimestamps = history.Timestamp{Physical: 10 * i}, history.Timestamp{Physical: 10*i + 5}, true
		if i%3 == 0 {
			k := (i + 7) % 50
			v := last[k][1]
			if i%9 == 0 {
				v = last[k][0]
			}
			b.Read(b.Key(history.Int(k)), b.Value(history.Int(v)))
		}
		k := i % 50
		b.Write(b.Key(history.Int(k)), b.Value(history.Int(i+1)))
		last[k] = [2]int64{last[k][1], i + 1}
	}
	h, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// serveProcess is `isovet serve` run as a child process.
type serveProcess struct {
	cmd  *exec.Cmd
	addr string
	logs strings.Builder
	done chan struct{}
}

var servingRE = regexp.MustCompile(`msg=serving addr=(\S+)`)

// startServeProcess starts isovet serve with args on a free loopback port and waits until
// it listens.
func startServeProcess(t *testing.T, args ...string) *serveProcess {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &serveProcess{done: make(chan struct{})}
	p.cmd = exec.Command(exe, append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "info"}, args...)...)
	p.cmd.Env = append(os.Environ(), "ISOVET_TEST_AS_CLI=1")
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.logs.WriteString(sc.Text() + "\n")
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case p.addr = <-addr:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		t.Fatalf("isovet serve did not start")
	}
	return p
}

// kill ends the process with SIGKILL and waits for it.
func (p *serveProcess) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
	<-p.done
}

// status reads the server's status.
func (p *serveProcess) status(t *testing.T) server.Status {
	t.Helper()
	resp, err := http.Get("http://" + p.addr + "/v1/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st server.Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestServeKillDuringViolations kills isovet serve with SIGKILL at random points while it
// writes violations, five times, restarting it on the same violations file and sending the
// whole history again each time (HTTP ingest is not durable: the client resends); the
// last run goes to the end. A kill lands in the middle of a write only by chance (a write
// takes microseconds), so after each kill the test also cuts the file inside its last line,
// as such a kill would leave it, and each restart must report the repair. Every line of the
// file must parse, no violation may be written twice, and the violations must be exactly
// the offline check's.
func TestServeKillDuringViolations(t *testing.T) {
	h := staleReads(t, 6000)
	res, err := ts.Run(context.Background(), h, anomaly.SnapshotIsolation, ts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range res.Violations {
		want = append(want, res.Violations[i].ID())
	}
	slices.Sort(want)
	if len(want) < 100 {
		t.Fatalf("the history has %d violations offline; the test needs many", len(want))
	}
	file := t.TempDir() + "/violations.jsonl"
	args := []string{"--violations-file", file, "--settle", "200ms", "--initial-value", "0", "--max-memory", "none"}
	rng := rand.New(rand.NewPCG(29, 5))
	var torn, repaired int
	for round := range 6 {
		p := startServeProcess(t, args...)
		if strings.Contains(p.logs.String(), "torn line") {
			repaired++
		}
		ctx, cancel := context.WithCancel(context.Background())
		sent := make(chan error, 1)
		go func() {
			_, err := server.Replay(ctx, server.ReplayOptions{History: h, To: "http://" + p.addr, Batch: 40, Rate: 10000})
			sent <- err
		}()
		if round < 5 {
			// Kill it while it writes violations: once the file grows, within the next
			// 400 ms (the replay takes 600 ms, and violations are written as their
			// transactions settle, 200 ms after they arrive).
			size0 := fileSize(file)
			for t0 := time.Now(); fileSize(file) == size0 && time.Since(t0) < 5*time.Second; {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
			p.kill()
			cancel()
			<-sent
			t.Logf("kill %d: violations file %d bytes", round+1, fileSize(file))
			if tearLastLine(t, file, rng) {
				torn++
			}
			continue
		}
		if err := <-sent; err != nil {
			t.Fatalf("last replay: %v", err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for p.status(t).Checked < int64(len(h.Txns)) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		st := p.status(t)
		p.kill()
		cancel()
		if st.Checked != int64(len(h.Txns)) || st.Late != 0 || st.Dropped != 0 {
			t.Fatalf("last run: %d of %d checked, %d late, %d dropped", st.Checked, len(h.Txns), st.Late, st.Dropped)
		}
	}
	got := fileViolationIDs(t, file)
	distinct := slices.Compact(slices.Clone(got))
	if len(distinct) != len(got) {
		t.Errorf("the violations file holds %d lines for %d violations: some were written twice", len(got), len(distinct))
	}
	if !slices.Equal(distinct, want) {
		t.Errorf("the violations file holds %d violations, the offline check finds %d", len(distinct), len(want))
	}
	if repaired != torn {
		t.Errorf("the last line was torn %d times, and %d restarts reported a repair", torn, repaired)
	}
	t.Logf("%d violations after 5 kills (%d torn lines repaired) and a full run", len(distinct), repaired)
}

// fileSize is the size of the file at path (0 if it cannot be read).
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// tearLastLine cuts the file at a random byte inside its last line, as a process killed
// while writing it leaves it; false if the file has no line.
func tearLastLine(t *testing.T, path string, rng *rand.Rand) bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil || len(data) < 2 {
		return false
	}
	start := strings.LastIndexByte(string(data[:len(data)-1]), '\n') + 1
	cut := start + 1 + rng.IntN(len(data)-1-start)
	if err := os.Truncate(path, int64(cut)); err != nil {
		t.Fatal(err)
	}
	return true
}

// fileViolationIDs reads a violations file, failing the test at a line that does not parse.
func fileViolationIDs(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Errorf("the violations file ends in a partial line")
	}
	var ids []string
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var v struct {
			Kind, ID string
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil || v.Kind != "violation" || v.ID == "" {
			t.Fatalf("violations file line %d does not parse as a violation (%v): %.200s", i+1, err, line)
		}
		ids = append(ids, v.ID)
	}
	slices.Sort(ids)
	return ids
}
