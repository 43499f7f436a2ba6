package tracer

import (
	"fmt"

	"github.com/faultline/faultline/parser"
)

// Flag sets and enumerations, in strace's xlat order: a set prints the
// names whose bits are all present, in table order, then any bits left in
// hex; an enumeration prints its name or the number.

type flag struct {
	v    uint64
	name string
}

type flagSet []flag

// names lists the set bits of v, with leftover bits in hex; zero is
// zero (or what the caller prints for it).
func (fs flagSet) names(v uint64) []string {
	var out []string
	for _, f := range fs {
		if f.v != 0 && v&f.v == f.v {
			out = append(out, f.name)
			v &^= f.v
		}
	}
	if v != 0 {
		out = append(out, fmt.Sprintf("%#x", v))
	}
	return out
}

// expr prints the set, or zero as zeroName ("0" when empty).
func (fs flagSet) expr(v uint64, zeroName string) *parser.Expr {
	if v == 0 {
		if zeroName == "" {
			return parser.Dec(0)
		}
		return parser.Sym(zeroName)
	}
	return parser.Flags(fs.names(v)...)
}

// enum is a value table.
type enum map[uint64]string

// expr prints the name, or the number (with strace's "/* XX_??? */" when
// unknownComment is set).
func (e enum) expr(v uint64, unknownComment string) *parser.Expr {
	if n, ok := e[v]; ok {
		return parser.Sym(n)
	}
	if unknownComment != "" {
		return parser.Hex(v).WithComment(unknownComment)
	}
	return parser.Dec(int64(v))
}

// flagKind prints argument i as a set from a table.
func flagKind(fs flagSet, zero string) kind {
	return kind{in: func(d *dec, i int) *parser.Arg { return pos(fs.expr(d.arg(i), zero)) }}
}

func flagKind32(fs flagSet, zero string) kind {
	return kind{in: func(d *dec, i int) *parser.Arg { return pos(fs.expr(uint64(uint32(d.arg(i))), zero)) }}
}

func enumKind(e enum, unknown string) kind {
	return kind{in: func(d *dec, i int) *parser.Arg { return pos(e.expr(uint64(uint32(d.arg(i))), unknown)) }}
}

// Open flags: the access mode first, then the rest.
var openFlagBits = flagSet{
	{0100, "O_CREAT"}, {0200, "O_EXCL"}, {0400, "O_NOCTTY"}, {01000, "O_TRUNC"},
	{02000, "O_APPEND"}, {04000, "O_NONBLOCK"}, {04010000, "O_SYNC"}, {04000000, "__O_SYNC"}, {010000, "O_DSYNC"},
	{040000, "O_DIRECT"}, {0100000, "O_LARGEFILE"}, {0400000, "O_NOFOLLOW"}, {01000000, "O_NOATIME"},
	{02000000, "O_CLOEXEC"}, {010000000, "O_PATH"}, {020200000, "O_TMPFILE"}, {020000000, "__O_TMPFILE"},
	{0200000, "O_DIRECTORY"}, {020000, "FASYNC"},
}

var accModes = []string{"O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE"}

func openFlags(v uint64) *parser.Expr {
	names := append([]string{accModes[v&3]}, openFlagBits.names(v&^3)...)
	return parser.Flags(names...)
}

var (
	kOpenFlags = kind{in: func(d *dec, i int) *parser.Arg { return pos(openFlags(uint64(uint32(d.arg(i))))) }}
	// kOpenMode is printed only when the flags create a file.
	kOpenMode = kind{in: func(d *dec, i int) *parser.Arg {
		if d.arg(i-1)&(0100|020000000) == 0 {
			return nil
		}
		return pos(octMode(uint32(d.arg(i))))
	}}
	// kFdFlags is the O_* subset pipe2, dup3, eventfd take.
	kFdFlags = flagKind32(openFlagBits, "")
)

var atFlags = flagSet{
	{0x100, "AT_SYMLINK_NOFOLLOW"}, {0x200, "AT_REMOVEDIR"}, {0x400, "AT_SYMLINK_FOLLOW"},
	{0x800, "AT_NO_AUTOMOUNT"}, {0x1000, "AT_EMPTY_PATH"}, {0x8000, "AT_RECURSIVE"},
}

var faccessatFlags = flagSet{
	{0x100, "AT_SYMLINK_NOFOLLOW"}, {0x200, "AT_EACCESS"}, {0x1000, "AT_EMPTY_PATH"},
}

var kAtFlags = flagKind32(atFlags, "")
var kFaccessatFlags = flagKind32(faccessatFlags, "")

// statx flags: the sync type is an enumeration inside the set.
var kStatxFlags = kind{in: func(d *dec, i int) *parser.Arg {
	v := uint64(uint32(d.arg(i)))
	sync := []string{"AT_STATX_SYNC_AS_STAT", "AT_STATX_FORCE_SYNC", "AT_STATX_DONT_SYNC", "AT_STATX_FORCE_SYNC|AT_STATX_DONT_SYNC"}[(v>>13)&3]
	names := append([]string{sync}, atFlags.names(v&^0x6000)...)
	return pos(parser.Flags(names...))
}}

var statxMask = flagSet{
	{0xfff, "STATX_ALL"}, {0x7ff, "STATX_BASIC_STATS"}, {1, "STATX_TYPE"}, {2, "STATX_MODE"},
	{4, "STATX_NLINK"}, {8, "STATX_UID"}, {0x10, "STATX_GID"}, {0x20, "STATX_ATIME"},
	{0x40, "STATX_MTIME"}, {0x80, "STATX_CTIME"}, {0x100, "STATX_INO"}, {0x200, "STATX_SIZE"},
	{0x400, "STATX_BLOCKS"}, {0x800, "STATX_BTIME"}, {0x1000, "STATX_MNT_ID"}, {0x2000, "STATX_DIOALIGN"},
}

var kAccessMode = kind{in: func(d *dec, i int) *parser.Arg {
	return pos(flagSet{{4, "R_OK"}, {2, "W_OK"}, {1, "X_OK"}}.expr(uint64(uint32(d.arg(i))), "F_OK"))
}}

var protFlags = flagSet{{1, "PROT_READ"}, {2, "PROT_WRITE"}, {4, "PROT_EXEC"}, {8, "PROT_SEM"},
	{0x01000000, "PROT_GROWSDOWN"}, {0x02000000, "PROT_GROWSUP"}}
var kProt = flagKind(protFlags, "PROT_NONE")

var mapFlagBits = flagSet{
	{0x10, "MAP_FIXED"}, {0x20, "MAP_ANONYMOUS"}, {0x40, "MAP_32BIT"}, {0x100, "MAP_GROWSDOWN"},
	{0x800, "MAP_DENYWRITE"}, {0x1000, "MAP_EXECUTABLE"}, {0x2000, "MAP_LOCKED"},
	{0x4000, "MAP_NORESERVE"}, {0x8000, "MAP_POPULATE"}, {0x10000, "MAP_NONBLOCK"},
	{0x20000, "MAP_STACK"}, {0x40000, "MAP_HUGETLB"}, {0x80000, "MAP_SYNC"},
	{0x100000, "MAP_FIXED_NOREPLACE"}, {0x4000000, "MAP_UNINITIALIZED"},
}

var kMapFlags = kind{in: func(d *dec, i int) *parser.Arg {
	v := d.arg(i)
	typ := enum{1: "MAP_SHARED", 2: "MAP_PRIVATE", 3: "MAP_SHARED_VALIDATE"}
	var names []string
	if n, ok := typ[v&0xf]; ok {
		names = append(names, n)
	} else {
		names = append(names, fmt.Sprintf("%#x /* MAP_??? */", v&0xf))
	}
	names = append(names, mapFlagBits.names(v&^0xf)...)
	return pos(parser.Flags(names...))
}}

var kWhence = enumKind(enum{0: "SEEK_SET", 1: "SEEK_CUR", 2: "SEEK_END", 3: "SEEK_DATA", 4: "SEEK_HOLE"}, "")
var kRenameFlags = flagKind32(flagSet{{1, "RENAME_NOREPLACE"}, {2, "RENAME_EXCHANGE"}, {4, "RENAME_WHITEOUT"}}, "")
var kGrndFlags = flagKind32(flagSet{{1, "GRND_NONBLOCK"}, {2, "GRND_RANDOM"}, {4, "GRND_INSECURE"}}, "")
var kFallocMode = flagKind32(flagSet{{1, "FALLOC_FL_KEEP_SIZE"}, {2, "FALLOC_FL_PUNCH_HOLE"},
	{4, "FALLOC_FL_NO_HIDE_STALE"}, {8, "FALLOC_FL_COLLAPSE_RANGE"}, {0x10, "FALLOC_FL_ZERO_RANGE"},
	{0x20, "FALLOC_FL_INSERT_RANGE"}, {0x40, "FALLOC_FL_UNSHARE_RANGE"}}, "")
var kFlockOp = flagKind32(flagSet{{1, "LOCK_SH"}, {2, "LOCK_EX"}, {4, "LOCK_NB"}, {8, "LOCK_UN"}, {0x20, "LOCK_MAND"}, {0x40, "LOCK_READ"}, {0x80, "LOCK_WRITE"}}, "")
var kXattrFlags = flagKind32(flagSet{{1, "XATTR_CREATE"}, {2, "XATTR_REPLACE"}}, "")
var kSyncRangeFlags = flagKind32(flagSet{{1, "SYNC_FILE_RANGE_WAIT_BEFORE"}, {2, "SYNC_FILE_RANGE_WRITE"}, {4, "SYNC_FILE_RANGE_WAIT_AFTER"}}, "")
var kFadvice = enumKind(enum{0: "POSIX_FADV_NORMAL", 1: "POSIX_FADV_RANDOM", 2: "POSIX_FADV_SEQUENTIAL", 3: "POSIX_FADV_WILLNEED", 4: "POSIX_FADV_DONTNEED", 5: "POSIX_FADV_NOREUSE"}, "")
var kMadvice = enumKind(enum{0: "MADV_NORMAL", 1: "MADV_RANDOM", 2: "MADV_SEQUENTIAL", 3: "MADV_WILLNEED", 4: "MADV_DONTNEED",
	8: "MADV_FREE", 9: "MADV_REMOVE", 10: "MADV_DONTFORK", 11: "MADV_DOFORK", 12: "MADV_MERGEABLE", 13: "MADV_UNMERGEABLE",
	14: "MADV_HUGEPAGE", 15: "MADV_NOHUGEPAGE", 16: "MADV_DONTDUMP", 17: "MADV_DODUMP", 18: "MADV_WIPEONFORK",
	19: "MADV_KEEPONFORK", 20: "MADV_COLD", 21: "MADV_PAGEOUT", 22: "MADV_POPULATE_READ", 23: "MADV_POPULATE_WRITE",
	24: "MADV_DONTNEED_LOCKED", 100: "MADV_HWPOISON", 101: "MADV_SOFT_OFFLINE"}, "")

var waitOptions = flagSet{{1, "WNOHANG"}, {2, "WSTOPPED"}, {4, "WEXITED"}, {8, "WCONTINUED"}, {0x01000000, "WNOWAIT"},
	{0x20000000, "__WNOTHREAD"}, {0x40000000, "__WALL"}, {0x80000000, "__WCLONE"}}
var kWaitOptions = kind{in: func(d *dec, i int) *parser.Arg {
	v := uint64(uint32(d.arg(i)))
	if d.name == "wait4" {
		return pos(flagSet{{1, "WNOHANG"}, {2, "WUNTRACED"}, {8, "WCONTINUED"}, {0x20000000, "__WNOTHREAD"}, {0x40000000, "__WALL"}, {0x80000000, "__WCLONE"}}.expr(v, ""))
	}
	return pos(waitOptions.expr(v, ""))
}}

var cloneFlags = flagSet{
	{0x100, "CLONE_VM"}, {0x200, "CLONE_FS"}, {0x400, "CLONE_FILES"}, {0x800, "CLONE_SIGHAND"},
	{0x1000, "CLONE_PIDFD"}, {0x2000, "CLONE_PTRACE"}, {0x4000, "CLONE_VFORK"}, {0x8000, "CLONE_PARENT"},
	{0x10000, "CLONE_THREAD"}, {0x20000, "CLONE_NEWNS"}, {0x40000, "CLONE_SYSVSEM"}, {0x80000, "CLONE_SETTLS"},
	{0x100000, "CLONE_PARENT_SETTID"}, {0x200000, "CLONE_CHILD_CLEARTID"}, {0x400000, "CLONE_DETACHED"},
	{0x800000, "CLONE_UNTRACED"}, {0x1000000, "CLONE_CHILD_SETTID"}, {0x2000000, "CLONE_NEWCGROUP"},
	{0x4000000, "CLONE_NEWUTS"}, {0x8000000, "CLONE_NEWIPC"}, {0x10000000, "CLONE_NEWUSER"},
	{0x20000000, "CLONE_NEWPID"}, {0x40000000, "CLONE_NEWNET"}, {0x80000000, "CLONE_IO"},
	{0x100000000, "CLONE_CLEAR_SIGHAND"}, {0x200000000, "CLONE_INTO_CGROUP"}, {0x400000000, "CLONE_NEWTIME"},
}

var clockIDs = enum{0: "CLOCK_REALTIME", 1: "CLOCK_MONOTONIC", 2: "CLOCK_PROCESS_CPUTIME_ID", 3: "CLOCK_THREAD_CPUTIME_ID",
	4: "CLOCK_MONOTONIC_RAW", 5: "CLOCK_REALTIME_COARSE", 6: "CLOCK_MONOTONIC_COARSE", 7: "CLOCK_BOOTTIME",
	8: "CLOCK_REALTIME_ALARM", 9: "CLOCK_BOOTTIME_ALARM", 11: "CLOCK_TAI"}
var kClockID = enumKind(clockIDs, "")
var kTimerFlags = flagKind32(flagSet{{1, "TIMER_ABSTIME"}}, "")

var rlimits = enum{0: "RLIMIT_CPU", 1: "RLIMIT_FSIZE", 2: "RLIMIT_DATA", 3: "RLIMIT_STACK", 4: "RLIMIT_CORE",
	5: "RLIMIT_RSS", 6: "RLIMIT_NPROC", 7: "RLIMIT_NOFILE", 8: "RLIMIT_MEMLOCK", 9: "RLIMIT_AS",
	10: "RLIMIT_LOCKS", 11: "RLIMIT_SIGPENDING", 12: "RLIMIT_MSGQUEUE", 13: "RLIMIT_NICE", 14: "RLIMIT_RTPRIO", 15: "RLIMIT_RTTIME"}
var kRlimitRes = enumKind(rlimits, "")

var kArchPrctlCode = enumKind(enum{0x1001: "ARCH_SET_GS", 0x1002: "ARCH_SET_FS", 0x1003: "ARCH_GET_FS", 0x1004: "ARCH_GET_GS",
	0x1011: "ARCH_GET_CPUID", 0x1012: "ARCH_SET_CPUID", 0x3001: "ARCH_CET_STATUS"}, "")

var msgFlags = flagSet{{1, "MSG_OOB"}, {2, "MSG_PEEK"}, {4, "MSG_DONTROUTE"}, {8, "MSG_CTRUNC"}, {0x10, "MSG_PROXY"},
	{0x20, "MSG_TRUNC"}, {0x40, "MSG_DONTWAIT"}, {0x80, "MSG_EOR"}, {0x100, "MSG_WAITALL"}, {0x200, "MSG_FIN"},
	{0x400, "MSG_SYN"}, {0x800, "MSG_CONFIRM"}, {0x1000, "MSG_RST"}, {0x2000, "MSG_ERRQUEUE"}, {0x4000, "MSG_NOSIGNAL"},
	{0x8000, "MSG_MORE"}, {0x10000, "MSG_WAITFORONE"}, {0x20000, "MSG_SENDPAGE_NOPOLICY"}, {0x40000, "MSG_BATCH"},
	{0x4000000, "MSG_ZEROCOPY"}, {0x20000000, "MSG_FASTOPEN"}, {0x40000000, "MSG_CMSG_CLOEXEC"}}
var kMsgFlags = flagKind32(msgFlags, "")

var pollEvents = flagSet{{1, "POLLIN"}, {2, "POLLPRI"}, {4, "POLLOUT"}, {8, "POLLERR"}, {0x10, "POLLHUP"},
	{0x20, "POLLNVAL"}, {0x40, "POLLRDNORM"}, {0x80, "POLLRDBAND"}, {0x100, "POLLWRNORM"}, {0x200, "POLLWRBAND"},
	{0x400, "POLLMSG"}, {0x1000, "POLLREMOVE"}, {0x2000, "POLLRDHUP"}}

var futexOps = enum{0: "FUTEX_WAIT", 1: "FUTEX_WAKE", 2: "FUTEX_FD", 3: "FUTEX_REQUEUE", 4: "FUTEX_CMP_REQUEUE",
	5: "FUTEX_WAKE_OP", 6: "FUTEX_LOCK_PI", 7: "FUTEX_UNLOCK_PI", 8: "FUTEX_TRYLOCK_PI", 9: "FUTEX_WAIT_BITSET",
	10: "FUTEX_WAKE_BITSET", 11: "FUTEX_WAIT_REQUEUE_PI", 12: "FUTEX_CMP_REQUEUE_PI", 13: "FUTEX_LOCK_PI2"}

var kUmountFlags = flagKind32(flagSet{{1, "MNT_FORCE"}, {2, "MNT_DETACH"}, {4, "MNT_EXPIRE"}, {8, "UMOUNT_NOFOLLOW"}}, "")
