//go:build !front

package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/faultline/faultline/supervisor"
)

// replayCmd is `faultline replay`: run the program against an edited
// trace and say how it coped.
type replayCmd struct {
	JSON      bool          `long:"json" description:"Print the report as JSON."`
	Timeout   time.Duration `long:"timeout" default:"30s" value-name:"D" description:"Kill the program and report it hung after this long."`
	Init      string        `long:"init" value-name:"DIR" description:"Populate the sandbox from DIR instead of what the trace header says."`
	Setup     string        `long:"setup" value-name:"CMD" description:"Populate the sandbox with sh -c CMD instead of what the trace header says."`
	NoSandbox bool          `long:"no-sandbox" description:"Replay in the host's own world (for a trace recorded without --init/--setup). The program then acts on the host's files."`
	Log       bool          `long:"log" description:"Print each injection on stderr as it is performed."`
	Args      struct {
		Trace   string   `positional-arg-name:"TRACE" required:"yes" description:"The (edited) trace to replay."`
		Command []string `positional-arg-name:"CMD" description:"Command and arguments, after --; default: the trace header's."`
	} `positional-args:"yes"`
}

func (c *replayCmd) Run(intr *interrupts) error {
	args := c.Args.Command
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if c.Init != "" && c.Setup != "" {
		return toolError("replay: give --init or --setup, not both")
	}
	if c.Timeout <= 0 {
		return toolError("replay: --timeout %s: must be positive", c.Timeout)
	}
	t, err := readTrace(c.Args.Trace)
	if err != nil {
		return toolError("replay: %w", err)
	}
	ctx := intr.context()
	defer func() {
		if p := recover(); p != nil {
			supervisor.CloseAll()
			panic(p)
		}
	}()
	r := &supervisor.Replay{
		Trace: t, Init: c.Init, Setup: c.Setup, NoSandbox: c.NoSandbox,
		Command: args, Timeout: c.Timeout, Tool: version + " (replay)",
	}
	if c.Log {
		r.Log = os.Stderr
	}
	rep, err := r.Run(ctx)
	if err != nil {
		var we *supervisor.WorldError
		if errors.As(err, &we) {
			if rep != nil && c.Args.Trace != "-" {
				rep.Save(c.Args.Trace)
			}
			return toolError("%w", err)
		}
		return toolError("replay: %w", err)
	}
	if c.Args.Trace != "-" {
		if err := rep.Save(c.Args.Trace); err != nil {
			return toolError("replay: %w", err)
		}
	}
	if c.JSON {
		err = rep.JSON(os.Stdout)
	} else {
		err = rep.Text(os.Stdout)
	}
	if err != nil {
		return toolError("replay: writing the report: %w", err)
	}
	if code := rep.ExitCode(); code != exitOK {
		return &exitError{code: code, err: fmt.Errorf("")}
	}
	return nil
}
