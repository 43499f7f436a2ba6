package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/faultline/faultline/tracer"
)

// recordCommand is record's entry in the command table of both builds.
func recordCommand() command {
	return command{"record", "Run a command under ptrace and write its trace.", true, &recordCmd{}}
}

// recordCmd is `faultline record`: strace's own flags with strace's
// meanings, and a trace that begins with faultline's header.
type recordCmd struct {
	Output    string      `short:"o" long:"output" value-name:"FILE" description:"Write the trace to FILE (atomically); '-' is stdout. Default: stderr, as strace."`
	Follow    bool        `short:"f" long:"follow-forks" description:"Trace child processes and threads."`
	Expr      []string    `short:"e" long:"expr" value-name:"trace=SET" description:"Trace only SET: names and classes (%file, %desc, %process, %network, %memory, %signal, %stat), '!' negates."`
	StrSize   int         `short:"s" long:"string-limit" default:"32" value-name:"N" description:"Show at most N bytes of each string."`
	Verbose   bool        `short:"v" long:"no-abbrev" description:"Print structures in full."`
	DecodeFDs bool        `short:"y" long:"decode-fds" description:"Print the path behind each file descriptor."`
	Pid       int         `short:"p" long:"attach" value-name:"PID" description:"Attach to a running process instead of starting one."`
	NoSeccomp bool        `long:"no-seccomp" description:"With -e trace=, stop at every call instead of installing a seccomp-bpf filter."`
	Init      string      `long:"init" value-name:"DIR" description:"Run in a sandbox populated from DIR (a copy keeping modes, owners, times, xattrs): a fresh file system at the working directory, in a private mount namespace."`
	Setup     string      `long:"setup" value-name:"CMD" description:"Run in a sandbox populated by sh -c CMD (run as root in it first)."`
	User      string      `long:"user" value-name:"NAME" description:"Run the program as this user (with --init or --setup)."`
	FS        string      `long:"fs" choice:"default" choice:"tmpfs" choice:"ext4" choice:"xfs" choice:"btrfs" default:"default" description:"The sandbox's file system: the recording RAM disk with ext4 (the default), xfs or btrfs, or tmpfs (faster to set up; no block log). Replay uses the one the header names."`
	Sandbox   string      `long:"sandbox" value-name:"DIR" description:"Where the program sees the sandbox (its working directory); default: the current directory."`
	Args      programArgs `positional-args:"yes"`
}

// version is faultline's, as recorded in trace headers.
const version = "faultline 0.1-dev"

func (r *recordCmd) Run(intr *interrupts) error {
	cmdArgs := r.Args.Cmd
	if r.Pid == 0 && len(cmdArgs) == 0 {
		return toolError("record: give a command to run or -p PID")
	}
	if r.Pid != 0 && len(cmdArgs) > 0 {
		return toolError("record: give either a command or -p PID, not both")
	}
	if r.StrSize < 0 {
		return toolError("record: -s %d: the string limit cannot be negative", r.StrSize)
	}
	var filter *tracer.Filter
	for _, e := range r.Expr {
		spec, ok := strings.CutPrefix(e, "trace=")
		if !ok {
			return toolError("record: -e %s: only trace=SET is supported", e)
		}
		f, err := tracer.ParseFilter(spec)
		if err != nil {
			return toolError("record: -e %s: %w", e, err)
		}
		filter = f
	}

	sandboxed := r.Init != "" || r.Setup != ""
	if !sandboxed && (r.User != "" || r.Sandbox != "" || r.FS != "default") {
		return toolError("record: --user, --sandbox and --fs need --init DIR or --setup CMD")
	}
	if r.FS == "default" {
		// The world of a recording is a real kernel file system on the
		// recording disk, as the crash check's is: what the program sees
		// (d_type, FICLONE, xattrs, sizes) is what it would see on disk.
		r.FS = "ext4"
	}
	if sandboxed && r.Pid != 0 {
		return toolError("record: -p attaches to a running program, which cannot be moved into a sandbox")
	}

	out, err := openOutput(r.Output)
	if err != nil {
		return toolError("record: -o %s: %w", r.Output, err)
	}
	defer out.abort()

	c := &tracer.Cmd{
		Pid:         r.Pid,
		Follow:      r.Follow,
		Filter:      filter,
		StringLimit: r.StrSize,
		Verbose:     r.Verbose,
		DecodeFDs:   r.DecodeFDs,
		NoSeccomp:   r.NoSeccomp,
		Output:      out,
		Log:         os.Stderr,
		Tool:        version,
	}
	if len(cmdArgs) > 0 {
		c.Path, c.Args = cmdArgs[0], cmdArgs
	}

	// A trace allocates small, short-lived nodes at every stop; the
	// default GC pacing spends more on them than the heap is worth.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}

	// Ctrl-C and kill stop the recording cleanly: the tracer kills what
	// it started (or detaches from -p), the trace is completed and kept.
	ctx := intr.context()
	if sandboxed {
		return r.runSandboxed(ctx, c, out)
	}
	if err := c.Start(ctx); err != nil {
		if errors.Is(err, tracer.ErrNotFound) {
			return toolError("record: %s: command not found", c.Path)
		}
		return toolError("record: %w", err)
	}
	werr := c.Wait()
	if err := out.commit(); err != nil {
		return toolError("record: write %s: %w", r.Output, err)
	}
	if werr != nil {
		if ctx.Err() != nil {
			return toolError("record: interrupted; the trace so far is in %s", outputName(r.Output))
		}
		return toolError("record: %w", werr)
	}
	return nil
}

func outputName(o string) string {
	if o == "" {
		return "stderr"
	}
	return o
}

// output is where the trace goes: a temporary file renamed into place
// when complete (fsynced, and its directory too), or a stream that is
// written as it comes (stdout, stderr, /dev/null and other devices).
type output struct {
	io.Writer
	f      *os.File
	tmp    string
	final  string
	closed bool
}

func openOutput(name string) (*output, error) {
	switch name {
	case "":
		return &output{Writer: os.Stderr}, nil
	case "-":
		return &output{Writer: os.Stdout}, nil
	}
	if st, err := os.Stat(name); err == nil && !st.Mode().IsRegular() {
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &output{Writer: f, f: f}, nil
	}
	dir := filepath.Dir(name)
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return nil, err
	}
	return &output{Writer: f, f: f, tmp: f.Name(), final: name}, nil
}

func (o *output) commit() error {
	if o.closed || o.f == nil {
		return nil
	}
	o.closed = true
	if o.tmp == "" {
		return o.f.Close()
	}
	if err := o.f.Sync(); err != nil {
		o.f.Close()
		os.Remove(o.tmp)
		return err
	}
	if err := o.f.Chmod(0644); err != nil {
		o.f.Close()
		os.Remove(o.tmp)
		return err
	}
	if err := o.f.Close(); err != nil {
		os.Remove(o.tmp)
		return err
	}
	if err := os.Rename(o.tmp, o.final); err != nil {
		os.Remove(o.tmp)
		return err
	}
	d, err := os.Open(filepath.Dir(o.final))
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	return nil
}

func (o *output) abort() {
	if o.closed || o.f == nil {
		return
	}
	o.closed = true
	o.f.Close()
	if o.tmp != "" {
		os.Remove(o.tmp)
	}
}
