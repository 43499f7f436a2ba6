package supervisor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/parser"
	"github.com/faultline/faultline/tracer"
)

// DefaultTimeout is how long a replay may run before it counts as hung.
const DefaultTimeout = 30 * time.Second

// Replay runs a program against a (possibly edited) trace under the
// replay contract of DESIGN.md. Configure it, call Run once.
type Replay struct {
	// Trace is the trace to replay, header included (mutators.Read).
	Trace *mutators.Trace

	// Sandbox, opened by the caller, is the world to replay in (the crash
	// check passes one on the recording RAM disk). Nil: Run builds one
	// from the trace header (tmpfs), with Init/Setup overriding the
	// header's population, opens it and closes it at the end.
	Sandbox *Sandbox
	// Init and Setup, when either is set, replace the header's --init and
	// --setup for the sandbox Run builds.
	Init, Setup string
	// NoSandbox replays in faultline's own world and working directory:
	// for a trace recorded without a sandbox, whose world is the host.
	NoSandbox bool

	// Command replaces the header's command line (argv[0] resolved
	// through PATH).
	Command []string
	// Timeout ends a replay that runs longer as hung (the program and its
	// children are killed); 0 means DefaultTimeout.
	Timeout time.Duration

	// Output receives the replayed trace as it is written (it is also in
	// Report.Replayed).
	Output io.Writer
	// Tool names faultline in the replayed trace's header.
	Tool string
	// Stdin, Stdout, Stderr are the program's; nil means faultline's.
	Stdin, Stdout, Stderr *os.File
	// Log gets one line per injection as it is performed; nil drops them.
	Log io.Writer

	// OnPosition is called, with the trace's line number, at the entry of
	// each call matched to its line and before each inserted line is
	// performed: feed it to blockrec.Recorder.SetPosition.
	OnPosition func(pos int64)
	// AfterCall is called while the program is paused after each matched
	// call completed (the trace's line and its line number) and after each
	// inserted line was performed.
	AfterCall func(line *parser.Line, pos int64)

	// Patch forces run-to-run values to agree with the trace too (see
	// tracer.PatchOptions); the zero value patches them only where edited.
	Patch tracer.PatchOptions
}

// WorldError is a replay that could not be done: the program did
// something else than the trace before any anomaly was injected, so the
// world it ran in is not the one recorded.
type WorldError struct {
	Line     int    // the trace's line
	Expected string // that line
	Actual   string // what the program did
	Reason   string
}

func (e *WorldError) Error() string {
	msg := fmt.Sprintf("replay could not be done: line %d: expected %s, program did %s", e.Line, e.Expected, e.Actual)
	if e.Reason != "" {
		msg += " (" + e.Reason + ")"
	}
	return msg
}

// Run replays. It returns the report, and an error when the replay could
// not be done (a *WorldError when the world differed before the first
// injection; the report is returned with it when there is one).
func (r *Replay) Run(ctx context.Context) (*Report, error) {
	if r.Trace == nil {
		return nil, errors.New("supervisor: Replay without a Trace")
	}
	h, err := ParseHeader(r.Trace.Lines)
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", r.Trace.File, err)
	}
	sc, err := newScript(r.Trace)
	if err != nil {
		return nil, err
	}
	argv := h.Command
	path := h.Path
	if len(r.Command) > 0 {
		argv, path = r.Command, r.Command[0]
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("%s: the header names no command; give one after --", r.Trace.File)
	}
	if path == "" {
		path = argv[0]
	}
	env := h.Env
	if env == nil {
		env = os.Environ()
	}
	filter, err := h.TracerFilter()
	if err != nil {
		return nil, fmt.Errorf("%s: header: traced calls: %w", r.Trace.File, err)
	}

	sb := r.Sandbox
	if sb == nil && !r.NoSandbox {
		if h.Sandbox == nil && r.Init == "" && r.Setup == "" {
			return nil, fmt.Errorf("%s: the trace was recorded without a sandbox (no --init/--setup in its header): give --init DIR or --setup CMD to build its world", r.Trace.File)
		}
		sb = &Sandbox{Umask: h.Umask}
		if h.Sandbox != nil {
			cp := h.Sandbox
			sb = &Sandbox{Dir: cp.Dir, Init: cp.Init, Setup: cp.Setup, User: cp.User, FS: cp.FS, Umask: cp.Umask}
		}
		if sb.Dir == "" {
			sb.Dir = h.Cwd
		}
		if r.Init != "" || r.Setup != "" {
			sb.Init, sb.Setup = r.Init, r.Setup
		}
		if err := sb.Open(ctx); err != nil {
			return nil, err
		}
		defer sb.Close()
	}

	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var replayed bytes.Buffer
	var out io.Writer = &replayed
	if r.Output != nil {
		out = io.MultiWriter(&replayed, r.Output)
	}
	tool := r.Tool
	if tool == "" {
		tool = "faultline replay"
	}
	e := newEngine(r, sc)
	c := &tracer.Cmd{
		Path: path, Args: argv, Env: env,
		Follow: h.Follow, Verbose: h.Verbose, DecodeFDs: h.DecodeFDs,
		StringLimit: h.StringLimit, Filter: filter,
		Output: out, Tool: tool,
		Stdin: r.Stdin, Stdout: r.Stdout, Stderr: r.Stderr,
		Hooks: tracer.Hooks{
			Enter:     e.enter,
			Exit:      e.exit,
			NewThread: e.newThread,
			Signal:    e.signal,
		},
		Completed: e.completed,
	}
	if sb != nil {
		e.syncDir = sb.Dir
		c.Dir = sb.Dir
		c.SyncDir = sb.Dir
		c.Prepare = sb.Enter
		c.Release = sb.Leave
		c.Credential = sb.Credential()
		c.HeaderExtra = append(sb.headerLines(), "replay of: "+r.Trace.File)
	} else if h.Cwd != "" {
		c.Dir = h.Cwd
	}
	if err := startLogging(sb); err != nil {
		return nil, err
	}
	start := time.Now()
	if err := c.Start(tctx); err != nil {
		finish(sb)
		if errors.Is(err, tracer.ErrNotFound) {
			return nil, fmt.Errorf("replay %s: %w", r.Trace.File, err)
		}
		return nil, fmt.Errorf("replay %s: %w", r.Trace.File, err)
	}
	werr := c.Wait()
	elapsed := time.Since(start)
	if ferr := finish(sb); ferr != nil && werr == nil {
		werr = ferr
	}
	hung := errors.Is(tctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	if ctx.Err() != nil {
		return nil, fmt.Errorf("replay %s: interrupted: %w", r.Trace.File, context.Cause(ctx))
	}
	if werr != nil && !hung {
		return nil, fmt.Errorf("replay %s: %w", r.Trace.File, werr)
	}
	rep := e.report(h, argv, c.Status, hung, timeout, elapsed)
	rep.Replayed = replayed.Bytes()
	rep.runChecks(h, r.Trace)
	if e.world != nil {
		return rep, e.world
	}
	return rep, nil
}
