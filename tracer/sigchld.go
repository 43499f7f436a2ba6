package tracer

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Every ptrace stop of every tracee sends SIGCHLD to the tracer. The Go
// runtime installs a handler for SIGCHLD (so os/signal could relay it),
// which makes each stop cost a signal delivery, a handler run and a
// sigreturn on some thread of ours: measurably more kernel time than the
// tracing itself saves. With the default disposition the kernel drops
// the signal when it is generated, as it does for strace. Nothing in
// faultline waits for SIGCHLD (children are reaped with wait4), so the
// tracer sets SIG_DFL once, process-wide.
var defaultSigchld sync.Once

func restoreDefaultSigchld() {
	defaultSigchld.Do(func() {
		var sa struct {
			handler  uintptr
			flags    uint64
			restorer uintptr
			mask     uint64
		}
		// SIG_DFL is 0; the zero value is the default disposition.
		unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(unix.SIGCHLD), uintptr(unsafe.Pointer(&sa)), 0, 8, 0, 0)
	})
}
