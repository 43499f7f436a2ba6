//go:build !front

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
	Init       string        `long:"init" value-name:"DIR" description:"Copy DIR's contents into the sandbox before the run."`
	Setup      string        `long:"setup" value-name:"CMD" description:"Run CMD with sh -c in the sandbox before the run (after --init)."`
	K          int           `long:"k" default:"2" value-name:"N" description:"Drop at most N in-flight writes per crash site."`
	FS         string        `long:"fs" choice:"ext4" choice:"xfs" choice:"btrfs" default:"ext4" description:"File system of the sandbox."`
	Size       string        `long:"size" value-name:"SIZE" description:"Size of the sandbox disk (default 32MiB, 128MiB for btrfs)."`
	Tolerance  uint64        `long:"tolerance" default:"32" value-name:"BYTES" description:"Bytes a crash state may lack before it is inconsistent."`
	NoAmplify  bool          `long:"no-amplify" description:"Replay the program's own trace: no sync points, no commit points."`
	Amplify    string        `long:"amplify" choice:"on" choice:"wide" default:"on" description:"Sync points after calls that may erase data (on), or also after any open for writing, unlink and big writes (wide)."`
	NoCompare  bool          `long:"no-compare" description:"When amplified sites are inconsistent, do not check again without amplification to say whether it was needed."`
	KillPoints bool          `long:"kill-points" description:"Also judge the state left when the program is SIGKILLed before each metadata call."`
	JSON       bool          `long:"json" description:"Print the report as JSON."`
	Out        string        `long:"out" value-name:"DIR" description:"Write report.json, report.txt, the trace and per finding the crash image and marked trace to DIR."`
	Workers    int           `long:"workers" value-name:"N" description:"Crash images checked at once (default: cores+1)."`
	Timeout    time.Duration `long:"timeout" default:"60s" value-name:"D" description:"Time limit of each run of the program."`
	Args       programArgs   `positional-args:"yes"`
}

func (c *crashCmd) Run(intr *interrupts) error {
	if len(c.Args.Cmd) == 0 {
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
	cleanupWorld, err := defaultWorld("crash", c.Args.Cmd, &c.Init, c.Setup, keep)
	defer cleanupWorld()
	if err != nil {
		return err
	}
	check := &crash.Check{
		Argv: c.Args.Cmd, Init: c.Init, Setup: c.Setup, FS: blockrec.FSType(c.FS), Size: int64(size), K: c.K,
		Tolerance: c.Tolerance, TolSet: true, Amplify: amp, Unamplified: !c.NoCompare,
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
