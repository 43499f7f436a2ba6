// Command faultline records a program's system calls as strace text,
// replays it against edited traces, and judges how it copes.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/alecthomas/kong"
)

// Exit statuses shared by every command.
const (
	exitOK      = 0 // nothing found
	exitFinding = 1 // a finding: an invalid line, an unhandled anomaly, an inconsistent crash state
	exitTool    = 2 // faultline could not do its job
)

// cli is the whole command tree; each command's flags and Run live in the
// file named after it.
type cli struct {
	Parse  parseCmd  `cmd:"" help:"Check that trace files are valid strace output."`
	Fmt    fmtCmd    `cmd:"" help:"Print a trace back through the parser."`
	Record recordCmd `cmd:"" help:"Run a command under ptrace and write its trace."`
	Replay replayCmd `cmd:"" help:"Replay a program against an (edited) trace and say how it coped."`

	Mutate    mutateCmd    `cmd:"" help:"Apply an anomaly from the catalogue to a trace."`
	Anomalies anomaliesCmd `cmd:"" help:"List the anomaly catalogue with explanations."`

	Suite suiteCmd `cmd:"" help:"Run a suite file: checks with expected outcomes, as CI does."`
	Audit auditCmd `cmd:"" help:"Try every applicable anomaly and the crash check on a program; list the findings."`

	Blocklog blocklogCmd `cmd:"" help:"Print a saved block log (writes and flushes with their trace positions)."`
	Crash    crashCmd    `cmd:"" help:"Check that every state a crash can leave the program's files in can be recovered."`
}

// exitError carries an exit status out of a command's Run.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// toolError is exit status 2 with a message.
func toolError(format string, args ...any) error {
	return &exitError{code: exitTool, err: fmt.Errorf(format, args...)}
}

func main() {
	var c cli
	parser, err := kong.New(&c,
		kong.Name("faultline"),
		kong.Description("Find the bugs programs hide for the day the environment misbehaves."),
		kong.UsageOnError(),
		kong.Exit(func(code int) {
			if code != 0 {
				code = exitTool // usage errors are the tool's: exit 2
			}
			os.Exit(code)
		}),
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultline:", err)
		os.Exit(exitTool)
	}
	ctx, err := parser.Parse(os.Args[1:])
	if err != nil {
		parser.Errorf("%s", err)
		os.Exit(exitTool)
	}
	if err := ctx.Run(); err != nil {
		code := exitTool
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		if err.Error() != "" {
			fmt.Fprintln(os.Stderr, "faultline:", err)
		}
		os.Exit(code)
	}
}
