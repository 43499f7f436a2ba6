package mutators

import (
	"path"
	"sync"

	"github.com/faultline/faultline/parser"
)

// Which arguments of a call are paths, and which descriptor each is
// relative to. Selecting by path and placing commit points both need it;
// a quoted string is not a path in general (write's data, an xattr name).

// pathArg is a path argument: its index and the index of the directory
// descriptor it is relative to (-1: the working directory).
type pathArg struct{ dirfd, path int }

var (
	p0   = []pathArg{{-1, 0}}
	at01 = []pathArg{{0, 1}}
)

var pathArgs = sync.OnceValue(func() map[string][]pathArg {
	return map[string][]pathArg{
		"open": p0, "creat": p0, "stat": p0, "lstat": p0, "access": p0, "chdir": p0, "chmod": p0,
		"chown": p0, "lchown": p0, "truncate": p0, "mkdir": p0, "rmdir": p0, "unlink": p0,
		"utime": p0, "utimes": p0, "mknod": p0, "statfs": p0, "getxattr": p0, "setxattr": p0,
		"lgetxattr": p0, "lsetxattr": p0, "listxattr": p0, "llistxattr": p0, "removexattr": p0,
		"lremovexattr": p0, "execve": p0, "readlink": p0, "chroot": p0, "acct": p0, "uselib": p0,
		"swapon": p0, "swapoff": p0, "inotify_add_watch": {{-1, 1}},
		"openat": at01, "openat2": at01, "newfstatat": at01, "statx": at01, "faccessat": at01,
		"faccessat2": at01, "fchmodat": at01, "fchmodat2": at01, "fchownat": at01, "mkdirat": at01,
		"mknodat": at01, "unlinkat": at01, "readlinkat": at01, "utimensat": at01, "futimesat": at01,
		"name_to_handle_at": at01, "execveat": at01,
		"rename": {{-1, 0}, {-1, 1}}, "link": {{-1, 0}, {-1, 1}}, "symlink": {{-1, 1}},
		"renameat": {{0, 1}, {2, 3}}, "renameat2": {{0, 1}, {2, 3}}, "linkat": {{0, 1}, {2, 3}},
		"symlinkat": {{1, 2}},
	}
})

// fdArgs are the descriptor arguments of calls whose fd is not argument 0
// alone; for other %desc and %network calls it is argument 0.
var fdArgs = sync.OnceValue(func() map[string][]int {
	return map[string][]int{
		"sendfile": {0, 1}, "copy_file_range": {0, 2}, "splice": {0, 2}, "tee": {0, 1},
		"dup2": {0, 1}, "dup3": {0, 1}, "renameat": {0, 2}, "renameat2": {0, 2}, "linkat": {0, 2},
		"symlinkat": {1}, "mmap": {4}, "epoll_ctl": {0, 2},
		"select": nil, "pselect6": nil, "poll": nil, "ppoll": nil, "pipe": nil, "pipe2": nil,
		"socket": nil, "socketpair": nil, "eventfd": nil, "eventfd2": nil, "memfd_create": nil,
		"epoll_create": nil, "epoll_create1": nil, "inotify_init": nil, "inotify_init1": nil,
		"timerfd_create": nil, "io_uring_setup": nil, "userfaultfd": nil, "perf_event_open": nil,
		"bpf": nil, "pidfd_open": nil, "fanotify_init": nil, "open": nil, "creat": nil,
	}
})

// PathArgs returns the call's path arguments as written (decoded from
// strace's quoting) and resolved: absolute when the path is, or when the
// directory it is relative to is known from a -y decoration or the call's
// working directory. Truncated or undecodable strings are skipped.
func (c *Call) PathArgs() (written, resolved []string) {
	for _, pa := range pathArgs()[c.Name] {
		p, ok := strArg(c.Args, pa.path)
		if !ok {
			continue
		}
		written = append(written, p)
		resolved = append(resolved, c.resolve(pa.dirfd, p))
	}
	return written, resolved
}

// resolve makes p absolute where the trace allows.
func (c *Call) resolve(dirfd int, p string) string {
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	base := c.Cwd
	if dirfd >= 0 && dirfd < len(c.Args) && c.Args[dirfd].Value != nil {
		switch v := c.Args[dirfd].Value.Head.(type) {
		case *parser.Ident:
			if v.Decor != nil {
				base = v.Decor.Path()
			}
		case *parser.Int:
			base = v.Decor.Path() // "" when undecorated: stays relative
		}
	}
	if base == "" {
		return p
	}
	return path.Join(base, p)
}

// FDPaths returns the paths -y printed on the call's descriptor arguments
// and on a descriptor it returned; without -y, the paths the trace's own
// opens gave its descriptor arguments.
func (c *Call) FDPaths() []string {
	var out []string
	for _, a := range c.Args {
		if a.Value == nil {
			continue
		}
		if i, ok := a.Value.Head.(*parser.Int); ok && i.Decor != nil {
			if p := i.Decor.Path(); p != "" {
				out = append(out, p)
			}
		}
	}
	if c.Result != nil && c.Result.Value != nil {
		if i, ok := c.Result.Value.Head.(*parser.Int); ok && i.Decor != nil {
			if p := i.Decor.Path(); p != "" {
				out = append(out, p)
			}
		}
	}
	if len(out) == 0 {
		out = append(out, c.opened...)
	}
	return out
}

// Paths is every path the call names: its path arguments, resolved, and
// its descriptors' -y paths.
func (c *Call) Paths() []string {
	_, r := c.PathArgs()
	return append(r, c.FDPaths()...)
}

// FDs returns the call's descriptor arguments.
func (c *Call) FDs() []int64 {
	idx, ok := fdArgs()[c.Name]
	if !ok {
		if !InClass("desc", c.Name) && !InClass("network", c.Name) {
			return nil
		}
		idx = []int{0}
	}
	var out []int64
	for _, i := range idx {
		if i >= len(c.Args) || c.Args[i].Value == nil {
			continue
		}
		if n, ok := c.Args[i].Value.Head.(*parser.Int); ok {
			if v, ok := n.Int64(); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// FD returns descriptor argument 0 of the call and its -y path ("" when
// undecorated); ok is false when argument 0 is not a number.
func (c *Call) FD() (fd int64, decor string, ok bool) {
	if len(c.Args) == 0 || c.Args[0].Value == nil {
		return 0, "", false
	}
	n, isInt := c.Args[0].Value.Head.(*parser.Int)
	if !isInt {
		return 0, "", false
	}
	v, ok := n.Int64()
	return v, n.Decor.Path(), ok
}

// Succeeded reports whether the call returned and did not fail.
func (c *Call) Succeeded() bool {
	return c.Result != nil && !c.Result.Unknown && !c.Result.Failed()
}

// ResultInt is the call's numeric result.
func (c *Call) ResultInt() (int64, bool) { return c.Result.Int() }

// strArg decodes argument i when it is a complete quoted string.
func strArg(args []*parser.Arg, i int) (string, bool) {
	if i >= len(args) || args[i].Value == nil {
		return "", false
	}
	s, ok := args[i].Value.Head.(*parser.Str)
	if !ok {
		return "", false
	}
	b, trunc, err := s.Bytes()
	if err != nil || trunc {
		return "", false
	}
	return string(b), true
}

// StrArg is the decoded string argument i of the call.
func (c *Call) StrArg(i int) (string, bool) { return strArg(c.Args, i) }

// IntArg is the numeric argument i of the call.
func (c *Call) IntArg(i int) (int64, bool) {
	if i >= len(c.Args) || c.Args[i].Value == nil {
		return 0, false
	}
	n, ok := c.Args[i].Value.Head.(*parser.Int)
	if !ok {
		return 0, false
	}
	return n.Int64()
}
