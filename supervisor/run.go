package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/faultline/faultline/parser"
	"github.com/faultline/faultline/tracer"
	"golang.org/x/sys/unix"
)

// Run is one live traced run of a command, in a Sandbox or in the host's
// world: `faultline record --init/--setup` and the crash check's
// recording run. Configure it, call Run once.
type Run struct {
	// Sandbox, opened by the caller, is the world the program runs in; nil
	// runs it in faultline's own world and working directory.
	Sandbox *Sandbox

	Path string   // program; resolved through PATH
	Args []string // argv including argv[0]
	Env  []string // nil: faultline's environment

	Follow, Verbose, DecodeFDs bool
	StringLimit                int
	Filter                     *tracer.Filter

	// Output receives the trace, beginning with faultline's header (which
	// describes the sandbox too). Required.
	Output io.Writer
	// Tool names faultline in the header ("faultline 0.1").
	Tool string

	Stdin, Stdout, Stderr *os.File
	Log                   io.Writer

	// OnPosition is called (on the tracing thread, the program stopped) at
	// each call's entry with the line number that call is about to get in
	// Output: feed it to blockrec.Recorder.SetPosition so the block log
	// says which call was running. With several threads running at once
	// the number is the next line, which is the call's own in the common
	// case.
	OnPosition func(pos int64)
	// AfterCall is called after each completed call while the program is
	// paused, with the call's line and its line number in Output: the
	// crash check walks HostDir there after metadata calls.
	AfterCall func(line *parser.Line, pos int64)

	// Status is the program's wait status, valid after Run.
	Status unix.WaitStatus
}

// Run runs the program to its end (or until ctx is cancelled: then the
// program is killed and the error says so). With a recording-disk
// sandbox it starts the block log right before the program and unmounts
// the disk after it, log still recording.
func (r *Run) Run(ctx context.Context) error {
	if r.Output == nil {
		return errors.New("supervisor: Run without an Output")
	}
	c := &tracer.Cmd{
		Path: r.Path, Args: r.Args, Env: r.Env,
		Follow: r.Follow, Verbose: r.Verbose, DecodeFDs: r.DecodeFDs,
		StringLimit: r.StringLimit, Filter: r.Filter,
		Output: r.Output, Tool: r.Tool,
		Stdin: r.Stdin, Stdout: r.Stdout, Stderr: r.Stderr, Log: r.Log,
	}
	if r.Sandbox != nil {
		sb := r.Sandbox
		c.Dir = sb.Dir
		c.SyncDir = sb.Dir
		c.Prepare = sb.Enter
		c.Release = sb.Leave
		c.Credential = sb.Credential()
		c.HeaderExtra = sb.headerLines()
	}
	last := int64(0)
	if r.OnPosition != nil {
		c.Hooks.Enter = func(s *tracer.Stop) { r.OnPosition(last + 1) }
	}
	c.Completed = func(tid int, l *parser.Line, n int) {
		last = int64(n)
		if r.AfterCall != nil {
			r.AfterCall(l, int64(n))
		}
	}
	if err := startLogging(r.Sandbox); err != nil {
		return err
	}
	if err := c.Start(ctx); err != nil {
		finish(r.Sandbox)
		return err
	}
	werr := c.Wait()
	r.Status = c.Status
	ferr := finish(r.Sandbox)
	if werr != nil {
		return werr
	}
	return ferr
}

func startLogging(sb *Sandbox) error {
	if sb == nil || sb.Recorder() == nil {
		return nil
	}
	if err := sb.Recorder().StartLogging(); err != nil {
		return fmt.Errorf("sandbox: start the block log: %w", err)
	}
	return nil
}

func finish(sb *Sandbox) error {
	if sb == nil {
		return nil
	}
	return sb.Finish()
}
