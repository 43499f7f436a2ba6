package tracer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/faultline/faultline/parser"
	"golang.org/x/sys/unix"
)

// The header is the '#' comment block a recorded trace begins with: what
// replay needs to rebuild the world the program started in (command line,
// working directory, environment, identity, umask) and what the reader
// needs to know about the trace itself (tool version, which calls were
// traced and how).

// HeaderLines describes a recording of c; tool is "faultline v0.1".
func HeaderLines(c *Cmd, tool string) []*parser.Line {
	var out []*parser.Line
	add := func(format string, args ...any) { out = append(out, parser.NewComment(fmt.Sprintf(format, args...))) }
	add("faultline trace, recorded by %s", tool)
	if c.Pid != 0 {
		add("attached: pid %d", c.Pid)
	} else {
		add("command: %s", shellQuote(c.Args))
		add("path: %s", c.Path)
	}
	dir := c.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	add("cwd: %s", dir)
	env := c.Env
	if env == nil && c.Pid == 0 {
		env = os.Environ()
	}
	add("environment: %d variables, sha256:%s", len(env), envDigest(env))
	// The environment in full, one variable a line, Go-quoted so that any
	// byte survives: replay starts the program with exactly this.
	for _, e := range env {
		add("env: %s", strconv.Quote(e))
	}
	add("identity: uid=%d gid=%d euid=%d egid=%d umask=%s", os.Getuid(), os.Getgid(), os.Geteuid(), os.Getegid(), currentUmask())
	var uts unix.Utsname
	if unix.Uname(&uts) == nil {
		add("kernel: %s %s %s", cstr(uts.Sysname[:]), cstr(uts.Release[:]), cstr(uts.Machine[:]))
	}
	add("started: %s", time.Now().UTC().Format(time.RFC3339Nano))
	opts := []string{}
	if c.Follow {
		opts = append(opts, "-f")
	}
	if c.Verbose {
		opts = append(opts, "-v")
	}
	if c.DecodeFDs {
		opts = append(opts, "-y")
	}
	limit := c.StringLimit
	if limit <= 0 {
		limit = 32
	}
	opts = append(opts, fmt.Sprintf("-s %d", limit))
	add("options: %s", strings.Join(opts, " "))
	if c.Filter == nil {
		add("traced: all calls")
	} else {
		how := "seccomp-bpf"
		if c.NoSeccomp || c.Pid != 0 {
			how = "ptrace"
		}
		add("traced: %s (filtered by %s)", c.Filter.String(), how)
		names := c.Filter.Names()
		for len(names) > 0 {
			n := min(len(names), 12)
			add("traced calls: %s", strings.Join(names[:n], " "))
			names = names[n:]
		}
	}
	for _, x := range c.HeaderExtra {
		add("%s", x)
	}
	return out
}

// envDigest is a SHA-256 over the sorted-as-given NAME=value strings, so
// two runs with the same environment have the same digest.
func envDigest(env []string) string {
	h := sha256.New()
	for _, e := range env {
		h.Write([]byte(e))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func currentUmask() string {
	// There is no way to read the umask but to set it, which would race
	// with other goroutines creating files; /proc has it. Read into a
	// buffer on the stack: the status file is under 2 KiB.
	fd, err := unix.Open("/proc/self/status", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "?"
	}
	defer unix.Close(fd)
	var buf [4096]byte
	n, _ := unix.Read(fd, buf[:])
	_, rest, ok := bytes.Cut(buf[:max(n, 0)], []byte("\nUmask:"))
	if !ok {
		return "?"
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	return string(bytes.TrimSpace(line))
}

func cstr(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// shellQuote joins argv so that a shell would split it back the same way.
func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '=' || r == ',' || r == ':' || r == '+' || r == '%' ||
				r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		}) < 0 {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
