package tracer

import (
	"math/bits"
	"strconv"
	"unsafe"

	"github.com/faultline/faultline/parser"
	"golang.org/x/sys/unix"
)

// Signals: names, masks, sigaction and siginfo as strace prints them.

var sigNames = [...]string{"0", "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS", "SIGFPE",
	"SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM", "SIGSTKFLT", "SIGCHLD",
	"SIGCONT", "SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGXCPU", "SIGXFSZ", "SIGVTALRM",
	"SIGPROF", "SIGWINCH", "SIGIO", "SIGPWR", "SIGSYS"}

// signalName is SIGCHLD, SIGRTMIN, SIGRT_3, or the number.
func signalName(s unix.Signal) string {
	switch {
	case s >= 0 && int(s) < len(sigNames):
		return sigNames[s]
	case s == 32:
		return "SIGRTMIN"
	case s > 32 && s <= 64:
		return "SIGRT_" + strconv.Itoa(int(s)-32)
	}
	return strconv.Itoa(int(s))
}

var kSignal = kind{in: func(d *dec, i int) *parser.Arg { return pos(sigExpr(d.int32(i))) }}

func sigExpr(v int64) *parser.Expr {
	if v > 0 && v <= 64 {
		return parser.Sym(signalName(unix.Signal(v)))
	}
	return parser.Dec(v)
}

// sigset prints a mask as [HUP INT], or as ~[...] of the signals it
// lacks when at least half are set.
func sigset(mask uint64, size int) *parser.Expr {
	nbits := size * 8
	if nbits > 64 {
		nbits = 64
	}
	if nbits < 64 {
		mask &= 1<<uint(nbits) - 1
	}
	not := false
	if bits.OnesCount64(mask) >= nbits/2 {
		not = true
		mask = ^mask
		if nbits < 64 {
			mask &= 1<<uint(nbits) - 1
		}
	}
	var names []string
	for s := 1; s <= nbits; s++ {
		if mask&(1<<uint(s-1)) != 0 {
			n := signalName(unix.Signal(s))
			if len(n) > 3 && n[:3] == "SIG" {
				n = n[3:]
			}
			names = append(names, n)
		}
	}
	return parser.NewBitSet(not, names...)
}

func (d *dec) sigset(addr uint64, size uint64) *parser.Expr {
	if addr == 0 {
		return parser.Null()
	}
	if size == 0 || size > 128 {
		return parser.Hex(addr)
	}
	b := make([]byte, size)
	if readFull(d.pid, addr, b) != nil {
		return parser.Hex(addr)
	}
	var m uint64
	for i := 0; i < len(b) && i < 8; i++ {
		m |= uint64(b[i]) << (8 * i)
	}
	return sigset(m, int(size))
}

var (
	// kSigsetIn / kSigsetOut: a mask sized by the last argument.
	kSigsetIn  = kind{in: func(d *dec, i int) *parser.Arg { return pos(d.sigset(d.arg(i), d.arg(d.sigsizeArg()))) }}
	kSigsetOut = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
		if d.failed() {
			return pos(ptr(d.arg(i)))
		}
		return pos(d.sigset(d.arg(i), d.arg(d.sigsizeArg())))
	}}
	kSigHow = enumKind(enum{0: "SIG_BLOCK", 1: "SIG_UNBLOCK", 2: "SIG_SETMASK"}, "SIG_???")
)

// sigsizeArg is the argument holding sizeof(sigset_t).
func (d *dec) sigsizeArg() int {
	switch d.name {
	case "rt_sigprocmask", "rt_sigaction":
		return 3
	case "rt_sigpending", "rt_sigsuspend":
		return 1
	case "rt_sigtimedwait":
		return 3
	}
	return 3
}

var saFlags = flagSet{{0x04000000, "SA_RESTORER"}, {0x08000000, "SA_ONSTACK"}, {0x10000000, "SA_RESTART"},
	{0x20000000, "SA_INTERRUPT"}, {0x40000000, "SA_NODEFER"}, {0x80000000, "SA_RESETHAND"}, {4, "SA_SIGINFO"},
	{1, "SA_NOCLDSTOP"}, {2, "SA_NOCLDWAIT"}, {0x400, "SA_UNSUPPORTED"}, {0x800, "SA_EXPOSE_TAGBITS"}}

type kSigaction struct{ Handler, Flags, Restorer, Mask uint64 }

func (d *dec) sigaction(addr uint64) *parser.Expr {
	if addr == 0 {
		return parser.Null()
	}
	var sa kSigaction
	if readStruct(d.pid, addr, &sa) != nil {
		return parser.Hex(addr)
	}
	var h *parser.Expr
	switch sa.Handler {
	case 0:
		h = parser.Sym("SIG_DFL")
	case 1:
		h = parser.Sym("SIG_IGN")
	default:
		h = parser.Hex(sa.Handler)
	}
	f := []*parser.Arg{
		parser.Field("sa_handler", h),
		parser.Field("sa_mask", sigset(sa.Mask, 8)),
		parser.Field("sa_flags", saFlags.expr(sa.Flags, "")),
	}
	if sa.Flags&0x04000000 != 0 {
		f = append(f, parser.Field("sa_restorer", parser.Hex(sa.Restorer)))
	}
	return parser.NewStruct(f...)
}

var (
	kSigactionIn  = kind{in: func(d *dec, i int) *parser.Arg { return pos(d.sigaction(d.arg(i))) }}
	kSigactionOut = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
		if d.failed() {
			return pos(ptr(d.arg(i)))
		}
		return pos(d.sigaction(d.arg(i)))
	}}
)

// siginfo is the kernel's siginfo_t (128 bytes).
type siginfo struct {
	Signo, Errno, Code int32
	_                  int32
	Fields             [112]byte
}

func getSiginfo(tid int, si *siginfo) error {
	_, _, e := unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_GETSIGINFO, uintptr(tid), 0, uintptr(unsafe.Pointer(si)), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

var siCodes = map[int32]string{0: "SI_USER", 0x80: "SI_KERNEL", -1: "SI_QUEUE", -2: "SI_TIMER", -3: "SI_MESGQ",
	-4: "SI_ASYNCIO", -5: "SI_SIGIO", -6: "SI_TKILL", -7: "SI_DETHREAD", -60: "SI_ASYNCNL"}

var sigCodes = map[unix.Signal]map[int32]string{
	unix.SIGCHLD: {1: "CLD_EXITED", 2: "CLD_KILLED", 3: "CLD_DUMPED", 4: "CLD_TRAPPED", 5: "CLD_STOPPED", 6: "CLD_CONTINUED"},
	unix.SIGSEGV: {1: "SEGV_MAPERR", 2: "SEGV_ACCERR", 3: "SEGV_BNDERR", 4: "SEGV_PKUERR"},
	unix.SIGBUS:  {1: "BUS_ADRALN", 2: "BUS_ADRERR", 3: "BUS_OBJERR", 4: "BUS_MCEERR_AR", 5: "BUS_MCEERR_AO"},
	unix.SIGILL:  {1: "ILL_ILLOPC", 2: "ILL_ILLOPN", 3: "ILL_ILLADR", 4: "ILL_ILLTRP", 5: "ILL_PRVOPC", 6: "ILL_PRVREG", 7: "ILL_COPROC", 8: "ILL_BADSTK"},
	unix.SIGFPE:  {1: "FPE_INTDIV", 2: "FPE_INTOVF", 3: "FPE_FLTDIV", 4: "FPE_FLTOVF", 5: "FPE_FLTUND", 6: "FPE_FLTRES", 7: "FPE_FLTINV", 8: "FPE_FLTSUB"},
	unix.SIGTRAP: {1: "TRAP_BRKPT", 2: "TRAP_TRACE", 3: "TRAP_BRANCH", 4: "TRAP_HWBKPT"},
	unix.SIGSYS:  {1: "SYS_SECCOMP"},
}

// siginfoStruct prints {si_signo=SIGCHLD, si_code=CLD_EXITED, ...}.
func (t *tracer) siginfoStruct(si *siginfo) *parser.Struct {
	sig := unix.Signal(si.Signo)
	code := siCodes[si.Code]
	if si.Code > 0 && si.Code != 0x80 {
		code = sigCodes[sig][si.Code]
	}
	var codeExpr *parser.Expr
	if code == "" {
		codeExpr = parser.Dec(int64(si.Code))
	} else {
		codeExpr = parser.Sym(code)
	}
	f := []*parser.Arg{parser.Field("si_signo", parser.Sym(signalName(sig))), parser.Field("si_code", codeExpr)}
	b := si.Fields[:]
	i32 := func(off int) int64 { return int64(int32(le32(b[off:]))) }
	u32 := func(off int) uint64 { return uint64(le32(b[off:])) }
	switch {
	case si.Code <= 0 || si.Code == 0x80 && sig != unix.SIGSEGV:
		if si.Code == -2 { // SI_TIMER
			f = append(f, parser.Field("si_timerid", parser.Hex(u32(0))), parser.Field("si_overrun", parser.Dec(i32(4))),
				parser.Field("si_int", parser.Dec(i32(8))), parser.Field("si_ptr", parser.Hex(le64(b[8:]))))
			break
		}
		f = append(f, parser.Field("si_pid", parser.Dec(i32(0))), parser.Field("si_uid", parser.Udec(u32(4))))
		if si.Code == -1 {
			f = append(f, parser.Field("si_int", parser.Dec(i32(8))), parser.Field("si_ptr", parser.Hex(le64(b[8:]))))
		}
	case sig == unix.SIGCHLD:
		status := parser.Dec(i32(8))
		if si.Code == 2 || si.Code == 3 || si.Code == 5 || si.Code == 4 {
			status = sigExpr(i32(8))
		}
		f = append(f, parser.Field("si_pid", parser.Dec(i32(0))), parser.Field("si_uid", parser.Udec(u32(4))),
			parser.Field("si_status", status), parser.Field("si_utime", clockTicks(le64(b[16:]))),
			parser.Field("si_stime", clockTicks(le64(b[24:]))))
	case sig == unix.SIGSEGV || sig == unix.SIGBUS || sig == unix.SIGILL || sig == unix.SIGFPE || sig == unix.SIGTRAP:
		f = append(f, parser.Field("si_addr", ptr(le64(b[0:]))))
	case sig == unix.SIGSYS:
		f = append(f, parser.Field("si_call_addr", ptr(le64(b[0:]))), parser.Field("si_syscall", parser.Dec(i32(8))),
			parser.Field("si_arch", parser.Sym("AUDIT_ARCH_X86_64")))
	case sig == unix.SIGIO || sig == unix.SIGPOLL:
		f = append(f, parser.Field("si_band", parser.Dec(int64(le64(b[0:])))), parser.Field("si_fd", parser.Dec(i32(8))))
	}
	return &parser.Struct{Fields: f}
}
