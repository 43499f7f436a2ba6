package tracer

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Filter is the set of calls -e trace= selects, by name and by strace's
// classes.
type Filter struct {
	spec string
	not  bool // "!set": every call but these
	set  map[int]bool
}

// ErrBadFilter is wrapped by every filter syntax error.
var ErrBadFilter = errors.New("bad trace filter")

// classes are strace 6.1's syscall classes for x86-64, names separated
// by white space.
var classes = map[string]string{
	"file": `open openat openat2 creat stat lstat newfstatat statx access faccessat faccessat2
		rename renameat renameat2 link linkat symlink symlinkat unlink unlinkat mkdir mkdirat rmdir chmod fchmodat
		chown lchown fchownat utime utimes utimensat futimesat truncate readlink readlinkat setxattr lsetxattr
		getxattr lgetxattr listxattr llistxattr removexattr lremovexattr chdir chroot mknod mknodat statfs execve
		execveat mount umount2 pivot_root swapon swapoff acct uselib inotify_add_watch fanotify_mark
		name_to_handle_at quotactl open_tree move_mount fspick mount_setattr getcwd`,
	"desc": `read write open close fstat poll lseek mmap ioctl pread64 pwrite64 readv writev pipe
		select dup dup2 sendfile fcntl flock fsync fdatasync ftruncate getdents fchdir fchmod fchown fstatfs
		readahead fsetxattr fgetxattr flistxattr fremovexattr epoll_create epoll_ctl_old epoll_wait_old getdents64
		fadvise64 epoll_wait epoll_ctl inotify_init inotify_add_watch inotify_rm_watch openat mkdirat mknodat
		fchownat futimesat newfstatat unlinkat renameat linkat symlinkat readlinkat fchmodat faccessat pselect6
		ppoll splice tee sync_file_range vmsplice utimensat epoll_pwait signalfd timerfd_create eventfd fallocate
		timerfd_settime timerfd_gettime signalfd4 eventfd2 epoll_create1 dup3 pipe2 inotify_init1 preadv pwritev
		perf_event_open fanotify_init fanotify_mark name_to_handle_at open_by_handle_at syncfs setns finit_module
		renameat2 memfd_create kexec_file_load bpf execveat userfaultfd copy_file_range preadv2 pwritev2 statx
		io_uring_setup io_uring_enter io_uring_register open_tree move_mount fsopen fsconfig fsmount fspick
		pidfd_open openat2 pidfd_getfd close_range faccessat2 process_madvise epoll_pwait2 mount_setattr
		quotactl_fd landlock_create_ruleset landlock_add_rule landlock_restrict_self memfd_secret
		process_mrelease creat pidfd_send_signal`,
	"process": `clone fork vfork execve exit wait4 kill rt_sigqueueinfo tkill exit_group waitid
		tgkill unshare rt_tgsigqueueinfo execveat clone3 pidfd_open pidfd_send_signal`,
	"network": `socket connect accept sendto recvfrom sendmsg recvmsg shutdown bind listen
		getsockname getpeername socketpair setsockopt getsockopt accept4 recvmmsg sendmmsg`,
	"signal": `rt_sigaction rt_sigprocmask rt_sigreturn pause kill rt_sigpending rt_sigtimedwait
		rt_sigqueueinfo rt_sigsuspend sigaltstack tkill tgkill signalfd signalfd4 rt_tgsigqueueinfo
		pidfd_send_signal`,
	"memory": `mmap mprotect munmap brk mremap msync mincore madvise shmat shmdt mlock munlock
		mlockall munlockall remap_file_pages mbind set_mempolicy get_mempolicy migrate_pages move_pages mlock2
		pkey_mprotect set_mempolicy_home_node`,
	"ipc":     `shmget shmat shmctl semget semop semctl shmdt msgget msgsnd msgrcv msgctl semtimedop`,
	"stat":    `stat fstat lstat newfstatat statx`,
	"lstat":   `lstat`,
	"fstat":   `fstat newfstatat`,
	"%stat":   `stat fstat lstat newfstatat statx`,
	"statfs":  `statfs`,
	"fstatfs": `fstatfs`,
	"%statfs": `statfs fstatfs ustat`,
	"creds":   `getuid getgid setuid setgid geteuid getegid setreuid setregid getgroups setgroups setresuid getresuid setresgid getresgid setfsuid setfsgid capget capset prctl`,
	"clock":   `gettimeofday settimeofday adjtimex time clock_settime clock_gettime clock_getres clock_adjtime`,
	"pure":    `getpid getppid getpgrp getuid geteuid getgid getegid gettid`,
}

// sysNumber is the number of the call strace names name. A scan, not a
// map built at start-up: only trace filters look names up.
func sysNumber(name string) (int, bool) {
	for nr, n := range sysNames {
		if name != "" && n == name {
			return nr, true
		}
	}
	return -1, false
}

// ParseFilter reads strace's -e trace= value: names and %classes joined
// by commas, "all", "none", and a leading "!" for the complement.
func ParseFilter(spec string) (*Filter, error) {
	f := &Filter{spec: spec, set: map[int]bool{}}
	s := strings.TrimPrefix(spec, "trace=")
	if strings.HasPrefix(s, "!") {
		f.not = true
		s = s[1:]
	}
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%w: empty set in %q", ErrBadFilter, spec)
	}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "all":
			for nr := range sysNames {
				f.set[nr] = true
			}
			f.set[-2] = true // numbers strace has no name for
		case item == "none":
		case strings.HasPrefix(item, "%"):
			names, ok := classes[item[1:]]
			if !ok {
				return nil, fmt.Errorf("%w: unknown class %q in %q (known: %s)", ErrBadFilter, item, spec, classList())
			}
			for _, n := range strings.Fields(names) {
				if nr, ok := sysNumber(n); ok {
					f.set[nr] = true
				}
			}
		default:
			nr, ok := sysNumber(item)
			if !ok {
				return nil, fmt.Errorf("%w: unknown system call %q in %q", ErrBadFilter, item, spec)
			}
			f.set[nr] = true
		}
	}
	return f, nil
}

func classList() string {
	var out []string
	for c := range classes {
		out = append(out, "%"+c)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// Has reports whether call nr is traced.
func (f *Filter) Has(nr int) bool {
	if f == nil {
		return true
	}
	in := f.set[nr]
	if !in && (nr < 0 || nr >= len(sysNames) || sysNames[nr] == "") {
		in = f.set[-2]
	}
	return in != f.not
}

// Names lists the traced calls by name, for the trace header.
func (f *Filter) Names() []string {
	var out []string
	for nr, n := range sysNames {
		if n != "" && f.Has(nr) {
			out = append(out, n)
		}
	}
	return out
}

// String is the filter as given.
func (f *Filter) String() string { return f.spec }
