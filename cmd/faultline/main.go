// Command faultline records a program's system calls as strace text,
// replays it against edited traces, and judges how it copes.
//
// This package builds two binaries: the default build has every command;
// with -tags front it is the front end that runs record itself and hands
// everything else to the default build, installed as faultline-full
// (front.go says why). Each command's flags and Run live in the file named
// after it; commands.go is the full command table.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/jessevdk/go-flags"
)

// Exit statuses shared by every command.
const (
	exitOK      = 0 // nothing found
	exitFinding = 1 // a finding: an invalid line, an unhandled anomaly, an inconsistent crash state
	exitTool    = 2 // faultline could not do its job
)

// command is one of faultline's commands; its flags and Run live in the
// file named after it. A command that runs another program takes that
// program's arguments as they come (passthrough): the first word that is
// not one of faultline's options, or everything after --, is the program's.
type command struct {
	name, help  string
	passthrough bool
	cmd         any // a struct of go-flags tags with Run() or Run(*interrupts)
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

// newParser builds the command line's grammar. It is go-flags rather than
// kong on purpose: kong finds Run and its hooks with reflect's
// MethodByName, which makes the linker keep every exported method of the
// binary (2 MB of faultline-full), and a hello world linking kong starts
// 2.0 ms later than a bare one where one linking go-flags starts 0.5 ms
// later (200 paired runs) - a cost the record front end would pay on
// every run.
func newParser() (*flags.Parser, map[string]any, error) {
	p := flags.NewNamedParser("faultline", flags.HelpFlag|flags.PassDoubleDash)
	p.ShortDescription = "Find the bugs programs hide for the day the environment misbehaves."
	p.LongDescription = p.ShortDescription
	byName := map[string]any{}
	for _, c := range commands() {
		fc, err := p.AddCommand(c.name, c.help, c.help, c.cmd)
		if err != nil {
			return nil, nil, fmt.Errorf("command %s: %w", c.name, err)
		}
		fc.PassAfterNonOption = c.passthrough
		byName[c.name] = c.cmd
	}
	return p, byName, nil
}

func main() {
	os.Exit(execute(os.Args[1:]))
}

// execute parses args, runs the command they name and returns the exit
// status.
func execute(args []string) int {
	if run := handOff(args, nil); run != nil {
		return run()
	}
	p, byName, err := newParser()
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultline:", err)
		return exitTool
	}
	rest, err := p.ParseArgs(args)
	if err != nil {
		var fe *flags.Error
		if errors.As(err, &fe) && fe.Type == flags.ErrHelp {
			fmt.Fprint(os.Stdout, fe.Message)
			return exitOK
		}
		fmt.Fprintln(os.Stderr, "faultline:", err)
		if p.Active != nil {
			fmt.Fprintf(os.Stderr, "Run 'faultline %s --help' for usage.\n", p.Active.Name)
		} else {
			fmt.Fprintln(os.Stderr, "Run 'faultline --help' for usage.")
		}
		return exitTool
	}
	if len(rest) > 0 {
		fmt.Fprintf(os.Stderr, "faultline: %s: unexpected argument %q\n", p.Active.Name, rest[0])
		return exitTool
	}
	cmd := byName[p.Active.Name]
	if run := handOff(args, cmd); run != nil {
		return run()
	}
	intr := &interrupts{}
	switch c := cmd.(type) {
	case interface{ Run(*interrupts) error }:
		err = c.Run(intr)
	case interface{ Run() error }:
		err = c.Run()
	default:
		err = fmt.Errorf("command %s has no Run", p.Active.Name)
	}
	if err == nil {
		return exitOK
	}
	code := exitTool
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if err.Error() != "" {
		fmt.Fprintln(os.Stderr, "faultline:", err)
	}
	return code
}
