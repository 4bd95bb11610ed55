package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	exitOK        = 0
	exitViolation = 1
	exitUsage     = 2
	exitUnknown   = 3
)

// exitError carries a non-zero exit code for an outcome that is not an error (a violation,
// an unknown verdict) or an error with a specific code.
type exitError struct {
	code int
	err  error // nil when the command already said everything
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// run executes the isovet command line and returns the process exit code. It is the whole
// program minus os.Exit, so tests run it in-process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runWithStdin(ctx, args, os.Stdin, stdout, stderr)
}

// runWithStdin is run with standard input given: what a history argument "-" reads.
func runWithStdin(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetIn(stdin)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "isovet: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "isovet: %v\n", err)
	return exitUsage
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "isovet",
		Short: "Check, with proof, whether a database gives the isolation it claims",
		Long: `isovet checks transaction histories recorded from databases against isolation levels
(serializability, snapshot isolation and their session and real-time variants), finds
anomalies such as lost updates, write skew, long forks and stale reads, and explains each
one as a cycle of dependencies between the database's own transactions.

--version prints the module version and the commit the binary was built from. Shell
completion (isovet completion bash|zsh|fish|powershell --help says how to load it)
completes commands, flags, and the values of --level, --check, --format, --to, --method,
--workload, --db and the other flags that take a name from a fixed list.`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("isovet {{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitError{code: exitUsage, err: fmt.Errorf("%w (see %s --help)", err, c.CommandPath())}
	})
	root.AddCommand(newStatCmd(), newConvertCmd(), newCheckCmd(), newFormatsCmd())
	for _, add := range extraCommands {
		root.AddCommand(add())
	}
	registerCompletions(root)
	return root
}

// extraCommands are added by the files that wire other subsystems (sat, analyze, serve, run).
var extraCommands []func() *cobra.Command
