// Command isovet checks whether a database gives the isolation it claims, from histories
// recorded by its clients or from its own timestamps.
//
// Run `isovet --help` for the commands. Exit codes of check: 0 satisfied, 1 violation,
// 2 usage or input error, 3 unknown (timeout, budget, or no complete checker).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/isovet/isovet/internal/hugepage"
)

func main() {
	// ISOVET_HUGEPAGES=1 asks for huge pages for the large tables (internal/hugepage says
	// when that pays).
	hugepage.SetEnabled(os.Getenv("ISOVET_HUGEPAGES") == "1")
	ctx, stop := interruptible(context.Background())
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// exitInterrupted is the exit status of a second interrupt (128 + SIGINT, as shells report).
const exitInterrupted = 130

// interruptible returns a context that the first SIGINT or SIGTERM cancels, with a cause
// the report shows ("stopped: interrupted ..."), so that a check stops and prints what it
// has; a second one exits at once. stop ends the handling.
func interruptible(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sig:
			cancel(fmt.Errorf("interrupted (%v; a second interrupt exits at once)", s))
		case <-done:
			return
		}
		select {
		case <-sig:
			fmt.Fprintln(os.Stderr, "isovet: interrupted again: exiting")
			os.Exit(exitInterrupted)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(done)
		cancel(errors.New("isovet: done"))
	}
}
