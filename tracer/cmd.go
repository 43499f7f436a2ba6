package tracer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/faultline/faultline/parser"

	"golang.org/x/sys/unix"
)

// Cmd is a program to record, configured like os/exec.Cmd before Start.
// Wait releases everything Start took (tracees, the locked thread).
type Cmd struct {
	Path string   // program to run; resolved through PATH like a shell
	Args []string // argv, including argv[0]
	Env  []string // environment; nil means the current one
	Dir  string   // working directory; "" means the current one

	// Pid attaches to a running process instead of starting Path.
	Pid int

	Follow      bool    // -f: trace children and threads
	Filter      *Filter // -e trace=: nil traces every call
	StringLimit int     // -s: bytes of a string shown; 0 means 32
	Verbose     bool    // -v: full structures
	DecodeFDs   bool    // -y: paths after file descriptors

	// NoSeccomp keeps a filtered trace on plain PTRACE_SYSCALL stops
	// instead of installing the seccomp-bpf filter.
	NoSeccomp bool

	// Output receives the trace lines; nil decodes nothing, which is
	// what a supervisor that only needs Hooks wants.
	Output io.Writer
	// Stdin, Stdout and Stderr are the program's; nil means faultline's.
	Stdin, Stdout, Stderr *os.File
	// Log receives strace's own remarks ("Process 12 attached"); nil
	// drops them.
	Log io.Writer

	// Hooks are called from the tracing thread at each stop.
	Hooks Hooks

	// SyncDir, when set, is the sandbox as the program sees it: the
	// program's sync() then runs as syncfs(2) of it (syncfs.go).
	SyncDir string

	// Tool, when set ("faultline v0.1"), makes the trace begin with the
	// '#' header (HeaderLines) written before the first line.
	Tool string

	// Prepare, when set, runs on the tracing OS thread just before the
	// program is forked, so it may change what only that thread and its
	// children share: unshare(CLONE_NEWNS) and mount a sandbox, set the
	// umask. A thread changed that way must not run other goroutines
	// again, so with Prepare set the tracing thread is not returned to
	// the Go scheduler: it exits when the trace ends. An error stops
	// Start before anything is forked.
	Prepare func() error
	// Release, when set, runs on the same thread after the last tracee is
	// gone (or after a failed Start), to undo what Prepare did in that
	// thread's namespace (unmount the sandbox's bind mount, so that the
	// host-side unmount really releases the file system).
	Release func()
	// Credential runs the program as another user (uid, gid, groups).
	Credential *syscall.Credential
	// Completed, when set, is called on the tracing thread after each
	// call's result line was written, while the thread that made it is
	// still stopped: tid, the line (the whole call, or the "<... resumed>"
	// half) and its 1-based line number in Output, header included. It
	// makes the tracer flush Output after every call.
	Completed func(tid int, line *parser.Line, lineNo int)

	// HeaderExtra are more header lines (without the leading "# "),
	// written after the ones the tracer makes: the supervisor's
	// description of the sandbox.
	HeaderExtra []string

	// Status is the root process's wait status, valid after Wait.
	Status unix.WaitStatus

	started bool
	done    chan struct{}
	err     error
	t       *tracer
}

// ErrNotFound is returned by Start when the program cannot be found.
var ErrNotFound = errors.New("command not found")

// Start resolves the program, starts it (or attaches) under ptrace on a
// locked OS thread and returns once the first tracee is under control.
// Cancelling ctx kills the started program (or detaches from an attached
// one) and makes Wait return.
func (c *Cmd) Start(ctx context.Context) error {
	if c.started {
		return errors.New("tracer: Start called twice")
	}
	c.started = true
	if c.Pid == 0 {
		if c.Path == "" {
			return errors.New("tracer: no command to run")
		}
		p, err := lookPath(c.Path)
		if err != nil {
			return err
		}
		c.Path = p
		if len(c.Args) == 0 {
			c.Args = []string{c.Path}
		}
		if c.Env == nil {
			c.Env = os.Environ()
		}
	}
	if c.StringLimit <= 0 {
		c.StringLimit = 32
	}
	restoreDefaultSigchld()
	t := newTracer(c)
	c.t = t
	c.done = make(chan struct{})
	ready := make(chan error, 1)
	// ptrace binds a tracee to the thread that attached it: every request
	// must come from this one thread until Wait returns (thread.go).
	go onChildlessThread(func() {
		if c.Prepare == nil {
			defer runtime.UnlockOSThread()
		}
		// else: the thread's namespace or umask may differ from the
		// process's; it dies with this goroutine instead of serving others.
		defer close(c.done)
		if c.Release != nil {
			defer c.Release()
		}
		if err := t.start(); err != nil {
			ready <- err
			return
		}
		ready <- nil
		c.err = t.run(ctx)
		c.Status = t.rootStatus
	})
	return <-ready
}

// Wait runs the trace to the end: every tracee has exited (or been
// detached). It returns the first error the tracer met; the program's own
// exit status is in Status.
func (c *Cmd) Wait() error {
	if !c.started || c.done == nil {
		return errors.New("tracer: Wait before Start")
	}
	<-c.done
	return c.err
}

// Run is Start then Wait.
func (c *Cmd) Run(ctx context.Context) error {
	if err := c.Start(ctx); err != nil {
		return err
	}
	return c.Wait()
}

// lookPath finds a program as execvp would and says so when it cannot.
func lookPath(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		if errors.Is(err, exec.ErrDot) {
			return p, nil
		}
		return "", fmt.Errorf("%s: %w", name, ErrNotFound)
	}
	return p, nil
}
