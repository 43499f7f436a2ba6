package tracer

import (
	"sync/atomic"

	"github.com/faultline/faultline/parser"
)

// The x86-64 syscall table: for each call strace decodes the way
// faultline needs, its argument kinds in order and how its result
// prints. Names come from sysnames_amd64.go; a call missing here prints
// by name with raw hex arguments.

type sig struct {
	args []kind
	ret  func(d *dec) *parser.Result
}

func a(k ...kind) []kind { return k }

// signature is the table row for name. A switch rather than a map: the
// rows are built when a call is first decoded, so a recording pays for
// the calls its program makes, not for all of them at start-up.
func signature(name string) (sig, bool) {
	switch name {
	// Files and descriptors.
	case "open":
		return sig{a(kPath, kOpenFlags, kOpenMode), retFD}, true
	case "openat":
		return sig{a(kDirFD, kPath, kOpenFlags, kOpenMode), retFD}, true
	case "openat2":
		return sig{a(kDirFD, kPath, kOpenHow, kUlong), retFD}, true
	case "creat":
		return sig{a(kPath, kMode), retFD}, true
	case "close":
		return sig{a(kFD), nil}, true
	case "read":
		return sig{a(kFD, kBufOut, kUlongOut), nil}, true
	case "write":
		return sig{a(kFD, kBufIn, kUlong), nil}, true
	case "pread64":
		return sig{a(kFD, kBufOut, kUlongOut, kLongOut), nil}, true
	case "pwrite64":
		return sig{a(kFD, kBufIn, kUlong, kLong), nil}, true
	case "readv":
		return sig{a(kFD, kIovecOut, kIovcntOut), nil}, true
	case "writev":
		return sig{a(kFD, kIovecIn, kUlong), nil}, true
	case "preadv":
		return sig{a(kFD, kIovecOut, kIovcntOut, kLongOut), nil}, true
	case "pwritev":
		return sig{a(kFD, kIovecIn, kUlong, kLong), nil}, true
	case "preadv2":
		return sig{a(kFD, kIovecOut, kIovcntOut, kLongOut, kRWFFlagsOut), nil}, true
	case "pwritev2":
		return sig{a(kFD, kIovecIn, kUlong, kLong, kRWFFlags), nil}, true
	case "lseek":
		return sig{a(kFD, kLong, kWhence), nil}, true
	case "stat":
		return sig{a(kPath, kStatOut), nil}, true
	case "lstat":
		return sig{a(kPath, kStatOut), nil}, true
	case "fstat":
		return sig{a(kFD, kStatOut), nil}, true
	case "newfstatat":
		return sig{a(kDirFD, kPath, kStatOut, kAtFlagsOut), nil}, true
	case "statx":
		return sig{a(kDirFD, kPath, kStatxFlags, kStatxMask, kStatxOut), nil}, true
	case "access":
		return sig{a(kPath, kAccessMode), nil}, true
	case "faccessat":
		return sig{a(kDirFD, kPath, kAccessMode), nil}, true
	case "faccessat2":
		return sig{a(kDirFD, kPath, kAccessMode, kFaccessatFlags), nil}, true
	case "rename":
		return sig{a(kPath, kPath), nil}, true
	case "renameat":
		return sig{a(kDirFD, kPath, kDirFD, kPath), nil}, true
	case "renameat2":
		return sig{a(kDirFD, kPath, kDirFD, kPath, kRenameFlags), nil}, true
	case "link":
		return sig{a(kPath, kPath), nil}, true
	case "linkat":
		return sig{a(kDirFD, kPath, kDirFD, kPath, kAtFlags), nil}, true
	case "symlink":
		return sig{a(kPath, kPath), nil}, true
	case "symlinkat":
		return sig{a(kPath, kDirFD, kPath), nil}, true
	case "unlink":
		return sig{a(kPath), nil}, true
	case "unlinkat":
		return sig{a(kDirFD, kPath, kAtFlags), nil}, true
	case "mkdir":
		return sig{a(kPath, kMode), nil}, true
	case "mkdirat":
		return sig{a(kDirFD, kPath, kMode), nil}, true
	case "rmdir":
		return sig{a(kPath), nil}, true
	case "chmod":
		return sig{a(kPath, kMode), nil}, true
	case "fchmod":
		return sig{a(kFD, kMode), nil}, true
	case "fchmodat":
		return sig{a(kDirFD, kPath, kMode), nil}, true
	case "chown":
		return sig{a(kPath, kInt, kInt), nil}, true
	case "fchown":
		return sig{a(kFD, kInt, kInt), nil}, true
	case "lchown":
		return sig{a(kPath, kInt, kInt), nil}, true
	case "fchownat":
		return sig{a(kDirFD, kPath, kInt, kInt, kAtFlags), nil}, true
	case "utimensat":
		return sig{a(kDirFD, kPath, kUtimes, kAtFlags), nil}, true
	case "truncate":
		return sig{a(kPath, kLong), nil}, true
	case "ftruncate":
		return sig{a(kFD, kLong), nil}, true
	case "fallocate":
		return sig{a(kFD, kFallocMode, kLong, kLong), nil}, true
	case "fsync":
		return sig{a(kFD), nil}, true
	case "fdatasync":
		return sig{a(kFD), nil}, true
	case "sync":
		return sig{a(), nil}, true
	case "syncfs":
		return sig{a(kFD), nil}, true
	case "sync_file_range":
		return sig{a(kFD, kLong, kLong, kSyncRangeFlags), nil}, true
	case "getdents64":
		return sig{a(kFD, kDirents, kUintOut), nil}, true
	case "getdents":
		return sig{a(kFD, kDirents, kUintOut), nil}, true
	case "readlink":
		return sig{a(kPath, kPathOut, kUlongOut), nil}, true
	case "readlinkat":
		return sig{a(kDirFD, kPath, kPathOut, kUlongOut), nil}, true
	case "dup":
		return sig{a(kFD), retFD}, true
	case "dup2":
		return sig{a(kFD, kFD), retFD}, true
	case "dup3":
		return sig{a(kFD, kFD, kFdFlags), retFD}, true
	case "fcntl":
		return sig{a(kFD, kFcntlCmd, kFcntlArg), retFcntl}, true
	case "ioctl":
		return sig{a(kFD, kIoctlReq, kIoctlArg), nil}, true
	case "flock":
		return sig{a(kFD, kFlockOp), nil}, true
	case "copy_file_range":
		return sig{a(kFD, kOffsetIn, kFD, kOffsetIn, kUlong, kUint), nil}, true
	case "sendfile":
		return sig{a(kFD, kFD, kOffsetInOut, kUlong), nil}, true
	case "setxattr":
		return sig{a(kPath, kCStr, kXattrValIn, kUlong, kXattrFlags), nil}, true
	case "lsetxattr":
		return sig{a(kPath, kCStr, kXattrValIn, kUlong, kXattrFlags), nil}, true
	case "fsetxattr":
		return sig{a(kFD, kCStr, kXattrValIn, kUlong, kXattrFlags), nil}, true
	case "getxattr":
		return sig{a(kPath, kCStr, kXattrValOut, kUlongOut), nil}, true
	case "lgetxattr":
		return sig{a(kPath, kCStr, kXattrValOut, kUlongOut), nil}, true
	case "fgetxattr":
		return sig{a(kFD, kCStr, kXattrValOut, kUlongOut), nil}, true
	case "listxattr":
		return sig{a(kPath, kXattrListOut, kUlongOut), nil}, true
	case "llistxattr":
		return sig{a(kPath, kXattrListOut, kUlongOut), nil}, true
	case "flistxattr":
		return sig{a(kFD, kXattrListOut, kUlongOut), nil}, true
	case "removexattr":
		return sig{a(kPath, kCStr), nil}, true
	case "lremovexattr":
		return sig{a(kPath, kCStr), nil}, true
	case "fremovexattr":
		return sig{a(kFD, kCStr), nil}, true
	case "getcwd":
		return sig{a(kPathOut, kUlongOut), nil}, true
	case "chdir":
		return sig{a(kPath), nil}, true
	case "fchdir":
		return sig{a(kFD), nil}, true
	case "chroot":
		return sig{a(kPath), nil}, true
	case "umask":
		return sig{a(kMode), retOct}, true
	case "mknod":
		return sig{a(kPath, kSymMode, kDev), nil}, true
	case "mknodat":
		return sig{a(kDirFD, kPath, kSymMode, kDev), nil}, true
	case "statfs":
		return sig{a(kPath, kStatfsOut), nil}, true
	case "fstatfs":
		return sig{a(kFD, kStatfsOut), nil}, true
	case "pipe":
		return sig{a(kPipeFds), nil}, true
	case "pipe2":
		return sig{a(kPipeFds, kFdFlagsOut), nil}, true
	case "fadvise64":
		return sig{a(kFD, kLong, kLong, kFadvice), nil}, true
	case "mount":
		return sig{a(kPath, kPath, kCStr, kHex, kPtr), nil}, true
	case "umount2":
		return sig{a(kPath, kUmountFlags), nil}, true
	case "inotify_init1":
		return sig{a(kFdFlags), retFD}, true
	case "eventfd2":
		return sig{a(kUint, kFdFlags), retFD}, true
	case "memfd_create":
		return sig{a(kCStr, kMemfdFlags), retFD}, true

	// Sockets.
	case "socket":
		return sig{a(kFamily, kSockType, kSockProto), retFD}, true
	case "socketpair":
		return sig{a(kFamily, kSockType, kSockProto, kPipeFds), nil}, true
	case "connect":
		return sig{a(kFD, kSockaddrIn, kUint), nil}, true
	case "bind":
		return sig{a(kFD, kSockaddrIn, kUint), nil}, true
	case "listen":
		return sig{a(kFD, kInt), nil}, true
	case "accept":
		return sig{a(kFD, kSockaddrOut, kSocklen), retFD}, true
	case "accept4":
		return sig{a(kFD, kSockaddrOut, kSocklen, kSockFlagsOut), retFD}, true
	case "getsockname":
		return sig{a(kFD, kSockaddrOut, kSocklen), nil}, true
	case "getpeername":
		return sig{a(kFD, kSockaddrOut, kSocklen), nil}, true
	case "sendto":
		return sig{a(kFD, kBufIn, kUlong, kMsgFlags, kSockaddrIn, kUint), nil}, true
	case "recvfrom":
		return sig{a(kFD, kBufOut, kUlongOut, kMsgFlagsOut, kSockaddrOut, kSocklen), nil}, true
	case "sendmsg":
		return sig{a(kFD, kMsghdrIn, kMsgFlags), nil}, true
	case "recvmsg":
		return sig{a(kFD, kMsghdrOut, kMsgFlagsOut), nil}, true
	case "shutdown":
		return sig{a(kFD, kShutHow), nil}, true

	// Polling and time.
	case "poll":
		return sig{a(kPollfds, kUint, kInt), retPoll}, true
	case "ppoll":
		return sig{a(kPollfds, kUint, kTimespec, kSigsetPpoll, kUlong), retPoll}, true
	case "select":
		return sig{a(kInt, kFdset, kFdset, kFdset, kTimevalIn), retSelect}, true
	case "pselect6":
		return sig{a(kInt, kFdset, kFdset, kFdset, kTimespec, kPselectMask), retSelect}, true
	case "clock_gettime":
		return sig{a(kClockID, kTimespecOut), nil}, true
	case "clock_getres":
		return sig{a(kClockID, kTimespecOut), nil}, true
	case "gettimeofday":
		return sig{a(kTimevalOut, kPtrOut), nil}, true
	case "time":
		return sig{a(kTimeOut), retTime}, true
	case "nanosleep":
		return sig{a(kTimespec, kRemain), nil}, true
	case "clock_nanosleep":
		return sig{a(kClockID, kTimerFlags, kTimespec, kRemain), nil}, true

	// Memory.
	case "mmap":
		return sig{a(kPtr, kUlong, kProt, kMapFlags, kFD, kHex), retHex}, true
	case "munmap":
		return sig{a(kPtr, kUlong), nil}, true
	case "mprotect":
		return sig{a(kPtr, kUlong, kProt), nil}, true
	case "brk":
		return sig{a(kPtr), retHex}, true
	case "madvise":
		return sig{a(kPtr, kUlong, kMadvice), nil}, true
	case "mremap":
		return sig{a(kPtr, kUlong, kUlong, kMremapFlags, kPtr), retHex}, true
	case "msync":
		return sig{a(kPtr, kUlong, kMsyncFlags), nil}, true

	// Processes and signals.
	case "clone":
		return sig{a(kCloneStack, kCloneFlags, kCloneParentTid, kCloneTLS, kCloneChildTid), nil}, true
	case "clone3":
		return sig{a(kClone3, kUlong), nil}, true
	case "fork":
		return sig{a(), nil}, true
	case "vfork":
		return sig{a(), nil}, true
	case "execve":
		return sig{a(kPath, kArgv, kEnvp), nil}, true
	case "execveat":
		return sig{a(kDirFD, kPath, kArgv, kEnvp, kAtFlags), nil}, true
	case "wait4":
		return sig{a(kInt, kWaitStatus, kWaitOptionsOut, kRusage), nil}, true
	case "exit":
		return sig{a(kInt), nil}, true
	case "exit_group":
		return sig{a(kInt), nil}, true
	case "kill":
		return sig{a(kInt, kSignal), nil}, true
	case "tkill":
		return sig{a(kInt, kSignal), nil}, true
	case "tgkill":
		return sig{a(kInt, kInt, kSignal), nil}, true
	case "rt_sigaction":
		return sig{a(kSignal, kSigactionIn, kSigactionOut, kUlongOut), nil}, true
	case "rt_sigprocmask":
		return sig{a(kSigHow, kSigsetIn, kSigsetOut, kUlongOut), nil}, true
	case "rt_sigreturn":
		return sig{a(kSigreturnMask), nil}, true
	case "rt_sigsuspend":
		return sig{a(kSigsetIn, kUlong), nil}, true
	case "rt_sigpending":
		return sig{a(kSigsetOut, kUlongOut), nil}, true
	case "getrandom":
		return sig{a(kRandomOut, kUlongOut, kGrndFlagsOut), nil}, true
	case "prlimit64":
		return sig{a(kInt, kRlimitRes, kRlimitIn, kRlimitOut), nil}, true
	case "getrlimit":
		return sig{a(kRlimitRes, kRlimitOut), nil}, true
	case "setrlimit":
		return sig{a(kRlimitRes, kRlimitIn), nil}, true
	case "futex":
		return sig{a(kPtr, kFutexOp, futexArg(2), futexArg(3), futexArg(4), futexArg(5)), nil}, true
	case "arch_prctl":
		return sig{a(kArchPrctlCode, kArchPrctlArg), nil}, true
	case "set_tid_address":
		return sig{a(kPtr), nil}, true
	case "set_robust_list":
		return sig{a(kPtr, kUlong), nil}, true
	case "rseq":
		return sig{a(kPtr, kIntX, kInt, kIntX), nil}, true
	case "sched_getaffinity":
		return sig{a(kInt, kUint, kCPUSet), nil}, true
	case "uname":
		return sig{a(kUname), nil}, true
	case "getpid":
		return sig{a(), nil}, true
	case "getppid":
		return sig{a(), nil}, true
	case "gettid":
		return sig{a(), nil}, true
	case "getuid":
		return sig{a(), nil}, true
	case "geteuid":
		return sig{a(), nil}, true
	case "getgid":
		return sig{a(), nil}, true
	case "getegid":
		return sig{a(), nil}, true
	case "getpgrp":
		return sig{a(), nil}, true
	case "setsid":
		return sig{a(), nil}, true
	case "sched_yield":
		return sig{a(), nil}, true
	case "pause":
		return sig{a(), nil}, true
	case "setpgid":
		return sig{a(kInt, kInt), nil}, true
	case "getpgid":
		return sig{a(kInt), nil}, true
	case "getsid":
		return sig{a(kInt), nil}, true
	case "setuid":
		return sig{a(kInt), nil}, true
	case "setgid":
		return sig{a(kInt), nil}, true
	}
	return sig{}, false
}

// table caches lookup's rows by syscall number; tracers on several
// goroutines fill it.
var table [len(sysNames)]atomic.Pointer[sysent]

// Out-flavoured variants of in kinds: arguments that follow an
// out-argument are printed at exit with it.
var (
	kLongOut        = outOf(kLong)
	kUintOut        = outOf(kUint)
	kAtFlagsOut     = outOf(kAtFlags)
	kFdFlagsOut     = outOf(kFdFlags)
	kMsgFlagsOut    = outOf(kMsgFlags)
	kGrndFlagsOut   = outOf(kGrndFlags)
	kWaitOptionsOut = outOf(kWaitOptions)
	kSockFlagsOut   = outOf(flagKind32(flagSet{{0x80000, "SOCK_CLOEXEC"}, {0x800, "SOCK_NONBLOCK"}}, ""))
	kRWFFlags       = flagKind32(flagSet{{1, "RWF_HIPRI"}, {2, "RWF_DSYNC"}, {4, "RWF_SYNC"}, {8, "RWF_NOWAIT"}, {0x10, "RWF_APPEND"}}, "")
	kRWFFlagsOut    = outOf(kRWFFlags)
	kPtrOut         = kOutPtr
	kMemfdFlags     = flagKind32(flagSet{{1, "MFD_CLOEXEC"}, {2, "MFD_ALLOW_SEALING"}, {4, "MFD_HUGETLB"}, {8, "MFD_NOEXEC_SEAL"}, {0x10, "MFD_EXEC"}}, "")
	kMremapFlags    = flagKind32(flagSet{{1, "MREMAP_MAYMOVE"}, {2, "MREMAP_FIXED"}, {4, "MREMAP_DONTUNMAP"}}, "")
	kMsyncFlags     = flagKind32(flagSet{{1, "MS_ASYNC"}, {2, "MS_INVALIDATE"}, {4, "MS_SYNC"}}, "")
	kTimevalIn      = kind{in: func(d *dec, i int) *parser.Arg { return pos(d.timeval(d.arg(i))) }}
	kSigsetPpoll    = kind{in: func(d *dec, i int) *parser.Arg { return pos(d.sigset(d.arg(i), d.arg(4))) }}
)

// outOf prints an in kind at exit.
func outOf(k kind) kind {
	return kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg { return k.in(d, i) }}
}
