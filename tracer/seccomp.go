package tracer

import (
	"encoding/binary"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"
)

// With a trace filter, a seccomp-bpf program in the tracee decides which
// calls stop it (SECCOMP_RET_TRACE) and lets the others run at full speed
// (SECCOMP_RET_ALLOW), as strace --seccomp-bpf does. It is installed by
// injecting prctl and seccomp calls at the first stop after the initial
// execve, before the program's first instruction, and is inherited by
// every child.

type bpfInsn struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

const (
	bpfLdAbsW = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeqK   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJgeK   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfRetK   = unix.BPF_RET | unix.BPF_K

	seccompRetAllow = 0x7fff0000
	seccompRetTrace = 0x7ff00000
)

// seccompProgram lists the calls that stop (or, when that is shorter, the
// others), each as "jeq nr; ret verdict": the traced ones, and also those
// the tracer must see without printing them (sync with Cmd.SyncDir).
func seccompProgram(f *Filter, also ...int) []bpfInsn {
	stops := func(nr int) bool { return f.Has(nr) || slices.Contains(also, nr) }
	var traced []int
	for nr := range sysNames {
		if stops(nr) {
			traced = append(traced, nr)
		}
	}
	list, hit, miss := traced, uint32(seccompRetTrace), uint32(seccompRetAllow)
	if len(traced) > len(sysNames)/2 {
		var untraced []int
		for nr := range sysNames {
			if !stops(nr) {
				untraced = append(untraced, nr)
			}
		}
		list, hit, miss = untraced, seccompRetAllow, seccompRetTrace
	}
	prog := []bpfInsn{
		{code: bpfLdAbsW, k: 4}, // seccomp_data.arch
		{code: bpfJeqK, jt: 1, k: auditArch},
		{code: bpfRetK, k: seccompRetTrace}, // other personalities: trace all
		{code: bpfLdAbsW, k: 0},             // seccomp_data.nr
		{code: bpfJgeK, jt: 0, jf: 1, k: 0x40000000},
		{code: bpfRetK, k: seccompRetTrace}, // x32
	}
	for _, nr := range list {
		prog = append(prog, bpfInsn{code: bpfJeqK, jt: 0, jf: 1, k: uint32(nr)}, bpfInsn{code: bpfRetK, k: hit})
	}
	return append(prog, bpfInsn{code: bpfRetK, k: miss})
}

// installSeccomp loads the filter into p, which must be stopped before
// running any of the program's code.
func (t *tracer) installSeccomp(p *tracee) error {
	var also []int
	if t.c.SyncDir != "" {
		also = append(also, unix.SYS_SYNC)
	}
	prog := seccompProgram(t.c.Filter, also...)
	var regs Regs
	if err := unix.PtraceGetRegs(p.tid, &regs.PtraceRegs); err != nil {
		return fmt.Errorf("seccomp: registers: %w", err)
	}
	// The filter and its sock_fprog go below the red zone of the stack.
	code := make([]byte, 8*len(prog))
	for i, in := range prog {
		binary.LittleEndian.PutUint16(code[8*i:], in.code)
		code[8*i+2] = in.jt
		code[8*i+3] = in.jf
		binary.LittleEndian.PutUint32(code[8*i+4:], in.k)
	}
	base := (regs.Rsp - 128 - uint64(len(code)) - 16) &^ 15
	fprog := make([]byte, 16)
	binary.LittleEndian.PutUint16(fprog, uint16(len(prog)))
	binary.LittleEndian.PutUint64(fprog[8:], base+16)
	if err := writeMem(p.tid, base, append(fprog, code...)); err != nil {
		return fmt.Errorf("seccomp: write filter: %w", err)
	}
	ret, err := t.inject(p, unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, base)
	if err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	if ret == -int64(unix.EACCES) {
		// Without CAP_SYS_ADMIN the kernel wants no_new_privs first.
		if r, err := t.inject(p, unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil || r != 0 {
			return fmt.Errorf("seccomp: prctl(PR_SET_NO_NEW_PRIVS): %d %v", r, err)
		}
		ret, err = t.inject(p, unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, base)
		if err != nil {
			return fmt.Errorf("seccomp: %w", err)
		}
	}
	if ret != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", unix.Errno(-ret))
	}
	return nil
}
