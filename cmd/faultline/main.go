// Command faultline records a program's system calls as strace text,
// replays it against edited traces, and judges how it copes.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/alecthomas/kong"
)

// Exit statuses shared by every command.
const (
	exitOK      = 0 // nothing found
	exitFinding = 1 // a finding: an invalid line, an unhandled anomaly, an inconsistent crash state
	exitTool    = 2 // faultline could not do its job
)

// command is one of faultline's commands; its flags and Run live in the
// file named after it.
type command struct {
	name, help string
	cmd        any
}

// commands is the command tree, in the order help lists it.
func commands() []command {
	return []command{
		{"parse", "Check that trace files are valid strace output.", &parseCmd{}},
		{"fmt", "Print a trace back through the parser.", &fmtCmd{}},
		{"record", "Run a command under ptrace and write its trace.", &recordCmd{}},
		{"replay", "Replay a program against an (edited) trace and say how it coped.", &replayCmd{}},
		{"mutate", "Apply an anomaly from the catalogue to a trace.", &mutateCmd{}},
		{"anomalies", "List the anomaly catalogue with explanations.", &anomaliesCmd{}},
		{"suite", "Run a suite file: checks with expected outcomes, as CI does.", &suiteCmd{}},
		{"audit", "Try every applicable anomaly and the crash check on a program; list the findings.", &auditCmd{}},
		{"blocklog", "Print a saved block log (writes and flushes with their trace positions).", &blocklogCmd{}},
		{"crash", "Check that every state a crash can leave the program's files in can be recovered.", &crashCmd{}},
	}
}

// commandOptions registers the command the arguments name, or all of
// them when they name none (help, a typo). Building kong's model of one
// command instead of ten is a few milliseconds of reflection saved on
// every start, which `record` of a short program pays in full.
func commandOptions(args []string) []kong.Option {
	chosen := commands()
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		for _, c := range chosen {
			if c.name == a {
				chosen = []command{c}
				break
			}
		}
		break
	}
	opts := make([]kong.Option, 0, len(chosen))
	for _, c := range chosen {
		opts = append(opts, kong.DynamicCommand(c.name, c.help, "", c.cmd))
	}
	return opts
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
	intr := &interrupts{}
	var root struct{}
	opts := append(commandOptions(os.Args[1:]),
		kong.Bind(intr),
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
	parser, err := kong.New(&root, opts...)
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
