//go:build !front

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/faultline/faultline/suite"
)

// auditCmd is `faultline audit`: the whole catalogue and the crash check
// on a program nobody wrote a suite for.
type auditCmd struct {
	Anomalies  []string      `long:"anomalies" value-name:"LIST" description:"Try only these anomalies (comma-separated, or repeat the flag; default: the catalogue but fsync-lies and kill, which the crash check judges)."`
	NoCrash    bool          `long:"no-crash" description:"Leave out the crash-consistency check."`
	WriteSuite string        `long:"write-suite" value-name:"FILE" description:"Save what ran as a suite file with the observed outcomes expected, so the audit becomes a regression test."`
	Init       string        `long:"init" value-name:"DIR" description:"Copy DIR's contents into the sandbox before each run."`
	Setup      string        `long:"setup" value-name:"CMD" description:"Run CMD with sh -c in the sandbox before each run (after --init)."`
	User       string        `long:"user" value-name:"NAME" description:"Run the program as this user."`
	FS         string        `long:"fs" choice:"ext4" choice:"xfs" choice:"btrfs" default:"ext4" description:"File system of the crash check's disk."`
	K          int           `long:"k" default:"2" value-name:"N" description:"The crash check drops at most N in-flight writes per crash site."`
	Timeout    time.Duration `long:"timeout" default:"30s" value-name:"D" description:"Time limit of each run of the program; a replay that takes longer is hung."`
	Jobs       int           `long:"jobs" value-name:"N" description:"Run N checks at once, each in its own sandbox (default: the number of cores)."`
	Shard      string        `long:"shard" value-name:"I/N" description:"Run only part I of N of the checks."`
	JSON       bool          `long:"json" description:"Print the report as JSON."`
	Out        string        `long:"out" default:"faultline-audit" value-name:"DIR" description:"Keep the recording (trace.strace) and each check's artifacts in DIR; the reproduction commands name it."`
	Args       programArgs   `positional-args:"yes"`
}

func (c *auditCmd) Run(intr *interrupts) error {
	if len(c.Args.Cmd) == 0 {
		return toolError("audit: no command given (faultline audit [flags] -- CMD ARGS...)")
	}
	if c.Init != "" && c.Setup != "" {
		return toolError("audit: give --init or --setup, not both")
	}
	if c.K < 1 {
		return toolError("audit: --k %d: want at least 1", c.K)
	}
	// --anomalies a,b and --anomalies a --anomalies b say the same.
	var names []string
	for _, a := range c.Anomalies {
		names = append(names, strings.Split(a, ",")...)
	}
	c.Anomalies = names
	if c.Anomalies != nil {
		if _, err := suite.LookupAnomalies(c.Anomalies); err != nil {
			return toolError("audit: --anomalies: %w", err)
		}
	}
	out, err := filepath.Abs(c.Out)
	if err != nil {
		return toolError("audit: --out: %w", err)
	}
	init := c.Init
	cleanupWorld, err := defaultWorld("audit", c.Args.Cmd, &init, c.Setup, filepath.Join(out, "init"))
	defer cleanupWorld()
	if err != nil {
		return err
	}
	if init != "" {
		if init, err = filepath.Abs(init); err != nil {
			return toolError("audit: --init: %w", err)
		}
	}
	r, err := newRunner(c.Jobs, c.Shard, out)
	if err != nil {
		return err
	}
	a := &suite.Audit{
		Program:   suite.Program{Command: c.Args.Cmd, Init: init, Setup: c.Setup, User: c.User, FS: c.FS, Timeout: c.Timeout},
		Anomalies: c.Anomalies,
		NoCrash:   c.NoCrash,
		Crash:     suite.CrashOptions{K: c.K, FS: c.FS},
		Out:       out,
		Runner:    *r,
	}
	ctx := intr.context()
	defer cleanupAll()
	bar := newProgress("audit")
	a.Runner.Progress = func(res *suite.Result, done, total int) { bar.update(res.Check, done, total) }
	rep, err := a.Run(ctx)
	bar.finish()
	if rep == nil {
		return toolError("audit: %w", err)
	}
	if c.JSON {
		err2 := rep.WriteJSON(os.Stdout)
		if err2 != nil {
			return toolError("writing the report: %w", err2)
		}
	} else if err2 := rep.WriteFindings(os.Stdout); err2 != nil {
		return toolError("writing the report: %w", err2)
	}
	if err != nil {
		return toolError("audit: %w", err)
	}
	if c.WriteSuite != "" {
		if err := a.WriteSuite(c.WriteSuite, rep); err != nil {
			return toolError("audit: --write-suite: %w", err)
		}
		fmt.Fprintf(os.Stderr, "faultline: wrote the suite %s; run it with: faultline suite %s\n", c.WriteSuite, c.WriteSuite)
	}
	if n := len(rep.Findings()); n > 0 {
		return &exitError{code: exitFinding, err: fmt.Errorf("audit: %d finding(s)", n)}
	}
	if rep.Errors() > 0 {
		return &exitError{code: exitTool, err: fmt.Errorf("audit: %d check(s) could not run", rep.Errors())}
	}
	return nil
}
