package crash

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/faultline/faultline/blockrec"
	"golang.org/x/sys/unix"
)

// toolName heads the traces faultline writes.
const toolName = "faultline crash"

// sandbox is the directory the program runs in: a mount point that holds,
// one after the other, the profiling disk, the recording disk and the
// kill-point disk, always at the same path so the traces' paths stay valid
// from one run to the next.
type sandbox struct {
	work string // private work dir holding the mount point and program output
	dir  string // the mount point
	init string
	// setup is a shell command run in the sandbox after init is copied.
	setup string
	// template holds the populated files after the first populate.
	template string
	ctx      context.Context
	rec      *blockrec.Recorder
}

func newSandbox(ctx context.Context, init, setup string) (*sandbox, error) {
	work, err := os.MkdirTemp("", fmt.Sprintf("faultline-crash-%d-", os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("creating the work directory: %w", err)
	}
	sb := &sandbox{work: work, dir: filepath.Join(work, "sandbox"), init: init, setup: setup, ctx: ctx}
	if err := os.Mkdir(sb.dir, 0o755); err != nil {
		os.RemoveAll(work)
		return nil, fmt.Errorf("creating the sandbox mount point: %w", err)
	}
	return sb, nil
}

// mount puts a fresh recording disk at the sandbox path and fills it.
// Logging is not started.
func (sb *sandbox) mount(fs blockrec.FSType, size int64) (*blockrec.Recorder, error) {
	if sb.rec != nil {
		return nil, fmt.Errorf("sandbox %s is already mounted", sb.dir)
	}
	r := &blockrec.Recorder{Dir: sb.dir, FS: fs, Size: size}
	if err := r.Start(); err != nil {
		r.Close()
		return nil, fmt.Errorf("starting the %s recording disk: %w", fs, err)
	}
	sb.rec = r
	if err := sb.populate(); err != nil {
		sb.unmount()
		return nil, err
	}
	return r, nil
}

// unmount closes the current disk, if any.
func (sb *sandbox) unmount() error {
	if sb.rec == nil {
		return nil
	}
	err := sb.rec.Close()
	sb.rec = nil
	if err != nil {
		return fmt.Errorf("closing the recording disk: %w", err)
	}
	return nil
}

// populate fills the sandbox. The first time it copies --init and runs
// --setup there, then keeps a copy of the result; every later disk is
// filled from that copy, so all runs start from the same files even when
// the setup command is not deterministic (random data, timestamps).
func (sb *sandbox) populate() error {
	if sb.template != "" {
		return copyTree(sb.ctx, sb.template, sb.dir)
	}
	if sb.init != "" {
		st, err := os.Stat(sb.init)
		if err != nil {
			return fmt.Errorf("--init %s: %w", sb.init, err)
		}
		if !st.IsDir() {
			return fmt.Errorf("--init %s: not a directory", sb.init)
		}
		if err := copyTree(sb.ctx, sb.init, sb.dir); err != nil {
			return fmt.Errorf("--init %s: %w", sb.init, err)
		}
	}
	if sb.setup != "" {
		cmd := exec.CommandContext(sb.ctx, "sh", "-c", sb.setup)
		cmd.Dir = sb.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("--setup %q: %w: %s", sb.setup, err, strings.TrimSpace(string(out)))
		}
	}
	tmpl := filepath.Join(sb.work, "template")
	if err := os.Mkdir(tmpl, 0o755); err != nil {
		return fmt.Errorf("keeping the populated sandbox: %w", err)
	}
	if err := copyTree(sb.ctx, sb.dir, tmpl); err != nil {
		return fmt.Errorf("keeping the populated sandbox: %w", err)
	}
	// mkfs made it, the program did not.
	if err := os.RemoveAll(filepath.Join(tmpl, "lost+found")); err != nil {
		return fmt.Errorf("keeping the populated sandbox: %w", err)
	}
	sb.template = tmpl
	return nil
}

// copyTree copies src's contents into dst with cp -a: owners, modes,
// timestamps, links, xattrs and holes kept.
func copyTree(ctx context.Context, src, dst string) error {
	out, err := exec.CommandContext(ctx, "cp", "-a", "--", src+"/.", dst+"/").CombinedOutput()
	if err != nil {
		return fmt.Errorf("cp -a %s %s: %w: %s", src, dst, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// reset empties the mounted sandbox and fills it again, for the next kill
// point: the state a killed run leaves does not depend on the blocks under
// it, so one disk serves every kill point.
func (sb *sandbox) reset() error {
	ents, err := os.ReadDir(sb.dir)
	if err != nil {
		return fmt.Errorf("resetting the sandbox: %w", err)
	}
	for _, e := range ents {
		if e.Name() == "lost+found" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(sb.dir, e.Name())); err != nil {
			return fmt.Errorf("resetting the sandbox: %w", err)
		}
	}
	return sb.populate()
}

// headerLines describe the sandbox in the trace header, in the keys the
// supervisor reads back (supervisor.ParseHeader), so a saved trace says
// what world it was recorded in.
func (sb *sandbox) headerLines(fs blockrec.FSType) []string {
	out := []string{"sandbox-fs: " + string(fs), "sandbox-dir: " + strconv.Quote(sb.dir)}
	if sb.init != "" {
		out = append(out, "sandbox-init: "+strconv.Quote(sb.init))
	}
	if sb.setup != "" {
		out = append(out, "sandbox-setup: "+strconv.Quote(sb.setup))
	}
	return out
}

// close releases the disk and removes the work directory.
func (sb *sandbox) close() error {
	err := sb.unmount()
	// The mount point must be empty and unmounted before it goes.
	if rerr := os.RemoveAll(sb.work); rerr != nil && err == nil {
		err = fmt.Errorf("removing %s: %w", sb.work, rerr)
	}
	return err
}

// progIO is the program's standard streams: no input, output to a file in
// the work dir so it never mixes with faultline's report.
type progIO struct {
	stdin, out *os.File
}

func (sb *sandbox) programIO() (*progIO, error) {
	in, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	out, err := os.OpenFile(filepath.Join(sb.work, "program-output"), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		in.Close()
		return nil, fmt.Errorf("creating the program's output file: %w", err)
	}
	return &progIO{stdin: in, out: out}, nil
}

func (p *progIO) close() {
	p.stdin.Close()
	p.out.Close()
}

// tail is the end of what the program printed.
func (p *progIO) tail() string {
	st, err := p.out.Stat()
	if err != nil {
		return ""
	}
	off := max(0, st.Size()-1024)
	b, _ := io.ReadAll(io.NewSectionReader(p.out, off, st.Size()-off))
	return string(bytes.TrimSpace(b))
}

// describeStatus says how a process ended, in strace's words.
func describeStatus(ws unix.WaitStatus) string {
	switch {
	case ws.Exited():
		return fmt.Sprintf("exited with %d", ws.ExitStatus())
	case ws.Signaled():
		return fmt.Sprintf("killed by %s", unix.SignalName(ws.Signal()))
	}
	return fmt.Sprintf("ended with wait status %#x", uint32(ws))
}
