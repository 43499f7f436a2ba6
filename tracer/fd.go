package tracer

import (
	"fmt"
	"os"

	"github.com/faultline/faultline/parser"
)

// File descriptors, with -y the path /proc/PID/fd/N links to.

const atFDCWD = -100

var (
	kFD    = kind{in: func(d *dec, i int) *parser.Arg { return pos(d.fd(d.int32(i))) }}
	kDirFD = kind{in: func(d *dec, i int) *parser.Arg { return pos(d.dirfd(d.int32(i))) }}
)

func (d *dec) fd(fd int64) *parser.Expr {
	if fd < 0 || !d.t.c.DecodeFDs {
		return parser.Dec(fd)
	}
	return parser.FD(fd, fdPath(d.pid, fd))
}

func (d *dec) dirfd(fd int64) *parser.Expr {
	if fd == atFDCWD {
		e := parser.Sym("AT_FDCWD")
		if d.t.c.DecodeFDs {
			// strace -y shows the working directory AT_FDCWD stands for.
			if cwd := procLink(fmt.Sprintf("/proc/%d/cwd", d.pid)); cwd != "" {
				e.Head.(*parser.Ident).Decor = &parser.Decor{Text: cwd}
			}
		}
		return e
	}
	return d.fd(fd)
}

// fdPath is what strace -y prints for a descriptor: the link target with
// strace's escapes, or "" when it cannot be read.
func fdPath(pid int, fd int64) string {
	return procLink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
}

func procLink(link string) string {
	s, err := os.Readlink(link)
	if err != nil {
		return ""
	}
	q := parser.Quote([]byte(s), parser.QuoteDefault, false)
	return q[1 : len(q)-1]
}
