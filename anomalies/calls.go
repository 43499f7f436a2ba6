package anomalies

import (
	"strings"

	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/parser"
)

// Tests on calls shared by the families.

// systemPrefixes are where the dynamic loader and libc read at start-up;
// an anomaly there says nothing about the program.
var systemPrefixes = []string{
	"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "/usr/libexec/",
	"/usr/lib/locale/", "/usr/share/", "/etc/", "/proc/", "/sys/", "/dev/", "/bin/", "/sbin/",
	"/usr/bin/", "/usr/sbin/", "/usr/local/bin/", "/usr/local/lib/",
}

// isSystem reports whether a path belongs to the system rather than to the
// program's data.
func isSystem(p string) bool {
	for _, s := range systemPrefixes {
		if strings.HasPrefix(p, s) || p+"/" == s {
			return true
		}
	}
	if p == "/etc/ld.so.cache" || p == "/etc/ld.so.preload" {
		return true
	}
	// Interpreters' own libraries wherever they are installed (pyenv,
	// virtualenvs, /usr/local): modules, bytecode caches, shared objects.
	for _, s := range []string{"/lib/python", "/site-packages/", "/__pycache__/", "/lib/perl", "/lib/ruby/", "/node_modules/", "/.pyenv/"} {
		if strings.Contains(p, s) {
			return true
		}
	}
	return strings.HasSuffix(p, ".so") || strings.Contains(p, ".so.")
}

// userCall reports whether none of the call's paths is a system path.
func userCall(c *mutators.Call) bool {
	for _, p := range c.Paths() {
		if isSystem(p) {
			return false
		}
	}
	return true
}

// fileFD reports whether the call's descriptor (argument 0) is a file the
// program works with: with -y, a path outside the system's; without, any
// descriptor but the standard three.
func fileFD(c *mutators.Call) bool {
	fd, _, ok := c.FD()
	if !ok {
		return false
	}
	if n, isInt := c.Args[0].Value.Head.(*parser.Int); isInt && n.Decor != nil {
		p := n.Decor.Path()
		return p != "" && !isSystem(p)
	}
	return fd > 2
}

// failure builds the common entry mutation: a successful call of one of
// the names, passing the extra test, fails with errno.
func failure(errno string, names []string, wants string, extra func(*mutators.Call) bool) *mutators.Mutation {
	text, ok := errnoText[errno]
	if !ok {
		panic("anomalies: no text for " + errno)
	}
	named := mutators.Named(names...)
	return &mutators.Mutation{
		Wants: wants,
		Match: func(s *mutators.Site) bool {
			return named(s.Call) && s.Call.Succeeded() && (extra == nil || extra(s.Call))
		},
		Edit: mutators.FailWith(errno, text),
	}
}

var (
	renames = []string{"rename", "renameat", "renameat2"}
	stats   = []string{"stat", "lstat", "fstat", "newfstatat", "statx"}
	opens   = []string{"open", "openat", "openat2", "creat"}
	writes  = []string{"write", "pwrite64", "writev", "pwritev", "pwritev2"}
	reads   = []string{"read", "pread64", "readv", "preadv", "preadv2"}
	unlinks = []string{"unlink", "unlinkat"}
)
