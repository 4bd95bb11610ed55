// Command isovet checks whether a database gives the isolation it claims, from histories
// recorded by its clients or from its own timestamps.
//
// Run `isovet --help` for the commands. Exit codes of check: 0 satisfied, 1 violation,
// 2 usage or input error, 3 unknown (timeout, budget, or no complete checker).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/isovet/isovet/internal/hugepage"
)

func main() {
	// ISOVET_HUGEPAGES=1 asks for huge pages for the large tables (internal/hugepage says
	// when that pays).
	hugepage.SetEnabled(os.Getenv("ISOVET_HUGEPAGES") == "1")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
