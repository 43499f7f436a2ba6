package tracer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"

	"github.com/faultline/faultline/parser"
	"golang.org/x/sys/unix"
)

// tracee is one traced thread.
type tracee struct {
	tid, tgid int
	inSyscall bool
	seen      bool // its first stop was handled
	attached  bool // attached with -p: the first syscall stop may be an exit
	sc        *scall
}

// tracer is the state of one recording; only the locked thread touches it,
// except live, which the canceller reads.
type tracer struct {
	c       *Cmd
	w       *bufio.Writer
	decode  bool
	procs   map[int]*tracee
	cur     *tracee // whose line is open (printed up to its entry half)
	root    int
	seccomp bool
	opts    int
	prefix  bool

	spin spinner // how the loop waits for the next stop

	rootStatus unix.WaitStatus
	lines      *lineCapture // with Cmd.Completed: what was written since the last call

	mu        sync.Mutex
	live      map[int]bool
	cancelled bool
}

func newTracer(c *Cmd) *tracer {
	t := &tracer{c: c, procs: map[int]*tracee{}, live: map[int]bool{}}
	if c.Output != nil {
		out := c.Output
		if c.Completed != nil {
			t.lines = &lineCapture{w: c.Output}
			out = t.lines
		}
		t.w = bufio.NewWriterSize(out, 64<<10)
		t.decode = true
	}
	t.prefix = c.Follow
	t.opts = unix.PTRACE_O_TRACESYSGOOD | unix.PTRACE_O_EXITKILL | unix.PTRACE_O_TRACEEXEC
	if c.Follow {
		t.opts |= unix.PTRACE_O_TRACECLONE | unix.PTRACE_O_TRACEFORK | unix.PTRACE_O_TRACEVFORK
	}
	t.seccomp = c.Filter != nil && !c.NoSeccomp && c.Pid == 0
	if t.seccomp {
		t.opts |= unix.PTRACE_O_TRACESECCOMP
	}
	return t
}

// start forks the program with PTRACE_TRACEME (or seizes -p PID) and
// brings the first tracee to its first stop.
func (t *tracer) start() error {
	if t.c.Tool != "" && t.w != nil {
		for _, l := range HeaderLines(t.c, t.c.Tool) {
			parser.Fprint(t.w, l)
		}
	}
	if t.c.Pid != 0 {
		return t.attach()
	}
	if t.c.Prepare != nil {
		if err := t.c.Prepare(); err != nil {
			return fmt.Errorf("start %s: prepare: %w", t.c.Path, err)
		}
	}
	onlyStdio()
	files := []uintptr{0, 1, 2}
	for i, f := range []*os.File{t.c.Stdin, t.c.Stdout, t.c.Stderr} {
		if f != nil {
			files[i] = f.Fd()
		}
	}
	pid, err := syscall.ForkExec(t.c.Path, t.c.Args, &syscall.ProcAttr{
		Dir:   t.c.Dir,
		Env:   t.c.Env,
		Files: files,
		Sys:   &syscall.SysProcAttr{Ptrace: true, Credential: t.c.Credential},
	})
	if err != nil {
		return fmt.Errorf("start %s: %w", t.c.Path, err)
	}
	t.root = pid
	t.addLive(pid)
	// The child stops with SIGTRAP right after its execve succeeded.
	var ws unix.WaitStatus
	if _, err := t.spin.wait4(pid, &ws); err != nil {
		return fmt.Errorf("start %s: wait for pid %d: %w", t.c.Path, pid, err)
	}
	if !ws.Stopped() {
		t.delLive(pid)
		return fmt.Errorf("start %s: pid %d did not stop after execve (%v)", t.c.Path, pid, describeStatus(ws))
	}
	if err := unix.PtraceSetOptions(pid, t.opts); err != nil {
		unix.Kill(pid, unix.SIGKILL)
		return fmt.Errorf("start %s: set ptrace options on pid %d: %w", t.c.Path, pid, err)
	}
	p := &tracee{tid: pid, tgid: pid, seen: true}
	t.procs[pid] = p
	if t.c.Hooks.NewThread != nil {
		t.c.Hooks.NewThread(pid, 0)
	}
	if t.seccomp {
		if err := t.installSeccomp(p); err != nil {
			unix.Kill(pid, unix.SIGKILL)
			return fmt.Errorf("start %s: %w", t.c.Path, err)
		}
	}
	t.initialExec(p)
	return t.resume(p, 0)
}

// attach seizes every thread of -p PID (all of them with -f) and
// interrupts them so the loop starts from a known stop.
func (t *tracer) attach() error {
	pid := t.c.Pid
	tids := []int{pid}
	if t.c.Follow {
		if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid)); err == nil {
			tids = tids[:0]
			for _, e := range ents {
				if n, err := strconv.Atoi(e.Name()); err == nil {
					tids = append(tids, n)
				}
			}
		}
	}
	opts := t.opts &^ unix.PTRACE_O_EXITKILL // an attached program must survive us
	t.opts = opts
	for _, tid := range tids {
		if _, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_SEIZE, uintptr(tid), 0, uintptr(opts), 0, 0); e != 0 {
			for _, p := range t.procs {
				unix.PtraceDetach(p.tid)
			}
			return fmt.Errorf("attach to pid %d: %w", tid, e)
		}
		if err := unix.PtraceInterrupt(tid); err != nil {
			return fmt.Errorf("attach to pid %d: interrupt: %w", tid, err)
		}
		t.procs[tid] = &tracee{tid: tid, tgid: pid, attached: true}
		t.addLive(tid)
		t.info(fmt.Sprintf("Process %d attached", tid))
	}
	t.root = pid
	t.prefix = t.c.Follow || len(tids) > 1
	return nil
}

// run is the event loop: one wait4 per stop, one restart per stop.
func (t *tracer) run(ctx context.Context) error {
	stopWatch := context.AfterFunc(ctx, t.cancel)
	defer stopWatch()
	var firstErr error
	for len(t.procs) > 0 {
		var ws unix.WaitStatus
		tid, err := t.spin.wait4(-1, &ws)
		if err != nil {
			if errors.Is(err, unix.ECHILD) {
				break
			}
			firstErr = fmt.Errorf("wait for tracees: %w", err)
			break
		}
		if err := t.event(tid, ws); err != nil && firstErr == nil && !errors.Is(err, unix.ESRCH) {
			firstErr = err
		}
	}
	t.closeOpen()
	if t.w != nil {
		if err := t.w.Flush(); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("write trace: %w", err)
		}
	}
	if firstErr == nil && ctx.Err() != nil {
		firstErr = fmt.Errorf("recording interrupted: %w", context.Cause(ctx))
	}
	return firstErr
}

// event handles one wait status of one thread.
func (t *tracer) event(tid int, ws unix.WaitStatus) error {
	p := t.procs[tid]
	if p == nil {
		// A new thread's first stop can come before its parent's fork
		// event: adopt it now, the parent's event will find it.
		p = &tracee{tid: tid, tgid: tid}
		t.procs[tid] = p
		t.addLive(tid)
	}
	switch {
	case ws.Exited() || ws.Signaled():
		t.exited(p, ws)
		return nil
	case !ws.Stopped():
		return nil
	}
	sig := ws.StopSignal()
	switch {
	case sig == unix.SIGTRAP|0x80:
		return t.syscallStop(p)
	case sig == unix.SIGTRAP && ws.TrapCause() > 0:
		return t.eventStop(p, ws.TrapCause())
	case ws.TrapCause() == unix.PTRACE_EVENT_STOP:
		return t.eventStop(p, unix.PTRACE_EVENT_STOP)
	case !p.seen && sig == unix.SIGSTOP:
		// The SIGSTOP an auto-attached child starts with.
		p.seen = true
		t.killIfCancelled(p)
		return t.resume(p, 0)
	}
	return t.signalStop(p, sig)
}

func (t *tracer) syscallStop(p *tracee) error {
	if !p.inSyscall {
		var r Regs
		if err := ptraceGetRegs(p.tid, &r); err != nil {
			return fmt.Errorf("registers of %d: %w", p.tid, err)
		}
		if p.attached && !p.seen && r.Ret() != enosys {
			// Attached in the middle of a call: this is its exit.
			p.seen = true
			return t.resume(p, 0)
		}
		p.seen = true
		p.inSyscall = true
		t.enter(p, &r)
		return t.resume(p, 0)
	}
	p.inSyscall = false
	t.exit(p)
	if t.lines != nil {
		t.completed(p)
	}
	return t.resume(p, 0)
}

// lineCapture sits between the tracer's buffer and Output when the
// caller wants each completed line: it counts lines and keeps the text
// written since the last call completed.
type lineCapture struct {
	w     io.Writer
	n     int    // complete lines written
	since []byte // text since the last completed call
}

func (c *lineCapture) Write(b []byte) (int, error) {
	c.since = append(c.since, b...)
	return c.w.Write(b)
}

// completed flushes the call's line through the capture and hands it to
// Cmd.Completed: the last line written is the call's own (the lines
// before it, if any, are other threads' halves closed to make room).
func (t *tracer) completed(p *tracee) {
	if err := t.w.Flush(); err != nil {
		return
	}
	c := t.lines
	text := c.since
	c.since = c.since[:0]
	if len(text) == 0 {
		return
	}
	nl := bytes.Count(text, []byte{'\n'})
	c.n += nl
	body := bytes.TrimSuffix(text, []byte{'\n'})
	if i := bytes.LastIndexByte(body, '\n'); i >= 0 {
		body = body[i+1:]
	}
	l, err := parser.ParseLine("", c.n, string(body))
	if err != nil {
		return
	}
	t.c.Completed(p.tid, l, c.n)
}

func (t *tracer) eventStop(p *tracee, ev int) error {
	switch ev {
	case unix.PTRACE_EVENT_SECCOMP:
		var r Regs
		if err := ptraceGetRegs(p.tid, &r); err != nil {
			return fmt.Errorf("registers of %d: %w", p.tid, err)
		}
		p.seen = true
		p.inSyscall = true
		t.enter(p, &r)
		// Stop again at this call's exit only.
		return ptraceRestart(unix.PTRACE_SYSCALL, p.tid, 0)
	case unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_VFORK, unix.PTRACE_EVENT_CLONE:
		msg, err := unix.PtraceGetEventMsg(p.tid)
		if err == nil {
			child := int(msg)
			c := t.procs[child]
			if c == nil {
				c = &tracee{tid: child, tgid: child}
				t.procs[child] = c
				t.addLive(child)
			}
			if ev == unix.PTRACE_EVENT_CLONE && p.sc != nil && p.sc.cloneThread() {
				c.tgid = p.tgid
			}
			if len(t.procs) > 1 {
				t.prefix = true
			}
			if t.c.Hooks.NewThread != nil {
				t.c.Hooks.NewThread(child, p.tid)
			}
		}
	case unix.PTRACE_EVENT_EXEC:
		// A non-leader thread that execs takes over the leader's tid.
		if msg, err := unix.PtraceGetEventMsg(p.tid); err == nil && int(msg) != p.tid {
			if old := t.procs[int(msg)]; old != nil {
				old.tid = p.tid
				if t.cur == old {
					t.cur = old
				}
				delete(t.procs, int(msg))
				t.delLive(int(msg))
				t.procs[p.tid] = old
				p = old
			}
		}
	case unix.PTRACE_EVENT_STOP:
		if !p.seen {
			p.seen = true
			return t.resume(p, 0)
		}
		// A group stop of a seized thread: report it, then listen.
		if st := p.stopSig(); st != 0 {
			t.emit(p, &parser.Signal{Stopped: true, Name: signalName(st)})
			return ptraceRestart(unix.PTRACE_LISTEN, p.tid, 0)
		}
	}
	return t.resume(p, 0)
}

// stopSig is the signal of a PTRACE_EVENT_STOP that is a group stop, or 0.
func (p *tracee) stopSig() unix.Signal {
	var si siginfo
	if err := getSiginfo(p.tid, &si); err != nil {
		return 0
	}
	switch unix.Signal(si.Signo) {
	case unix.SIGSTOP, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU:
		return unix.Signal(si.Signo)
	}
	return 0
}

func (t *tracer) signalStop(p *tracee, sig unix.Signal) error {
	var si siginfo
	if err := getSiginfo(p.tid, &si); err != nil {
		// No siginfo: a group stop of a thread traced without SEIZE.
		t.emit(p, &parser.Signal{Stopped: true, Name: signalName(sig)})
		return t.resume(p, 0)
	}
	if t.isCancelled() && t.c.Pid != 0 {
		// The wake-up signal sent by cancel: swallow it and detach.
		t.detachAll()
		return nil
	}
	if t.decode {
		t.emit(p, &parser.Signal{Name: signalName(sig), Info: t.siginfoStruct(&si)})
	}
	deliver := sig
	if t.c.Hooks.Signal != nil {
		deliver = t.c.Hooks.Signal(&Stop{Tid: p.tid, Tgid: p.tgid, t: t, p: p}, sig)
	}
	return t.resume(p, deliver)
}

// exited prints a thread's end and forgets it.
func (t *tracer) exited(p *tracee, ws unix.WaitStatus) {
	if p.inSyscall && p.sc != nil {
		t.unknownResult(p)
	}
	var e parser.Exit
	switch {
	case ws.Signaled():
		e.KilledBy = signalName(ws.Signal())
		e.CoreDumped = ws.CoreDump()
	default:
		e.Status = strconv.Itoa(ws.ExitStatus())
	}
	if t.decode {
		t.emit(p, &e)
	}
	if p.tid == t.root {
		t.rootStatus = ws
	}
	if t.c.Hooks.Exited != nil {
		t.c.Hooks.Exited(p.tid, ws)
	}
	delete(t.procs, p.tid)
	t.delLive(p.tid)
	if t.cur == p {
		t.cur = nil
	}
}

// resume restarts a thread after a stop, with PTRACE_SYSCALL, or with
// PTRACE_CONT when the seccomp filter decides which calls stop.
func (t *tracer) resume(p *tracee, sig unix.Signal) error {
	req := unix.PTRACE_SYSCALL
	if t.seccomp && !p.inSyscall {
		req = unix.PTRACE_CONT
	}
	return ptraceRestart(req, p.tid, int(sig))
}

func ptraceRestart(req, tid, sig int) error {
	if _, _, e := unix.RawSyscall6(unix.SYS_PTRACE, uintptr(req), uintptr(tid), 0, uintptr(sig), 0, 0); e != 0 {
		if e == unix.ESRCH {
			// Killed while stopped (SIGKILL, exit_group of a sibling):
			// its exit status is on its way.
			return nil
		}
		return fmt.Errorf("restart %d: %w", tid, e)
	}
	return nil
}

func describeStatus(ws unix.WaitStatus) string {
	switch {
	case ws.Exited():
		return fmt.Sprintf("exited with %d", ws.ExitStatus())
	case ws.Signaled():
		return "killed by " + signalName(ws.Signal())
	}
	return fmt.Sprintf("status %#x", uint32(ws))
}

// Cancellation: the canceller runs on its own goroutine, so it only
// sends signals (kill(2) needs no ptrace relationship); the loop then
// sees the tracees die, or, for an attached program, sees the wake-up
// signal and detaches from the tracing thread.

func (t *tracer) addLive(tid int) {
	t.mu.Lock()
	t.live[tid] = true
	cancelled := t.cancelled
	t.mu.Unlock()
	if cancelled && t.c.Pid == 0 {
		unix.Kill(tid, unix.SIGKILL)
	}
}

func (t *tracer) delLive(tid int) {
	t.mu.Lock()
	delete(t.live, tid)
	t.mu.Unlock()
}

func (t *tracer) isCancelled() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cancelled
}

func (t *tracer) killIfCancelled(p *tracee) {
	if t.isCancelled() && t.c.Pid == 0 {
		unix.Kill(p.tid, unix.SIGKILL)
	}
}

func (t *tracer) cancel() {
	t.mu.Lock()
	t.cancelled = true
	tids := make([]int, 0, len(t.live))
	for tid := range t.live {
		tids = append(tids, tid)
	}
	t.mu.Unlock()
	if t.c.Pid != 0 {
		// One harmless signal wakes the loop; it detaches from there.
		unix.Tgkill(t.c.Pid, t.c.Pid, unix.SIGCHLD)
		return
	}
	for _, tid := range tids {
		unix.Kill(tid, unix.SIGKILL)
	}
}

// detachAll lets go of every attached thread: each is interrupted into a
// stop, and detached from it.
func (t *tracer) detachAll() {
	for tid, p := range t.procs {
		if p.inSyscall && p.sc != nil {
			t.closeOpen()
		}
		if err := unix.PtraceDetach(tid); err != nil {
			unix.PtraceInterrupt(tid)
			var ws unix.WaitStatus
			if _, err := t.spin.wait4(tid, &ws); err == nil && ws.Stopped() {
				unix.PtraceDetach(tid)
			}
		}
		t.info(fmt.Sprintf("Process %d detached", tid))
		delete(t.procs, tid)
		t.delLive(tid)
	}
	t.cur = nil
}

func (t *tracer) info(s string) {
	if t.c.Log != nil {
		fmt.Fprintf(t.c.Log, "faultline: %s\n", s)
	}
}
