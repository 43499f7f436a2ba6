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
	JSON      bool          `help:"Print the report as JSON."`
	Timeout   time.Duration `default:"30s" help:"Kill the program and report it hung after this long."`
	Init      string        `placeholder:"DIR" help:"Populate the sandbox from DIR instead of what the trace header says."`
	Setup     string        `placeholder:"CMD" help:"Populate the sandbox with sh -c CMD instead of what the trace header says."`
	NoSandbox bool          `name:"no-sandbox" help:"Replay in the host's own world (for a trace recorded without --init/--setup). The program then acts on the host's files."`
	Log       bool          `help:"Print each injection on stderr as it is performed."`
	Trace     string        `arg:"" help:"The (edited) trace to replay." type:"path"`
	Command   []string      `arg:"" optional:"" passthrough:"" help:"Command and arguments; default: the trace header's."`
}

func (c *replayCmd) Run(intr *interrupts) error {
	args := c.Command
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if c.Init != "" && c.Setup != "" {
		return toolError("replay: give --init or --setup, not both")
	}
	if c.Timeout <= 0 {
		return toolError("replay: --timeout %s: must be positive", c.Timeout)
	}
	t, err := readTrace(c.Trace)
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
			if rep != nil && c.Trace != "-" {
				rep.Save(c.Trace)
			}
			return toolError("%w", err)
		}
		return toolError("replay: %w", err)
	}
	if c.Trace != "-" {
		if err := rep.Save(c.Trace); err != nil {
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
