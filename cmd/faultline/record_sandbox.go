//go:build !front

package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/faultline/faultline/supervisor"
	"github.com/faultline/faultline/tracer"
)

// runSandboxed records c in a fresh sandbox (--init/--setup): the world
// the header describes, so the trace can be replayed.
func (r *recordCmd) runSandboxed(ctx context.Context, c *tracer.Cmd, out *output) error {
	dir := r.Sandbox
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return toolError("record: %w", err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return toolError("record: --sandbox %s: %w", dir, err)
	}
	sb := &supervisor.Sandbox{Dir: abs, Init: r.Init, Setup: r.Setup, User: r.User, FS: r.FS, Umask: -1, SetupOutput: os.Stderr}
	if r.Init != "" {
		if sb.Init, err = filepath.Abs(r.Init); err != nil {
			return toolError("record: --init %s: %w", r.Init, err)
		}
	}
	defer func() {
		if p := recover(); p != nil {
			sb.Close()
			panic(p)
		}
	}()
	if err := sb.Open(ctx); err != nil {
		return toolError("record: %w", err)
	}
	defer sb.Close()
	run := &supervisor.Run{
		Sandbox: sb, Path: c.Path, Args: c.Args,
		Follow: c.Follow, Verbose: c.Verbose, DecodeFDs: c.DecodeFDs,
		StringLimit: c.StringLimit, Filter: c.Filter,
		Output: out, Tool: c.Tool, Log: c.Log,
	}
	werr := run.Run(ctx)
	if werr != nil && errors.Is(werr, tracer.ErrNotFound) {
		return toolError("record: %s: command not found", c.Path)
	}
	if err := out.commit(); err != nil {
		return toolError("record: write %s: %w", r.Output, err)
	}
	if cerr := sb.Close(); cerr != nil && werr == nil {
		werr = cerr
	}
	if werr != nil {
		if ctx.Err() != nil {
			return toolError("record: interrupted; the trace so far is in %s", outputName(r.Output))
		}
		return toolError("record: %w", werr)
	}
	return nil
}
