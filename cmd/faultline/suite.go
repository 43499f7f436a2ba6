//go:build !front

package main

import (
	"fmt"
	"os"

	"github.com/faultline/faultline/blockrec"
	"github.com/faultline/faultline/suite"
	"github.com/faultline/faultline/supervisor"
)

// suiteCmd is `faultline suite`: run a project's suite file, the way CI
// does.
type suiteCmd struct {
	JSON       bool     `long:"json" description:"Print the report as JSON instead of a table."`
	JUnit      string   `long:"junit" value-name:"FILE" description:"Also write the report as JUnit XML to FILE (atomically), for CI dashboards."`
	Jobs       int      `long:"jobs" value-name:"N" description:"Run N checks at once, each in its own sandbox (default: the number of cores)."`
	Shard      string   `long:"shard" value-name:"I/N" description:"Run only part I of N of the checks (the split depends on check names only), for a CI matrix."`
	Only       []string `long:"run" value-name:"NAME" description:"Run only the named check (repeat for several); the table's reproduce column uses it."`
	Out        string   `long:"out" value-name:"DIR" description:"Keep each check's artifacts (replayed traces, crash reports and images) in DIR."`
	RecordOnly string   `long:"record-only" value-name:"FILE" description:"Only record the program as the suite would and save the trace to FILE, to write a patch against (diff -u FILE edited.strace > edit.patch)."`
	Args       struct {
		File string `positional-arg-name:"FILE" required:"yes" description:"The suite file (TOML)."`
	} `positional-args:"yes"`
}

func (c *suiteCmd) Run(intr *interrupts) error {
	s, err := suite.Load(c.Args.File)
	if err != nil {
		return toolError("%w", err)
	}
	r, err := newRunner(c.Jobs, c.Shard, c.Out)
	if err != nil {
		return err
	}
	r.Only = c.Only
	ctx := intr.context()
	defer cleanupAll()

	if c.RecordOnly != "" {
		t, err := r.Recording(ctx, s)
		if err != nil {
			return toolError("suite %s: %w", c.Args.File, err)
		}
		if err := blockrec.WriteFileAtomic(c.RecordOnly, t.Write); err != nil {
			return toolError("--record-only: %w", err)
		}
		return nil
	}
	bar := newProgress("checks")
	r.Progress = func(res *suite.Result, done, total int) { bar.update(res.Check, done, total) }
	rep, err := r.Run(ctx, s)
	bar.finish()
	if rep == nil {
		return toolError("suite %s: %w", c.Args.File, err)
	}
	if werr := c.write(rep); werr != nil {
		return werr
	}
	switch {
	case err != nil:
		return toolError("suite %s: %w", c.Args.File, err)
	case rep.Errors() > 0:
		return &exitError{code: exitTool, err: fmt.Errorf("suite %s: %d check(s) could not run", c.Args.File, rep.Errors())}
	case rep.Unexpected() > 0:
		return &exitError{code: exitFinding, err: fmt.Errorf("suite %s: %d check(s) got an unexpected outcome", c.Args.File, rep.Unexpected())}
	}
	return nil
}

func (c *suiteCmd) write(rep *suite.Report) error {
	if c.JUnit != "" {
		if err := blockrec.WriteFileAtomic(c.JUnit, rep.WriteJUnit); err != nil {
			return toolError("--junit %s: %w", c.JUnit, err)
		}
	}
	var err error
	if c.JSON {
		err = rep.WriteJSON(os.Stdout)
	} else {
		err = rep.WriteTable(os.Stdout)
	}
	if err != nil {
		return toolError("writing the report: %w", err)
	}
	return nil
}

// newRunner is the runner both commands share.
func newRunner(jobs int, shard, out string) (*suite.Runner, error) {
	if jobs < 0 {
		return nil, toolError("--jobs %d: want at least 1", jobs)
	}
	r := &suite.Runner{Jobs: jobs, Engine: &suite.Faultline{Tool: version, Out: out}}
	if shard != "" {
		sh, err := suite.ParseShard(shard)
		if err != nil {
			return nil, toolError("--shard: %w", err)
		}
		r.Shard = sh
	}
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return nil, toolError("--out: %w", err)
		}
	}
	return r, nil
}

// cleanupAll releases whatever a panic or a second signal left open.
func cleanupAll() {
	supervisor.CloseAll()
	blockrec.CloseAll()
}
