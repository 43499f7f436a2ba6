package main

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/faultline/faultline/blockrec"
	"github.com/faultline/faultline/crash"
	"github.com/faultline/faultline/oracle"
)

// crashCmd is `faultline crash`: the one-button crash-consistency check.
type crashCmd struct {
	Init       string        `placeholder:"DIR" help:"Copy DIR's contents into the sandbox before the run." type:"existingdir"`
	Setup      string        `placeholder:"CMD" help:"Run CMD with sh -c in the sandbox before the run (after --init)."`
	K          int           `default:"2" help:"Drop at most N in-flight writes per crash site."`
	FS         string        `name:"fs" enum:"ext4,xfs,btrfs" default:"ext4" help:"File system of the sandbox (ext4, xfs, btrfs)."`
	Size       string        `placeholder:"SIZE" help:"Size of the sandbox disk (default 32MiB, 128MiB for btrfs)."`
	Tolerance  uint64        `default:"32" help:"Bytes a crash state may lack before it is inconsistent."`
	NoAmplify  bool          `help:"Replay the program's own trace: no sync points, no commit points."`
	Amplify    string        `enum:"on,wide" default:"on" help:"Sync points after calls that may erase data (on), or also after any open for writing, unlink and big writes (wide)."`
	Compare    bool          `default:"true" negatable:"" help:"When amplified sites are inconsistent, also check without amplification to say whether it was needed."`
	KillPoints bool          `help:"Also judge the state left when the program is SIGKILLed before each metadata call."`
	JSON       bool          `name:"json" help:"Print the report as JSON."`
	Out        string        `placeholder:"DIR" help:"Write report.json, report.txt, the trace and per finding the crash image and marked trace to DIR."`
	Workers    int           `help:"Crash images checked at once (default: cores+1)."`
	Timeout    time.Duration `default:"60s" help:"Time limit of each run of the program."`
	Cmd        []string      `arg:"" passthrough:"" name:"command" help:"The program and its arguments, after --."`
}

func (c *crashCmd) Run(intr *interrupts) error {
	if len(c.Cmd) > 0 && c.Cmd[0] == "--" {
		c.Cmd = c.Cmd[1:]
	}
	if len(c.Cmd) == 0 {
		return toolError("crash: no command given (faultline crash [flags] -- CMD ARGS...)")
	}
	if c.K < 1 {
		return toolError("crash: --k %d: want at least 1", c.K)
	}
	var size uint64
	if c.Size != "" {
		var err error
		if size, err = humanize.ParseBytes(c.Size); err != nil {
			return toolError("crash: --size %s: %w", c.Size, err)
		}
	}
	amp := crash.AmplifyOn
	switch {
	case c.NoAmplify:
		amp = crash.AmplifyOff
	case c.Amplify == "wide":
		amp = crash.AmplifyWide
	}
	ctx := intr.context()
	// A second signal, or a panic, must still leave nothing mounted.
	defer blockrec.CloseAll()

	keep := ""
	if c.Out != "" {
		keep = filepath.Join(c.Out, "init")
	}
	cleanupWorld, err := defaultWorld("crash", c.Cmd, &c.Init, c.Setup, keep)
	defer cleanupWorld()
	if err != nil {
		return err
	}
	check := &crash.Check{
		Argv: c.Cmd, Init: c.Init, Setup: c.Setup, FS: blockrec.FSType(c.FS), Size: int64(size), K: c.K,
		Tolerance: c.Tolerance, TolSet: true, Amplify: amp, Unamplified: c.Compare,
		KillPoints: c.KillPoints, Out: c.Out, Workers: c.Workers, Timeout: c.Timeout,
	}
	bar := newProgress("")
	if bar != nil {
		check.Progress = bar.update
	}
	rep, err := check.Run(ctx)
	bar.finish()
	if err != nil {
		if ctx.Err() != nil {
			return toolError("crash: interrupted: %w", err)
		}
		return toolError("%w", err)
	}
	out := bufio.NewWriter(os.Stdout)
	if c.JSON {
		err = rep.WriteJSON(out)
	} else {
		err = rep.WriteText(out)
	}
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		return toolError("crash: writing the report: %w", err)
	}
	if rep.Verdict == oracle.Inconsistent {
		return &exitError{code: exitFinding, err: errors.New("")}
	}
	return nil
}
