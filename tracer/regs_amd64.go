package tracer

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Regs is a stopped thread's general registers, with the syscall view
// of them for x86-64: number in orig_rax, arguments in rdi, rsi, rdx, r10,
// r8, r9, result in rax.
type Regs struct {
	unix.PtraceRegs
}

// Nr is the syscall number (-1 when a hook skipped the call).
func (r *Regs) Nr() int { return int(int64(r.Orig_rax)) }

// SetNr replaces the syscall number; -1 makes the kernel skip the call
// and return -ENOSYS unless the result is set at exit.
func (r *Regs) SetNr(nr int) { r.Orig_rax = uint64(int64(nr)) }

// Arg is argument i (0-5).
func (r *Regs) Arg(i int) uint64 {
	switch i {
	case 0:
		return r.Rdi
	case 1:
		return r.Rsi
	case 2:
		return r.Rdx
	case 3:
		return r.R10
	case 4:
		return r.R8
	case 5:
		return r.R9
	}
	return 0
}

// SetArg replaces argument i (0-5).
func (r *Regs) SetArg(i int, v uint64) {
	switch i {
	case 0:
		r.Rdi = v
	case 1:
		r.Rsi = v
	case 2:
		r.Rdx = v
	case 3:
		r.R10 = v
	case 4:
		r.R8 = v
	case 5:
		r.R9 = v
	}
}

// Args is all six argument registers.
func (r *Regs) Args() [6]uint64 {
	return [6]uint64{r.Rdi, r.Rsi, r.Rdx, r.R10, r.R8, r.R9}
}

// Ret is the return value at syscall exit (a negative errno on failure).
func (r *Regs) Ret() int64 { return int64(r.Rax) }

// SetRet replaces the return value.
func (r *Regs) SetRet(v int64) { r.Rax = uint64(v) }

// PC is the instruction pointer; SP the stack pointer.
func (r *Regs) PC() uint64 { return r.Rip }
func (r *Regs) SP() uint64 { return r.Rsp }

// syscallInsn is x86-64's "syscall" instruction, used to inject calls.
var syscallInsn = []byte{0x0f, 0x05}

// auditArch is the seccomp_data.arch of native calls.
const auditArch = 0xc000003e // AUDIT_ARCH_X86_64

// enosys is what rax holds at syscall entry on x86-64.
const enosys = -int64(unix.ENOSYS)

// ptraceGetRegs is PTRACE_GETREGS without the scheduler hand-off of
// unix.Syscall: it never blocks, and it runs twice per traced call.
func ptraceGetRegs(tid int, r *Regs) error {
	_, _, e := unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_GETREGS, uintptr(tid), 0, uintptr(unsafe.Pointer(&r.PtraceRegs)), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
