package mutators

import "sync"

// strace's syscall classes (-e trace=%file and friends) for the calls that
// matter on x86-64 Linux. The lists follow strace 6.x's syscallent flags
// (TF, TD, TP, TN, TM, TS and the stat-like set %%stat, which %stat means
// here); calls strace places in several classes are in several lists.

func classLists() map[string][]string {
	return map[string][]string{
		"file": {
			"open", "openat", "openat2", "creat", "stat", "lstat", "newfstatat", "statx", "access",
			"faccessat", "faccessat2", "execve", "execveat", "chdir", "chmod", "fchmodat", "fchmodat2",
			"chown", "lchown", "fchownat", "link", "linkat", "unlink", "unlinkat", "rename",
			"renameat", "renameat2", "mkdir", "mkdirat", "rmdir", "mknod", "mknodat", "symlink",
			"symlinkat", "readlink", "readlinkat", "truncate", "utime", "utimes", "utimensat",
			"futimesat", "getxattr", "setxattr", "lgetxattr", "lsetxattr", "listxattr", "llistxattr",
			"removexattr", "lremovexattr", "statfs", "mount", "umount2", "swapon", "swapoff",
			"chroot", "pivot_root", "inotify_add_watch", "name_to_handle_at", "fanotify_mark",
			"quotactl", "acct", "uselib", "open_tree", "move_mount", "mount_setattr",
		},
		"desc": {
			"read", "write", "open", "openat", "openat2", "creat", "close", "close_range", "fstat",
			"newfstatat", "statx", "lseek", "pread64", "pwrite64", "readv", "writev", "preadv",
			"pwritev", "preadv2", "pwritev2", "dup", "dup2", "dup3", "pipe", "pipe2", "fcntl",
			"ioctl", "flock", "fsync", "fdatasync", "sync_file_range", "syncfs", "ftruncate",
			"fallocate", "fadvise64", "getdents", "getdents64", "fchdir", "fchmod", "fchmodat",
			"fchmodat2", "fchown", "fchownat", "fstatfs", "fgetxattr", "fsetxattr", "flistxattr",
			"fremovexattr", "sendfile", "copy_file_range", "splice", "tee", "vmsplice", "select",
			"pselect6", "poll", "ppoll", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait",
			"epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2", "signalfd", "signalfd4",
			"timerfd_create", "timerfd_settime", "timerfd_gettime", "inotify_init", "inotify_init1",
			"inotify_add_watch", "inotify_rm_watch", "memfd_create", "mmap", "readahead",
			"faccessat", "faccessat2", "linkat", "mkdirat", "mknodat", "readlinkat", "renameat",
			"renameat2", "symlinkat", "unlinkat", "utimensat", "futimesat", "execveat",
			"name_to_handle_at", "open_by_handle_at", "pidfd_open", "pidfd_getfd", "fanotify_init",
			"fanotify_mark", "io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd",
			"perf_event_open", "bpf", "socket", "socketpair", "bind", "listen", "accept", "accept4",
			"connect", "getsockname", "getpeername", "sendto", "recvfrom", "sendmsg", "recvmsg",
			"sendmmsg", "recvmmsg", "shutdown", "setsockopt", "getsockopt",
		},
		"process": {
			"fork", "vfork", "clone", "clone3", "execve", "execveat", "exit", "exit_group", "wait4",
			"waitid", "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
			"pidfd_send_signal", "pidfd_open", "unshare", "setns",
		},
		"network": {
			"socket", "socketpair", "bind", "listen", "accept", "accept4", "connect", "getsockname",
			"getpeername", "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg",
			"shutdown", "setsockopt", "getsockopt",
		},
		"memory": {
			"mmap", "munmap", "mprotect", "brk", "mremap", "madvise", "msync", "mlock", "mlock2",
			"munlock", "mlockall", "munlockall", "mincore", "remap_file_pages", "mbind",
			"set_mempolicy", "get_mempolicy", "migrate_pages", "move_pages", "pkey_mprotect",
			"process_madvise", "process_mrelease", "memfd_secret", "map_shadow_stack",
		},
		"signal": {
			"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigsuspend", "rt_sigpending",
			"rt_sigtimedwait", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "kill", "tkill", "tgkill",
			"sigaltstack", "signalfd", "signalfd4", "pause", "pidfd_send_signal",
		},
		"stat": {"stat", "lstat", "fstat", "newfstatat", "statx"},
	}
}

// classSets is classes as sets, built on first use.
var classSets = sync.OnceValue(func() map[string]map[string]bool {
	classes := classLists()
	m := make(map[string]map[string]bool, len(classes))
	for c, names := range classes {
		s := make(map[string]bool, len(names))
		for _, n := range names {
			s[n] = true
		}
		m[c] = s
	}
	return m
})

// InClass reports whether the call name is in strace's class ("file",
// "desc", "process", "network", "memory", "signal", "stat"; with or
// without the leading %).
func InClass(class, name string) bool {
	for len(class) > 0 && class[0] == '%' {
		class = class[1:]
	}
	return classSets()[class][name]
}

// Classes lists the class names a selector may use, without the %.
func Classes() []string {
	return []string{"desc", "file", "memory", "network", "process", "signal", "stat"}
}
