package tracer

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Injection makes a stopped thread run one extra system call in its own
// context, then puts it back exactly as it was. It serves the seccomp
// filter install (the program's first instruction has not run yet) and
// the supervisor's inserted calls.

// inject runs call nr in p, which is in a ptrace stop, and returns the
// raw result (a negative errno on failure).
func (t *tracer) inject(p *tracee, nr int, args ...uint64) (int64, error) {
	var saved Regs
	if err := unix.PtraceGetRegs(p.tid, &saved.PtraceRegs); err != nil {
		return 0, fmt.Errorf("inject %s into %d: registers: %w", lookup(nr).name, p.tid, err)
	}
	r := saved
	for i := 0; i < 6; i++ {
		var v uint64
		if i < len(args) {
			v = args[i]
		}
		r.SetArg(i, v)
	}
	var ret int64
	var err error
	switch {
	case p.inSyscall && p.sc != nil && !p.sc.d.exiting:
		ret, err = t.injectAtEntry(p, &saved, &r, nr)
	default:
		ret, err = t.injectAnywhere(p, &saved, &r, nr)
	}
	if err != nil {
		return 0, fmt.Errorf("inject %s into %d: %w", lookup(nr).name, p.tid, err)
	}
	return ret, nil
}

// injectAnywhere runs the call from a stop outside a call (or at a
// call's exit): it points the thread at a syscall instruction, steps it
// through the call's entry and exit stops and restores everything.
func (t *tracer) injectAnywhere(p *tracee, saved, r *Regs, nr int) (int64, error) {
	var restoreText func() error
	if p.inSyscall || (r.Rip >= 2 && t.isSyscallInsn(p.tid, r.Rip-2)) {
		r.Rip -= 2
	} else {
		// No syscall instruction at hand: borrow the bytes at rip.
		addr := uintptr(r.Rip)
		var orig [8]byte
		if _, err := unix.PtracePeekText(p.tid, addr, orig[:]); err != nil {
			return 0, fmt.Errorf("peek text: %w", err)
		}
		patched := orig
		copy(patched[:], syscallInsn)
		if _, err := unix.PtracePokeText(p.tid, addr, patched[:]); err != nil {
			return 0, fmt.Errorf("poke text: %w", err)
		}
		restoreText = func() error {
			_, err := unix.PtracePokeText(p.tid, addr, orig[:])
			return err
		}
	}
	r.Rax = uint64(nr)
	r.Orig_rax = uint64(nr)
	ret, err := t.stepOver(p, r)
	if restoreText != nil {
		if rerr := restoreText(); rerr != nil && err == nil {
			err = fmt.Errorf("restore text: %w", rerr)
		}
	}
	if serr := unix.PtraceSetRegs(p.tid, &saved.PtraceRegs); serr != nil && err == nil {
		err = fmt.Errorf("restore registers: %w", serr)
	}
	return ret, err
}

// injectAtEntry swaps the call about to run for the injected one, then
// rewinds the thread so that it enters its own call again.
func (t *tracer) injectAtEntry(p *tracee, saved, r *Regs, nr int) (int64, error) {
	r.Orig_rax = uint64(nr)
	if err := unix.PtraceSetRegs(p.tid, &r.PtraceRegs); err != nil {
		return 0, fmt.Errorf("set registers: %w", err)
	}
	ret, err := t.waitExit(p)
	if err != nil {
		return 0, err
	}
	back := *saved
	back.Rip -= 2
	back.Rax = saved.Orig_rax
	if err := unix.PtraceSetRegs(p.tid, &back.PtraceRegs); err != nil {
		return 0, fmt.Errorf("rewind: %w", err)
	}
	// Run up to the original call's entry stop again.
	req := unix.PTRACE_SYSCALL
	if t.seccomp {
		req = unix.PTRACE_CONT
	}
	if err := ptraceRestart(req, p.tid, 0); err != nil {
		return 0, err
	}
	for {
		var ws unix.WaitStatus
		if _, err := t.spin.wait4(p.tid, &ws); err != nil {
			return 0, err
		}
		if !ws.Stopped() {
			return 0, fmt.Errorf("thread ended during injection (%s)", describeStatus(ws))
		}
		if ws.StopSignal() == unix.SIGTRAP|0x80 || ws.TrapCause() == unix.PTRACE_EVENT_SECCOMP {
			break
		}
		if err := ptraceRestart(req, p.tid, 0); err != nil {
			return 0, err
		}
	}
	if err := unix.PtraceSetRegs(p.tid, &saved.PtraceRegs); err != nil {
		return ret, fmt.Errorf("restore registers: %w", err)
	}
	return ret, nil
}

// stepOver sets r and single-steps the thread over the syscall
// instruction at r.Rip: one stop after the call returns, where stopping
// at its entry and again at its exit would cost two round trips through
// the scheduler (a third of a millisecond on a small VM, paid by every
// recording that installs its seccomp filter this way).
func (t *tracer) stepOver(p *tracee, r *Regs) (int64, error) {
	if err := unix.PtraceSetRegs(p.tid, &r.PtraceRegs); err != nil {
		return 0, fmt.Errorf("set registers: %w", err)
	}
	for {
		if err := ptraceRestart(unix.PTRACE_SINGLESTEP, p.tid, 0); err != nil {
			return 0, err
		}
		var ws unix.WaitStatus
		if _, err := t.spin.wait4(p.tid, &ws); err != nil {
			return 0, err
		}
		if !ws.Stopped() {
			return 0, fmt.Errorf("thread ended during injection (%s)", describeStatus(ws))
		}
		if ws.StopSignal() == unix.SIGTRAP && ws.TrapCause() == 0 {
			break // the step is done
		}
		// A seccomp stop for the injected call, or a signal that will
		// be raised again: keep stepping.
	}
	var after Regs
	if err := unix.PtraceGetRegs(p.tid, &after.PtraceRegs); err != nil {
		return 0, fmt.Errorf("registers after the call: %w", err)
	}
	return after.Ret(), nil
}

// waitExit runs a thread from a call's entry to its exit stop and
// returns the call's result.
func (t *tracer) waitExit(p *tracee) (int64, error) {
	if err := ptraceRestart(unix.PTRACE_SYSCALL, p.tid, 0); err != nil {
		return 0, err
	}
	for {
		var ws unix.WaitStatus
		if _, err := t.spin.wait4(p.tid, &ws); err != nil {
			return 0, err
		}
		if !ws.Stopped() {
			return 0, fmt.Errorf("thread ended during injection (%s)", describeStatus(ws))
		}
		if ws.StopSignal() == unix.SIGTRAP|0x80 {
			break
		}
		if err := ptraceRestart(unix.PTRACE_SYSCALL, p.tid, 0); err != nil {
			return 0, err
		}
	}
	var r Regs
	if err := unix.PtraceGetRegs(p.tid, &r.PtraceRegs); err != nil {
		return 0, fmt.Errorf("registers after the call: %w", err)
	}
	return r.Ret(), nil
}

func (t *tracer) isSyscallInsn(tid int, addr uint64) bool {
	var b [2]byte
	if _, err := readMem(tid, addr, b[:]); err != nil {
		return false
	}
	return b[0] == syscallInsn[0] && b[1] == syscallInsn[1]
}
